/* A program built against an installed ktune (tests/e2e/install.sh): it
 * loads a small annotated kernel, launches it through kt_launch (which tunes
 * it on the first call, on the CPU backend) and checks the result. Exit 0
 * when every element is right. */
#include <stdint.h>
#include <stdio.h>

#include <ktune.h>

static const char KERNEL[] = "// @autotune(UNROLL in [1, 4])\n"
                             "// @kernel scale(x: inout tensor<f32>[N], n: i32 = N)\n"
                             "// @dims(N = 64)\n"
                             "void scale(float *x, int n) {\n"
                             "  for (int i = 0; i < n; i += UNROLL)\n"
                             "    for (int u = 0; u < UNROLL && i + u < n; u++) x[i + u] *= 2;\n"
                             "}\n";

int main(void) {
  kt_options opt = {0};
  opt.no_db = 1;
  opt.quiet = 1;
  kt_context *ctx;
  kt_kernel *k;
  if (kt_context_create(&opt, &ctx) != KT_OK || kt_kernel_load_string(ctx, "scale.c", KERNEL, "c", NULL, &k) != KT_OK) {
    fprintf(stderr, "scale: %s\n", kt_errmsg(ctx));
    return 1;
  }
  enum { N = 64 };
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  int64_t sizes[] = {N};
  int n = N;
  void *args[] = {x, &n};
  int rc = kt_launch(k, sizes, args, NULL);
  if (rc != KT_OK) fprintf(stderr, "scale: kt_launch: %s\n", kt_errmsg(ctx));
  for (int i = 0; rc == KT_OK && i < N; i++)
    if (x[i] != 2.0f * (float)i) {
      fprintf(stderr, "scale: x[%d] = %g, want %g\n", i, x[i], 2.0 * i);
      rc = 1;
    }
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  if (rc == KT_OK) printf("scale: ok\n");
  return rc == KT_OK ? 0 : 1;
}
