/* The search space: the cartesian product of the choices of each tuned name,
 * enumerated lazily by a mixed-radix index (never materialised), filtered by
 * the @where constraints, with names optionally pinned. */
#ifndef KT_SPACE_H
#define KT_SPACE_H

#include "../config.h"

typedef struct kt__space kt__space;

/* A space over DIMS (the kernel's @autotune or @cluster names). WHERE are the
 * constraints (may be NULL/0); SIZES binds runtime sizes they mention.
 * The space keeps pointers to DIMS, WHERE and SIZES: they must outlive it.
 * Fails (KT_INVALID) when the product overflows 64 bits. */
int kt__space_create(const kt__tunedim *dims, int ndims, kt__expr *const *where, int nwhere, const kt__env *sizes,
                     kt__space **out, kt__errbuf *eb);
void kt__space_free(kt__space *s);

int kt__space_ndims(const kt__space *s);
const char *kt__space_name(const kt__space *s, int d);
const char *const *kt__space_names(const kt__space *s);
/* The choices of dim d, after pinning. */
int kt__space_nchoices(const kt__space *s, int d);
int64_t kt__space_choice(const kt__space *s, int d, int c);
/* Product of the choice counts (after pinning), before @where. */
uint64_t kt__space_size(const kt__space *s);
/* Counts the points that satisfy @where by visiting all (stops at LIMIT
 * visits and returns UINT64_MAX when the space is bigger than LIMIT). */
uint64_t kt__space_count_valid(const kt__space *s, uint64_t limit);

/* The first configuration whose expressions could not be evaluated (a
 * division by zero in @where at A=2): never a silent "invalid". */
typedef struct kt__space_fault {
  bool found;
  uint64_t index;
  const char *what; /* the attribute: @where, @grid, ... */
  kt__eval_error err;
} kt__space_fault;

/* Counts the valid points as kt__space_count_valid does, and checks each
 * valid one's other expressions (kt__decl_check_config over DECL): stops at
 * the first that fails, in *FAULT (found false when none did). */
uint64_t kt__space_sweep(const kt__space *s, const kt__kernel_decl *decl, uint64_t limit, kt__space_fault *fault);
/* The first @where evaluation that failed in kt__space_valid_index (the
 * strategies' test): found false while none has. */
kt__space_fault kt__space_first_fault(const kt__space *s);
/* KT_INVALID with "file:line:col: error:", the source line and a caret at
 * F's operator, naming the configuration (CONFIG binds every tuned name) and
 * the SIZES where it happened, and how to mend it. */
int kt__space_fault_error(const kt__source *src, const kt__env *config, const kt__env *sizes, const kt__space_fault *f,
                          kt__errbuf *eb);

/* Mixed radix: dim 0 varies slowest. CHOICE holds per-dim choice indices. */
void kt__space_decode(const kt__space *s, uint64_t index, int *choice);
uint64_t kt__space_encode(const kt__space *s, const int *choice);
/* Values of the configuration at INDEX (ndims entries). */
void kt__space_values(const kt__space *s, uint64_t index, int64_t *values);
/* 1 valid, 0 excluded by @where, -1 evaluation error (ERR filled: treated as
 * excluded by callers, reported once). */
int kt__space_check(const kt__space *s, const int64_t *values, kt__eval_error *err);
int kt__space_valid_index(const kt__space *s, uint64_t index);

/* The default configuration: each name's first declared choice (before
 * pinning), as values. Not necessarily inside the pinned space. */
void kt__space_default_values(const kt__space *s, int64_t *values);

/* KT_OK when the default configuration satisfies every @where (evaluated
 * with the space's SIZES bound); else KT_INVALID, "PATH:LINE:COL: error:"
 * at the first @where it violates or cannot evaluate, saying how to fix it.
 * Pins do not matter: the default is the reference whatever is pinned. */
int kt__space_check_default(const kt__space *s, const char *path, kt__errbuf *eb);
/* KT_NOVALID for a space without a valid configuration (pins that exclude
 * every configuration @where allows), naming KERNEL and the pins (LABEL:
 * what the caller calls them, kt_labels.pin). */
int kt__space_none_valid(const kt__space *s, const char *path, const char *kernel, const char *label, kt__errbuf *eb);

/* Pins dim d to PINS->values[d] where PINS->set[d] (PINS indexed like the
 * dims); a value outside the declared choices is accepted and a warning is
 * appended to WARN (may be NULL). */
void kt__space_pin_values(kt__space *s, const kt__config_pins *pins, kt__sbuf *warn);
bool kt__space_is_pinned(const kt__space *s, int d);

/* Neighbours of INDEX: configurations that differ in one name by one step in
 * its choice list. Writes up to MAX indices, returns how many. */
int kt__space_neighbours(const kt__space *s, uint64_t index, uint64_t *out, int max);

/* Index of the configuration with these values, or UINT64_MAX when some value
 * is not among the (pinned) choices. */
uint64_t kt__space_index_of(const kt__space *s, const int64_t *values);

/* "NAME=VALUE NAME=VALUE" and "-DNAME=VALUE ..." renderings. */
void kt__space_format(const kt__space *s, const int64_t *values, kt__sbuf *out);
void kt__space_format_defines(const kt__space *s, const int64_t *values, kt__sbuf *out);

/* An extra validity test beside @where (NULL removes it): FN returns 1 when
 * the configuration with these values is valid, 0 when it is not. Replay
 * uses it to exclude configurations a recorded space does not hold. */
typedef int (*kt__space_filter_fn)(void *ud, const int64_t *values);
void kt__space_set_filter(kt__space *s, kt__space_filter_fn fn, void *ud);

#endif
