/* @constant contents and their copy into a loaded configuration. */
#include "constants.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../data/datafile.h"
#include "../verify/verify.h"

static int constant_size(const kt__param *p, kt__host_tensor *t, kt__errbuf *eb) {
  uint64_t count = 1;
  for (int d = 0; d < p->ndims; d++) {
    int64_t v = 0;
    kt__eval_error ee = {{0, 0}, {0}};
    KT__RETURN_IF(kt__expr_eval(p->dims[d], NULL, &v, &ee) != 0, eb, KT_INVALID, "%d:%d: @constant %s: %s", ee.loc.line,
                  ee.loc.col, p->name, ee.msg);
    KT__RETURN_IF(v < 0 || !kt__mul_u64(count, (uint64_t)v, &count), eb, KT_INVALID,
                  "%d:%d: @constant %s: dimension %d is %" PRId64 ", not a size", p->loc.line, p->loc.col, p->name,
                  d + 1, v);
  }
  uint64_t bytes;
  KT__RETURN_IF(!kt__mul_u64(count, kt__dtype_size(p->type), &bytes) || bytes > ((uint64_t)1 << 32), eb, KT_INVALID,
                "%d:%d: @constant %s: %" PRIu64 " elements is more than constant data can hold (at most 4 GiB; "
                "CUDA's __constant__ space is 64 KiB)",
                p->loc.line, p->loc.col, p->name, count);
  t->count = count;
  t->bytes = (size_t)bytes;
  return KT_OK;
}

static int eval_bound(const kt__param *p, const kt__expr *e, int64_t *v, kt__errbuf *eb) {
  kt__eval_error ee = {{0, 0}, {0}};
  KT__RETURN_IF(kt__expr_eval(e, NULL, v, &ee) != 0, eb, KT_INVALID, "%d:%d: @constant %s: random(...): %s",
                ee.loc.line, ee.loc.col, p->name, ee.msg);
  return KT_OK;
}

/* = file("path"[, TYPE]): a .npy file of the constant's type and element
 * count (any shape: a constant is flat memory), or raw binary, read whole.
 * The path is relative to the kernel file's folder. */
static int constant_from_file(const kt__param *p, const char *source_path, kt__host_tensor *t, kt__errbuf *eb) {
  const char *slash = source_path ? strrchr(source_path, '/') : NULL;
  kt__sbuf path = {0};
  if (p->file[0] == '/' || !slash) kt__sbuf_printf(&path, "%s", p->file);
  else kt__sbuf_printf(&path, "%.*s/%s", (int)(slash - source_path), source_path, p->file);
  kt__data_source src = {path.s, p->file_raw, p->file_type, p->file_loc.line, p->file_loc.col};
  kt__data_header h;
  int rc = kt__data_header_read(&src, &h, eb);
  if (rc == KT_OK && (h.type != t->type || h.count != t->count))
    rc = kt__err(
        eb, KT_INVALID, "%d:%d: @constant %s: %s holds %" PRIu64 " elements of %s; the constant is %" PRIu64 " of %s",
        p->loc.line, p->loc.col, p->name, path.s, h.count, kt__dtype_name(h.type), t->count, kt__dtype_name(t->type));
  if (rc == KT_OK) rc = kt__data_read(&src, &h, t->initial, t->bytes, eb);
  kt__sbuf_free(&path);
  return rc;
}

/* The contents per the initial value: as a tensor's, without sizes. */
static int constant_fill(const kt__param *p, const char *source_path, kt__host_tensor *t, uint64_t seed,
                         kt__errbuf *eb) {
  if (p->init == KT__INIT_FILE) return constant_from_file(p, source_path, t, eb);
  if (!p->random_lo) {
    kt__fill(t->type, t->initial, t->count, p->init, seed);
    return KT_OK;
  }
  int64_t lo, hi;
  KT__FORWARD(eval_bound(p, p->random_lo, &lo, eb));
  KT__FORWARD(eval_bound(p, p->random_hi, &hi, eb));
  KT__RETURN_IF(lo >= hi, eb, KT_INVALID, "%d:%d: @constant %s: random(%" PRId64 ", %" PRId64 ") is an empty range",
                p->loc.line, p->loc.col, p->name, lo, hi);
  kt__fill_random_in(t->type, t->initial, t->count, lo, hi, seed);
  return KT_OK;
}

int kt__constants_create(const kt__kernel_decl *decl, const char *source_path, uint64_t seed, kt__constants **out,
                         kt__errbuf *eb) {
  *out = NULL;
  if (!decl->nconstants) return KT_OK;
  kt__constants *c = kt__xcalloc(1, sizeof *c);
  c->data = kt__xcalloc((size_t)decl->nconstants, sizeof *c->data);
  for (int i = 0; i < decl->nconstants; i++) {
    const kt__param *p = &decl->constants[i];
    kt__host_tensor *t = &c->data[c->n++];
    *t = (kt__host_tensor){.param = i, .type = p->type, .mode = KT__MODE_IN};
    int rc = constant_size(p, t, eb);
    if (rc == KT_OK) {
      t->initial = kt__xmalloc(t->bytes ? t->bytes : 1);
      rc = constant_fill(p, source_path, t, seed + 0x10000 + (uint64_t)i, eb);
    }
    if (rc != KT_OK) {
      kt__constants_free(c);
      return rc;
    }
  }
  *out = c;
  return KT_OK;
}

void kt__constants_free(kt__constants *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->data[i].initial);
  free(c->data);
  free(c);
}

kt__status kt__constants_set(const kt__backend *be, void *state, void *fn, const kt__kernel_decl *decl,
                             const kt__constants *c, kt__errbuf *eb) {
  for (int i = 0; c && i < c->n; i++) {
    const kt__host_tensor *t = &c->data[i];
    kt__status st = kt__be_set_constant(be, state, fn, decl->constants[t->param].name, t->initial, t->bytes, eb);
    if (st != KT__ST_OK) return st;
  }
  return KT__ST_OK;
}
