/* kt_tune in a process that holds the CUDA driver (run by
 * tests/gpu/tune_in_cuda_process_h200.sh on the H200): the program calls
 * cuInit, makes the device's primary context current, allocates and fills a
 * buffer of its own with cuMemAlloc, and only then tunes
 * kernels/cuda/elementwise.cu with kt_tune, twice in the same process (key
 * N1, then key N2; the first tuning's NVRTC compiles load the driver again
 * into this process, as an application's would). Before, the workers of
 * such a tuning were forked from this process and could not initialise
 * CUDA; now they come from a fresh ktune-tuner image (docs/DESIGN.md, "A
 * zygote of a fresh image"). After both, the program's own context and
 * buffer still work.
 *
 *   tune_in_cuda DB N1 N2 OUTDIR
 *
 * Writes each tuning's --json document to OUTDIR/tune_N.json and prints
 * "tuned N: BLOCK=.. VEC=.. in S s" per key. Exit status 0 when both
 * tunings returned KT_OK with a winner and the program's buffer reads back
 * what it wrote. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_app.h"
#include "ktune.h"

/* One kt_tune of K at N, its document in OUTDIR; 0 when ok with a winner. */
static int tune_at(kt_context *ctx, kt_kernel *k, long long n, const char *outdir) {
  if (kt_kernel_set_size(k, "N", n) != KT_OK) {
    fprintf(stderr, "N=%lld: %s\n", n, kt_errmsg(ctx));
    return 1;
  }
  kt_tune_options o = {0};
  o.no_cache = 1; /* measured here, whatever the database holds */
  kt_result *r = NULL;
  double t0 = now();
  int rc = kt_tune(k, &o, &r);
  double secs = now() - t0;
  if (r) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tune_%lld.json", outdir, n);
    FILE *f = fopen(path, "w");
    if (f) {
      kt_result_print_json(r, f);
      fclose(f);
    }
  }
  int64_t block = 0, vec = 0;
  int ok = rc == KT_OK && r && kt_result_winner_value(r, "BLOCK", &block) == KT_OK &&
           kt_result_winner_value(r, "VEC", &vec) == KT_OK && kt_result_winner_seconds(r) > 0;
  if (ok) printf("tuned %lld: BLOCK=%lld VEC=%lld in %.2f s\n", n, (long long)block, (long long)vec, secs);
  else fprintf(stderr, "kt_tune at N=%lld: %s (rc %d)\n", n, kt_errmsg(ctx) ? kt_errmsg(ctx) : "?", rc);
  kt_result_destroy(r);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: tune_in_cuda DB N1 N2 OUTDIR\n");
    return 2;
  }
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx_cu;
  CU(cuDevicePrimaryCtxRetain(&ctx_cu, dev));
  CU(cuCtxSetCurrent(ctx_cu));
  size_t bytes = 64 << 20;
  CUdeviceptr mine;
  CU(cuMemAlloc(&mine, bytes));
  CU(cuMemsetD8(mine, 0x5a, bytes));
  CU(cuCtxSynchronize());

  kt_options opt = {0};
  opt.backend = KT_BACKEND_CUDA;
  opt.db_path = argv[1];
  opt.quiet = 1;
  kt_context *ctx;
  if (kt_context_create(&opt, &ctx) != KT_OK) {
    fprintf(stderr, "kt_context_create failed\n");
    return 1;
  }
  kt_kernel *k;
  if (kt_kernel_load_file(ctx, "kernels/cuda/elementwise.cu", NULL, &k) != KT_OK) {
    fprintf(stderr, "load: %s\n", kt_errmsg(ctx));
    return 1;
  }
  int failed = tune_at(ctx, k, atoll(argv[2]), argv[4]);
  failed |= tune_at(ctx, k, atoll(argv[3]), argv[4]);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);

  /* The program's own context and memory are untouched by the tunings. */
  unsigned char back[4096];
  CU(cuMemcpyDtoH(back, mine + bytes - sizeof back, sizeof back));
  for (size_t i = 0; i < sizeof back; i++)
    if (back[i] != 0x5a) {
      fprintf(stderr, "the program's buffer changed at byte %zu\n", i);
      failed = 1;
      break;
    }
  CU(cuMemFree(mine));
  CU(cuDevicePrimaryCtxRelease(dev));
  printf(failed ? "FAILED\n" : "both tunings ok\n");
  return failed;
}
