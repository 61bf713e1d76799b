/* The fixed costs of any CUDA tuning run, measured in one fresh process:
 * what a tuner must pay before it can verify or time its first
 * configuration, whatever the space. Used by bench/fixed_costs_h200.sh to
 * state the floor of a small space (16 elementwise configurations).
 *
 *   fixed_costs KERNEL.cu NAME N DEFINES...
 *
 * prints one JSON object (seconds):
 *   init     cuInit
 *   context  primary context retained and made current, first allocation
 *   upload   three N-float buffers allocated, two uploaded from pageable
 *            host memory (the elementwise kernel's x, y and z)
 *   compile  one NVRTC compilation of KERNEL.cu with DEFINES (-DNAME=VALUE),
 *            the options ktune uses (--gpu-architecture=sm_XY, --std=c++17)
 *   load     the CUBIN loaded as a module and the kernel looked up
 * Every CUDA and NVRTC return code is checked; a failure exits 1. */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CU(call)                                                             \
  do {                                                                       \
    CUresult r_ = (call);                                                    \
    if (r_ != CUDA_SUCCESS) {                                                \
      const char *s_ = NULL;                                                 \
      cuGetErrorName(r_, &s_);                                               \
      fprintf(stderr, "fixed_costs: %s failed: %s\n", #call, s_ ? s_ : "?"); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define NV(call)                                                                       \
  do {                                                                                 \
    nvrtcResult r_ = (call);                                                           \
    if (r_ != NVRTC_SUCCESS) {                                                         \
      fprintf(stderr, "fixed_costs: %s failed: %s\n", #call, nvrtcGetErrorString(r_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
  s[n] = 0;
  fclose(f);
  return s;
}

/* One NVRTC compilation to a CUBIN for the device's architecture. */
static char *compile(const char *src, const char *path, const char *name, int major, int minor, int ndef, char **defs) {
  nvrtcProgram prog;
  NV(nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL));
  NV(nvrtcAddNameExpression(prog, name));
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
  const char *opts[64] = {arch, "--std=c++17"};
  int n = 2;
  for (int i = 0; i < ndef && n < 64; i++) opts[n++] = defs[i];
  nvrtcResult r = nvrtcCompileProgram(prog, n, opts);
  if (r != NVRTC_SUCCESS) {
    size_t len = 0;
    nvrtcGetProgramLogSize(prog, &len);
    char *log = malloc(len + 1);
    nvrtcGetProgramLog(prog, log);
    fprintf(stderr, "fixed_costs: compile failed:\n%s\n", log);
    exit(1);
  }
  size_t size = 0;
  NV(nvrtcGetCUBINSize(prog, &size));
  char *cubin = malloc(size);
  NV(nvrtcGetCUBIN(prog, cubin));
  NV(nvrtcDestroyProgram(&prog));
  return cubin;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: fixed_costs KERNEL.cu NAME N [-DNAME=VALUE...]\n");
    return 2;
  }
  size_t n = strtoull(argv[3], NULL, 0), bytes = n * sizeof(float);
  char *src = slurp(argv[1]);

  double t0 = now();
  CU(cuInit(0));
  double t_init = now();
  CUdevice dev;
  CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUdeviceptr probe;
  CU(cuMemAlloc(&probe, 1));
  double t_ctx = now();

  float *host = malloc(bytes);
  if (!host) return 1;
  for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000) * 0.001f;
  double t_fill = now();
  CUdeviceptr x, y, z;
  CU(cuMemAlloc(&x, bytes));
  CU(cuMemAlloc(&y, bytes));
  CU(cuMemAlloc(&z, bytes));
  CU(cuMemcpyHtoD(x, host, bytes));
  CU(cuMemcpyHtoD(y, host, bytes));
  CU(cuCtxSynchronize());
  double t_upload = now();

  int major = 0, minor = 0;
  CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  double t_c0 = now();
  char *cubin = compile(src, argv[1], argv[2], major, minor, argc - 4, argv + 4);
  double t_compile = now();

  CUmodule mod;
  CUfunction fn;
  CU(cuModuleLoadData(&mod, cubin));
  CU(cuModuleGetFunction(&fn, mod, argv[2]));
  double t_load = now();

  printf("{\"init\": %.4f, \"context\": %.4f, \"upload\": %.4f, \"upload_bytes\": %zu, \"compile\": %.4f, "
         "\"load\": %.4f, \"host_fill_not_counted\": %.4f}\n",
         t_init - t0, t_ctx - t_init, t_upload - t_fill, 2 * bytes, t_compile - t_c0, t_load - t_compile,
         t_fill - t_ctx);
  CU(cuModuleUnload(mod));
  CU(cuMemFree(x));
  CU(cuMemFree(y));
  CU(cuMemFree(z));
  CU(cuMemFree(probe));
  CU(cuDevicePrimaryCtxRelease(dev));
  free(cubin);
  free(host);
  free(src);
  return 0;
}
