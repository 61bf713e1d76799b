/* kt_launch's sizes by name: a caller who writes M, N, K as the kernel's
 * author named them need not know that kt_launch takes them in the order
 * the @kernel line first uses them (M, K, N for the shipped matmul), where a
 * swapped pair would tune and store a wrong key without a word. */
#include <stdlib.h>
#include <string.h>

#include "../handles/context.h"

/* "M, K, N": the kernel's runtime sizes in kt_launch's order. */
static void size_order(const kt__kernel_decl *d, kt__sbuf *b) {
  for (int j = 0; j < d->nsizes; j++) kt__sbuf_printf(b, "%s%s", j ? ", " : "", d->sizes[j]);
  if (d->nsizes == 0) kt__sbuf_printf(b, "(none)");
}

static int size_error(kt_kernel *k, const char *what, const char *name) {
  kt__sbuf order = {0};
  size_order(k->decl, &order);
  kt__err(&k->ctx->err, KT_INVALID, "kernel %s: size %s: %s; its runtime sizes are %s", k->decl->name, name, what,
          order.s);
  kt__sbuf_free(&order);
  return KT_INVALID;
}

/* Puts VALUE for NAME into SIZES; GIVEN marks what was set. */
static int put_size(kt_kernel *k, const char *name, int64_t value, int64_t *sizes, bool *given) {
  int j = name ? kt__decl_size_index(k->decl, name) : -1;
  if (j < 0) return size_error(k, "no such runtime size", name ? name : "(null)");
  if (given[j]) return size_error(k, "given twice", name);
  if (value < 1) return size_error(k, "sizes must be positive", name);
  sizes[j] = value;
  given[j] = true;
  return KT_OK;
}

static int pairs_to_sizes(kt_kernel *k, int n, const char *const *names, const int64_t *values, int64_t *sizes,
                          bool *given) {
  for (int i = 0; i < n; i++) KT__FORWARD(put_size(k, names[i], values[i], sizes, given));
  for (int j = 0; j < k->decl->nsizes; j++)
    if (!given[j]) return size_error(k, "not given", k->decl->sizes[j]);
  return KT_OK;
}

int kt_kernel_sizes_by_name(kt_kernel *k, int n, const char *const *names, const int64_t *values, int64_t *sizes) {
  if (!k || !sizes || n < 0 || (n > 0 && (!names || !values))) return KT_INVALID;
  bool *given = kt__xcalloc((size_t)k->decl->nsizes + 1, sizeof *given);
  int rc = pairs_to_sizes(k, n, names, values, sizes, given);
  free(given);
  return rc;
}
