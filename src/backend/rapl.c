/* RAPL's package counters, read from the powercap files (rapl.h). Only the
 * top-level zones (intel-rapl:0, not intel-rapl:0:0): a package's counter
 * already holds its cores' and its memory's, and adding the subzones would
 * count them twice. AMD's packages appear under the same names. */
#include "rapl.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../envvars.h"

static bool read_u64(const char *path, uint64_t *v) {
  FILE *f = fopen(path, "re");
  if (!f) return false;
  unsigned long long x;
  bool ok = fscanf(f, "%llu", &x) == 1;
  fclose(f);
  if (ok) *v = x;
  return ok;
}

/* "intel-rapl:N" with N digits and nothing after: a package. */
static bool is_package(const char *name) {
  const char *p = "intel-rapl:";
  size_t n = strlen(p);
  if (strncmp(name, p, n) != 0 || !name[n]) return false;
  for (const char *c = name + n; *c; c++)
    if (*c < '0' || *c > '9') return false;
  return true;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The package zones' names under ROOT, sorted (a stable order for the counts). */
static int package_names(const char *root, char names[][64], int max) {
  DIR *d = opendir(root);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < max)
    if (is_package(e->d_name) && strlen(e->d_name) < 64) snprintf(names[n++], 64, "%s", e->d_name);
  closedir(d);
  char *order[KT__RAPL_MAX_DOMAINS];
  for (int i = 0; i < n; i++) order[i] = names[i];
  qsort(order, (size_t)n, sizeof *order, by_name);
  char sorted[KT__RAPL_MAX_DOMAINS][64];
  for (int i = 0; i < n; i++) memcpy(sorted[i], order[i], 64);
  memcpy(names, sorted, (size_t)n * 64);
  return n;
}

bool kt__rapl_open(kt__rapl *r, char *why, size_t why_size) {
  *r = (kt__rapl){0};
  const char *env = kt__envvar_text(KT__ENV_POWERCAP_ROOT);
  const char *root = env && *env ? env : "/sys/class/powercap";
  char names[KT__RAPL_MAX_DOMAINS][64];
  int n = package_names(root, names, KT__RAPL_MAX_DOMAINS);
  if (n <= 0) {
    snprintf(why, why_size, "no RAPL energy counter: %s %s", root,
             n < 0 ? "does not exist (a CPU or kernel without powercap, or a virtual machine)"
                   : "holds no intel-rapl:N package zone");
    return false;
  }
  for (int i = 0; i < n; i++) {
    char range[400];
    snprintf(r->path[i], sizeof r->path[i], "%.240s/%.60s/energy_uj", root, names[i]);
    snprintf(range, sizeof range, "%.240s/%.60s/max_energy_range_uj", root, names[i]);
    uint64_t v;
    if (!read_u64(r->path[i], &v)) {
      int e = errno;
      snprintf(why, why_size, "the RAPL energy counter %.200s cannot be read (%s)%s", r->path[i], strerror(e),
               e == EACCES ? ": since Linux 5.10 only root reads it; run as root or grant read access" : "");
      return false;
    }
    if (!read_u64(range, &r->range[i]) || r->range[i] == 0) r->range[i] = UINT64_MAX;
  }
  r->n = n;
  return true;
}

bool kt__rapl_read(const kt__rapl *r, kt__rapl_counts *out) {
  for (int i = 0; i < r->n; i++)
    if (!read_u64(r->path[i], &out->uj[i])) return false;
  return r->n > 0;
}

double kt__rapl_joules(const kt__rapl *r, const kt__rapl_counts *a, const kt__rapl_counts *b) {
  double uj = 0;
  for (int i = 0; i < r->n; i++) {
    uint64_t from = a->uj[i], to = b->uj[i];
    /* The counter runs from 0 to its range and starts again at 0. */
    uj += (double)(to >= from ? to - from : r->range[i] - from + to);
  }
  return uj * 1e-6;
}
