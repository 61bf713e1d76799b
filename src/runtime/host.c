/* kt_launch_host: a launch on tensors in host memory, whatever the backend.
 * On a device the tensors go through buffers of the backend's own (its
 * OpenCL context is not handed out, so a caller cannot make buffers that
 * belong to it): every tensor is copied in, the kernel runs and is waited
 * for, the out and inout tensors are copied back. Nothing is kept between
 * calls: this is the convenient path (NumPy arrays on an OpenCL device), not
 * the fast one. */
#include <stdlib.h>

#include "runtime.h"

#include "../handles/runtime_table.h"
#include "../launch/args.h"

/* Bytes of tensor parameter P at SIZES. */
static int tensor_bytes(kt_kernel *k, int p, const int64_t *sizes, size_t *bytes) {
  const kt__kernel_decl *d = k->decl;
  const kt__param *par = &d->params[p];
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  uint64_t n = kt__dtype_size(par->type);
  for (int i = 0; i < par->ndims; i++) {
    int64_t v;
    kt__eval_error ee;
    KT__RETURN_IF(kt__expr_eval(par->dims[i], &env, &v, &ee) != 0, &k->ctx->err, KT_INVALID,
                  "kt_launch_host: tensor %s, dimension %d: %s", par->name, i, ee.msg);
    KT__RETURN_IF(v < 0 || !kt__mul_u64(n, (uint64_t)v, &n) || n > SIZE_MAX, &k->ctx->err, KT_INVALID,
                  "kt_launch_host: tensor %s: its size overflows (dimension %d is %lld)", par->name, i, (long long)v);
  }
  *bytes = (size_t)n;
  return KT_OK;
}

/* Device buffers for every tensor, holding the host contents. */
static int copy_in(kt_kernel *k, const int64_t *sizes, void *const *args, void **dev, size_t *bytes) {
  const kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nparams; i++) {
    dev[i] = args[i]; /* scalars: the caller's address */
    if (!d->params[i].is_tensor) continue;
    dev[i] = NULL;
    KT__FORWARD(tensor_bytes(k, i, sizes, &bytes[i]));
    KT__FORWARD(kt__be_alloc(t->be, t->state, bytes[i], &dev[i], &k->ctx->err));
    KT__FORWARD(kt__be_upload(t->be, t->state, dev[i], args[i], bytes[i], &k->ctx->err));
  }
  return KT_OK;
}

static int copy_out(kt_kernel *k, void *const *args, void **dev, const size_t *bytes) {
  const kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nparams; i++)
    if (d->params[i].is_tensor && d->params[i].mode != KT__MODE_IN)
      KT__FORWARD(kt__be_download(t->be, t->state, args[i], dev[i], bytes[i], &k->ctx->err));
  return KT_OK;
}

static void release(kt_kernel *k, void **dev) {
  for (int i = 0; i < k->decl->nparams; i++)
    if (k->decl->params[i].is_tensor && dev[i]) kt__be_release(k->runtime->be, k->runtime->state, dev[i]);
}

int kt_launch_host(kt_kernel *k, const int64_t *sizes, void *const *args) {
  if (!k || (!sizes && k->decl->nsizes) || (!args && k->decl->nparams)) return KT_INVALID;
  if (k->backend->runs_host_code) return kt_launch(k, sizes, args, NULL);
  void *state;
  KT__FORWARD(kt__runtime_device(k, &state));
  int n = k->decl->nparams;
  void **dev = kt__xcalloc((size_t)n + 1, sizeof *dev);
  size_t *bytes = kt__xcalloc((size_t)n + 1, sizeof *bytes);
  /* Copied in first: a miss that tunes copies the caller's data from the
   * device buffers, as it does for any kt_launch. */
  int rc = copy_in(k, sizes, args, dev, bytes);
  if (rc == KT_OK) rc = kt_launch(k, sizes, dev, NULL); /* NULL: completes before return */
  if (rc == KT_OK) rc = copy_out(k, args, dev, bytes);
  release(k, dev);
  free(dev);
  free(bytes);
  return rc;
}
