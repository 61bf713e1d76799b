/* The CUDA backend: NVRTC compiles in the tuner's threads (nvrtc.c), the
 * driver API (libcuda.so.1, loaded at run time) runs in the device worker.
 * Limits and launch shapes are decided in cuda_limits.c, which needs no GPU.
 *
 * Kernels are looked up by their @kernel name; a kernel that is not
 * extern "C" is found through the mangled name NVRTC reports at compile time
 * (written beside the cubin as <tag>.cubin.sym). */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../envvars.h"
#include "../parallel.h"
#include "compare_kernel.h"
#include "cuda_limits.h"
#include "cuda_tensormap.h"
#include "dl.h"
#include "nvml.h"
#include "nvrtc.h"

#ifdef KTUNE_HAVE_CUDA_H
#include <pthread.h>

#include <cuda.h>

/* Every driver function ktune calls: field, exported symbol (the versioned
 * one cuda.h would map the plain name to), return type, parameters. */
#define KT__CU_FUNCS(XX)                                                                         \
  XX(Init, "cuInit", (unsigned))                                                                 \
  XX(DriverGetVersion, "cuDriverGetVersion", (int *))                                            \
  XX(GetErrorName, "cuGetErrorName", (CUresult, const char **))                                  \
  XX(DeviceGetCount, "cuDeviceGetCount", (int *))                                                \
  XX(DeviceGet, "cuDeviceGet", (CUdevice *, int))                                                \
  XX(DeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                                  \
  XX(DeviceGetAttribute, "cuDeviceGetAttribute", (int *, CUdevice_attribute, CUdevice))          \
  XX(DeviceTotalMem, "cuDeviceTotalMem_v2", (size_t *, CUdevice))                                \
  XX(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))                \
  XX(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                        \
  XX(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                              \
  XX(CtxSynchronize, "cuCtxSynchronize", (void))                                                 \
  XX(ModuleLoadData, "cuModuleLoadData", (CUmodule *, const void *))                             \
  XX(ModuleUnload, "cuModuleUnload", (CUmodule))                                                 \
  XX(ModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *))           \
  XX(ModuleGetGlobal, "cuModuleGetGlobal_v2", (CUdeviceptr *, size_t *, CUmodule, const char *)) \
  XX(FuncGetAttribute, "cuFuncGetAttribute", (int *, CUfunction_attribute, CUfunction))          \
  XX(FuncSetAttribute, "cuFuncSetAttribute", (CUfunction, CUfunction_attribute, int))            \
  XX(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                         \
  XX(MemFree, "cuMemFree_v2", (CUdeviceptr))                                                     \
  XX(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))                         \
  XX(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                               \
  XX(MemcpyDtoD, "cuMemcpyDtoD_v2", (CUdeviceptr, CUdeviceptr, size_t))                          \
  XX(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream))      \
  XX(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream))           \
  XX(MemAllocHost, "cuMemAllocHost_v2", (void **, size_t))                                       \
  XX(MemFreeHost, "cuMemFreeHost", (void *))                                                     \
  XX(CtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext))                                         \
  XX(CtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext *))                                         \
  XX(MemHostUnregister, "cuMemHostUnregister", (void *))                                         \
  XX(MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))           \
  XX(MemsetD8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t))                            \
  XX(MemsetD16, "cuMemsetD16_v2", (CUdeviceptr, unsigned short, size_t))                         \
  XX(MemsetD32, "cuMemsetD32_v2", (CUdeviceptr, unsigned int, size_t))                           \
  XX(MemHostRegister, "cuMemHostRegister_v2", (void *, size_t, unsigned int))                    \
  XX(StreamSynchronize, "cuStreamSynchronize", (CUstream))                                       \
  XX(EventCreate, "cuEventCreate", (CUevent *, unsigned))                                        \
  XX(EventDestroy, "cuEventDestroy_v2", (CUevent))                                               \
  XX(EventRecord, "cuEventRecord", (CUevent, CUstream))                                          \
  XX(EventSynchronize, "cuEventSynchronize", (CUevent))                                          \
  XX(LaunchKernel, "cuLaunchKernel",                                                             \
     (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **))

static struct {
  pthread_once_t once;
  int rc;
  kt__errbuf eb;
#define KT__CU_FIELD_(field, sym, params) CUresult(*field) params;
  KT__CU_FUNCS(KT__CU_FIELD_)
#undef KT__CU_FIELD_
  /* Optional: absent from older drivers. */
  CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream); /* stream-ordered allocation (CUDA 11.2) */
  CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*DeviceGetMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*MemPoolGetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
  /* --timing graph (CUDA 11.4 for cuGraphInstantiateWithFlags); the PCI bus id names the device to NVML. */
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult (*StreamEndCapture)(CUstream, CUgraph *);
  CUresult (*GraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*GraphUpload)(CUgraphExec, CUstream);
  CUresult (*GraphLaunch)(CUgraphExec, CUstream);
  CUresult (*GraphExecDestroy)(CUgraphExec);
  CUresult (*GraphDestroy)(CUgraph);
  CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
  kt__cu_encode_tiled_fn TensorMapEncodeTiled; /* TMA tensor maps (CUDA 12) */
  /* A blocking miss's tensors handed to the helper's worker on the device (share, copy_shared). */
  CUresult (*MemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
  CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
  CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
  CUresult (*IpcCloseMemHandle)(CUdeviceptr);
} cu = {.once = PTHREAD_ONCE_INIT};

/* POSIX guarantees that dlsym's object pointers convert to functions. */
static void set_fn(void *slot, void *addr) { memcpy(slot, &addr, sizeof addr); }

/* Names of the errors worth explaining when cuGetErrorName itself fails
 * (the toolkit's stub libcuda answers every call with STUB_LIBRARY). */
static const char *fallback_name(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
  case CUDA_ERROR_DEVICE_UNAVAILABLE: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  default: return NULL;
  }
}

static const char *err_name(CUresult r) {
  static __thread char unknown[32];
  const char *name = NULL;
  if (cu.GetErrorName && cu.GetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  if ((name = fallback_name(r))) return name;
  snprintf(unknown, sizeof unknown, "CUDA error %d", (int)r);
  return unknown;
}

/* A plain-words reason for why the driver cannot start. */
static const char *init_hint(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STUB_LIBRARY:
    return "the libcuda found is the CUDA toolkit's stub: no NVIDIA driver is installed on this machine";
  case CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device is visible (check CUDA_VISIBLE_DEVICES)";
  case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: return "the NVIDIA driver is too old";
  case CUDA_ERROR_DEVICE_UNAVAILABLE: return "the device is busy or unavailable (exclusive compute mode?)";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "libcuda and the kernel driver are different versions";
  default: return "the NVIDIA driver could not be initialised";
  }
}

/* A symbol newer drivers have (NULL when absent). */
static void *optional(void *lib, const char *name) {
  void *addr = NULL;
  return kt__dl_resolve(lib, "libcuda", &name, &addr, 1, NULL) == KT_OK ? addr : NULL;
}

static int resolve_driver(void *lib) {
  static const char *const names[] = {
#define KT__CU_NAME_(field, sym, params) sym,
      KT__CU_FUNCS(KT__CU_NAME_)
#undef KT__CU_NAME_
  };
  void *slots[] = {
#define KT__CU_SLOT_(field, sym, params) (void *)&cu.field,
      KT__CU_FUNCS(KT__CU_SLOT_)
#undef KT__CU_SLOT_
  };
  enum { N = sizeof names / sizeof names[0] };
  void *addrs[N];
  KT__FORWARD(kt__dl_resolve(lib, "the CUDA driver (libcuda.so.1)", names, addrs, N, &cu.eb));
  for (int i = 0; i < N; i++) set_fn(slots[i], addrs[i]);
  set_fn(&cu.LaunchKernelEx, optional(lib, "cuLaunchKernelEx"));
  set_fn(&cu.MemAllocAsync, optional(lib, "cuMemAllocAsync"));
  set_fn(&cu.MemFreeAsync, optional(lib, "cuMemFreeAsync"));
  set_fn(&cu.DeviceGetMemPool, optional(lib, "cuDeviceGetMemPool"));
  set_fn(&cu.MemPoolGetAttribute, optional(lib, "cuMemPoolGetAttribute"));
  set_fn(&cu.StreamCreate, optional(lib, "cuStreamCreate"));
  set_fn(&cu.StreamDestroy, optional(lib, "cuStreamDestroy_v2"));
  set_fn(&cu.StreamBeginCapture, optional(lib, "cuStreamBeginCapture_v2"));
  set_fn(&cu.StreamEndCapture, optional(lib, "cuStreamEndCapture"));
  set_fn(&cu.GraphInstantiate, optional(lib, "cuGraphInstantiateWithFlags"));
  set_fn(&cu.GraphUpload, optional(lib, "cuGraphUpload"));
  set_fn(&cu.GraphLaunch, optional(lib, "cuGraphLaunch"));
  set_fn(&cu.GraphExecDestroy, optional(lib, "cuGraphExecDestroy"));
  set_fn(&cu.GraphDestroy, optional(lib, "cuGraphDestroy"));
  set_fn(&cu.DeviceGetPCIBusId, optional(lib, "cuDeviceGetPCIBusId"));
  set_fn(&cu.TensorMapEncodeTiled, optional(lib, "cuTensorMapEncodeTiled"));
  set_fn(&cu.MemGetAddressRange, optional(lib, "cuMemGetAddressRange_v2"));
  set_fn(&cu.IpcGetMemHandle, optional(lib, "cuIpcGetMemHandle"));
  set_fn(&cu.IpcOpenMemHandle, optional(lib, "cuIpcOpenMemHandle_v2"));
  set_fn(&cu.IpcCloseMemHandle, optional(lib, "cuIpcCloseMemHandle"));
  void *elapsed = optional(lib, "cuEventElapsedTime_v2");
  set_fn(&cu.EventElapsedTime, elapsed ? elapsed : optional(lib, "cuEventElapsedTime"));
  if (!cu.EventElapsedTime)
    return kt__err(&cu.eb, KT_NOBACKEND, "the CUDA driver (libcuda.so.1) lacks cuEventElapsedTime");
  return KT_OK;
}

static void load_driver_once(void) {
  const char *env = kt__envvar_text(KT__ENV_LIBCUDA);
  const char *list[] = {env && *env ? env : "libcuda.so.1", NULL};
  void *lib = kt__dl_open_any(list, "the CUDA driver (libcuda.so.1)", &cu.eb);
  if (!lib) {
    cu.rc = KT_NOBACKEND;
    return;
  }
  cu.rc = resolve_driver(lib);
  if (cu.rc != KT_OK) return;
  CUresult r = cu.Init(0);
  if (r != CUDA_SUCCESS)
    cu.rc =
        kt__err(&cu.eb, KT_NOBACKEND, "CUDA is not available: cuInit failed with %s: %s", err_name(r), init_hint(r));
}

/* Loads libcuda and initialises it, once per (worker) process. */
static int load_driver(kt__errbuf *eb) {
  pthread_once(&cu.once, load_driver_once);
  if (cu.rc != KT_OK && eb) *eb = cu.eb;
  return cu.rc;
}

/* ---- device description ---- */

static int attr(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (cu.DeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS) return 0;
  return v;
}

static void versions(kt__device_info *info) {
  int v = 0;
  if (cu.DriverGetVersion(&v) == CUDA_SUCCESS)
    snprintf(info->driver_version, sizeof info->driver_version, "CUDA %d.%d", v / 1000, v % 1000 / 10);
  if (kt__nvrtc_version_string(info->toolchain_version, sizeof info->toolchain_version, NULL) != KT_OK)
    snprintf(info->toolchain_version, sizeof info->toolchain_version, "NVRTC missing");
}

static void describe(CUdevice dev, kt__device_info *info) {
  cu.DeviceGetName(info->name, (int)sizeof info->name, dev);
  snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
  int major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  int minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  snprintf(info->arch, sizeof info->arch, "sm_%d%d", major, minor);
  size_t mem = 0;
  if (cu.DeviceTotalMem(&mem, dev) == CUDA_SUCCESS) info->memory_bytes = mem;
  versions(info);
  info->max_threads_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info->max_shared_bytes = (uint64_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info->compute_units = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info->l2_bytes = (uint64_t)attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info->peak_gflops =
      kt__cuda_peak_gflops(major, minor, info->compute_units, attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  info->peak_gbps = kt__cuda_peak_gbps(attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                                       attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
}

static void read_limits(CUdevice dev, kt__cuda_device_limits *lim) {
  lim->max_threads_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  lim->max_block[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  lim->max_block[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  lim->max_block[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  lim->max_grid[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  lim->max_grid[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  lim->max_grid[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  lim->regs_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  lim->shared_default = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  lim->shared_optin = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (lim->shared_optin < lim->shared_default) lim->shared_optin = lim->shared_default;
  lim->cc_major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  lim->cc_minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  /* 8 blocks is the portable cluster size; Hopper allows 16 on opt-in. */
  lim->max_cluster = lim->cc_major >= 9 ? 16 : 0;
}

static int list_devices(kt__device_info *out, int max, int *count, kt__errbuf *eb) {
  KT__FORWARD(load_driver(eb));
  int n = 0;
  CUresult r = cu.DeviceGetCount(&n);
  KT__RETURN_IF(r != CUDA_SUCCESS, eb, KT_NOBACKEND, "CUDA: cuDeviceGetCount failed with %s", err_name(r));
  for (int i = 0; i < n && *count < max; i++) {
    CUdevice dev;
    if (cu.DeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    kt__device_info *info = &out[(*count)++];
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "cuda");
    info->index = i;
    describe(dev, info);
  }
  return KT_OK;
}

/* ---- worker state ---- */

/* What a captured graph was made of: the function, the launch count, the
 * launch shape and each argument's value. A sample whose key differs
 * captures again. */
enum { GRAPH_KEY_MAX = 2200 };
typedef struct graph_key {
  size_t len;
  unsigned char bytes[GRAPH_KEY_MAX];
} graph_key;

/* The graph of --timing graph: the last one captured, kept while its
 * samples repeat (a configuration's samples all have the same key). */
typedef struct cuda_graph {
  CUstream stream; /* a capturable stream (the legacy default one is not) */
  CUgraphExec exec;
  void *fn; /* the cuda_fn it launches, or NULL: none kept */
  graph_key key;
} cuda_graph;

typedef struct cuda_state {
  CUdevice dev;
  CUcontext ctx;
  CUevent start, stop;
  CUdeviceptr scratch; /* flush_cache's buffer, allocated on first use */
  size_t scratch_bytes;
  unsigned char flush_byte;
  kt__cuda_device_limits lim;
  kt__device_info info;
  bool poisoned; /* a sticky fault happened: every later call fails */
  char poison[128];
  CUmodule differs_mod; /* the comparison kernel of cuda_equal, loaded on first use */
  CUfunction differs;
  CUdeviceptr differs_flag;
  CUmodule compare_mod; /* the output comparison of cuda_compare, built on first use */
  CUfunction compare;
  CUfunction decoy;        /* in the same module */
  CUdeviceptr compare_out; /* 2 words per block */
  bool compare_failed;     /* it did not build: the worker compares on the host */
  char compare_why[512];
  cuda_graph graph;
  kt__nvml_device *nvml;               /* NULL: no readings (info.no_readings says why) */
  kt__cuda_tensormap_cache tensormaps; /* encoded tensor map arguments */
} cuda_state;

typedef struct cuda_fn {
  CUmodule mod;
  CUfunction f;
  kt__cuda_func_attrs attrs;
  unsigned shared_raised; /* dynamic shared limit already set (0: default) */
  bool non_portable;      /* non-portable cluster sizes already allowed */
} cuda_fn;

/* Turns a failed driver call into a status: a sticky fault poisons the
 * context (the tuner must replace the worker), a resource refusal is a
 * constraint, anything else a runtime error. */
static kt__status cu_status(cuda_state *s, CUresult r, const char *what, kt__errbuf *eb) {
  if (kt__cuda_error_is_sticky((int)r)) {
    s->poisoned = true;
    snprintf(s->poison, sizeof s->poison, "%s", err_name(r));
    return kt__fail(eb, KT__ST_RUNTIME, "%s failed: %s (context poisoned: the worker must be replaced)", what,
                    err_name(r));
  }
  if (kt__cuda_error_is_resource((int)r)) {
    return kt__fail(eb, KT__ST_CONSTRAINT, "%s refused for resources: %s", what, err_name(r));
  }
  return kt__fail(eb, KT__ST_RUNTIME, "%s failed: %s", what, err_name(r));
}

/* The same for calls that return a kt_err (memory, copies). */
static int cu_error(cuda_state *s, CUresult r, const char *what, kt__errbuf *eb) {
  cu_status(s, r, what, eb);
  return r == CUDA_ERROR_OUT_OF_MEMORY ? KT_NOMEM : KT_INTERNAL;
}

static bool poisoned(const cuda_state *s, kt__errbuf *eb) {
  if (s->poisoned)
    kt__err(eb, KT_INTERNAL, "context poisoned by an earlier fault (%s): the worker must be replaced", s->poison);
  return s->poisoned;
}

static int open_context(cuda_state *s, int index, kt__errbuf *eb) {
  int n = 0;
  CUresult r = cu.DeviceGetCount(&n);
  KT__RETURN_IF(r != CUDA_SUCCESS, eb, KT_NOBACKEND, "CUDA: cuDeviceGetCount failed with %s", err_name(r));
  KT__RETURN_IF(index < 0 || index >= n, eb, KT_NOBACKEND, "CUDA: there is no device %d (%d device%s found)", index, n,
                n == 1 ? "" : "s");
  r = cu.DeviceGet(&s->dev, index);
  if (r == CUDA_SUCCESS) r = cu.DevicePrimaryCtxRetain(&s->ctx, s->dev);
  KT__RETURN_IF(r != CUDA_SUCCESS, eb, KT_NOBACKEND, "CUDA: cannot open device %d: %s", index, err_name(r));
  r = cu.CtxSetCurrent(s->ctx);
  if (r == CUDA_SUCCESS) r = cu.EventCreate(&s->start, CU_EVENT_DEFAULT);
  /* Waiting on the stop event blocks instead of spinning: the worker leaves
   * its core to the compilers while a kernel runs (CU_EVENT_BLOCKING_SYNC). */
  if (r == CUDA_SUCCESS) r = cu.EventCreate(&s->stop, CU_EVENT_BLOCKING_SYNC);
  KT__RETURN_IF(r != CUDA_SUCCESS, eb, KT_NOBACKEND, "CUDA: cannot set up device %d: %s", index, err_name(r));
  return KT_OK;
}

static void graph_drop(cuda_state *s);

static void cuda_close(void *state) {
  cuda_state *s = state;
  graph_drop(s);
  if (s->graph.stream) cu.StreamDestroy(s->graph.stream);
  kt__nvml_close(s->nvml);
  if (s->differs_flag) cu.MemFree(s->differs_flag);
  if (s->differs_mod) cu.ModuleUnload(s->differs_mod);
  if (s->compare_out) cu.MemFree(s->compare_out);
  if (s->compare_mod) cu.ModuleUnload(s->compare_mod);
  if (s->scratch) cu.MemFree(s->scratch);
  if (s->start) cu.EventDestroy(s->start);
  if (s->stop) cu.EventDestroy(s->stop);
  if (s->ctx) cu.DevicePrimaryCtxRelease(s->dev);
  kt__cuda_tensormap_cache_destroy(&s->tensormaps);
  free(s);
}

/* NVML's view of the device, for the readings of each timed sample. */
static void open_nvml(cuda_state *s, kt__device_info *info) {
  char bus[32] = "";
  if (!cu.DeviceGetPCIBusId || cu.DeviceGetPCIBusId(bus, sizeof bus, s->dev) != CUDA_SUCCESS) {
    snprintf(info->no_readings, sizeof info->no_readings,
             "the CUDA driver gave no PCI bus id to find the device in NVML");
    return;
  }
  s->nvml = kt__nvml_open(bus, info->no_readings, sizeof info->no_readings);
  if (!s->nvml) snprintf(info->no_energy, sizeof info->no_energy, "%s", info->no_readings);
  kt__nvml_no_energy(s->nvml, info->no_energy, sizeof info->no_energy);
  /* NVML's total energy moves in steps about 100 ms apart on the H200 (12.6
   * to 13.0 J at idle, bench/energy_winners_h200.sh, 2026-12-02 06:12 UTC):
   * a few ms of samples read 0 J or a whole step (0 W, 1119 W), so the
   * samples must span ten steps before their joules say anything. */
  if (!info->no_energy[0]) info->energy_window_s = 1.0;
}

static int cuda_open(int index, void **state, kt__device_info *info, kt__errbuf *eb) {
  KT__FORWARD(load_driver(eb));
  /* Without NVRTC nothing could be built for the device. */
  KT__FORWARD(kt__nvrtc_load(eb));
  cuda_state *s = kt__xcalloc(1, sizeof *s);
  kt__cuda_tensormap_cache_init(&s->tensormaps);
  int rc = open_context(s, index, eb);
  if (rc != KT_OK) {
    cuda_close(s);
    return rc;
  }
  describe(s->dev, info);
  open_nvml(s, info);
  read_limits(s->dev, &s->lim);
  s->info = *info;
  *state = s;
  return KT_OK;
}

/* ---- modules ---- */

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  kt__sbuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) kt__sbuf_append(&b, chunk, n);
  fclose(f);
  if (len) *len = b.len;
  return b.s ? b.s : kt__xstrdup("");
}

/* The symbol of the kernel: its mangled name when compile recorded one. */
static char *kernel_symbol(const char *cubin_path, const char *name) {
  kt__sbuf sym = {0};
  kt__sbuf_printf(&sym, "%s.sym", cubin_path);
  char *mangled = read_file(sym.s, NULL);
  kt__sbuf_free(&sym);
  return mangled && *mangled ? mangled : (free(mangled), kt__xstrdup(name));
}

static kt__status func_attrs(cuda_state *s, cuda_fn *fn, kt__errbuf *eb) {
  int regs = 0, shared = 0, threads = 0;
  CUresult r = cu.FuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn->f);
  if (r == CUDA_SUCCESS) r = cu.FuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn->f);
  if (r == CUDA_SUCCESS) r = cu.FuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn->f);
  if (r != CUDA_SUCCESS) return cu_status(s, r, "cuFuncGetAttribute", eb);
  fn->attrs = (kt__cuda_func_attrs){.num_regs = regs, .static_shared = shared, .max_threads_per_block = threads};
  return KT__ST_OK;
}

static kt__status load_module(cuda_state *s, const char *path, const char *name, cuda_fn *fn, kt__errbuf *eb) {
  size_t len = 0;
  char *image = read_file(path, &len);
  if (!image) {
    return kt__fail(eb, KT__ST_COMPILE, "cannot read the cubin %s", path);
  }
  CUresult r = cu.ModuleLoadData(&fn->mod, image);
  free(image);
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX ||
      r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    return kt__fail(eb, KT__ST_COMPILE,
                    "the cubin does not load on %s (%s): %s (built for another architecture? see "
                    "KTUNE_CUDA_ARCH)",
                    s->info.name, s->info.arch, err_name(r));
  }
  if (r != CUDA_SUCCESS) return cu_status(s, r, "cuModuleLoadData", eb);
  char *sym = kernel_symbol(path, name);
  r = cu.ModuleGetFunction(&fn->f, fn->mod, sym);
  free(sym);
  if (r != CUDA_SUCCESS) {
    return kt__fail(eb, KT__ST_COMPILE, "the module has no kernel named %s (%s)", name, err_name(r));
  }
  return func_attrs(s, fn, eb);
}

/* The tuner's cubin can no longer be read (its work folder removed). */
static bool cubin_gone(const kt__artifact *a) { return a->path && access(a->path, R_OK) != 0; }

/* Compiles in the worker when the tuner sent no cubin. */
static kt__status build_here(cuda_state *s, const kt__build *b, kt__artifact *own, kt__errbuf *eb) {
  kt__build local = *b;
  local.device = &s->info;
  return kt__nvrtc_build(&local, own, eb);
}

static kt__status cuda_load(void *state, const kt__build *b, const kt__artifact *a, void **out, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT__ST_RUNTIME;
  kt__artifact own = {0};
  kt__status st = KT__ST_OK;
  if (!a || !a->path) {
    st = build_here(s, b, &own, eb);
    a = &own;
  }
  cuda_fn *fn = kt__xcalloc(1, sizeof *fn);
  if (st == KT__ST_OK) st = load_module(s, a->path, b->decl->name, fn, eb);
  /* A build the machine stopped, or a cubin gone from the work folder, is
   * not the configuration's failure. */
  if (st != KT__ST_OK && b->load_environment) *b->load_environment = own.environment || cubin_gone(a);
  kt__artifact_free(&own);
  if (st != KT__ST_OK) {
    if (fn->mod) cu.ModuleUnload(fn->mod);
    free(fn);
    return st;
  }
  *out = fn;
  return KT__ST_OK;
}

static void cuda_unload(void *state, void *f) {
  cuda_fn *fn = f;
  cuda_state *s = state;
  if (s->graph.fn == f) graph_drop(s); /* its address may come back as another function */
  if (!s->poisoned) cu.ModuleUnload(fn->mod);
  free(fn);
}

/* @constant data: the module's own __constant__ (or __device__) symbol,
 * found by its name (a variable at global scope keeps its name in C++; one
 * inside a namespace is mangled, and not found). */
static kt__status cuda_set_constant(void *state, void *f, const char *name, const void *host, size_t bytes,
                                    kt__errbuf *eb) {
  cuda_state *s = state;
  cuda_fn *fn = f;
  if (poisoned(s, eb)) return KT__ST_RUNTIME;
  CUdeviceptr p = 0;
  size_t size = 0;
  CUresult r = cu.ModuleGetGlobal(&p, &size, fn->mod, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return kt__fail(eb, KT__ST_COMPILE,
                    "@constant %s: the module has no symbol %s (declare it at file scope: `__constant__ T %s[...];`)",
                    name, name, name);
  if (r != CUDA_SUCCESS) return cu_status(s, r, "cuModuleGetGlobal", eb);
  if (size != bytes)
    return kt__fail(eb, KT__ST_COMPILE, "@constant %s declares %zu bytes, but the kernel's symbol %s is %zu bytes",
                    name, bytes, name, size);
  r = cu.MemcpyHtoD(p, host, bytes);
  return r == CUDA_SUCCESS ? KT__ST_OK : cu_status(s, r, "filling a __constant__ symbol", eb);
}

/* ---- launches ---- */

static kt__status cuda_check_dims(cuda_state *s, cuda_fn *fn, const kt__launch *l, kt__cuda_launch_dims *d,
                                  kt__errbuf *eb) {
  char why[512];
  kt__status st = kt__cuda_check_limits(&s->lim, &fn->attrs, l, d, why, sizeof why);
  if (st != KT__ST_OK) kt__fail(eb, st, "%s", why);
  if (st == KT__ST_OK && d->use_cluster && !cu.LaunchKernelEx)
    st = kt__fail(eb, KT__ST_CONSTRAINT, "a cluster launch needs cuLaunchKernelEx, which this driver lacks");
  return st;
}

static kt__status cuda_check(void *state, void *f, const kt__launch *l, kt__errbuf *eb) {
  kt__cuda_launch_dims d;
  return cuda_check_dims(state, f, l, &d, eb);
}

/* Function attributes a launch needs set first (once per function). */
static kt__status opt_in(cuda_state *s, cuda_fn *fn, const kt__cuda_launch_dims *d, kt__errbuf *eb) {
  CUresult r = CUDA_SUCCESS;
  if (d->raise_shared && d->shared_bytes > fn->shared_raised) {
    r = cu.FuncSetAttribute(fn->f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)d->shared_bytes);
    if (r != CUDA_SUCCESS) return cu_status(s, r, "raising the dynamic shared memory limit", eb);
    fn->shared_raised = d->shared_bytes;
  }
  if (d->non_portable_cluster && !fn->non_portable) {
    r = cu.FuncSetAttribute(fn->f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS) return cu_status(s, r, "allowing a non-portable cluster size", eb);
    fn->non_portable = true;
  }
  return KT__ST_OK;
}

/* kernelParams: a pointer to each argument's value. For a tensor the value
 * is its CUdeviceptr (stored in PTRS), for a scalar its bytes, for a tensor
 * map the 128-byte map (in MAPS). Fixed arrays on the caller's stack:
 * kt_launch's hot path must not allocate. */
enum { MAX_PARAMS = 128 };
typedef struct params {
  CUdeviceptr ptrs[MAX_PARAMS];
  void *values[MAX_PARAMS];
  CUtensorMap maps[KT__MAX_TENSORMAPS];
} params;

/* Each tensor map argument over its tensor's buffer (cuda_tensormap.h). */
static kt__status tensormaps_build(cuda_state *s, const kt__launch *l, params *p, kt__errbuf *eb) {
  if (l->ntensormaps && !cu.TensorMapEncodeTiled)
    return kt__fail(eb, KT__ST_CONSTRAINT, "tensor maps need cuTensorMapEncodeTiled, which this driver lacks");
  for (int j = 0; j < l->ntensormaps; j++) {
    const kt__tensormap_spec *t = &l->tensormaps[j];
    char why[256];
    CUresult r = kt__cuda_tensormap_get(&s->tensormaps, cu.TensorMapEncodeTiled, t,
                                        (CUdeviceptr)(uintptr_t)l->args[t->tensor].buf, &p->maps[j], why, sizeof why);
    if (r != CUDA_SUCCESS) return kt__fail(eb, KT__ST_CONSTRAINT, "tensor map argument %d: %s", t->param + 1, why);
    p->values[t->param] = &p->maps[j];
  }
  return KT__ST_OK;
}

static kt__status params_build(cuda_state *s, const kt__launch *l, params *p, kt__errbuf *eb) {
  if (l->nargs > MAX_PARAMS)
    return kt__fail(eb, KT__ST_RUNTIME, "too many kernel arguments (%d, at most %d)", l->nargs, MAX_PARAMS);
  for (int i = 0; i < l->nargs; i++) {
    if (l->args[i].is_tensor) {
      p->ptrs[i] = (CUdeviceptr)(uintptr_t)l->args[i].buf;
      p->values[i] = &p->ptrs[i];
    } else {
      p->values[i] = (void *)l->args[i].scalar;
    }
  }
  return tensormaps_build(s, l, p, eb);
}

/* STREAM NULL: the context's default stream. */
static CUresult launch(cuda_fn *fn, const kt__cuda_launch_dims *d, void **values, CUstream stream) {
  if (!d->use_cluster)
    return cu.LaunchKernel(fn->f, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1], d->block[2],
                           d->shared_bytes, stream, values, NULL);
  CUlaunchConfig cfg;
  CUlaunchAttribute cluster;
  kt__cuda_fill_launch_config(d, stream, &cfg, &cluster);
  return cu.LaunchKernelEx(&cfg, fn->f, values, NULL);
}

/* Checks, opts in and builds the parameters: everything before a launch. */
static kt__status prepare(cuda_state *s, cuda_fn *fn, const kt__launch *l, kt__cuda_launch_dims *d, params *p,
                          kt__errbuf *eb) {
  if (poisoned(s, eb)) return KT__ST_RUNTIME;
  kt__status st = cuda_check_dims(s, fn, l, d, eb);
  if (st == KT__ST_OK) st = opt_in(s, fn, d, eb);
  if (st == KT__ST_OK) st = params_build(s, l, p, eb);
  return st;
}

/* With the caller's stream (kt_launch) the launch is asynchronous: errors
 * of the kernel itself surface at the caller's next synchronisation. */
static kt__status cuda_run(void *state, void *f, const kt__launch *l, kt__errbuf *eb) {
  cuda_state *s = state;
  kt__cuda_launch_dims d;
  params p;
  kt__status st = prepare(s, f, l, &d, &p, eb);
  if (st != KT__ST_OK) return st;
  CUresult r = launch(f, &d, p.values, (CUstream)l->stream);
  if (r != CUDA_SUCCESS) return cu_status(s, r, "cuLaunchKernel", eb);
  if (l->stream) return KT__ST_OK;
  r = cu.EventRecord(s->stop, NULL);
  if (r == CUDA_SUCCESS) r = cu.EventSynchronize(s->stop); /* blocking, see open_context */
  return r == CUDA_SUCCESS ? KT__ST_OK : cu_status(s, r, "the kernel", eb);
}

/* KT_MISS_ONLINE: events of its own around one launch on the caller's
 * stream (the state's pair may be in use by another thread's launch), and
 * a wait for the end event: the application's work before it on the
 * stream is not in the time. */
static kt__status cuda_run_timed(void *state, void *f, const kt__launch *l, double *seconds, kt__errbuf *eb) {
  cuda_state *s = state;
  kt__cuda_launch_dims d;
  params p;
  kt__status st = prepare(s, f, l, &d, &p, eb);
  if (st != KT__ST_OK) return st;
  CUevent start = NULL, stop = NULL;
  CUstream stream = (CUstream)l->stream;
  CUresult r = cu.EventCreate(&start, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = cu.EventCreate(&stop, CU_EVENT_BLOCKING_SYNC);
  if (r == CUDA_SUCCESS) r = cu.EventRecord(start, stream);
  const char *what = "cuEventRecord";
  if (r == CUDA_SUCCESS) {
    what = "cuLaunchKernel";
    r = launch(f, &d, p.values, stream);
  }
  if (r == CUDA_SUCCESS) {
    what = "the kernel";
    r = cu.EventRecord(stop, stream);
    if (r == CUDA_SUCCESS) r = cu.EventSynchronize(stop);
  }
  float ms = 0;
  if (r == CUDA_SUCCESS) {
    what = "cuEventElapsedTime";
    r = cu.EventElapsedTime(&ms, start, stop);
  }
  if (start && !s->poisoned) cu.EventDestroy(start);
  if (stop && !s->poisoned) cu.EventDestroy(stop);
  if (r != CUDA_SUCCESS) return cu_status(s, r, what, eb);
  *seconds = ms * 1e-3;
  return KT__ST_OK;
}

/* --timing events: events around N launches made one by one. */
static CUresult launch_n(cuda_state *s, cuda_fn *fn, const kt__cuda_launch_dims *d, void **values, int n) {
  CUresult r = cu.EventRecord(s->start, NULL);
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++) r = launch(fn, d, values, NULL);
  if (r == CUDA_SUCCESS) r = cu.EventRecord(s->stop, NULL);
  return r;
}

/* --timing graph: the N launches of a sample captured once into a graph
 * and replayed between the events, so that the device runs the kernels
 * back to back instead of waiting for the host to launch each one (issue
 * 27: elementwise.cu at N = 16384 measured 3.6-5.4 us per launch by events,
 * 0.97-2.18 us by a graph). */

static void graph_drop(cuda_state *s) {
  if (s->graph.exec && !s->poisoned) cu.GraphExecDestroy(s->graph.exec);
  s->graph.exec = NULL;
  s->graph.fn = NULL;
}

static void key_add(graph_key *k, const void *p, size_t n) {
  if (k->len + n > sizeof k->bytes) n = 0, k->len = sizeof k->bytes + 1; /* too long: never matches */
  if (n) memcpy(k->bytes + k->len, p, n), k->len += n;
}

static void graph_key_of(graph_key *k, cuda_fn *fn, const kt__cuda_launch_dims *d, const kt__launch *l, int n) {
  k->len = 0;
  key_add(k, &fn, sizeof fn);
  key_add(k, &n, sizeof n);
  key_add(k, d->grid, sizeof d->grid);
  key_add(k, d->block, sizeof d->block);
  key_add(k, d->cluster, sizeof d->cluster);
  key_add(k, &d->shared_bytes, sizeof d->shared_bytes);
  for (int i = 0; i < l->nargs; i++) {
    key_add(k, &l->args[i].buf, sizeof l->args[i].buf);
    key_add(k, l->args[i].scalar, sizeof l->args[i].scalar);
  }
}

static bool graph_key_same(const graph_key *a, const graph_key *b) {
  return a->len <= sizeof a->bytes && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static CUresult graph_capture(cuda_state *s, cuda_fn *fn, const kt__cuda_launch_dims *d, void **values, int n) {
  if (!s->graph.stream) {
    CUresult r = cu.StreamCreate(&s->graph.stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) return r;
  }
  CUgraph g = NULL;
  CUresult r = cu.StreamBeginCapture(s->graph.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS) return r;
  CUresult lr = CUDA_SUCCESS;
  for (int i = 0; i < n && lr == CUDA_SUCCESS; i++) lr = launch(fn, d, values, s->graph.stream);
  r = cu.StreamEndCapture(s->graph.stream, &g); /* ends the capture whatever the launches did */
  if (lr != CUDA_SUCCESS) r = lr;
  if (r == CUDA_SUCCESS) r = cu.GraphInstantiate(&s->graph.exec, g, 0);
  if (g) cu.GraphDestroy(g);
  /* The graph's first launch would otherwise also upload it to the device. */
  if (r == CUDA_SUCCESS && cu.GraphUpload) r = cu.GraphUpload(s->graph.exec, s->graph.stream);
  if (r == CUDA_SUCCESS) r = cu.StreamSynchronize(s->graph.stream);
  return r;
}

static CUresult graph_n(cuda_state *s, cuda_fn *fn, const kt__cuda_launch_dims *d, const kt__launch *l, void **values,
                        int n) {
  if (!cu.GraphLaunch || !cu.GraphInstantiate || !cu.StreamBeginCapture || !cu.StreamCreate)
    return CUDA_ERROR_NOT_SUPPORTED;
  graph_key key;
  graph_key_of(&key, fn, d, l, n);
  if (!s->graph.fn || !graph_key_same(&key, &s->graph.key)) {
    graph_drop(s);
    CUresult r = graph_capture(s, fn, d, values, n);
    if (r != CUDA_SUCCESS) {
      if (s->graph.exec) cu.GraphExecDestroy(s->graph.exec);
      s->graph.exec = NULL;
      return r;
    }
    s->graph.fn = fn;
    s->graph.key = key;
  }
  CUresult r = cu.EventRecord(s->start, s->graph.stream);
  if (r == CUDA_SUCCESS) r = cu.GraphLaunch(s->graph.exec, s->graph.stream);
  if (r == CUDA_SUCCESS) r = cu.EventRecord(s->stop, s->graph.stream);
  return r;
}

static kt__status cuda_time(void *state, void *f, const kt__launch *l, int n, kt_timing how, bool energy_wanted,
                            double *seconds, kt__reading *reading, kt__errbuf *eb) {
  cuda_state *s = state;
  kt__cuda_launch_dims d;
  params p;
  kt__status st = prepare(s, f, l, &d, &p, eb);
  if (st != KT__ST_OK) return st;
  bool graph = how == KT_TIMING_GRAPH;
  /* The energy counter is read around the launches and their wait, after
   * the cache flush before them. */
  double e0 = 0, e1 = 0, t0 = kt__now();
  bool energy = reading && energy_wanted && kt__nvml_energy(s->nvml, &e0);
  CUresult r = graph ? graph_n(s, f, &d, l, p.values, n > 0 ? n : 1) : launch_n(s, f, &d, p.values, n > 0 ? n : 1);
  if (r != CUDA_SUCCESS) return cu_status(s, r, graph ? "a graph of the launches" : "cuLaunchKernel", eb);
  /* Faults of the kernels surface here, at the first synchronisation. */
  r = cu.EventSynchronize(s->stop);
  if (r != CUDA_SUCCESS) return cu_status(s, r, "the kernel", eb);
  double t1 = kt__now();
  energy = energy && kt__nvml_energy(s->nvml, &e1);
  if (reading) kt__nvml_read(s->nvml, reading); /* the clocks the samples ran at, right after */
  if (energy) reading->energy_known = true, reading->energy_j = e1 - e0, reading->energy_s = t1 - t0;
  float ms = 0;
  r = cu.EventElapsedTime(&ms, s->start, s->stop);
  if (r != CUDA_SUCCESS) return cu_status(s, r, "cuEventElapsedTime", eb);
  *seconds = ms * 1e-3;
  return KT__ST_OK;
}

/* Overwrites a buffer twice the L2's size, so that the next timed run reads
 * its inputs from memory; synchronised here so it is never timed. */
static void cuda_flush_cache(void *state) {
  cuda_state *s = state;
  if (s->poisoned) return;
  if (!s->scratch) {
    size_t bytes = s->info.l2_bytes ? 2 * (size_t)s->info.l2_bytes : (size_t)256 << 20;
    if (cu.MemAlloc(&s->scratch, bytes) != CUDA_SUCCESS) {
      s->scratch = 0;
      return;
    }
    s->scratch_bytes = bytes;
  }
  s->flush_byte++;
  CUresult r = cu.MemsetD8Async(s->scratch, s->flush_byte, s->scratch_bytes, NULL);
  if (r == CUDA_SUCCESS) r = cu.StreamSynchronize(NULL);
  if (r != CUDA_SUCCESS) cu_status(s, r, "flushing the L2", NULL);
}

/* ---- memory ---- */

static int cuda_alloc(void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  CUdeviceptr p = 0;
  /* cuMemAlloc refuses 0 bytes; a 0-element tensor still needs an address. */
  CUresult r = cu.MemAlloc(&p, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) return cu_error(s, r, "cuMemAlloc", eb);
  *buf = (void *)(uintptr_t)p;
  return KT_OK;
}

static void cuda_release(void *state, void *buf) {
  cuda_state *s = state;
  if (!s->poisoned) cu.MemFree((CUdeviceptr)(uintptr_t)buf);
}

/* Device pointers: a slice is an address inside the allocation. */
static int cuda_slice(void *state, void *buf, size_t offset, size_t bytes, void **out, kt__errbuf *eb) {
  (void)state, (void)bytes, (void)eb;
  *out = (void *)((uintptr_t)buf + offset);
  return KT_OK;
}

static int cuda_upload(void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  CUresult r = cu.MemcpyHtoD((CUdeviceptr)(uintptr_t)buf, host, bytes);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "cuMemcpyHtoD", eb);
}

static int cuda_wait(void *state, void *stream, kt__errbuf *eb) {
  cuda_state *s = state;
  CUresult r = cu.StreamSynchronize((CUstream)stream);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "cuStreamSynchronize", eb);
}

static int cuda_download(void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  CUresult r = cu.MemcpyDtoH(host, (CUdeviceptr)(uintptr_t)buf, bytes);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "cuMemcpyDtoH", eb);
}

/* Whether two device buffers differ, on the device: the worker compares each
 * input with a pristine copy after every verified run, and downloading
 * sgemm's 128 MiB of inputs instead cost 9 ms a configuration on the H200
 * (bench/checks_cost_h200.sh). kt_differs(a, b, n, flag) sets *flag when
 * any of the N 64-bit words differ; PTX, so that the driver builds it
 * without NVRTC (checked with ptxas -arch=sm_90 when written). */
static const char differs_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry kt_differs(.param .u64 pa, .param .u64 pb, .param .u64 pn, .param .u64 pflag)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<7>;\n"
    "  .reg .b64 %rd<13>;\n"
    "  ld.param.u64 %rd1, [pa];\n"
    "  ld.param.u64 %rd2, [pb];\n"
    "  ld.param.u64 %rd3, [pn];\n"
    "  ld.param.u64 %rd4, [pflag];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd2, %rd2;\n"
    "  cvta.to.global.u64 %rd4, %rd4;\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %ntid.x;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r4, %nctaid.x;\n"
    "  mul.wide.u32 %rd5, %r1, %r2;\n"
    "  cvt.u64.u32 %rd6, %r3;\n"
    "  add.u64 %rd5, %rd5, %rd6;\n"
    "  mul.wide.u32 %rd7, %r4, %r2;\n"
    "  mov.u32 %r5, 0;\n"
    "LOOP:\n"
    "  setp.ge.u64 %p1, %rd5, %rd3;\n"
    "  @%p1 bra DONE;\n"
    "  shl.b64 %rd8, %rd5, 3;\n"
    "  add.u64 %rd9, %rd1, %rd8;\n"
    "  add.u64 %rd10, %rd2, %rd8;\n"
    "  ld.global.nc.u64 %rd11, [%rd9];\n"
    "  ld.global.nc.u64 %rd12, [%rd10];\n"
    "  setp.ne.u64 %p2, %rd11, %rd12;\n"
    "  selp.u32 %r6, 1, 0, %p2;\n"
    "  or.b32 %r5, %r5, %r6;\n"
    "  add.u64 %rd5, %rd5, %rd7;\n"
    "  bra LOOP;\n"
    "DONE:\n"
    "  setp.eq.u32 %p1, %r5, 0;\n"
    "  @%p1 bra END;\n"
    "  st.global.u32 [%rd4], %r5;\n"
    "END:\n"
    "  ret;\n"
    "}\n";

static int load_differs(cuda_state *s, kt__errbuf *eb) {
  if (s->differs) return KT_OK;
  CUresult r = cu.ModuleLoadData(&s->differs_mod, differs_ptx);
  if (r == CUDA_SUCCESS) r = cu.ModuleGetFunction(&s->differs, s->differs_mod, "kt_differs");
  if (r == CUDA_SUCCESS) r = cu.MemAlloc(&s->differs_flag, sizeof(unsigned));
  if (r != CUDA_SUCCESS) {
    s->differs = NULL;
    return cu_error(s, r, "loading the comparison kernel", eb);
  }
  return KT_OK;
}

static int cuda_equal(void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  KT__FORWARD(load_differs(s, eb));
  CUdeviceptr pa = (CUdeviceptr)(uintptr_t)a, pb = (CUdeviceptr)(uintptr_t)b;
  unsigned long long words = bytes / 8;
  unsigned flag = 0, blocks = (unsigned)(words / 256 + 1 < 4096 ? words / 256 + 1 : 4096);
  void *args[] = {&pa, &pb, &words, &s->differs_flag};
  CUresult r = cu.MemsetD32(s->differs_flag, 0, 1);
  if (r == CUDA_SUCCESS) r = cu.LaunchKernel(s->differs, blocks, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
  if (r == CUDA_SUCCESS) r = cu.MemcpyDtoH(&flag, s->differs_flag, sizeof flag);
  if (r != CUDA_SUCCESS) return cu_error(s, r, "comparing device buffers", eb);
  unsigned char ta[8], tb[8]; /* the bytes past the last whole word */
  size_t tail = bytes % 8;
  if (!flag && tail) {
    r = cu.MemcpyDtoH(ta, pa + bytes - tail, tail);
    if (r == CUDA_SUCCESS) r = cu.MemcpyDtoH(tb, pb + bytes - tail, tail);
    if (r != CUDA_SUCCESS) return cu_error(s, r, "comparing device buffers", eb);
    flag = memcmp(ta, tb, tail) != 0;
  }
  *same = !flag;
  return KT_OK;
}

/* The output comparison (compare_kernel.h), built with NVRTC for this
 * device the first time it is needed: NVRTC is loaded in the worker anyway
 * (cuda_open), and one build per worker costs less than one download of a
 * large output. */
enum { COMPARE_THREADS = 256, COMPARE_BLOCKS = 1024 };

static int build_compare(cuda_state *s, kt__errbuf *eb) {
  char arch[32], *image = NULL;
  size_t len = 0;
  kt__cuda_pick_arch(NULL, NULL, s->info.arch, arch, sizeof arch);
  char *source = kt__compare_kernel_source(KT__LANG_CUDA);
  int rc = kt__nvrtc_cubin(source, arch, &image, &len, eb);
  free(source);
  if (rc != KT_OK) return rc;
  CUresult r = cu.ModuleLoadData(&s->compare_mod, image);
  free(image);
  if (r == CUDA_SUCCESS) r = cu.ModuleGetFunction(&s->compare, s->compare_mod, KT__COMPARE_KERNEL);
  if (r == CUDA_SUCCESS) r = cu.ModuleGetFunction(&s->decoy, s->compare_mod, KT__DECOY_KERNEL);
  if (r == CUDA_SUCCESS) r = cu.MemAlloc(&s->compare_out, 2 * COMPARE_BLOCKS * sizeof(uint64_t));
  if (r != CUDA_SUCCESS) {
    s->compare = NULL;
    return cu_error(s, r, "loading the output comparison kernel", eb);
  }
  return KT_OK;
}

static int load_compare(cuda_state *s, kt__errbuf *eb) {
  if (s->compare) return KT_OK;
  if (!s->compare_failed && build_compare(s, eb) != KT_OK) {
    s->compare_failed = true;
    snprintf(s->compare_why, sizeof s->compare_why, "%.500s", eb ? eb->msg : "");
  }
  if (s->compare) return KT_OK;
  return kt__err(eb, KT_NOTFOUND, "no comparison on the device: %s", s->compare_why);
}

/* Blocks of COMPARE_THREADS for a grid-stride loop over COUNT elements: one
 * per COMPARE_THREADS elements, at least 1, at most MOST. */
static unsigned grid_blocks(uint64_t count, unsigned most) {
  uint64_t want = (count + COMPARE_THREADS - 1) / COMPARE_THREADS;
  return (unsigned)(want < 1 ? 1 : want > most ? most : want);
}

/* The comparison kernel built before the first comparison needs it (the
 * backend's prepare_checks). */
static void cuda_prepare_checks(void *state) {
  cuda_state *s = state;
  kt__errbuf ignored = {{0}};
  if (!s->poisoned) load_compare(s, &ignored);
}

static int cuda_compare(void *state, kt__dtype t, void *got, void *want, uint64_t count, double atol, double rtol,
                        kt__device_mismatch *m, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  KT__FORWARD(load_compare(s, eb));
  CUdeviceptr pg = (CUdeviceptr)(uintptr_t)got, pw = (CUdeviceptr)(uintptr_t)want;
  unsigned long long n = count;
  int dtype = (int)t;
  unsigned blocks = grid_blocks(count, COMPARE_BLOCKS);
  void *args[] = {&pg, &pw, &n, &dtype, &atol, &rtol, &s->compare_out};
  uint64_t out[2 * COMPARE_BLOCKS];
  CUresult r = cu.LaunchKernel(s->compare, blocks, 1, 1, COMPARE_THREADS, 1, 1, 2 * COMPARE_THREADS * sizeof(uint64_t),
                               NULL, args, NULL);
  if (r == CUDA_SUCCESS) r = cu.MemcpyDtoH(out, s->compare_out, 2 * blocks * sizeof(uint64_t));
  if (r != CUDA_SUCCESS) return cu_error(s, r, "comparing an output on the device", eb);
  kt__compare_reduce(out, (int)blocks, &m->count, &m->first);
  memset(m->got, 0, sizeof m->got);
  if (m->count == 0) return KT_OK;
  size_t size = kt__dtype_size(t);
  r = cu.MemcpyDtoH(m->got, pg + m->first * size, size);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "reading the first mismatching element", eb);
}

static int cuda_copy_device(void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  CUresult r = cu.MemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "cuMemcpyDtoD", eb);
}

static int cuda_decoy(void *state, kt__dtype t, void *buf, void *ref, uint64_t count, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  KT__FORWARD(load_compare(s, eb));
  CUdeviceptr pb = (CUdeviceptr)(uintptr_t)buf, pr = (CUdeviceptr)(uintptr_t)ref;
  unsigned long long n = count;
  int dtype = (int)t;
  unsigned blocks = grid_blocks(count, 8 * COMPARE_BLOCKS);
  void *args[] = {&pb, &pr, &n, &dtype};
  CUresult r = cu.LaunchKernel(s->decoy, blocks, 1, 1, COMPARE_THREADS, 1, 1, 0, NULL, args, NULL);
  if (r == CUDA_SUCCESS) r = cu.CtxSynchronize(); /* a fault is this call's, not the next one's */
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "making an output's decoys on the device", eb);
}

/* Poisoning an output on the device: one memset instead of a transfer. */
static int cuda_fill(void *state, void *buf, size_t bytes, const void *pattern, size_t size, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)buf;
  CUresult r;
  if (size == 4) {
    unsigned int v;
    memcpy(&v, pattern, 4);
    r = cu.MemsetD32(p, v, bytes / 4);
  } else if (size == 2) {
    unsigned short v;
    memcpy(&v, pattern, 2);
    r = cu.MemsetD16(p, v, bytes / 2);
  } else {
    r = cu.MemsetD8(p, *(const unsigned char *)pattern, bytes);
  }
  if (r == CUDA_SUCCESS) r = cu.CtxSynchronize();
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "cuMemsetD", eb);
}

/* Page-locked host memory copies at full PCIe speed; a refusal (too much
 * locked memory) only costs speed. */
static void cuda_pin_host(void *state, void *host, size_t bytes) {
  cuda_state *s = state;
  if (!s->poisoned) cu.MemHostRegister(host, bytes, 0);
}

static void cuda_unpin_host(void *state, void *host) {
  cuda_state *s = state;
  if (!s->poisoned) cu.MemHostUnregister(host); /* an error: it was not pinned */
}

/* ---- a blocking miss's buffers, shared with the helper's worker ---- */

/* The caller's BUF as a legacy IPC handle of its whole allocation and the
 * span's offset in it. Memory from a stream-ordered pool or from cuMemCreate
 * has no such handle (the driver refuses): the caller then copies through
 * host memory, as before. The application's context is current (kt_launch's
 * thread). */
static int cuda_share(void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  KT__RETURN_IF(!cu.MemGetAddressRange || !cu.IpcGetMemHandle || !cu.IpcOpenMemHandle || !cu.IpcCloseMemHandle, eb,
                KT_NOTFOUND, "this driver has no CUDA IPC");
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)buf, base = 0;
  size_t size = 0;
  CUipcMemHandle h;
  CUresult r = cu.CtxPushCurrent(s->ctx);
  if (r != CUDA_SUCCESS) return cu_error(s, r, "cuCtxPushCurrent", eb);
  r = cu.MemGetAddressRange(&base, &size, p);
  if (r == CUDA_SUCCESS && (p - base > size || bytes > size - (p - base))) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) r = cu.IpcGetMemHandle(&h, base);
  CUcontext prev;
  cu.CtxPopCurrent(&prev);
  KT__RETURN_IF(r != CUDA_SUCCESS, eb, KT_NOTFOUND, "buffer %p cannot be shared with the helper (%s)", buf,
                err_name(r));
  _Static_assert(sizeof h.reserved == sizeof out->handle, "an IPC handle is 64 bytes");
  *out = (kt__shared_buffer){.offset = (uint64_t)(p - base), .bytes = bytes, .set = 1};
  memcpy(out->handle, h.reserved, sizeof out->handle);
  return KT_OK;
}

/* Opens the application's allocation, copies the span and closes it again
 * at once: nothing of the application's stays mapped in the worker, which
 * outlives the miss (a kept worker), and the application may free it. */
static int cuda_copy_shared(void *state, void *dst, const kt__shared_buffer *src, kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  KT__RETURN_IF(!cu.IpcOpenMemHandle || !cu.IpcCloseMemHandle, eb, KT_NOTFOUND, "this driver has no CUDA IPC");
  CUipcMemHandle h;
  memcpy(h.reserved, src->handle, sizeof h.reserved);
  CUdeviceptr base = 0;
  CUresult r = cu.IpcOpenMemHandle(&base, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (r != CUDA_SUCCESS) return cu_error(s, r, "cuIpcOpenMemHandle (the application's tensor)", eb);
  r = cu.MemcpyDtoD((CUdeviceptr)(uintptr_t)dst, base + src->offset, src->bytes);
  /* A copy between device buffers may return before it is done. */
  if (r == CUDA_SUCCESS) r = cu.CtxSynchronize();
  CUresult closed = cu.IpcCloseMemHandle(base);
  if (r == CUDA_SUCCESS) r = closed;
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "copying the application's tensor on the device", eb);
}

/* ---- a miss's snapshot of the caller's buffers ---- */

/* Device copies of the caller's buffers, taken in its stream's order, and
 * the event after them. The copies' memory comes from the device's memory
 * pool in the caller's stream's order (cuMemAllocAsync) when the pool already
 * holds room for them, else from cuMemAlloc (ASYNC false: also drivers or
 * devices without memory pools): see pool_has_room. */
typedef struct cuda_snapshot {
  int n;
  bool waited;
  CUevent done;
  CUdeviceptr *buf;
  bool *async;
  size_t *bytes;
} cuda_snapshot;

/* Frees the copies once nothing uses them: after the event (the copies
 * done), a stream-ordered free on this thread's own stream needs no
 * ordering with the caller's stream, which may be gone by now. */
static void snapshot_release(cuda_snapshot *p) {
  if (p->done && !p->waited) cu.EventSynchronize(p->done);
  for (int i = 0; i < p->n; i++)
    if (p->buf[i] && p->async[i]) cu.MemFreeAsync(p->buf[i], CU_STREAM_PER_THREAD);
    else if (p->buf[i]) cu.MemFree(p->buf[i]);
  if (p->done) cu.EventDestroy(p->done);
  free(p->buf);
  free(p->async);
  free(p->bytes);
  free(p);
}

/* Whether DEV's current memory pool holds TOTAL bytes it has reserved and
 * does not use: then a stream-ordered allocation takes them at once. A pool
 * that must grow first does so on the caller's thread, and its first growth
 * took 10.6 ms for 128 MiB on the H200 (a background first call of 10-12 ms),
 * against 0.3-0.4 ms for cuMemAlloc. */
static bool pool_has_room(CUdevice dev, size_t total) {
  CUmemoryPool pool;
  cuuint64_t reserved = 0, used = 0;
  if (!cu.MemAllocAsync || !cu.MemFreeAsync || !cu.DeviceGetMemPool || !cu.MemPoolGetAttribute ||
      cu.DeviceGetMemPool(&pool, dev) != CUDA_SUCCESS)
    return false;
  if (cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) != CUDA_SUCCESS ||
      cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) != CUDA_SUCCESS)
    return false;
  return reserved >= used && reserved - used >= total;
}

/* Device memory for copy I of P: stream-ordered on STREAM when POOLED (the
 * pool has room: pool_has_room), else synchronous. */
static CUresult snapshot_alloc(cuda_snapshot *p, int i, size_t bytes, CUstream stream, bool pooled) {
  size_t n = bytes ? bytes : 1;
  if (pooled && cu.MemAllocAsync(&p->buf[i], n, stream) == CUDA_SUCCESS) {
    p->async[i] = true;
    return CUDA_SUCCESS;
  }
  p->buf[i] = 0;
  return cu.MemAlloc(&p->buf[i], n);
}

static int cuda_snapshot_take(void *state, void *stream, void *const *bufs, const size_t *bytes, int n, void **out,
                              kt__errbuf *eb) {
  cuda_state *s = state;
  if (poisoned(s, eb)) return KT_INTERNAL;
  cuda_snapshot *p = kt__xcalloc(1, sizeof *p);
  p->n = n;
  p->buf = kt__xcalloc((size_t)n + 1, sizeof *p->buf);
  p->async = kt__xcalloc((size_t)n + 1, sizeof *p->async);
  p->bytes = kt__xcalloc((size_t)n + 1, sizeof *p->bytes);
  CUresult r = CUDA_SUCCESS;
  const char *what = "cuMemAlloc";
  size_t total = 0;
  for (int i = 0; i < n; i++) total += bytes[i] ? bytes[i] : 1;
  bool pooled = pool_has_room(s->dev, total);
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
    p->bytes[i] = bytes[i];
    r = snapshot_alloc(p, i, bytes[i], (CUstream)stream, pooled);
  }
  kt__trace("miss: snapshot memory allocated (%s)", n && p->async[0] ? "stream-ordered" : "cuMemAlloc");
  if (r == CUDA_SUCCESS) what = "cuMemcpyDtoDAsync";
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++)
    r = cu.MemcpyDtoDAsync(p->buf[i], (CUdeviceptr)(uintptr_t)bufs[i], bytes[i], (CUstream)stream);
  if (r == CUDA_SUCCESS) what = "recording the snapshot's event";
  /* The reading thread sleeps on it instead of spinning a core. */
  if (r == CUDA_SUCCESS) r = cu.EventCreate(&p->done, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS) r = cu.EventRecord(p->done, (CUstream)stream);
  if (r != CUDA_SUCCESS) {
    if (p->done) cu.EventDestroy(p->done);
    p->done = NULL;
    cu.StreamSynchronize((CUstream)stream); /* what was enqueued is done before its memory goes */
    snapshot_release(p);
    return cu_error(s, r, what, eb);
  }
  *out = p;
  return KT_OK;
}

/* Pageable memory copies through the driver's staging buffers at about
 * 1 GiB/s (0.78-1.05 s per GiB measured on the H200); registered for the
 * transfer, the copy runs at PCIe speed. A refused registration (locked
 * memory limit) only costs speed. */
static CUresult download_locked(void *host, CUdeviceptr src, size_t bytes) {
  bool locked = bytes && cu.MemHostRegister(host, bytes, 0) == CUDA_SUCCESS;
  CUresult r = cu.MemcpyDtoH(host, src, bytes);
  if (locked) cu.MemHostUnregister(host);
  return r;
}

/* Two page-locked staging buffers of the process, made by the first large
 * download and kept (2 x 16 MiB of locked memory for the application's
 * life), one download at a time. Registering a request's pages for the
 * transfer cost 0.39-0.59 s per GiB on the H200, most of a 256 MB miss's
 * 0.13 s download; through the stages the device writes at PCIe speed while
 * the cores copy the previous chunk into the request. */
enum { STAGE_BYTES = 16 << 20 };
static struct {
  pthread_mutex_t lock;
  void *buf[2];
  bool failed; /* no locked memory: register instead */
} stages = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool stages_ready(void) {
  if (stages.buf[1] || stages.failed) return !stages.failed;
  for (int b = 0; b < 2 && !stages.failed; b++)
    stages.failed = cu.MemAllocHost(&stages.buf[b], STAGE_BYTES) != CUDA_SUCCESS;
  if (stages.failed && stages.buf[0]) cu.MemFreeHost(stages.buf[0]), stages.buf[0] = NULL;
  return !stages.failed;
}

/* BYTES from SRC into HOST a chunk at a time: the chunk after the one being
 * copied on the cores is already on its way into the other stage. */
static CUresult download_staged(void *host, CUdeviceptr src, size_t bytes) {
  double dma_s = 0, copy_s = 0;
  CUevent done[2] = {NULL, NULL};
  CUresult r = cu.EventCreate(&done[0], CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS) r = cu.EventCreate(&done[1], CU_EVENT_DISABLE_TIMING);
  size_t nchunks = (bytes + STAGE_BYTES - 1) / STAGE_BYTES;
  int cores = kt__ncores();
  for (size_t c = 0; c <= nchunks && r == CUDA_SUCCESS; c++) {
    if (c < nchunks) { /* chunk C on its way */
      size_t at = c * STAGE_BYTES, len = bytes - at < STAGE_BYTES ? bytes - at : STAGE_BYTES;
      r = cu.MemcpyDtoHAsync(stages.buf[c % 2], src + at, len, CU_STREAM_PER_THREAD);
      if (r == CUDA_SUCCESS) r = cu.EventRecord(done[c % 2], CU_STREAM_PER_THREAD);
    }
    if (c == 0 || r != CUDA_SUCCESS) continue;
    size_t prev = c - 1, at = prev * STAGE_BYTES, len = bytes - at < STAGE_BYTES ? bytes - at : STAGE_BYTES;
    double t0 = kt__now();
    r = cu.EventSynchronize(done[prev % 2]); /* chunk C - 1 has come: onto the cores */
    double t1 = kt__now();
    if (r == CUDA_SUCCESS) kt__copy_parallel((char *)host + at, stages.buf[prev % 2], len, cores);
    dma_s += t1 - t0, copy_s += kt__now() - t1;
  }
  kt__trace("miss: %.0f MB downloaded through the stages (%.4f s waiting for the device, %.4f s copying on %d cores)",
            (double)bytes / 1e6, dma_s, copy_s, cores);
  if (r != CUDA_SUCCESS) cu.StreamSynchronize(CU_STREAM_PER_THREAD); /* nothing left writing a stage */
  for (int b = 0; b < 2; b++)
    if (done[b]) cu.EventDestroy(done[b]);
  return r;
}

/* Large downloads through the stages, small ones (or without locked memory
 * for the stages) into registered pages. */
static CUresult download_snapshot(void *host, CUdeviceptr src, size_t bytes) {
  if (bytes < 2 * STAGE_BYTES) return download_locked(host, src, bytes);
  pthread_mutex_lock(&stages.lock);
  CUresult r = stages_ready() ? download_staged(host, src, bytes) : download_locked(host, src, bytes);
  pthread_mutex_unlock(&stages.lock);
  return r;
}

static int cuda_snapshot_read(void *state, void *snap, int i, void *host, kt__errbuf *eb) {
  cuda_state *s = state;
  cuda_snapshot *p = snap;
  /* Another thread than the one that opened the device: the context is
   * made current for these calls only. */
  CUresult r = cu.CtxPushCurrent(s->ctx);
  if (r != CUDA_SUCCESS) return cu_error(s, r, "cuCtxPushCurrent", eb);
  if (!p->waited && (r = cu.EventSynchronize(p->done)) == CUDA_SUCCESS)
    kt__trace("miss: the snapshot's copy on the device is done");
  p->waited = r == CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) r = download_snapshot(host, p->buf[i], p->bytes[i]);
  CUcontext prev;
  cu.CtxPopCurrent(&prev);
  return r == CUDA_SUCCESS ? KT_OK : cu_error(s, r, "downloading the snapshot of the caller's buffer", eb);
}

static void cuda_snapshot_free(void *state, void *snap) {
  cuda_state *s = state;
  CUcontext prev;
  bool pushed = cu.CtxPushCurrent(s->ctx) == CUDA_SUCCESS;
  snapshot_release(snap);
  if (pushed) cu.CtxPopCurrent(&prev);
}

#endif

const kt__backend kt__backend_cuda = {
    .name = "cuda",
    .lang = KT__LANG_CUDA,
    .extensions = {".cu", ".cuh"},
    .drivers = {"libcuda.so.1", "libcuda.so"},
    .memory = KT_MEMORY_CUDA,
    .timings = {[KT_TIMING_EVENTS] = "events", [KT_TIMING_GRAPH] = "graph"},
#ifdef KTUNE_HAVE_CUDA_H
    .list_devices = list_devices,
    .compile = kt__nvrtc_build,
    .binary_flags = kt__nvrtc_binary_flags,
    .artifact_parts = {".cubin", ".cubin.sym"},
    .open = cuda_open,
    .close = cuda_close,
    .load = cuda_load,
    .unload = cuda_unload,
    .fill = cuda_fill,
    .pin_host = cuda_pin_host,
    .unpin_host = cuda_unpin_host,
    .prepare_checks = cuda_prepare_checks,
    .check = cuda_check,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .slice = cuda_slice,
    .equal = cuda_equal,
    .compare = cuda_compare,
    .decoy = cuda_decoy,
    .set_constant = cuda_set_constant,
    .copy = cuda_copy_device,
    .upload = cuda_upload,
    .download = cuda_download,
    .wait = cuda_wait,
    .share = cuda_share,
    .copy_shared = cuda_copy_shared,
    .snapshot = cuda_snapshot_take,
    .snapshot_read = cuda_snapshot_read,
    .snapshot_free = cuda_snapshot_free,
    .run = cuda_run,
    .run_timed = cuda_run_timed,
    .time = cuda_time,
    .flush_cache = cuda_flush_cache,
#else /* listed all the same, saying why it cannot work */
    .unavailable = "CUDA is not available: ktune was built without cuda.h "
                   "(install the CUDA toolkit's headers and rebuild)",
#endif
};
