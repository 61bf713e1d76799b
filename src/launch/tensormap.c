#include "tensormap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

/* TMA's limits (CUDA driver API, cuTensorMapEncodeTiled). */
enum { MAX_BOX = 256, ALIGN_BYTES = 16 };
static const uint64_t MAX_DIM = (uint64_t)1 << 32, MAX_STRIDE = (uint64_t)1 << 40;

/* Evaluates the WHAT expression E of tensor map Q into OUT, at least 1. */
static int positive(const kt__param *q, const kt__expr *e, const kt__env *env, const char *what, uint64_t limit,
                    uint64_t *out, kt__errbuf *eb) {
  char label[200];
  snprintf(label, sizeof label, "tensor map %s: %s", q->name, what);
  int64_t v;
  KT__FORWARD(kt__eval_for(e, env, label, &v, eb));
  KT__RETURN_IF(v < 1 || (uint64_t)v > limit, eb, KT_INVALID, "%s is %" PRId64 ", outside 1 to %" PRIu64, label, v,
                limit);
  *out = (uint64_t)v;
  return KT_OK;
}

/* The mapped tensor's extents, innermost first, and the byte strides of
 * the outer ones (C order: each the product of the extents inside it). */
static int global_shape(const kt__param *q, const kt__param *t, const kt__env *env, kt__tensormap_spec *s,
                        kt__errbuf *eb) {
  uint64_t elem = kt__dtype_size(t->type), stride = elem;
  for (int i = 0; i < s->rank; i++) {
    char what[64];
    snprintf(what, sizeof what, "dimension %d of %s", t->ndims - 1 - i, t->name);
    KT__FORWARD(positive(q, t->dims[t->ndims - 1 - i], env, what, MAX_DIM, &s->dims[i], eb));
    if (i == 0) continue;
    KT__RETURN_IF(s->dims[i - 1] > MAX_STRIDE / stride, eb, KT_INVALID,
                  "tensor map %s: tensor %s is too large for TMA (a stride of 2^40 bytes or more)", q->name, t->name);
    stride *= s->dims[i - 1];
    KT__RETURN_IF(stride % ALIGN_BYTES != 0, eb, KT_INVALID,
                  "tensor map %s: a row of %s is %" PRIu64 " bytes, not a multiple of %d as TMA needs", q->name,
                  t->name, stride, ALIGN_BYTES);
    s->strides[i - 1] = stride;
  }
  return KT_OK;
}

static int box_and_swizzle(const kt__param *q, const kt__env *env, kt__tensormap_spec *s, kt__errbuf *eb) {
  for (int i = 0; i < s->rank; i++) {
    char what[64];
    snprintf(what, sizeof what, "box extent %d", q->nbox - 1 - i);
    uint64_t v;
    KT__FORWARD(positive(q, q->box[q->nbox - 1 - i], env, what, MAX_BOX, &v, eb));
    s->box[i] = (uint32_t)v;
  }
  int64_t sw = 0;
  char label[200];
  snprintf(label, sizeof label, "tensor map %s: swizzle", q->name);
  if (q->swizzle) KT__FORWARD(kt__eval_for(q->swizzle, env, label, &sw, eb));
  KT__RETURN_IF(sw != 0 && sw != 32 && sw != 64 && sw != 128, eb, KT_INVALID,
                "%s is %" PRId64 "; TMA swizzles 0, 32, 64 or 128 bytes", label, sw);
  s->swizzle = (uint32_t)sw;
  uint64_t row = (uint64_t)s->box[0] * kt__dtype_size(s->type);
  KT__RETURN_IF(row % ALIGN_BYTES != 0, eb, KT_INVALID,
                "tensor map %s: the box's innermost extent is %" PRIu64 " bytes, not a multiple of %d as TMA needs",
                q->name, row, ALIGN_BYTES);
  KT__RETURN_IF(sw && row > (uint64_t)sw, eb, KT_INVALID,
                "tensor map %s: the box's innermost extent is %" PRIu64
                " bytes, wider than its swizzle span of %" PRId64 " bytes",
                q->name, row, sw);
  return KT_OK;
}

int kt__tensormap_describe(const kt__kernel_decl *decl, int p, const kt__env *env, kt__tensormap_spec *spec,
                           kt__errbuf *eb) {
  const kt__param *q = &decl->params[p];
  KT__RETURN_IF(!q->is_tensormap || q->map_tensor < 0, eb, KT_INTERNAL, "parameter %s is no tensor map", q->name);
  const kt__param *t = &decl->params[q->map_tensor];
  memset(spec, 0, sizeof *spec); /* the backend's cache compares whole specs */
  spec->param = p;
  spec->tensor = q->map_tensor;
  spec->type = t->type;
  spec->rank = t->ndims;
  KT__FORWARD(global_shape(q, t, env, spec, eb));
  return box_and_swizzle(q, env, spec, eb);
}
