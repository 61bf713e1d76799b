/* What a binding needs to call a kernel on arrays that carry their shapes
 * (the Python package): the parameters' kinds and types, the runtime sizes
 * read from the arrays' shapes, and the scalars the @kernel line binds. The
 * annotation language stays here: a binding never evaluates an expression
 * itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../handles/context.h"
#include "../launch/args.h"

int kt_kernel_num_params(const kt_kernel *k) { return k->decl->nparams; }

static kt_param_mode param_mode(const kt__param *p) {
  if (p->is_tensormap) return KT_PARAM_TENSORMAP;
  if (!p->is_tensor) return KT_PARAM_SCALAR;
  return p->mode == KT__MODE_IN ? KT_PARAM_IN : p->mode == KT__MODE_OUT ? KT_PARAM_OUT : KT_PARAM_INOUT;
}

/* A scalar the library can give: bound by an expression, or named after a
 * runtime size (then its value). */
static bool scalar_has_value(const kt__kernel_decl *d, const kt__param *p) {
  return !p->is_tensor && (p->value || kt__decl_size_index(d, p->name) >= 0);
}

int kt_kernel_param(const kt_kernel *k, int i, kt_param_info *out) {
  const kt__kernel_decl *d = k->decl;
  KT__RETURN_IF(i < 0 || i >= d->nparams, &k->ctx->err, KT_INVALID, "kernel %s has %d parameters; there is no %d",
                d->name, d->nparams, i);
  const kt__param *p = &d->params[i];
  *out = (kt_param_info){.name = p->name,
                         .mode = param_mode(p),
                         .dtype = kt__dtype_name(p->type),
                         .elem_size = (int)kt__dtype_size(p->type),
                         .ndims = p->is_tensor ? p->ndims : 0,
                         .has_value = scalar_has_value(d, p)};
  return KT_OK;
}

/* "[M, K]": a tensor's declared shape, for messages. */
static void shape_text(const kt__param *p, kt__sbuf *b) {
  kt__sbuf_printf(b, "[");
  for (int i = 0; i < p->ndims; i++) {
    if (i) kt__sbuf_printf(b, ", ");
    kt__expr_print(p->dims[i], b);
  }
  kt__sbuf_printf(b, "]");
}

/* Where each size's value came from: a tensor's dimension, or the caller. */
typedef struct origin {
  int param, dim; /* param -1: given by the caller */
} origin;

typedef struct binding {
  const kt__kernel_decl *d;
  const int64_t *sizes;
  const origin *from;
  kt__sbuf *out;
  unsigned seen; /* sizes already described (at most 32 tracked) */
} binding;

static void describe_size(void *ud, const char *name, kt__loc at) {
  binding *b = ud;
  int j = kt__decl_size_index(b->d, name);
  if (j < 0 || (j < 32 && (b->seen >> j) & 1u)) return;
  if (j < 32) b->seen |= 1u << j;
  kt__sbuf_printf(b->out, "%s%s = %lld", b->out->len ? ", " : "", name, (long long)b->sizes[j]);
  if (b->from[j].param >= 0)
    kt__sbuf_printf(b->out, " from %s's dimension %d", b->d->params[b->from[j].param].name, b->from[j].dim);
  else kt__sbuf_printf(b->out, " as given");
}

static int check_rank(kt_kernel *k, int i, int rank) {
  const kt__param *p = &k->decl->params[i];
  if (rank == p->ndims) return KT_OK;
  kt__sbuf s = {0};
  shape_text(p, &s);
  kt__err(&k->ctx->err, KT_INVALID, "kernel %s: parameter %s: expected %d dimension%s %s, got %d", k->decl->name,
          p->name, p->ndims, p->ndims == 1 ? "" : "s", s.s, rank);
  kt__sbuf_free(&s);
  return KT_INVALID;
}

/* Binds the sizes that a dimension written as a bare name gives; the first
 * tensor to name a size binds it, the others are checked against it. */
static void bind_from_shapes(const kt__kernel_decl *d, const int64_t *const *shapes, int64_t *sizes, origin *from) {
  for (int i = 0; i < d->nparams; i++)
    for (int dim = 0; d->params[i].is_tensor && dim < d->params[i].ndims; dim++) {
      const char *name = kt__expr_name(d->params[i].dims[dim]);
      int j = name ? kt__decl_size_index(d, name) : -1;
      if (j < 0 || sizes[j] != 0) continue;
      sizes[j] = shapes[i][dim];
      from[j] = (origin){i, dim};
    }
}

static int check_bound(kt_kernel *k, const int64_t *sizes) {
  const kt__kernel_decl *d = k->decl;
  for (int j = 0; j < d->nsizes; j++)
    KT__RETURN_IF(sizes[j] <= 0, &k->ctx->err, KT_INVALID,
                  "kernel %s: runtime size %s is no tensor's dimension of its own, so the arrays cannot give it; "
                  "give %s explicitly",
                  d->name, d->sizes[j], d->sizes[j]);
  return KT_OK;
}

/* An empty array (or a negative extent) makes no launch. */
static int check_extents(kt_kernel *k, const int64_t *const *shapes) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nparams; i++)
    for (int dim = 0; d->params[i].is_tensor && dim < d->params[i].ndims; dim++)
      KT__RETURN_IF(shapes[i][dim] <= 0, &k->ctx->err, KT_INVALID,
                    "kernel %s: parameter %s: dimension %d is %lld; sizes must be positive", d->name, d->params[i].name,
                    dim, (long long)shapes[i][dim]);
  return KT_OK;
}

/* Evaluates tensor I's dimension DIM at SIZES and compares it with the
 * array's extent. */
static int check_dim(kt_kernel *k, int i, int dim, int64_t extent, const int64_t *sizes, const origin *from) {
  const kt__kernel_decl *d = k->decl;
  const kt__param *p = &d->params[i];
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  int64_t want;
  kt__eval_error ee;
  if (kt__expr_eval(p->dims[dim], &env, &want, &ee) != 0)
    return kt__err(&k->ctx->err, KT_INVALID, "kernel %s: parameter %s: dimension %d cannot be evaluated: %s", d->name,
                   p->name, dim, ee.msg);
  if (want == extent) return KT_OK;
  kt__sbuf s = {0}, why = {0};
  shape_text(p, &s);
  binding b = {d, sizes, from, &why, 0};
  kt__expr_visit_names(p->dims[dim], describe_size, &b);
  kt__err(&k->ctx->err, KT_INVALID, "kernel %s: parameter %s: dimension %d is %lld, expected %lld (shape %s with %s)",
          d->name, p->name, dim, (long long)extent, (long long)want, s.s, why.len ? why.s : "no sizes");
  kt__sbuf_free(&s);
  kt__sbuf_free(&why);
  return KT_INVALID;
}

static int read_sizes(kt_kernel *k, const int *ranks, const int64_t *const *shapes, int64_t *sizes, origin *from) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nparams; i++)
    if (d->params[i].is_tensor) KT__FORWARD(check_rank(k, i, ranks[i]));
  KT__FORWARD(check_extents(k, shapes));
  bind_from_shapes(d, shapes, sizes, from);
  KT__FORWARD(check_bound(k, sizes));
  for (int i = 0; i < d->nparams; i++)
    for (int dim = 0; d->params[i].is_tensor && dim < d->params[i].ndims; dim++)
      KT__FORWARD(check_dim(k, i, dim, shapes[i][dim], sizes, from));
  return KT_OK;
}

static int sizes_from_shapes(kt_kernel *k, const int *ranks, const int64_t *const *shapes, int64_t *sizes) {
  origin *from = kt__xcalloc((size_t)k->decl->nsizes + 1, sizeof *from);
  for (int j = 0; j < k->decl->nsizes; j++) from[j] = (origin){-1, -1};
  int rc = read_sizes(k, ranks, shapes, sizes, from);
  free(from);
  return rc;
}

static int cmp_size(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Whether the N values at A are those at B in another order. */
static bool reordered(const int64_t *a, const int64_t *b, int n) {
  if (memcmp(a, b, (size_t)n * sizeof *a) == 0) return false;
  int64_t *sa = kt__xmalloc((size_t)n * sizeof *sa), *sb = kt__xmalloc((size_t)n * sizeof *sb);
  memcpy(sa, a, (size_t)n * sizeof *sa);
  memcpy(sb, b, (size_t)n * sizeof *sb);
  qsort(sa, (size_t)n, sizeof *sa, cmp_size);
  qsort(sb, (size_t)n, sizeof *sb, cmp_size);
  bool same = memcmp(sa, sb, (size_t)n * sizeof *sa) == 0;
  free(sa);
  free(sb);
  return same;
}

static void sizes_text(const kt__kernel_decl *d, const int64_t *sizes, kt__sbuf *b) {
  for (int j = 0; j < d->nsizes; j++) kt__sbuf_printf(b, "%s%s=%lld", j ? ", " : "", d->sizes[j], (long long)sizes[j]);
}

/* Sizes the caller gave that the shapes contradict but, reordered, agree
 * with are sizes in another order than kt_launch's (M, N, K written for the
 * matmul's M, K, N): the message (already in the context) says so. */
static void hint_reordered(kt_kernel *k, const int *ranks, const int64_t *const *shapes, const int64_t *given) {
  const kt__kernel_decl *d = k->decl;
  for (int j = 0; j < d->nsizes; j++)
    if (given[j] <= 0) return; /* only a full set of sizes can be a reordered one */
  kt__errbuf first = k->ctx->err;
  int64_t *derived = kt__xcalloc((size_t)d->nsizes + 1, sizeof *derived);
  bool hint = sizes_from_shapes(k, ranks, shapes, derived) == KT_OK && reordered(given, derived, d->nsizes);
  k->ctx->err = first;
  if (hint) {
    kt__sbuf g = {0}, s = {0}, names = {0};
    sizes_text(d, given, &g);
    sizes_text(d, derived, &s);
    for (int j = 0; j < d->nsizes; j++) kt__sbuf_printf(&names, "%s%s", j ? ", " : "", d->sizes[j]);
    kt__err(&k->ctx->err, KT_INVALID,
            "%s; the sizes given (%s) are the shapes' (%s) in another order: kt_launch takes them in "
            "kt_kernel_size_name order (%s), and kt_kernel_sizes_by_name takes them by name",
            first.msg, g.s, s.s, names.s);
    kt__sbuf_free(&g);
    kt__sbuf_free(&s);
    kt__sbuf_free(&names);
  }
  free(derived);
}

int kt_kernel_sizes_from_shapes(kt_kernel *k, const int *ranks, const int64_t *const *shapes, int64_t *sizes) {
  if (!k || !sizes || (!ranks && k->decl->nparams) || (!shapes && k->decl->nparams)) return KT_INVALID;
  int64_t *given = kt__xcalloc((size_t)k->decl->nsizes + 1, sizeof *given);
  memcpy(given, sizes, (size_t)k->decl->nsizes * sizeof *given);
  int rc = sizes_from_shapes(k, ranks, shapes, sizes);
  if (rc != KT_OK) hint_reordered(k, ranks, shapes, given);
  free(given);
  return rc;
}

int kt_kernel_scalar_value(kt_kernel *k, int i, const int64_t *sizes, void *value) {
  const kt__kernel_decl *d = k->decl;
  KT__RETURN_IF(i < 0 || i >= d->nparams || d->params[i].is_tensor, &k->ctx->err, KT_INVALID,
                "kernel %s: parameter %d is not a scalar", d->name, i);
  const kt__param *p = &d->params[i];
  KT__RETURN_IF(!scalar_has_value(d, p), &k->ctx->err, KT_NOTFOUND,
                "kernel %s: scalar %s has no expression on the @kernel line; give its value", d->name, p->name);
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  unsigned char bytes[8];
  size_t size;
  KT__FORWARD(kt__scalar_value(d, i, &env, bytes, &size, &k->ctx->err));
  memcpy(value, bytes, size);
  return KT_OK;
}
