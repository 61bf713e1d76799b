/* Host-side kernel arguments: shapes checked before anything is allocated,
 * contents in shared anonymous mappings made before the first fork, so that
 * every worker (restarted ones included) reads the same inputs and writes
 * the reference where the tuner and later workers see it. */
#include "args.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../config.h"
#include "../parallel.h"
#include "../verify/verify.h"

/* No dimension of a real tensor comes near this; a bigger one is a typo or a
 * runaway expression, reported before the product check hides which one. */
static const uint64_t MAX_DIM = (uint64_t)1 << 48;

bool kt__env_lookup(const kt__env *env, const char *name, int64_t *out) {
  for (; env; env = env->parent)
    for (int i = 0; i < env->n; i++)
      if (strcmp(env->names[i], name) == 0) {
        *out = env->values[i];
        return true;
      }
  return false;
}

static int eval_or_fail(const kt__expr *e, const kt__env *env, const char *what, int64_t *out, kt__errbuf *eb) {
  kt__eval_error ee = {{0, 0}, {0}};
  if (kt__expr_eval(e, env, out, &ee) == 0) return KT_OK;
  kt__sbuf text = {0}, values = {0};
  kt__expr_print(e, &text);
  /* The values it was evaluated with: the sizes (tensor shapes), or the
   * configuration and the sizes (launch geometry, scalars). */
  for (const kt__env *v = env; v; v = v->parent) {
    kt__sbuf level = {0};
    kt__config_format(v->names, v->values, v->n, "", &level);
    if (level.len) kt__sbuf_printf(&values, "%s%s", values.len ? " " : "", level.s);
    kt__sbuf_free(&level);
  }
  kt__err(eb, KT_INVALID, "%d:%d: %s `%s`: %s%s%s", ee.loc.line, ee.loc.col, what, text.s ? text.s : "", ee.msg,
          values.len ? " with " : "", values.len ? values.s : "");
  kt__sbuf_free(&text);
  kt__sbuf_free(&values);
  return KT_INVALID;
}

static uint64_t default_max_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (uint64_t)1 << 32;
  return (uint64_t)pages * (uint64_t)page / 2;
}

/* Evaluates dimension D of P with SIZES, and with VALUES of tuned names when
 * they are given. */
static int eval_dim(const kt__param *p, int d, const kt__env *env, int64_t *v, kt__errbuf *eb) {
  char what[300];
  snprintf(what, sizeof what, "dimension %d of tensor %s", d + 1, p->name);
  KT__FORWARD(eval_or_fail(p->dims[d], env, what, v, eb));
  KT__RETURN_IF(*v < 0, eb, KT_INVALID, "%d:%d: tensor %s: dimension %d is negative (%" PRId64 ")", p->loc.line,
                p->loc.col, p->name, d + 1, *v);
  KT__RETURN_IF((uint64_t)*v > MAX_DIM, eb, KT_INVALID,
                "%d:%d: tensor %s: dimension %d is absurdly large (%" PRId64 ")", p->loc.line, p->loc.col, p->name,
                d + 1, *v);
  return KT_OK;
}

/* No shape's tuned names have more combinations of choices than this in a
 * real kernel; past it the largest shape is not searched for. */
enum { MAX_SHAPE_COMBINATIONS = 1 << 20 };

typedef struct tuned_shape {
  const kt__kernel_decl *decl;
  const kt__tunedim *dims[KT__MAX_NAMES];
  int n;
} tuned_shape;

static void collect_tuned(void *ud, const char *name, kt__loc at) {
  (void)at;
  tuned_shape *ts = ud;
  const kt__kernel_decl *d = ts->decl;
  for (int i = 0; i < d->ntune + d->ncluster; i++) {
    const kt__tunedim *t = i < d->ntune ? &d->tune[i] : &d->cluster[i - d->ntune];
    if (strcmp(t->name, name) != 0) continue;
    for (int j = 0; j < ts->n; j++)
      if (ts->dims[j] == t) return;
    if (ts->n < KT__MAX_NAMES) ts->dims[ts->n++] = t;
  }
}

/* Each dimension of P at its largest over every combination of the choices
 * of the tuned names it uses (@where aside: a larger buffer is harmless). */
static int largest_shape(const kt__kernel_decl *decl, const kt__param *p, const kt__env *sizes, uint64_t *shape,
                         kt__errbuf *eb) {
  tuned_shape ts = {.decl = decl};
  for (int d = 0; d < p->ndims; d++) kt__expr_visit_names(p->dims[d], collect_tuned, &ts);
  uint64_t combos = 1;
  for (int i = 0; i < ts.n; i++)
    KT__RETURN_IF(!kt__mul_u64(combos, (uint64_t)ts.dims[i]->count, &combos) || combos > MAX_SHAPE_COMBINATIONS, eb,
                  KT_INVALID, "%d:%d: tensor %s: its shape's tuned names have more than %d combinations of choices",
                  p->loc.line, p->loc.col, p->name, MAX_SHAPE_COMBINATIONS);
  const char *names[KT__MAX_NAMES];
  int64_t values[KT__MAX_NAMES];
  for (int i = 0; i < ts.n; i++) names[i] = ts.dims[i]->name;
  kt__env env = {names, values, ts.n, sizes};
  for (int d = 0; d < p->ndims; d++) shape[d] = 0;
  for (uint64_t c = 0; c < combos; c++) {
    uint64_t rest = c;
    for (int i = 0; i < ts.n; i++) {
      values[i] = ts.dims[i]->values[rest % (uint64_t)ts.dims[i]->count];
      rest /= (uint64_t)ts.dims[i]->count;
    }
    for (int d = 0; d < p->ndims; d++) {
      int64_t v;
      KT__FORWARD(eval_dim(p, d, &env, &v, eb));
      if ((uint64_t)v > shape[d]) shape[d] = (uint64_t)v;
    }
  }
  return KT_OK;
}

/* Evaluates the shape of tensor parameter P into T (count, bytes, shape). */
static int tensor_shape(const kt__kernel_decl *decl, const kt__param *p, const kt__env *sizes, kt__host_tensor *t,
                        kt__errbuf *eb) {
  t->shape = kt__xcalloc((size_t)(p->ndims ? p->ndims : 1), sizeof *t->shape);
  t->ndims = p->ndims;
  t->shape_tuned = p->shape_tuned;
  if (p->shape_tuned) {
    KT__FORWARD(largest_shape(decl, p, sizes, t->shape, eb));
  } else {
    for (int d = 0; d < p->ndims; d++) {
      int64_t v;
      KT__FORWARD(eval_dim(p, d, sizes, &v, eb));
      t->shape[d] = (uint64_t)v;
    }
  }
  uint64_t count = 1;
  for (int d = 0; d < p->ndims; d++)
    KT__RETURN_IF(!kt__mul_u64(count, t->shape[d], &count), eb, KT_INVALID,
                  "%d:%d: tensor %s: the element count overflows 64 bits", p->loc.line, p->loc.col, p->name);
  uint64_t bytes;
  KT__RETURN_IF(!kt__mul_u64(count, kt__dtype_size(p->type), &bytes) || bytes > SIZE_MAX / 2, eb, KT_INVALID,
                "%d:%d: tensor %s: %" PRIu64 " elements do not fit in memory", p->loc.line, p->loc.col, p->name, count);
  t->count = count;
  t->bytes = (size_t)bytes;
  return KT_OK;
}

/* The bounds of V in type T, as int64 (u64's top half aside). */
static void type_range(kt__dtype t, int64_t *lo, int64_t *hi) {
  *lo = INT64_MIN, *hi = INT64_MAX;
  switch (t) {
  case KT__DT_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
  case KT__DT_U8: *lo = 0, *hi = UINT8_MAX; break;
  case KT__DT_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
  case KT__DT_U32: *lo = 0, *hi = UINT32_MAX; break;
  case KT__DT_U64: *lo = 0; break;
  default: break;
  }
}

/* = random(LO, HI): evaluated now, and checked to be a range the type holds. */
static int random_range(const kt__param *p, const kt__env *sizes, kt__host_tensor *t, kt__errbuf *eb) {
  if (!p->random_lo) return KT_OK;
  char what[300];
  snprintf(what, sizeof what, "the random range of tensor %s", p->name);
  KT__FORWARD(eval_or_fail(p->random_lo, sizes, what, &t->lo, eb));
  KT__FORWARD(eval_or_fail(p->random_hi, sizes, what, &t->hi, eb));
  KT__RETURN_IF(t->lo >= t->hi, eb, KT_INVALID,
                "%d:%d: tensor %s: random(%" PRId64 ", %" PRId64 ") is empty; the values are LO <= v < HI", p->loc.line,
                p->loc.col, p->name, t->lo, t->hi);
  int64_t tlo, thi;
  type_range(p->type, &tlo, &thi);
  KT__RETURN_IF(!kt__dtype_is_float(p->type) && (t->lo < tlo || t->hi - 1 > thi), eb, KT_INVALID,
                "%d:%d: tensor %s: random(%" PRId64 ", %" PRId64 ") holds values a %s cannot", p->loc.line, p->loc.col,
                p->name, t->lo, t->hi, kt__dtype_name(p->type));
  t->ranged = true;
  return KT_OK;
}

static bool writes(kt__mode m) { return m != KT__MODE_IN; }

/* Describes every tensor and checks the total; allocates only the small
 * bookkeeping, none of the tensor memory. */
static int plan(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, kt__argset *a, kt__errbuf *eb) {
  a->tensor_of_param = kt__xcalloc((size_t)(decl->nparams ? decl->nparams : 1), sizeof *a->tensor_of_param);
  a->tensors = kt__xcalloc((size_t)(decl->nparams ? decl->nparams : 1), sizeof *a->tensors);
  uint64_t total = 0;
  const kt__param *largest = NULL;
  size_t largest_bytes = 0;
  for (int i = 0; i < decl->nparams; i++) {
    const kt__param *p = &decl->params[i];
    a->tensor_of_param[i] = -1;
    if (!p->is_tensor) continue;
    kt__host_tensor *t = &a->tensors[a->ntensors];
    *t = (kt__host_tensor){.param = i, .type = p->type, .mode = p->mode == KT__MODE_UNSET ? KT__MODE_INOUT : p->mode};
    a->tensor_of_param[i] = a->ntensors++;
    KT__FORWARD(tensor_shape(decl, p, sizes, t, eb));
    KT__FORWARD(random_range(p, sizes, t, eb));
    t->compared = t->reference_set = writes(t->mode); /* the default's outputs are the reference */
    if (t->bytes >= largest_bytes) largest = p, largest_bytes = t->bytes;
    KT__RETURN_IF(!kt__add_u64(total, t->bytes, &total), eb, KT_INVALID, "the tensors' total size overflows");
  }
  if (max_bytes == 0) max_bytes = default_max_bytes();
  KT__RETURN_IF(total > max_bytes, eb, KT_INVALID,
                "the tensors need %.3g GB, more than the %.3g GB allowed (the largest is %s, %.3g GB); "
                "choose smaller sizes",
                (double)total / 1e9, (double)max_bytes / 1e9, largest ? largest->name : "?",
                (double)largest_bytes / 1e9);
  a->total_bytes = (size_t)total;
  return KT_OK;
}

static size_t page_round(size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (n + page - 1) / page * page;
}

/* One page-aligned region after another, in tensor order (both sides of a
 * kt__argset_attach compute the same). */
void kt__argset_layout(kt__argset *a, size_t *initial, size_t *reference) {
  size_t at = 0;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    size_t len = page_round(t->bytes ? t->bytes : 1);
    if (initial) initial[k] = at;
    at += len;
    if (reference) reference[k] = writes(t->mode) ? at : SIZE_MAX;
    if (writes(t->mode)) at += len;
  }
  a->map_bytes = at ? at : page_round(1);
}

/* Maps A's layout from FD at OFFSET (shared, writable) and points each
 * tensor into it. */
static int map_layout(const kt__kernel_decl *decl, kt__argset *a, int fd, size_t offset, kt__errbuf *eb) {
  size_t *initial = kt__xcalloc((size_t)a->ntensors + 1, sizeof *initial);
  size_t *reference = kt__xcalloc((size_t)a->ntensors + 1, sizeof *reference);
  kt__argset_layout(a, initial, reference);
  void *base = mmap(NULL, a->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
  int rc = KT_OK;
  if (base == MAP_FAILED) {
    rc = kt__err(eb, KT_NOMEM, "cannot map %zu bytes of shared memory for the tensors of %s: %s", a->map_bytes,
                 decl->name, strerror(errno));
  } else {
    a->base = base;
    for (int k = 0; k < a->ntensors; k++) {
      a->tensors[k].initial = (char *)base + initial[k];
      if (reference[k] != SIZE_MAX) a->tensors[k].reference = (char *)base + reference[k];
    }
  }
  free(initial);
  free(reference);
  return rc;
}

/* The tensors' shared memory: one memfd, so that a worker that did not fork
 * from this process can map it too (kt__argset_attach). */
static int allocate(const kt__kernel_decl *decl, kt__argset *a, kt__errbuf *eb) {
  a->fd = memfd_create("ktune-tensors", MFD_CLOEXEC);
  KT__RETURN_IF(a->fd < 0, eb, KT_NOMEM, "cannot make shared memory for the tensors of %s: %s", decl->name,
                strerror(errno));
  kt__argset_layout(a, NULL, NULL);
  KT__RETURN_IF(ftruncate(a->fd, (off_t)a->map_bytes) != 0, eb, KT_NOMEM,
                "cannot size %zu bytes of shared memory for the tensors of %s: %s", a->map_bytes, decl->name,
                strerror(errno));
  return map_layout(decl, a, a->fd, 0, eb);
}

static int read_whole(const kt__data_source *src, void *buf, size_t bytes, kt__errbuf *eb) {
  kt__data_header h;
  KT__FORWARD(kt__data_header_read(src, &h, eb));
  return kt__data_read(src, &h, buf, bytes, eb);
}

bool kt__output_poisoned(const kt__kernel_decl *decl, const kt__host_tensor *t) {
  return t->mode == KT__MODE_OUT && !decl->params[t->param].init_given;
}

/* Whether tensor T's initial content is the caller's (kt__argset_take). */
static bool given_by_caller(const kt__host_tensor *t, void *const *given) {
  return given && t->mode != KT__MODE_OUT && given[t->param];
}

/* Tensor T's (the K-th) initial content from its file IN, else its @kernel
 * initial value P->init. */
static int write_initial(kt__host_tensor *t, const kt__param *p, const kt__data_source *in, uint64_t seed, int k,
                         kt__errbuf *eb) {
  if (in) return read_whole(in, t->initial, t->bytes, eb);
  if (t->ranged) kt__fill_random_in(t->type, t->initial, t->count, t->lo, t->hi, seed + (uint64_t)k);
  else kt__fill(t->type, t->initial, t->count, p->init == KT__INIT_FILE ? KT__INIT_ZEROS : p->init, seed + (uint64_t)k);
  return KT_OK;
}

int kt__argset_fill(const kt__kernel_decl *decl, uint64_t seed, const kt__data_source *inputs,
                    const kt__data_source *expects, void *const *given, kt__argset *a, kt__errbuf *eb) {
  for (int k = 0; k < a->ntensors; k++) {
    kt__host_tensor *t = &a->tensors[k];
    const kt__data_source *in = inputs && inputs[t->param].path ? &inputs[t->param] : NULL;
    /* Writing poison into a poisoned output's unread initial content cost
     * the first miss's helper a tenth of a second per 256 MB of fresh pages. */
    bool unread = kt__output_poisoned(decl, t) && !in;
    if (!given_by_caller(t, given) && !unread) {
      kt__prefault(t->initial, t->bytes); /* at once, rather than a fault per page */
      KT__FORWARD(write_initial(t, &decl->params[t->param], in, seed, k, eb));
    }
    /* The others' pages are allocated by threads of the tuner while this
     * runs (setup.c, start_reference_pages). */
    if (t->reference && expects && expects[t->param].path)
      KT__FORWARD(read_whole(&expects[t->param], t->reference, t->bytes, eb));
  }
  return KT_OK;
}

void kt__argset_take(kt__argset *a, void *const *given) {
  int cores = kt__ncores();
  for (int k = 0; k < a->ntensors; k++) {
    kt__host_tensor *t = &a->tensors[k];
    if (given_by_caller(t, given)) kt__copy_parallel(t->initial, given[t->param], t->bytes, cores);
  }
}

int kt__argset_plan(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, kt__argset **out,
                    kt__errbuf *eb) {
  *out = NULL;
  kt__argset *a = kt__xcalloc(1, sizeof *a);
  a->fd = -1;
  int rc = plan(decl, sizes, max_bytes, a, eb);
  if (rc != KT_OK) {
    kt__argset_free(a);
    return rc;
  }
  *out = a;
  return KT_OK;
}

int kt__argset_map(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, kt__argset **out,
                   kt__errbuf *eb) {
  *out = NULL;
  kt__argset *a = kt__xcalloc(1, sizeof *a);
  a->fd = -1;
  int rc = plan(decl, sizes, max_bytes, a, eb);
  if (rc == KT_OK) rc = allocate(decl, a, eb);
  if (rc != KT_OK) {
    kt__argset_free(a);
    return rc;
  }
  *out = a;
  return KT_OK;
}

int kt__argset_adopt(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, int fd, size_t offset,
                     size_t bytes, kt__argset **out, kt__errbuf *eb) {
  *out = NULL;
  kt__argset *a = kt__xcalloc(1, sizeof *a);
  a->fd = -1;
  int rc = plan(decl, sizes, max_bytes, a, eb);
  if (rc == KT_OK) kt__argset_layout(a, NULL, NULL);
  if (rc == KT_OK && a->map_bytes != bytes)
    rc = kt__err(eb, KT_NOTFOUND, "the shared memory holds %zu bytes of tensors, %s's layout %zu", bytes, decl->name,
                 a->map_bytes);
  if (rc == KT_OK && (a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
    rc = kt__err(eb, KT_IO, "cannot keep the shared memory of the tensors of %s: %s", decl->name, strerror(errno));
  a->fd_offset = offset;
  a->adopted = true;
  if (rc == KT_OK) rc = map_layout(decl, a, a->fd, offset, eb);
  if (rc != KT_OK) {
    kt__argset_free(a);
    return rc;
  }
  *out = a;
  return KT_OK;
}

int kt__argset_attach(const kt__kernel_decl *decl, const kt__env *sizes, int fd, size_t offset, const bool *compared,
                      const bool *reference_set, kt__argset **out, kt__errbuf *eb) {
  *out = NULL;
  kt__argset *a = kt__xcalloc(1, sizeof *a);
  a->fd = -1;
  int rc = plan(decl, sizes, UINT64_MAX, a, eb);
  if (rc == KT_OK) {
    for (int k = 0; k < a->ntensors; k++)
      a->tensors[k].compared = compared[k], a->tensors[k].reference_set = reference_set[k];
    rc = map_layout(decl, a, fd, offset, eb);
  }
  if (rc != KT_OK) {
    kt__argset_free(a);
    return rc;
  }
  *out = a;
  return KT_OK;
}

void kt__argset_free(kt__argset *a) {
  if (!a) return;
  if (a->base) munmap(a->base, a->map_bytes);
  if (a->fd >= 0) close(a->fd);
  for (int k = 0; k < a->ntensors; k++) free(a->tensors[k].shape);
  free(a->tensors);
  free(a->tensor_of_param);
  free(a);
}

/* Evaluates up to 3 extents; absent ones are 1; each must be at least 1. */
static int extents(kt__expr *const *ex, int n, const kt__env *env, const char *what, uint64_t v[3], kt__errbuf *eb) {
  static const char axis[] = "xyz";
  for (int i = 0; i < 3; i++) {
    v[i] = 1;
    if (i >= n) continue;
    char label[32];
    snprintf(label, sizeof label, "%s %c", what, axis[i]);
    int64_t x;
    KT__FORWARD(eval_or_fail(ex[i], env, label, &x, eb));
    KT__RETURN_IF(x < 1, eb, KT_INVALID, "%s %c is %" PRId64 ", not a positive count", what, axis[i], x);
    v[i] = (uint64_t)x;
  }
  return KT_OK;
}

/* Every backend counts the launch's work-items, grid * block over all three
 * dimensions, in 64 bits (OpenCL's global size, CUDA's global index): past
 * 2^64 the count wraps and a fraction of the work runs, outputs unwritten. */
static int check_work_items(const uint64_t grid[3], const uint64_t block[3], kt__errbuf *eb) {
  uint64_t total = 1;
  for (int i = 0; i < 3; i++)
    KT__RETURN_IF(!kt__mul_u64(total, grid[i], &total) || !kt__mul_u64(total, block[i], &total), eb, KT_INVALID,
                  "@grid(%" PRIu64 ", %" PRIu64 ", %" PRIu64 ") x @block(%" PRIu64 ", %" PRIu64 ", %" PRIu64
                  ") is more than 2^64 work-items, past what any backend can count",
                  grid[0], grid[1], grid[2], block[0], block[1], block[2]);
  return KT_OK;
}

int kt__launch_geometry(const kt__kernel_decl *decl, const kt__env *env, uint64_t grid[3], uint64_t block[3],
                        uint64_t *shared_bytes, kt__errbuf *eb) {
  KT__FORWARD(extents(decl->grid, decl->ngrid, env, "@grid", grid, eb));
  KT__FORWARD(extents(decl->block, decl->nblock, env, "@block", block, eb));
  KT__FORWARD(check_work_items(grid, block, eb));
  *shared_bytes = 0;
  if (decl->shared) {
    int64_t s;
    KT__FORWARD(eval_or_fail(decl->shared, env, "@shared", &s, eb));
    KT__RETURN_IF(s < 0, eb, KT_INVALID, "@shared is negative (%" PRId64 ")", s);
    *shared_bytes = (uint64_t)s;
  }
  return KT_OK;
}

/* Stores V as type T in OUT, refusing values the type cannot hold. */
static int store_scalar(kt__dtype t, int64_t v, unsigned char out[8], const char *name, kt__errbuf *eb) {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (t) {
  case KT__DT_I8: lo = INT8_MIN, hi = INT8_MAX; break;
  case KT__DT_U8: lo = 0, hi = UINT8_MAX; break;
  case KT__DT_I32: lo = INT32_MIN, hi = INT32_MAX; break;
  case KT__DT_U32: lo = 0, hi = UINT32_MAX; break;
  case KT__DT_U64: lo = 0; break;
  default: break;
  }
  KT__RETURN_IF(v < lo || v > hi, eb, KT_INVALID, "scalar %s = %" PRId64 " does not fit in %s", name, v,
                kt__dtype_name(t));
  memset(out, 0, 8);
  union {
    int8_t i8;
    uint8_t u8;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    uint16_t half;
  } u;
  switch (t) {
  case KT__DT_F16: u.half = kt__f32_to_f16((float)v); break;
  case KT__DT_BF16: u.half = kt__f32_to_bf16((float)v); break;
  case KT__DT_F32: u.f32 = (float)v; break;
  case KT__DT_F64: u.f64 = (double)v; break;
  case KT__DT_I8: u.i8 = (int8_t)v; break;
  case KT__DT_U8: u.u8 = (uint8_t)v; break;
  case KT__DT_I32: u.i32 = (int32_t)v; break;
  case KT__DT_U32: u.u32 = (uint32_t)v; break;
  case KT__DT_I64: u.i64 = v; break;
  case KT__DT_U64: u.u64 = (uint64_t)v; break;
  default: return kt__err(eb, KT_INTERNAL, "scalar %s has an unknown type", name);
  }
  memcpy(out, &u, kt__dtype_size(t));
  return KT_OK;
}

int kt__eval_for(const kt__expr *e, const kt__env *env, const char *what, int64_t *out, kt__errbuf *eb) {
  return eval_or_fail(e, env, what, out, eb);
}

int kt__scalar_value(const kt__kernel_decl *decl, int p, const kt__env *env, unsigned char out[8], size_t *size,
                     kt__errbuf *eb) {
  const kt__param *par = &decl->params[p];
  KT__RETURN_IF(par->is_tensor, eb, KT_INTERNAL, "parameter %s is a tensor, not a scalar", par->name);
  int64_t v;
  if (par->value) {
    char what[300];
    snprintf(what, sizeof what, "scalar %s", par->name);
    KT__FORWARD(eval_or_fail(par->value, env, what, &v, eb));
  } else {
    KT__RETURN_IF(!kt__env_lookup(env, par->name, &v), eb, KT_INVALID,
                  "%d:%d: scalar %s has no value: bind it (%s: %s = EXPR) or give a size named %s", par->loc.line,
                  par->loc.col, par->name, par->name, kt__dtype_name(par->type), par->name);
  }
  *size = kt__dtype_size(par->type);
  return store_scalar(par->type, v, out, par->name, eb);
}

void kt__tensor_index_text(const kt__kernel_decl *decl, const kt__host_tensor *t, uint64_t i, char *buf, size_t size) {
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%s[", decl->params[t->param].name);
  if (t->ndims <= 1) {
    kt__sbuf_printf(&s, "%" PRIu64, i);
  } else {
    uint64_t idx[64], rest = i;
    int nd = t->ndims < 64 ? t->ndims : 64;
    for (int d = nd - 1; d >= 0; d--) {
      uint64_t ext = t->shape[d] ? t->shape[d] : 1;
      idx[d] = rest % ext;
      rest /= ext;
    }
    for (int d = 0; d < nd; d++) kt__sbuf_printf(&s, "%s%" PRIu64, d ? ", " : "", idx[d]);
  }
  kt__sbuf_append(&s, "]", 1);
  snprintf(buf, size, "%s", s.s);
  kt__sbuf_free(&s);
}
