/* The command-line value parsers: --dim NAME=VALUE (kt_kernel_set_size_arg)
 * and --autotune "NAME=VALUE ..." (kt_kernel_pin, and the same text parsed
 * over the kernel's real space with its @where and pinned there). The input is split at the first
 * newline: the --dim text before it, the --autotune text after. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "handles/context.h"
#include "space/space.h"

static const char kernel[] = "// @autotune(BLOCK in [64, 1024], VEC in [1, 2, 4, 8], U in [-3, 0, 7])\n"
                             "// @cluster(CLUSTER_X in [1, 2])\n"
                             "// @where(BLOCK * VEC <= 4096)\n"
                             "// @kernel f(x: in tensor<f32>[N], y: out tensor<f32>[M, N], n: i32 = N)\n"
                             "// @dims(N = 64, M = 2)\n"
                             "void f(const float *x, float *y, int n) { }\n";

static kt_context *ctx;
static kt_kernel *k;

static void setup(void) {
  kt_options o = {.no_db = 1, .quiet = 1};
  kt_context_create(&o, &ctx);
  if (kt_kernel_load_string(ctx, "fuzz.c", kernel, "c", NULL, &k) != KT_OK) abort();
}

static void pin_space(const char *spec) {
  int64_t sizes[2] = {64, 2};
  kt__env env = {(const char *const *)k->decl->sizes, sizes, k->decl->nsizes, NULL};
  kt__space *s = NULL;
  kt__errbuf eb;
  if (kt__space_create(k->decl->tune, k->decl->ntune, k->decl->where, k->decl->nwhere, &env, &s, &eb) != KT_OK) abort();
  kt__sbuf warn = {0};
  kt__config_pins pins;
  kt__config_pins_init(&pins, kt__space_ndims(s));
  if (kt__config_parse_pins(kt__space_names(s), kt__space_ndims(s), spec, "--autotune", &pins, &eb) == KT_OK) {
    kt__space_pin_values(s, &pins, &warn);
    uint64_t n = kt__space_size(s);
    if (n == 0 || n > 8 * 6 * 3) abort(); /* pinning only shrinks */
    (void)kt__space_count_valid(s, 1000);
  }
  kt__config_pins_free(&pins);
  kt__sbuf_free(&warn);
  kt__space_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!k) setup();
  char *text = kt__fuzz_string(data, size);
  char *nl = strchr(text, '\n');
  const char *pin = "";
  if (nl) *nl = 0, pin = nl + 1;
  (void)kt_kernel_set_size_arg(k, text);
  for (int i = 0; i < k->decl->nsizes; i++) k->size_given[i] = false;
  (void)kt_kernel_pin(k, pin);
  (void)kt_kernel_pin(k, NULL);
  pin_space(pin);
  free(text);
  return 0;
}
