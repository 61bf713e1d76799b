/* The lazy search space. A configuration is a mixed-radix number: digit d is
 * the index of dim d's choice, dim 0 the most significant. Nothing is
 * materialised; the only per-point work is decoding an index and evaluating
 * the @where constraints on its values. */
#include "space.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lang/parser.h"

struct kt__space {
  const kt__tunedim *dims;
  int ndims;
  kt__expr *const *where;
  int nwhere;
  const kt__env *sizes;
  const char **names; /* ndims entries, plus a NULL terminator */
  bool *pinned;
  int64_t *pinval;  /* the pinned value of dim d, when pinned[d] */
  uint64_t *stride; /* index weight of dim d's digit */
  uint64_t size;
  kt__space_fault *fault;     /* the first @where that failed to evaluate (its own allocation: tests are const) */
  kt__space_filter_fn filter; /* optional extra validity test */
  void *filter_ud;
};

/* Product of the choice counts under the current pins; false on overflow. */
static bool product(const kt__space *s, uint64_t *out) {
  uint64_t n = 1;
  for (int d = s->ndims - 1; d >= 0; d--) {
    s->stride[d] = n;
    if (!kt__mul_u64(n, (uint64_t)kt__space_nchoices(s, d), &n)) return false;
  }
  *out = n;
  return true;
}

static int overflow_error(const kt__space *s, kt__errbuf *eb) {
  kt__sbuf b = {0};
  for (int d = 0; d < s->ndims; d++)
    kt__sbuf_printf(&b, "%s%s (%d)", d ? " x " : "", s->dims[d].name, s->dims[d].count);
  int rc = kt__err(eb, KT_INVALID, "the search space is too large: %s choices overflow 64 bits", b.s ? b.s : "");
  kt__sbuf_free(&b);
  return rc;
}

int kt__space_create(const kt__tunedim *dims, int ndims, kt__expr *const *where, int nwhere, const kt__env *sizes,
                     kt__space **out, kt__errbuf *eb) {
  *out = NULL;
  KT__RETURN_IF(ndims < 0 || (ndims > 0 && !dims), eb, KT_INVALID, "bad space dimensions");
  for (int d = 0; d < ndims; d++) KT__RETURN_IF(dims[d].count < 1, eb, KT_INVALID, "%s has no choices", dims[d].name);
  kt__space *s = kt__xcalloc(1, sizeof *s);
  s->dims = dims;
  s->ndims = ndims;
  s->where = where;
  s->nwhere = where ? nwhere : 0;
  s->sizes = sizes;
  s->names = kt__xcalloc((size_t)ndims + 1, sizeof *s->names);
  s->pinned = kt__xcalloc((size_t)ndims + 1, sizeof *s->pinned);
  s->pinval = kt__xcalloc((size_t)ndims + 1, sizeof *s->pinval);
  s->stride = kt__xcalloc((size_t)ndims + 1, sizeof *s->stride);
  s->fault = kt__xcalloc(1, sizeof *s->fault);
  for (int d = 0; d < ndims; d++) s->names[d] = dims[d].name;
  if (!product(s, &s->size)) {
    int rc = overflow_error(s, eb);
    kt__space_free(s);
    return rc;
  }
  *out = s;
  return KT_OK;
}

void kt__space_free(kt__space *s) {
  if (!s) return;
  free(s->names);
  free(s->pinned);
  free(s->pinval);
  free(s->stride);
  free(s->fault);
  free(s);
}

int kt__space_ndims(const kt__space *s) { return s->ndims; }
const char *kt__space_name(const kt__space *s, int d) { return s->names[d]; }
const char *const *kt__space_names(const kt__space *s) { return s->names; }

int kt__space_nchoices(const kt__space *s, int d) {
  assert(d >= 0 && d < s->ndims);
  return s->pinned[d] ? 1 : s->dims[d].count;
}

int64_t kt__space_choice(const kt__space *s, int d, int c) {
  assert(c >= 0 && c < kt__space_nchoices(s, d));
  return s->pinned[d] ? s->pinval[d] : s->dims[d].values[c];
}

uint64_t kt__space_size(const kt__space *s) { return s->size; }

void kt__space_decode(const kt__space *s, uint64_t index, int *choice) {
  assert(index < s->size);
  for (int d = 0; d < s->ndims; d++) {
    choice[d] = (int)(index / s->stride[d]);
    index %= s->stride[d];
  }
}

uint64_t kt__space_encode(const kt__space *s, const int *choice) {
  uint64_t index = 0;
  for (int d = 0; d < s->ndims; d++) {
    assert(choice[d] >= 0 && choice[d] < kt__space_nchoices(s, d));
    index += (uint64_t)choice[d] * s->stride[d];
  }
  return index;
}

void kt__space_values(const kt__space *s, uint64_t index, int64_t *values) {
  assert(index < s->size);
  for (int d = 0; d < s->ndims; d++) {
    int c = (int)(index / s->stride[d]);
    index %= s->stride[d];
    values[d] = kt__space_choice(s, d, c);
  }
}

int kt__space_check(const kt__space *s, const int64_t *values, kt__eval_error *err) {
  kt__env env = {.names = s->names, .values = values, .n = s->ndims, .parent = s->sizes};
  if (s->filter && !s->filter(s->filter_ud, values)) return 0;
  for (int i = 0; i < s->nwhere; i++) {
    int64_t v = 0;
    kt__eval_error local;
    if (kt__expr_eval(s->where[i], &env, &v, err ? err : &local) != 0) return -1;
    if (v == 0) return 0;
  }
  return 1;
}

/* Values of up to this many dims live on the stack; more is unusual. */
enum { SMALL_DIMS = 32 };

int kt__space_valid_index(const kt__space *s, uint64_t index) {
  if (index >= s->size) return 0;
  if (s->nwhere == 0 && !s->filter) return 1;
  int64_t small[SMALL_DIMS];
  int64_t *values = s->ndims <= SMALL_DIMS ? small : kt__xmalloc((size_t)s->ndims * sizeof *values);
  kt__space_values(s, index, values);
  kt__eval_error err;
  int rc = kt__space_check(s, values, &err);
  if (rc < 0 && !s->fault->found) *s->fault = (kt__space_fault){true, index, "@where", err};
  if (values != small) free(values);
  return rc == 1;
}

kt__space_fault kt__space_first_fault(const kt__space *s) { return *s->fault; }

int kt__space_fault_error(const kt__source *src, const kt__env *config, const kt__env *sizes, const kt__space_fault *f,
                          kt__errbuf *eb) {
  kt__sbuf cfg = {0}, sz = {0};
  kt__config_format(config->names, config->values, config->n, "", &cfg);
  kt__config_format(sizes->names, sizes->values, sizes->n, "", &sz);
  kt__diag d;
  kt__diag_init(&d, src);
  kt__diag_error(&d, f->err.loc, "%s: %s at the configuration %s%s%s; %s", f->what, f->err.msg, cfg.s ? cfg.s : "",
                 sz.len ? " with the sizes " : "", sz.len ? sz.s : "",
                 strcmp(f->what, "@where") == 0
                     ? "an expression must evaluate for every configuration: put a condition that excludes this one "
                       "first and join them with && (C's && stops at the first false one), or change the expression"
                     : "every configuration that @where allows must evaluate its expressions: exclude this one with "
                       "@where or change the expression");
  size_t len = d.errors.len;
  while (len && d.errors.s[len - 1] == '\n') len--;
  int rc = kt__err(eb, KT_INVALID, "%.*s", (int)len, d.errors.s);
  kt__diag_free(&d);
  kt__sbuf_free(&cfg);
  kt__sbuf_free(&sz);
  return rc;
}

uint64_t kt__space_sweep(const kt__space *s, const kt__kernel_decl *decl, uint64_t limit, kt__space_fault *fault) {
  *fault = (kt__space_fault){0};
  if (s->size > limit) return UINT64_MAX;
  int64_t small[SMALL_DIMS];
  int64_t *values = s->ndims <= SMALL_DIMS ? small : kt__xmalloc((size_t)s->ndims * sizeof *values);
  kt__env env = {.names = s->names, .values = values, .n = s->ndims, .parent = s->sizes};
  uint64_t n = 0;
  for (uint64_t i = 0; i < s->size && !fault->found; i++) {
    kt__space_values(s, i, values);
    int rc = kt__space_check(s, values, &fault->err);
    if (rc == 1 && kt__decl_check_config(decl, &env, &fault->err, &fault->what) != 0) rc = -1;
    else if (rc < 0) fault->what = "@where";
    if (rc < 0) fault->found = true, fault->index = i;
    n += rc == 1;
  }
  if (values != small) free(values);
  return n;
}

uint64_t kt__space_count_valid(const kt__space *s, uint64_t limit) {
  if (s->size > limit) return UINT64_MAX;
  if (s->nwhere == 0 && !s->filter) return s->size;
  uint64_t n = 0;
  for (uint64_t i = 0; i < s->size; i++) n += (uint64_t)kt__space_valid_index(s, i);
  return n;
}

void kt__space_default_values(const kt__space *s, int64_t *values) {
  for (int d = 0; d < s->ndims; d++) values[d] = s->dims[d].values[0];
}

/* A valid configuration to suggest, among the first FIX_SEARCH in index
 * order; UINT64_MAX when none is found there. */
enum { FIX_SEARCH = 100000 };
static uint64_t first_valid(const kt__space *s) {
  for (uint64_t i = 0; i < s->size && i < FIX_SEARCH; i++)
    if (kt__space_valid_index(s, i)) return i;
  return UINT64_MAX;
}

/* The default is the reference every configuration is verified against: a
 * default that @where excludes would be measured, win, and be stored as the
 * winner of a space that does not hold it. */
static int default_violates(const kt__space *s, const int64_t *values, const kt__expr *where,
                            const kt__eval_error *failed, const char *path, kt__errbuf *eb) {
  kt__sbuf cfg = {0}, text = {0}, fix = {0};
  kt__space_format(s, values, &cfg);
  kt__expr_print(where, &text);
  uint64_t valid = first_valid(s);
  if (valid == UINT64_MAX) {
    bool all = s->size <= FIX_SEARCH;
    kt__sbuf_printf(&fix, "; none of the %s%" PRIu64 " configurations satisfies it: widen the choices or relax @where",
                    all ? "" : "first ", all ? s->size : (uint64_t)FIX_SEARCH);
  } else {
    int64_t small[SMALL_DIMS];
    int64_t *v = s->ndims <= SMALL_DIMS ? small : kt__xmalloc((size_t)s->ndims * sizeof *v);
    kt__space_values(s, valid, v);
    kt__sbuf_printf(&fix, ", e.g. ");
    kt__space_format(s, v, &fix);
    kt__sbuf_printf(&fix, " (valid)");
    if (v != small) free(v);
  }
  kt__loc at = kt__expr_loc(where);
  char how[300] = "";
  if (failed) snprintf(how, sizeof how, " (it cannot be evaluated there: %s)", failed->msg);
  int rc = kt__err(eb, KT_INVALID,
                   "%s:%d:%d: error: the default configuration %s (the first choice of each name) violates "
                   "@where(%s)%s; the default is the reference every configuration is verified against, so it "
                   "must be valid: put the values of a valid configuration first in @autotune(...)%s",
                   path, at.line, at.col, cfg.s, text.s ? text.s : "", how, fix.s ? fix.s : "");
  kt__sbuf_free(&cfg);
  kt__sbuf_free(&text);
  kt__sbuf_free(&fix);
  return rc;
}

int kt__space_check_default(const kt__space *s, const char *path, kt__errbuf *eb) {
  int64_t small[SMALL_DIMS];
  int64_t *values = s->ndims <= SMALL_DIMS ? small : kt__xmalloc((size_t)s->ndims * sizeof *values);
  kt__space_default_values(s, values);
  kt__env env = {.names = s->names, .values = values, .n = s->ndims, .parent = s->sizes};
  int rc = KT_OK;
  for (int i = 0; i < s->nwhere && rc == KT_OK; i++) {
    int64_t v = 0;
    kt__eval_error ee;
    if (kt__expr_eval(s->where[i], &env, &v, &ee) != 0) rc = default_violates(s, values, s->where[i], &ee, path, eb);
    else if (v == 0) rc = default_violates(s, values, s->where[i], NULL, path, eb);
  }
  if (values != small) free(values);
  return rc;
}

/* The pinned names as "NAME=VALUE ...", in dim order. */
static void format_pins(const kt__space *s, kt__sbuf *out) {
  const char **names = kt__xcalloc((size_t)s->ndims + 1, sizeof *names);
  int64_t *values = kt__xcalloc((size_t)s->ndims + 1, sizeof *values);
  int n = 0;
  for (int d = 0; d < s->ndims; d++)
    if (s->pinned[d]) names[n] = s->names[d], values[n++] = s->pinval[d];
  kt__config_format(names, values, n, "", out);
  free(names);
  free(values);
}

int kt__space_none_valid(const kt__space *s, const char *path, const char *kernel, const char *label, kt__errbuf *eb) {
  kt__sbuf pins = {0}, left = {0};
  format_pins(s, &pins);
  if (pins.len) kt__sbuf_printf(&left, " left by %s \"%s\"", label, pins.s);
  int rc = kt__err(eb, KT_NOVALID,
                   "%s: error: no valid configuration: none of the %" PRIu64 " configurations of kernel %s%s "
                   "satisfies @where; pin values that @where allows",
                   path, s->size, kernel, left.len ? left.s : "");
  kt__sbuf_free(&pins);
  kt__sbuf_free(&left);
  return rc;
}

/* ---- pinning ---- */

static bool declared_choice(const kt__tunedim *dim, int64_t v) {
  for (int c = 0; c < dim->count; c++)
    if (dim->values[c] == v) return true;
  return false;
}

static void warn_undeclared(const kt__tunedim *dim, int64_t v, kt__sbuf *warn) {
  if (!warn) return;
  kt__sbuf_printf(warn, "warning: %s=%" PRId64 " is not among its declared choices (", dim->name, v);
  for (int c = 0; c < dim->count; c++) kt__sbuf_printf(warn, "%s%" PRId64, c ? ", " : "", dim->values[c]);
  kt__sbuf_printf(warn, "); using it anyway\n");
}

void kt__space_pin_values(kt__space *s, const kt__config_pins *pins, kt__sbuf *warn) {
  for (int d = 0; d < s->ndims; d++) {
    if (!pins->set[d]) continue;
    if (!declared_choice(&s->dims[d], pins->values[d])) warn_undeclared(&s->dims[d], pins->values[d], warn);
    s->pinned[d] = true;
    s->pinval[d] = pins->values[d];
  }
  bool fits = product(s, &s->size);
  assert(fits); /* pinning only shrinks a space that already fit */
  (void)fits;
}

bool kt__space_is_pinned(const kt__space *s, int d) {
  assert(d >= 0 && d < s->ndims);
  return s->pinned[d];
}

/* ---- neighbourhood and lookup ---- */

int kt__space_neighbours(const kt__space *s, uint64_t index, uint64_t *out, int max) {
  assert(index < s->size);
  int n = 0;
  for (int d = 0; d < s->ndims && n < max; d++) {
    uint64_t c = (index / s->stride[d]) % (uint64_t)kt__space_nchoices(s, d);
    if (c > 0 && n < max) out[n++] = index - s->stride[d];
    if (c + 1 < (uint64_t)kt__space_nchoices(s, d) && n < max) out[n++] = index + s->stride[d];
  }
  return n;
}

uint64_t kt__space_index_of(const kt__space *s, const int64_t *values) {
  uint64_t index = 0;
  for (int d = 0; d < s->ndims; d++) {
    int found = -1;
    for (int c = 0; c < kt__space_nchoices(s, d) && found < 0; c++)
      if (kt__space_choice(s, d, c) == values[d]) found = c;
    if (found < 0) return UINT64_MAX;
    index += (uint64_t)found * s->stride[d];
  }
  return index;
}

void kt__space_format(const kt__space *s, const int64_t *values, kt__sbuf *out) {
  kt__config_format(s->names, values, s->ndims, "", out);
}

void kt__space_format_defines(const kt__space *s, const int64_t *values, kt__sbuf *out) {
  kt__config_format(s->names, values, s->ndims, "-D", out);
}

void kt__space_set_filter(kt__space *s, kt__space_filter_fn fn, void *ud) {
  s->filter = fn;
  s->filter_ud = ud;
}
