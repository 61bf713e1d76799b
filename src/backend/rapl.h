/* RAPL through the kernel's powercap files: the energy a CPU's packages
 * used, for the CPU backend's samples. The root is /sys/class/powercap, or
 * $KTUNE_POWERCAP_ROOT (a fake tree, for the tests). */
#ifndef KT_BACKEND_RAPL_H
#define KT_BACKEND_RAPL_H

#include "../common.h"

enum { KT__RAPL_MAX_DOMAINS = 16 };

typedef struct kt__rapl {
  int n;                                /* packages: intel-rapl:N, whose subdomains they include */
  char path[KT__RAPL_MAX_DOMAINS][320]; /* each one's energy_uj */
  uint64_t range[KT__RAPL_MAX_DOMAINS]; /* max_energy_range_uj: where its counter wraps to 0 */
} kt__rapl;

/* Each package counter's value, in microjoules. */
typedef struct kt__rapl_counts {
  uint64_t uj[KT__RAPL_MAX_DOMAINS];
} kt__rapl_counts;

/* The packages under the powercap root; false with why in WHY (WHY_SIZE
 * bytes) where there are none or their counters cannot be read (since
 * Linux 5.10 energy_uj is root's alone). */
bool kt__rapl_open(kt__rapl *r, char *why, size_t why_size);
/* Every package's counter now; false where one cannot be read. */
bool kt__rapl_read(const kt__rapl *r, kt__rapl_counts *out);
/* The joules used from A to B, over every package, a counter that wrapped
 * past its range counted as such. */
double kt__rapl_joules(const kt__rapl *r, const kt__rapl_counts *a, const kt__rapl_counts *b);

#endif
