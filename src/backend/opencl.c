/* The OpenCL backend: any OpenCL 1.2+ platform found through the ICD loader
 * (PoCL's CPU device in CI, a GPU vendor's platform elsewhere).
 *
 * Devices of all platforms are flattened into one list; its index is the
 * --device number. Programs are built at load time inside the worker (the
 * context is the worker's), from the kernel file's whole source with the
 * configuration as -DNAME=VALUE options, and cached per source and option
 * string; `prebuild` fills that cache ahead on all cores. Dynamic local memory (@shared) is passed to a kernel that declares
 * one more parameter than @kernel lists: a trailing `__local` pointer, sized
 * to the @shared bytes. Timing uses profiling events. */
#include "backend.h"
#include "binkey.h"
#include "opencl_api.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config.h"
#include "compare_kernel.h"

#ifdef KTUNE_HAVE_CL_H

enum {
  MAX_DEVICES = 256,
  CACHE_SLOTS = 128,    /* built programs kept per worker: more than one prebuild batch */
  LOG_LINES = 40,       /* build log lines kept in a COMPILE message */
  FLUSH_MIN = 8u << 20, /* bytes written to evict caches, at least */
  FLUSH_MAX = 512u << 20
};

typedef struct cl_entry {
  uint64_t source_hash;
  char *options;
  cl_program program; /* NULL when the build failed */
  char *log;          /* the failure message when it did */
  bool environment;   /* the build failed for the machine's reason (machine_failed) */
  kt__bin_use use;    /* how the binary cache served the build */
} cl_entry;

typedef struct cl_state {
  const kt__cl_api *cl;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  size_t max_item[3];
  size_t max_group;
  cl_uint address_bits; /* the device's size_t, which holds global sizes */
  cl_ulong local_mem;
  cl_ulong cache_bytes;
  bool can_slice; /* sub-buffers at KT__SLICE_ALIGN are allowed */
  cl_entry cache[CACHE_SLOTS];
  int next_slot;    /* FIFO eviction */
  cl_mem flush_buf; /* lazily created by flush_cache */
  size_t flush_bytes;
  bool flush_failed;
  /* A kernel failed while executing. GPU drivers (NVIDIA's among them)
   * leave the context unusable after that, so every later call fails fast
   * with this reason instead of reporting the driver's follow-on errors
   * against innocent configurations. */
  char lost[160];
  /* cl_equal's kernel, built on first use, and its flag. */
  cl_program differs_prog;
  cl_kernel differs;
  cl_mem differs_flag;
  /* The output comparison of cl_compare, built on first use. */
  cl_program compare_prog;
  cl_kernel compare;
  cl_kernel decoy;    /* in the same program */
  cl_mem compare_out; /* 2 words per group */
  size_t compare_group;
  bool compare_failed; /* no fp64, or it did not build: the worker compares on the host */
  char compare_why[512];
} cl_state;

typedef struct cl_fn {
  cl_kernel kernel;
  cl_uint nparams;       /* as the compiled kernel declares them */
  size_t group_limit;    /* CL_KERNEL_WORK_GROUP_SIZE */
  cl_ulong static_local; /* CL_KERNEL_LOCAL_MEM_SIZE */
} cl_fn;

static kt__status fail(kt__errbuf *eb, kt__status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static kt__status fail(kt__errbuf *eb, kt__status st, const char *fmt, ...) {
  if (eb) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

#define CL_CHECK(call, eb, what)                                                                                  \
  do {                                                                                                            \
    cl_int rc_ = (call);                                                                                          \
    if (rc_ != CL_SUCCESS)                                                                                        \
      return kt__err((eb), KT_NOBACKEND, "OpenCL: %s failed: %s (%d)", (what), kt__cl_error_name(rc_), (int)rc_); \
  } while (0)

/* True (with the reason in EB) once a kernel fault made the context unusable. */
static bool is_lost(const cl_state *s, kt__errbuf *eb) {
  if (s->lost[0])
    kt__err(eb, KT_NOBACKEND, "OpenCL context unusable after an earlier fault (%s): the worker must be replaced",
            s->lost);
  return s->lost[0] != '\0';
}

/* ---- devices ---------------------------------------------------------- */

typedef struct cl_pair {
  cl_platform_id platform;
  cl_device_id device;
} cl_pair;

/* Appends PLATFORM's devices to PAIRS. A platform without devices is
 * skipped (CL_DEVICE_NOT_FOUND is how the loader says so). */
static int add_platform_devices(const kt__cl_api *cl, cl_platform_id platform, cl_pair *pairs, int max, int *count,
                                kt__errbuf *eb) {
  cl_uint n = 0;
  cl_int rc = cl->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
  if (rc == CL_DEVICE_NOT_FOUND || n == 0) return KT_OK;
  CL_CHECK(rc, eb, "clGetDeviceIDs");
  cl_device_id *ids = kt__xcalloc(n, sizeof *ids);
  rc = cl->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids, NULL);
  for (cl_uint i = 0; rc == CL_SUCCESS && i < n && *count < max; i++) pairs[(*count)++] = (cl_pair){platform, ids[i]};
  free(ids);
  CL_CHECK(rc, eb, "clGetDeviceIDs");
  return KT_OK;
}

/* Every device of every platform, in platform order: the global index. */
static int enumerate(const kt__cl_api *cl, cl_pair *pairs, int max, int *count, kt__errbuf *eb) {
  *count = 0;
  cl_uint np = 0;
  cl_int rc = cl->clGetPlatformIDs(0, NULL, &np);
  if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && np == 0))
    return kt__err(eb, KT_NOBACKEND,
                   "OpenCL: the ICD loader found no platform (no driver registered under "
                   "/etc/OpenCL/vendors or $OCL_ICD_VENDORS)");
  CL_CHECK(rc, eb, "clGetPlatformIDs");
  cl_platform_id *plats = kt__xcalloc(np, sizeof *plats);
  rc = cl->clGetPlatformIDs(np, plats, NULL);
  int status = rc == CL_SUCCESS
                   ? KT_OK
                   : kt__err(eb, KT_NOBACKEND, "OpenCL: clGetPlatformIDs failed: %s", kt__cl_error_name(rc));
  for (cl_uint p = 0; status == KT_OK && p < np; p++)
    status = add_platform_devices(cl, plats[p], pairs, max, count, eb);
  free(plats);
  if (status == KT_OK && *count == 0)
    status = kt__err(eb, KT_NOBACKEND, "OpenCL: %u platform(s) found, but no device", (unsigned)np);
  return status;
}

/* A string property, truncated to CAP - 1 bytes (clGet*Info refuses a buffer
 * shorter than the value, so the size is asked first). */
static void device_string(const kt__cl_api *cl, cl_device_id d, cl_platform_id p, cl_uint param, char *out,
                          size_t cap) {
  size_t need = 0;
  cl_int rc = d ? cl->clGetDeviceInfo(d, param, 0, NULL, &need) : cl->clGetPlatformInfo(p, param, 0, NULL, &need);
  out[0] = '\0';
  if (rc != CL_SUCCESS || need == 0) return;
  char *tmp = kt__xmalloc(need + 1);
  rc = d ? cl->clGetDeviceInfo(d, param, need, tmp, NULL) : cl->clGetPlatformInfo(p, param, need, tmp, NULL);
  if (rc == CL_SUCCESS) {
    tmp[need] = '\0';
    snprintf(out, cap, "%s", tmp);
  }
  free(tmp);
}

static int device_value(const kt__cl_api *cl, cl_device_id d, cl_uint param, void *out, size_t size, kt__errbuf *eb) {
  CL_CHECK(cl->clGetDeviceInfo(d, param, size, out, NULL), eb, "clGetDeviceInfo");
  return KT_OK;
}

static int fill_info(const kt__cl_api *cl, cl_pair pr, int index, kt__device_info *info, kt__errbuf *eb) {
  snprintf(info->backend, sizeof info->backend, "opencl");
  info->index = index;
  device_string(cl, pr.device, NULL, CL_DEVICE_NAME, info->name, sizeof info->name);
  device_string(cl, pr.device, NULL, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
  device_string(cl, pr.device, NULL, CL_DEVICE_VERSION, info->arch, sizeof info->arch);
  device_string(cl, pr.device, NULL, CL_DEVICE_OPENCL_C_VERSION, info->toolchain_version,
                sizeof info->toolchain_version);
  /* The driver version first: the platform version alone ("OpenCL 3.0 CUDA
   * 12.4") does not change with every driver, and results must not outlive
   * a driver change. */
  char driver[64], platform[128];
  device_string(cl, pr.device, NULL, CL_DRIVER_VERSION, driver, sizeof driver);
  device_string(cl, NULL, pr.platform, CL_PLATFORM_VERSION, platform, sizeof platform);
  kt__sbuf both = {0};
  kt__sbuf_printf(&both, "%s; %s", driver, platform);
  snprintf(info->driver_version, sizeof info->driver_version, "%.*s", (int)sizeof info->driver_version - 1, both.s);
  kt__sbuf_free(&both);

  cl_ulong mem = 0, local = 0, cache = 0;
  size_t group = 0;
  cl_uint units = 0;
  cl_device_type type = 0;
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_TYPE, &type, sizeof type, eb));
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_GLOBAL_MEM_SIZE, &mem, sizeof mem, eb));
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_LOCAL_MEM_SIZE, &local, sizeof local, eb));
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &cache, sizeof cache, eb));
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, &group, sizeof group, eb));
  KT__FORWARD(device_value(cl, pr.device, CL_DEVICE_MAX_COMPUTE_UNITS, &units, sizeof units, eb));
  info->memory_bytes = mem;
  info->max_shared_bytes = local;
  info->l2_bytes = cache;
  info->max_threads_per_block = group > INT32_MAX ? INT32_MAX : (int)group;
  info->compute_units = (int)units;
  info->host_cpu = (type & CL_DEVICE_TYPE_CPU) != 0; /* PoCL's pthread device shares our cores */
  return KT_OK;
}

static int cl_list_devices(kt__device_info *out, int max, int *count, kt__errbuf *eb) {
  const kt__cl_api *cl = kt__cl_load(eb);
  if (!cl) return KT_NOBACKEND;
  cl_pair pairs[MAX_DEVICES];
  int n = 0;
  KT__FORWARD(enumerate(cl, pairs, MAX_DEVICES, &n, eb));
  *count = 0;
  for (int i = 0; i < n && i < max; i++) {
    memset(&out[i], 0, sizeof out[i]);
    KT__FORWARD(fill_info(cl, pairs[i], i, &out[i], eb));
    *count = i + 1;
  }
  return KT_OK;
}

/* ---- open / close ----------------------------------------------------- */

static int query_limits(cl_state *s, kt__errbuf *eb) {
  const kt__cl_api *cl = s->cl;
  cl_uint dims = 0;
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &dims, sizeof dims, eb));
  KT__RETURN_IF(dims < 1 || dims > 64, eb, KT_NOBACKEND, "OpenCL: device reports %u work-item dimensions",
                (unsigned)dims);
  size_t sizes[64];
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes, dims * sizeof sizes[0], eb));
  for (int i = 0; i < 3; i++) s->max_item[i] = i < (int)dims ? sizes[i] : 1;
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, &s->max_group, sizeof s->max_group, eb));
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_ADDRESS_BITS, &s->address_bits, sizeof s->address_bits, eb));
  KT__RETURN_IF(s->address_bits != 32 && s->address_bits != 64, eb, KT_NOBACKEND,
                "OpenCL: device reports %u address bits (CL_DEVICE_ADDRESS_BITS); 32 or 64 expected",
                (unsigned)s->address_bits);
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_LOCAL_MEM_SIZE, &s->local_mem, sizeof s->local_mem, eb));
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &s->cache_bytes, sizeof s->cache_bytes, eb));
  cl_uint align_bits = 0;
  KT__FORWARD(device_value(cl, s->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &align_bits, sizeof align_bits, eb));
  s->can_slice = align_bits / 8 <= KT__SLICE_ALIGN;
  return KT_OK;
}

static int create_context(cl_state *s, kt__errbuf *eb) {
  cl_int rc = CL_SUCCESS;
  s->context = s->cl->clCreateContext(NULL, 1, &s->device, NULL, NULL, &rc);
  CL_CHECK(rc, eb, "clCreateContext");
  s->queue = s->cl->clCreateCommandQueue(s->context, s->device, CL_QUEUE_PROFILING_ENABLE, &rc);
  CL_CHECK(rc, eb, "clCreateCommandQueue (with profiling)");
  return KT_OK;
}

static void cl_close(void *state);

static int cl_open(int index, void **state, kt__device_info *info, kt__errbuf *eb) {
  *state = NULL;
  const kt__cl_api *cl = kt__cl_load(eb);
  if (!cl) return KT_NOBACKEND;
  cl_pair pairs[MAX_DEVICES];
  int n = 0;
  KT__FORWARD(enumerate(cl, pairs, MAX_DEVICES, &n, eb));
  KT__RETURN_IF(index < 0 || index >= n, eb, KT_NOTFOUND,
                "OpenCL: there is no device %d (%d found: 0..%d; see `ktune devices`)", index, n, n - 1);
  KT__FORWARD(fill_info(cl, pairs[index], index, info, eb));
  snprintf(info->no_energy, sizeof info->no_energy,
           "OpenCL reports no energy (no counter in its API, PoCL's or a GPU driver's); the CUDA backend reads "
           "NVML's, the cpu backend RAPL's");
  cl_state *s = kt__xcalloc(1, sizeof *s);
  s->cl = cl;
  s->device = pairs[index].device;
  int rc = query_limits(s, eb);
  if (rc == KT_OK) rc = create_context(s, eb);
  if (rc != KT_OK) {
    cl_close(s);
    return rc;
  }
  *state = s;
  return KT_OK;
}

/* ---- the application's own context (kt_launch) ------------------------- */

/* The devices of CTX into a new array; KT_INVALID when CTX is no context. */
static int context_devices(const kt__cl_api *cl, cl_context ctx, cl_device_id **out, cl_uint *n, kt__errbuf *eb) {
  *out = NULL;
  *n = 0;
  cl_int rc = cl->clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof *n, n, NULL);
  KT__RETURN_IF(rc != CL_SUCCESS || *n == 0, eb, KT_INVALID,
                "kt_options.opencl_context is not a usable cl_context (clGetContextInfo: %s): pass the context "
                "the application's buffers and queue belong to",
                rc != CL_SUCCESS ? kt__cl_error_name(rc) : "no devices");
  *out = kt__xcalloc(*n, sizeof **out);
  rc = cl->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, *n * sizeof **out, *out, NULL);
  if (rc != CL_SUCCESS) {
    free(*out);
    *out = NULL;
    return kt__err(eb, KT_INVALID, "kt_options.opencl_context: clGetContextInfo(CL_CONTEXT_DEVICES): %s",
                   kt__cl_error_name(rc));
  }
  return KT_OK;
}

/* The device to use in CTX: WANT when it is one of the context's, else
 * (WANT NULL) the context's first. */
static int pick_context_device(const kt__cl_api *cl, cl_context ctx, cl_device_id want, cl_device_id *out,
                               kt__errbuf *eb) {
  cl_device_id *devs;
  cl_uint n;
  KT__FORWARD(context_devices(cl, ctx, &devs, &n, eb));
  *out = want ? NULL : devs[0];
  for (cl_uint i = 0; want && i < n; i++)
    if (devs[i] == want) *out = want;
  free(devs);
  KT__RETURN_IF(!*out, eb, KT_INVALID,
                "kt_options.opencl_device is not a device of kt_options.opencl_context: pass one of the "
                "context's devices, or NULL for its first");
  return KT_OK;
}

/* DEVICE's place in the flattened list (its index in `ktune devices`), with
 * its platform: the device's identity then reads as a tuning's does. */
static int locate_device(const kt__cl_api *cl, cl_device_id device, cl_pair *pair, int *index, kt__errbuf *eb) {
  cl_pair pairs[MAX_DEVICES];
  int n = 0;
  KT__FORWARD(enumerate(cl, pairs, MAX_DEVICES, &n, eb));
  *index = 0;
  *pair = (cl_pair){NULL, device};
  for (int i = 0; i < n; i++)
    if (pairs[i].device == device) *pair = pairs[i], *index = i;
  if (!pair->platform)
    KT__FORWARD(device_value(cl, device, CL_DEVICE_PLATFORM, &pair->platform, sizeof pair->platform, eb));
  return KT_OK;
}

/* Opens on the application's context NATIVE (a cl_context, retained while
 * the state lives): programs are built there, so that the caller's cl_mem
 * buffers and command queues work with them. The backend's own queue (for
 * launches without one) is made in that context too. */
static int cl_adopt(void *native, void *want, void **state, kt__device_info *info, kt__errbuf *eb) {
  *state = NULL;
  const kt__cl_api *cl = kt__cl_load(eb);
  if (!cl) return KT_NOBACKEND;
  cl_context ctx = native;
  cl_device_id device;
  KT__FORWARD(pick_context_device(cl, ctx, want, &device, eb));
  cl_pair pair;
  int index;
  KT__FORWARD(locate_device(cl, device, &pair, &index, eb));
  KT__FORWARD(fill_info(cl, pair, index, info, eb));
  cl_state *s = kt__xcalloc(1, sizeof *s);
  s->cl = cl;
  s->device = device;
  int rc = query_limits(s, eb);
  cl_int clrc = CL_SUCCESS;
  if (rc == KT_OK && (clrc = cl->clRetainContext(ctx)) == CL_SUCCESS) s->context = ctx;
  if (rc == KT_OK && clrc == CL_SUCCESS)
    s->queue = cl->clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &clrc);
  if (rc == KT_OK && clrc != CL_SUCCESS)
    rc = kt__err(eb, KT_NOBACKEND, "OpenCL: using the application's context failed: %s", kt__cl_error_name(clrc));
  if (rc != KT_OK) {
    cl_close(s);
    return rc;
  }
  *state = s;
  return KT_OK;
}

static void entry_clear(const kt__cl_api *cl, cl_entry *e) {
  if (e->program) (void)cl->clReleaseProgram(e->program);
  free(e->options);
  free(e->log);
  memset(e, 0, sizeof *e);
}

static void cl_close(void *state) {
  cl_state *s = state;
  const kt__cl_api *cl = s->cl;
  for (int i = 0; i < CACHE_SLOTS; i++) entry_clear(cl, &s->cache[i]);
  if (s->flush_buf) (void)cl->clReleaseMemObject(s->flush_buf);
  if (s->differs_flag) (void)cl->clReleaseMemObject(s->differs_flag);
  if (s->differs) (void)cl->clReleaseKernel(s->differs);
  if (s->differs_prog) (void)cl->clReleaseProgram(s->differs_prog);
  if (s->compare_out) (void)cl->clReleaseMemObject(s->compare_out);
  if (s->compare) (void)cl->clReleaseKernel(s->compare);
  if (s->decoy) (void)cl->clReleaseKernel(s->decoy);
  if (s->compare_prog) (void)cl->clReleaseProgram(s->compare_prog);
  /* Release errors at teardown have no one to report to: the worker is
   * leaving, and the driver reclaims everything with the process. */
  if (s->queue) (void)cl->clReleaseCommandQueue(s->queue);
  if (s->context) (void)cl->clReleaseContext(s->context);
  free(s);
}

/* ---- building --------------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static char *build_options(const kt__build *b) {
  kt__sbuf o = {0};
  kt__config_format(b->names, b->values, b->n, "-D", &o);
  return o.s;
}

/* The first LOG_LINES lines of the build log, for the COMPILE message. */
static char *build_log(const kt__cl_api *cl, cl_program prog, cl_device_id dev) {
  size_t n = 0;
  if (cl->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return kt__xstrdup("(no build log)");
  char *log = kt__xmalloc(n + 1);
  if (cl->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) n = 0;
  log[n] = '\0';
  int lines = 0;
  for (char *p = log; *p; p++)
    if (*p == '\n' && ++lines == LOG_LINES) {
      p[1] = '\0';
      break;
    }
  return log;
}

/* Whether the platform's compiler builds at all now: a program of its own
 * (unique, so that no compiler cache answers for it), built after a failed
 * build whose log names no error in the source. */
static bool compiler_works(cl_state *s) {
  static atomic_uint probes;
  char source[128];
  snprintf(source, sizeof source, "/* ktune probe %ld.%u */ __kernel void ktune_probe(void) {}\n", (long)getpid(),
           atomic_fetch_add(&probes, 1));
  const char *text = source;
  cl_int rc = CL_SUCCESS;
  cl_program prog = s->cl->clCreateProgramWithSource(s->context, 1, &text, NULL, &rc);
  if (rc == CL_SUCCESS) rc = s->cl->clBuildProgram(prog, 1, &s->device, "", NULL, NULL);
  if (prog) (void)s->cl->clReleaseProgram(prog);
  return rc == CL_SUCCESS;
}

/* A failed build is the machine's, not the configuration's, when the
 * platform ran out of memory, its log says the disk or the descriptors ran
 * out, or, with no error in the source named, a program of ktune's own does
 * not build either (PoCL with its cache folder on a full disk says only
 * "failed to build the program"). */
static bool machine_failed(cl_state *s, cl_int rc, const char *log) {
  if (rc == CL_OUT_OF_HOST_MEMORY || rc == CL_OUT_OF_RESOURCES) return true;
  if (kt__log_says_environment(log)) return true;
  return rc == CL_BUILD_PROGRAM_FAILURE && !strstr(log, "error") && !compiler_works(s);
}

/* Builds the source of B with E's options into E: the program, or the
 * failure message. */
static void build_source(cl_state *s, const kt__build *b, cl_entry *e) {
  const kt__cl_api *cl = s->cl;
  const char *source = b->file->src.text;
  size_t len = b->file->src.len;
  cl_int rc = CL_SUCCESS;
  kt__sbuf msg = {0};
  cl_program prog = cl->clCreateProgramWithSource(s->context, 1, &source, &len, &rc);
  if (rc != CL_SUCCESS) {
    kt__sbuf_printf(&msg, "clCreateProgramWithSource: %s", kt__cl_error_name(rc));
    e->environment = machine_failed(s, rc, "");
  } else if ((rc = cl->clBuildProgram(prog, 1, &s->device, e->options, NULL, NULL)) != CL_SUCCESS) {
    char *log = build_log(cl, prog, s->device);
    kt__sbuf_printf(&msg, "clBuildProgram: %s (options \"%s\")\n%s", kt__cl_error_name(rc), e->options, log);
    e->environment = machine_failed(s, rc, log);
    free(log);
    (void)cl->clReleaseProgram(prog);
    prog = NULL;
  }
  e->program = prog;
  e->log = msg.s;
}

/* The program from the binary cache's entry KEY, or NULL: none, or one the
 * driver refuses (removed then, *REJECTED set: it is rebuilt from source). */
static cl_program program_from_cache(cl_state *s, const kt__build *b, const char *options, const unsigned char key[32],
                                     bool *rejected) {
  const kt__cl_api *cl = s->cl;
  kt__sbuf bin = {0};
  if (kt__bincache_get(b->bincache, key, &bin, rejected) != KT_OK) return NULL;
  const unsigned char *data = (const unsigned char *)bin.s;
  size_t len = bin.len;
  cl_int rc = CL_SUCCESS, status = CL_SUCCESS;
  cl_program prog = cl->clCreateProgramWithBinary(s->context, 1, &s->device, &len, &data, &status, &rc);
  kt__sbuf_free(&bin);
  if (rc == CL_SUCCESS && status == CL_SUCCESS &&
      (rc = cl->clBuildProgram(prog, 1, &s->device, options, NULL, NULL)) == CL_SUCCESS)
    return prog;
  if (prog) (void)cl->clReleaseProgram(prog);
  kt__bincache_remove(b->bincache, key);
  *rejected = true;
  return NULL;
}

/* Keeps PROG's binary for the device (CL_PROGRAM_BINARIES) under KEY. */
static void store_binary(cl_state *s, const kt__build *b, cl_program prog, const unsigned char key[32]) {
  const kt__cl_api *cl = s->cl;
  size_t len = 0;
  if (cl->clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || len == 0) return;
  unsigned char *data = kt__xmalloc(len);
  kt__errbuf *quiet = kt__xmalloc(sizeof *quiet); /* a failed store only costs a later build */
  if (cl->clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof data, &data, NULL) == CL_SUCCESS)
    kt__bincache_put(b->bincache, key, data, len, quiet);
  free(quiet);
  free(data);
}

/* Builds B into E: from the binary cache when it holds the program, else
 * from source (then kept there). */
static void build_entry(cl_state *s, const kt__build *b, cl_entry *e) {
  unsigned char key[32];
  bool cacheable = kt__build_binary_key(&kt__backend_opencl, b, key, NULL, 0), rejected = false;
  e->program = cacheable ? program_from_cache(s, b, e->options, key, &rejected) : NULL;
  /* A miss waits for whoever builds the entry now (another key's process
   * on a device of the same model) and looks again before building. */
  int lock = cacheable && !e->program ? kt__bincache_lock(b->bincache, key, b->cancel) : -1;
  bool rejected_again = false;
  if (lock >= 0) e->program = program_from_cache(s, b, e->options, key, &rejected_again);
  rejected = rejected || rejected_again;
  if (e->program) {
    e->use = KT__BIN_CACHED;
  } else {
    build_source(s, b, e);
    e->use = rejected ? KT__BIN_REBUILT : KT__BIN_COMPILED;
    if (cacheable && e->program) store_binary(s, b, e->program, key);
  }
  kt__bincache_unlock(lock);
}

static cl_entry *find_entry(cl_state *s, uint64_t hash, const char *options) {
  for (int i = 0; i < CACHE_SLOTS; i++) {
    cl_entry *e = &s->cache[i];
    if (e->options && e->source_hash == hash && strcmp(e->options, options) == 0) return e;
  }
  return NULL;
}

/* The oldest slot, emptied. Kernels made from its program keep it alive. */
static cl_entry *take_slot(cl_state *s) {
  cl_entry *e = &s->cache[s->next_slot];
  s->next_slot = (s->next_slot + 1) % CACHE_SLOTS;
  entry_clear(s->cl, e);
  return e;
}

/* The cached entry for (B's source, OPTIONS), building it on a miss. */
static cl_entry *lookup_program(cl_state *s, const kt__build *b, char *options) {
  const kt__source *src = &b->file->src;
  uint64_t h = fnv1a(src->text, src->len);
  cl_entry *e = find_entry(s, h, options);
  if (e) {
    free(options);
    return e;
  }
  e = take_slot(s);
  e->source_hash = h;
  e->options = options;
  build_entry(s, b, e);
  return e;
}

/* ---- building ahead, on several threads --------------------------------- */

typedef struct prebuild_job {
  const kt__build *b;
  cl_entry entry;
} prebuild_job;

typedef struct prebuild_pool {
  cl_state *s;
  prebuild_job *jobs;
  int n, next;
  pthread_mutex_t mu;
} prebuild_pool;

/* Takes jobs until none is left. OpenCL 1.2 makes clCreateProgramWithSource
 * and clBuildProgram safe to call from several threads on one context. */
static void *prebuild_thread(void *arg) {
  prebuild_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    int i = p->next++;
    pthread_mutex_unlock(&p->mu);
    if (i >= p->n) return NULL;
    build_entry(p->s, p->jobs[i].b, &p->jobs[i].entry);
  }
}

/* The configurations of B not yet cached, without duplicates. */
static int prebuild_jobs(cl_state *s, const kt__build *b, int n, prebuild_job *jobs) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    char *options = build_options(&b[i]);
    uint64_t h = fnv1a(b[i].file->src.text, b[i].file->src.len);
    bool seen = find_entry(s, h, options) != NULL;
    for (int j = 0; j < m && !seen; j++)
      seen = jobs[j].entry.source_hash == h && strcmp(jobs[j].entry.options, options) == 0;
    if (seen) {
      free(options);
      continue;
    }
    jobs[m++] = (prebuild_job){&b[i], {.source_hash = h, .options = options}};
  }
  return m;
}

static void cl_prebuild(void *state, const kt__build *b, int n) {
  cl_state *s = state;
  if (s->lost[0]) return;
  if (n > CACHE_SLOTS / 2) n = CACHE_SLOTS / 2; /* keep the recently loaded ones */
  prebuild_pool p = {.s = s, .jobs = kt__xcalloc((size_t)n, sizeof *p.jobs)};
  p.n = prebuild_jobs(s, b, n, p.jobs);
  pthread_mutex_init(&p.mu, NULL);
  int nthreads = kt__ncores() < p.n ? kt__ncores() : p.n;
  pthread_t tids[CACHE_SLOTS];
  int started = 0;
  for (int t = 1; t < nthreads; t++) /* this thread is one of them */
    if (pthread_create(&tids[started], NULL, prebuild_thread, &p) == 0) started++;
  prebuild_thread(&p);
  for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
  pthread_mutex_destroy(&p.mu);
  for (int i = 0; i < p.n; i++) *take_slot(s) = p.jobs[i].entry;
  free(p.jobs);
}

/* Nothing beyond the -D values and the device's identity decides a
 * program binary (the options are the -D values); named so the key says
 * what was built. */
static void cl_binary_flags(const kt__build *b, kt__sbuf *out) {
  (void)b;
  kt__sbuf_printf(out, "clBuildProgram");
}

static kt__status kernel_query(cl_state *s, cl_fn *f, kt__errbuf *eb) {
  const kt__cl_api *cl = s->cl;
  cl_int rc = cl->clGetKernelInfo(f->kernel, CL_KERNEL_NUM_ARGS, sizeof f->nparams, &f->nparams, NULL);
  if (rc == CL_SUCCESS)
    rc = cl->clGetKernelWorkGroupInfo(f->kernel, s->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof f->group_limit,
                                      &f->group_limit, NULL);
  if (rc == CL_SUCCESS)
    rc = cl->clGetKernelWorkGroupInfo(f->kernel, s->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof f->static_local,
                                      &f->static_local, NULL);
  if (rc != CL_SUCCESS) return fail(eb, KT__ST_RUNTIME, "OpenCL: kernel query failed: %s", kt__cl_error_name(rc));
  return KT__ST_OK;
}

/* A failed build's status; one the machine stopped is told as such and
 * forgotten, so that a later load builds it again. */
static kt__status build_failed(cl_state *s, const kt__build *b, cl_entry *e, kt__errbuf *eb) {
  kt__status st = fail(eb, KT__ST_COMPILE, "%s", e->log ? e->log : "build failed");
  if (!e->environment) return st;
  if (b->load_environment) *b->load_environment = true;
  entry_clear(s->cl, e);
  return st;
}

static kt__status cl_load(void *state, const kt__build *b, const kt__artifact *a, void **fn, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT__ST_RUNTIME;
  cl_entry *e = lookup_program(s, b, build_options(b));
  if (b->load_use) *b->load_use = e->use;
  if (!e->program) return build_failed(s, b, e, eb);
  cl_int rc = CL_SUCCESS;
  cl_fn *f = kt__xcalloc(1, sizeof *f);
  f->kernel = s->cl->clCreateKernel(e->program, b->decl->name, &rc);
  if (rc != CL_SUCCESS) {
    free(f);
    return fail(eb, rc == CL_INVALID_KERNEL_NAME ? KT__ST_COMPILE : KT__ST_RUNTIME, "clCreateKernel(\"%s\"): %s%s",
                b->decl->name, kt__cl_error_name(rc),
                rc == CL_INVALID_KERNEL_NAME ? ": the program has no __kernel of that name" : "");
  }
  kt__status st = kernel_query(s, f, eb);
  if (st != KT__ST_OK) {
    (void)s->cl->clReleaseKernel(f->kernel);
    free(f);
    return st;
  }
  *fn = f;
  return KT__ST_OK;
}

static void cl_unload(void *state, void *fn) {
  cl_state *s = state;
  cl_fn *f = fn;
  (void)s->cl->clReleaseKernel(f->kernel);
  free(f);
}

/* ---- launching -------------------------------------------------------- */

/* The global size, grid * block per dimension, is a size_t of the device
 * (CL_DEVICE_ADDRESS_BITS), and so is the total number of work-items, which
 * the runtime computes (get_global_linear_id): past it, a count wraps and a
 * fraction of the work runs. */
static kt__status check_global(const cl_state *s, const kt__launch *l, kt__errbuf *eb) {
  uint64_t max = s->address_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << s->address_bits) - 1, total = 1;
  for (int i = 0; i < 3; i++) {
    uint64_t g;
    if (l->grid[i] == 0 || l->block[i] == 0)
      return fail(eb, KT__ST_CONSTRAINT, "empty launch: grid or block is 0 in dimension %d", i);
    if (!kt__mul_u64(l->grid[i], l->block[i], &g) || g > max)
      return fail(eb, KT__ST_CONSTRAINT,
                  "global size in dimension %d (grid %" PRIu64 " x block %" PRIu64
                  ") exceeds the device's %u-bit size_t (CL_DEVICE_ADDRESS_BITS)",
                  i, l->grid[i], l->block[i], (unsigned)s->address_bits);
    if (!kt__mul_u64(total, g, &total) || total > max)
      return fail(eb, KT__ST_CONSTRAINT,
                  "the launch's work-items in total (global %" PRIu64 " x %" PRIu64 " x %" PRIu64
                  ") exceed the device's %u-bit size_t (CL_DEVICE_ADDRESS_BITS)",
                  l->grid[0] * l->block[0], l->grid[1] * l->block[1], l->grid[2] * l->block[2],
                  (unsigned)s->address_bits);
  }
  return KT__ST_OK;
}

static kt__status check_group(const cl_state *s, const cl_fn *f, const kt__launch *l, kt__errbuf *eb) {
  uint64_t group = 1;
  for (int i = 0; i < 3; i++) {
    if (l->block[i] > s->max_item[i])
      return fail(eb, KT__ST_CONSTRAINT,
                  "block dimension %d is %" PRIu64 " work-items; the device allows %zu (CL_DEVICE_MAX_WORK_ITEM_SIZES)",
                  i, l->block[i], s->max_item[i]);
    if (!kt__mul_u64(group, l->block[i], &group))
      return fail(eb, KT__ST_CONSTRAINT, "work-group size overflows 64 bits");
  }
  if (group > s->max_group)
    return fail(eb, KT__ST_CONSTRAINT,
                "work-group of %" PRIu64
                " work-items exceeds the device's maximum of %zu (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
                group, s->max_group);
  if (group > f->group_limit)
    return fail(eb, KT__ST_CONSTRAINT,
                "work-group of %" PRIu64 " work-items exceeds this kernel's limit of %zu on the device "
                "(CL_KERNEL_WORK_GROUP_SIZE)",
                group, f->group_limit);
  return KT__ST_OK;
}

static kt__status cl_check(void *state, void *fn, const kt__launch *l, kt__errbuf *eb) {
  cl_state *s = state;
  cl_fn *f = fn;
  kt__status st = check_global(s, l, eb);
  if (st == KT__ST_OK) st = check_group(s, f, l, eb);
  if (st != KT__ST_OK) return st;
  uint64_t local = (uint64_t)f->static_local + l->shared_bytes;
  if (local > s->local_mem)
    return fail(eb, KT__ST_CONSTRAINT,
                "local memory of %" PRIu64 " bytes (%" PRIu64 " static + %" PRIu64
                " @shared) exceeds the device's %" PRIu64,
                local, (uint64_t)f->static_local, l->shared_bytes, (uint64_t)s->local_mem);
  return KT__ST_OK;
}

/* Binds L's arguments, plus the trailing __local one for @shared. */
static kt__status set_args(cl_state *s, cl_fn *f, const kt__launch *l, kt__errbuf *eb) {
  cl_uint want = (cl_uint)l->nargs + (l->shared_bytes ? 1u : 0u);
  if (f->nparams != want)
    return fail(eb, KT__ST_RUNTIME, "the kernel takes %u parameters; @kernel declares %d%s", (unsigned)f->nparams,
                l->nargs, l->shared_bytes ? ", plus one trailing __local pointer for @shared" : "");
  for (int i = 0; i < l->nargs; i++) {
    const kt__arg *a = &l->args[i];
    cl_mem mem = a->buf;
    cl_int rc = a->is_tensor ? s->cl->clSetKernelArg(f->kernel, (cl_uint)i, sizeof mem, &mem)
                             : s->cl->clSetKernelArg(f->kernel, (cl_uint)i, a->size, a->scalar);
    if (rc != CL_SUCCESS) return fail(eb, KT__ST_RUNTIME, "clSetKernelArg(%d): %s", i, kt__cl_error_name(rc));
  }
  if (l->shared_bytes) {
    cl_int rc = s->cl->clSetKernelArg(f->kernel, (cl_uint)l->nargs, (size_t)l->shared_bytes, NULL);
    if (rc != CL_SUCCESS)
      return fail(eb, KT__ST_RUNTIME, "clSetKernelArg(%d, %" PRIu64 " bytes of __local): %s", l->nargs, l->shared_bytes,
                  kt__cl_error_name(rc));
  }
  return KT__ST_OK;
}

typedef struct cl_range {
  cl_uint dims;
  size_t global[3], local[3];
} cl_range;

/* Global size = grid * block per dimension; trailing 1s are dropped. */
static kt__status make_range(const kt__launch *l, cl_range *r, kt__errbuf *eb) {
  r->dims = 1;
  for (int i = 0; i < 3; i++) {
    uint64_t g;
    if (!kt__mul_u64(l->grid[i], l->block[i], &g) || g > SIZE_MAX)
      return fail(eb, KT__ST_CONSTRAINT, "global size grid*block overflows in dimension %d", i);
    if (g == 0) return fail(eb, KT__ST_CONSTRAINT, "empty launch: grid or block is 0 in dimension %d", i);
    r->global[i] = (size_t)g;
    r->local[i] = (size_t)l->block[i];
    if (g > 1) r->dims = (cl_uint)i + 1;
  }
  return KT__ST_OK;
}

/* Errors that mean "this configuration does not fit", not "it is broken". */
static bool is_resource_error(cl_int rc) {
  return rc == CL_INVALID_WORK_GROUP_SIZE || rc == CL_INVALID_WORK_ITEM_SIZE || rc == CL_OUT_OF_RESOURCES ||
         rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_INVALID_GLOBAL_WORK_SIZE;
}

static kt__status enqueue_on(cl_state *s, cl_command_queue q, cl_fn *f, const cl_range *r, cl_event *ev,
                             kt__errbuf *eb) {
  cl_int rc = s->cl->clEnqueueNDRangeKernel(q, f->kernel, r->dims, NULL, r->global, r->local, 0, NULL, ev);
  if (rc == CL_SUCCESS) return KT__ST_OK;
  return fail(eb, is_resource_error(rc) ? KT__ST_CONSTRAINT : KT__ST_RUNTIME,
              "clEnqueueNDRangeKernel (global %zux%zux%zu, local %zux%zux%zu): %s", r->global[0], r->global[1],
              r->global[2], r->local[0], r->local[1], r->local[2], kt__cl_error_name(rc));
}

static kt__status enqueue(cl_state *s, cl_fn *f, const cl_range *r, cl_event *ev, kt__errbuf *eb) {
  return enqueue_on(s, s->queue, f, r, ev, eb);
}

/* Waits for the queue; an error here is the kernel's execution failing. */
static kt__status finish(cl_state *s, kt__errbuf *eb) {
  cl_int rc = s->cl->clFinish(s->queue);
  if (rc == CL_SUCCESS) return KT__ST_OK;
  snprintf(s->lost, sizeof s->lost, "kernel execution failed: clFinish: %s", kt__cl_error_name(rc));
  return fail(eb, KT__ST_RUNTIME, "%s", s->lost);
}

static kt__status prepare(cl_state *s, cl_fn *f, const kt__launch *l, cl_range *r, kt__errbuf *eb) {
  kt__status st = make_range(l, r, eb);
  return st == KT__ST_OK ? set_args(s, f, l, eb) : st;
}

/* With the caller's queue (kt_launch) the launch is only enqueued there:
 * the caller synchronises, and sees the kernel's execution errors. */
static kt__status cl_run(void *state, void *fn, const kt__launch *l, kt__errbuf *eb) {
  cl_range r;
  if (is_lost(state, eb)) return KT__ST_RUNTIME;
  kt__status st = prepare(state, fn, l, &r, eb);
  if (st == KT__ST_OK && l->stream) return enqueue_on(state, (cl_command_queue)l->stream, fn, &r, NULL, eb);
  if (st == KT__ST_OK) st = enqueue(state, fn, &r, NULL, eb);
  if (st == KT__ST_OK) st = finish(state, eb);
  return st;
}

static kt__status event_time(cl_state *s, cl_event ev, cl_profiling_info what, cl_ulong *ns, kt__errbuf *eb) {
  cl_int rc = s->cl->clGetEventProfilingInfo(ev, what, sizeof *ns, ns, NULL);
  if (rc != CL_SUCCESS) return fail(eb, KT__ST_RUNTIME, "clGetEventProfilingInfo: %s", kt__cl_error_name(rc));
  return KT__ST_OK;
}

/* Enqueues N launches, keeping each one's event in EVENTS. */
static kt__status enqueue_n(cl_state *s, cl_fn *f, const cl_range *r, int n, cl_event *events, kt__errbuf *eb) {
  kt__status st = KT__ST_OK;
  for (int i = 0; st == KT__ST_OK && i < n; i++) st = enqueue(s, f, r, &events[i], eb);
  return st;
}

/* The seconds the N kernels of EVENTS ran, each from its own start to its
 * own end: the gaps between launches (the host's enqueueing, the driver's
 * dispatch) are left out, so that a kernel shorter than its launch is
 * timed, not the launch (issue 27: a first-to-last span measured PoCL's
 * dispatch of a microsecond kernel). */
static kt__status kernels_time(cl_state *s, const cl_event *events, int n, double *seconds, kt__errbuf *eb) {
  cl_ulong total = 0;
  for (int i = 0; i < n; i++) {
    cl_ulong start = 0, end = 0;
    kt__status st = event_time(s, events[i], CL_PROFILING_COMMAND_START, &start, eb);
    if (st == KT__ST_OK) st = event_time(s, events[i], CL_PROFILING_COMMAND_END, &end, eb);
    if (st != KT__ST_OK) return st;
    if (end < start)
      return fail(eb, KT__ST_RUNTIME, "profiling events out of order (start %llu, end %llu)", (unsigned long long)start,
                  (unsigned long long)end);
    total += end - start;
  }
  *seconds = (double)total * 1e-9;
  return KT__ST_OK;
}

static kt__status cl_time(void *state, void *fn, const kt__launch *l, int n, kt_timing how, bool energy,
                          double *seconds, kt__reading *reading, kt__errbuf *eb) {
  (void)how, (void)energy, (void)reading; /* one method (no graphs); no device readings */
  cl_state *s = state;
  cl_range r;
  if (is_lost(s, eb)) return KT__ST_RUNTIME;
  if (n < 1) return fail(eb, KT__ST_RUNTIME, "timing needs at least one launch (asked %d)", n);
  cl_event *events = kt__xcalloc((size_t)n, sizeof *events);
  kt__status st = prepare(s, fn, l, &r, eb);
  if (st == KT__ST_OK) st = enqueue_n(s, fn, &r, n, events, eb);
  if (st == KT__ST_OK) st = finish(s, eb);
  if (st == KT__ST_OK) st = kernels_time(s, events, n, seconds, eb);
  for (int i = 0; i < n && events[i]; i++) (void)s->cl->clReleaseEvent(events[i]);
  free(events);
  return st;
}

/* ---- memory ----------------------------------------------------------- */

static int cl_alloc(void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  cl_state *s = state;
  cl_int rc = CL_SUCCESS;
  /* OpenCL refuses empty buffers; an empty tensor still needs a handle. */
  cl_mem m = s->cl->clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &rc);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_NOMEM, "OpenCL: clCreateBuffer(%zu bytes): %s", bytes, kt__cl_error_name(rc));
  *buf = m;
  return KT_OK;
}

static void cl_release(void *state, void *buf) {
  cl_state *s = state;
  (void)s->cl->clReleaseMemObject((cl_mem)buf);
}

/* A sub-buffer; its origin must be a multiple of the device's base address
 * alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN): a device that needs more than
 * KT__SLICE_ALIGN gets no guard zones. */
static int cl_slice(void *state, void *buf, size_t offset, size_t bytes, void **out, kt__errbuf *eb) {
  cl_state *s = state;
  if (!s->can_slice) return KT_NOTFOUND;
  cl_buffer_region region = {offset, bytes ? bytes : 1};
  cl_int rc = CL_SUCCESS;
  cl_mem m = s->cl->clCreateSubBuffer((cl_mem)buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_NOMEM, "OpenCL: clCreateSubBuffer(%zu bytes at %zu): %s", bytes, offset,
                kt__cl_error_name(rc));
  *out = m;
  return KT_OK;
}

static int cl_upload(void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  if (bytes == 0) return KT_OK;
  cl_int rc = s->cl->clEnqueueWriteBuffer(s->queue, (cl_mem)buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_IO, "OpenCL: clEnqueueWriteBuffer(%zu bytes): %s", bytes,
                kt__cl_error_name(rc));
  return KT_OK;
}

static int cl_wait(void *state, void *stream, kt__errbuf *eb) {
  cl_state *s = state;
  cl_int rc = s->cl->clFinish((cl_command_queue)stream);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_IO, "OpenCL: clFinish on the caller's queue: %s", kt__cl_error_name(rc));
  return KT_OK;
}

static int cl_download(void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  if (bytes == 0) return KT_OK;
  cl_int rc = s->cl->clEnqueueReadBuffer(s->queue, (cl_mem)buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_IO, "OpenCL: clEnqueueReadBuffer(%zu bytes): %s", bytes,
                kt__cl_error_name(rc));
  return KT_OK;
}

/* Device to device, finished before it returns: the worker keeps its
 * reference and decoys on the device with it (backend.h, copy) instead of
 * uploading them again for every configuration. */
static int cl_copy(void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  if (bytes == 0) return KT_OK;
  cl_int rc = s->cl->clEnqueueCopyBuffer(s->queue, (cl_mem)src, (cl_mem)dst, 0, 0, bytes, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = s->cl->clFinish(s->queue);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_IO, "OpenCL: clEnqueueCopyBuffer(%zu bytes): %s", bytes,
                kt__cl_error_name(rc));
  return KT_OK;
}

/* One of the backend's own programs (not a kernel file's) built from TEXT
 * for this device into *PROG: WHAT, with the build log, when it does not
 * build (KT_NOTFOUND: the worker then checks on the host). */
static int build_own_program(cl_state *s, const char *text, const char *what, cl_program *prog, kt__errbuf *eb) {
  const kt__cl_api *cl = s->cl;
  cl_int rc = CL_SUCCESS;
  *prog = cl->clCreateProgramWithSource(s->context, 1, &text, NULL, &rc);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_NOTFOUND, "OpenCL: clCreateProgramWithSource (%s): %s", what,
                kt__cl_error_name(rc));
  rc = cl->clBuildProgram(*prog, 1, &s->device, "", NULL, NULL);
  if (rc == CL_SUCCESS) return KT_OK;
  char *log = build_log(cl, *prog, s->device);
  kt__err(eb, KT_NOTFOUND, "%s does not build: %s\n%.2000s", what, kt__cl_error_name(rc), log ? log : "");
  free(log);
  (void)cl->clReleaseProgram(*prog);
  *prog = NULL;
  return KT_NOTFOUND;
}

/* Whether two buffers differ, on the device: the worker checks each input
 * against a pristine copy, and each guard zone against its armed copy,
 * with it (backend.h, equal) instead of downloading them after every run.
 * Sub-buffers start on the device's base address alignment (at least 128
 * bytes), so whole 64-bit words are read; the bytes past the last whole
 * word are read back and compared here. No doubles, unlike the output
 * comparison: any device builds it. */
static const char differs_source[] =
    "__kernel void kt_differs(__global const ulong *a, __global const ulong *b, ulong n, __global uint *flag) {\n"
    "  uint d = 0;\n"
    "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) d |= a[i] != b[i];\n"
    "  if (d) *flag = 1u;\n"
    "}\n";

enum { DIFFERS_ITEMS = 1 << 16 };

static int load_differs(cl_state *s, kt__errbuf *eb) {
  if (s->differs_flag) return KT_OK;
  const kt__cl_api *cl = s->cl;
  cl_int rc = CL_SUCCESS;
  if (!s->differs_prog)
    KT__FORWARD(build_own_program(s, differs_source, "the buffers' comparison", &s->differs_prog, eb));
  if (!s->differs) {
    s->differs = cl->clCreateKernel(s->differs_prog, "kt_differs", &rc);
    CL_CHECK(rc, eb, "clCreateKernel (the buffers' comparison)");
  }
  s->differs_flag = cl->clCreateBuffer(s->context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &rc);
  CL_CHECK(rc, eb, "clCreateBuffer (the buffers' comparison flag)");
  return KT_OK;
}

static int cl_equal(void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  KT__FORWARD(load_differs(s, eb));
  const kt__cl_api *cl = s->cl;
  cl_mem ma = a, mb = b;
  cl_ulong words = bytes / 8;
  cl_uint flag = 0;
  size_t global = words < 1 ? 1 : words > DIFFERS_ITEMS ? DIFFERS_ITEMS : (size_t)words;
  /* A fill: its pattern is copied when it is enqueued (a non-blocking write would read FLAG later). */
  CL_CHECK(cl->clEnqueueFillBuffer(s->queue, s->differs_flag, &flag, sizeof flag, 0, sizeof flag, 0, NULL, NULL), eb,
           "clEnqueueFillBuffer (the buffers' comparison flag)");
  CL_CHECK(cl->clSetKernelArg(s->differs, 0, sizeof ma, &ma), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->differs, 1, sizeof mb, &mb), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->differs, 2, sizeof words, &words), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->differs, 3, sizeof s->differs_flag, &s->differs_flag), eb, "clSetKernelArg");
  CL_CHECK(cl->clEnqueueNDRangeKernel(s->queue, s->differs, 1, NULL, &global, NULL, 0, NULL, NULL), eb,
           "clEnqueueNDRangeKernel (the buffers' comparison)");
  CL_CHECK(cl->clEnqueueReadBuffer(s->queue, s->differs_flag, CL_TRUE, 0, sizeof flag, &flag, 0, NULL, NULL), eb,
           "clEnqueueReadBuffer (the buffers' comparison flag)");
  size_t tail = bytes % 8;
  if (!flag && tail) {
    unsigned char ta[8], tb[8];
    CL_CHECK(cl->clEnqueueReadBuffer(s->queue, ma, CL_TRUE, bytes - tail, tail, ta, 0, NULL, NULL), eb,
             "clEnqueueReadBuffer (the buffers' last bytes)");
    CL_CHECK(cl->clEnqueueReadBuffer(s->queue, mb, CL_TRUE, bytes - tail, tail, tb, 0, NULL, NULL), eb,
             "clEnqueueReadBuffer (the buffers' last bytes)");
    flag = memcmp(ta, tb, tail) != 0;
  }
  *same = !flag;
  return KT_OK;
}

/* ---- a miss's snapshot of the caller's buffers -------------------------- */

/* Copies of the caller's buffers, enqueued on its queue, and the event of
 * each copy (a queue may run out of order). */
typedef struct cl_snapshot {
  int n;
  cl_mem *buf;
  cl_event *done;
  size_t *bytes;
} cl_snapshot;

static void cl_snapshot_free(void *state, void *snap) {
  cl_state *s = state;
  cl_snapshot *p = snap;
  for (int i = 0; i < p->n; i++) {
    if (p->done[i]) (void)s->cl->clReleaseEvent(p->done[i]);
    if (p->buf[i]) (void)s->cl->clReleaseMemObject(p->buf[i]);
  }
  free(p->buf);
  free(p->done);
  free(p->bytes);
  free(p);
}

static int cl_snapshot_take(void *state, void *stream, void *const *bufs, const size_t *bytes, int n, void **out,
                            kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  cl_command_queue q = stream ? (cl_command_queue)stream : s->queue;
  cl_snapshot *p = kt__xcalloc(1, sizeof *p);
  p->n = n;
  p->buf = kt__xcalloc((size_t)n + 1, sizeof *p->buf);
  p->done = kt__xcalloc((size_t)n + 1, sizeof *p->done);
  p->bytes = kt__xcalloc((size_t)n + 1, sizeof *p->bytes);
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < n && rc == CL_SUCCESS; i++) {
    p->bytes[i] = bytes[i];
    p->buf[i] = s->cl->clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes[i] ? bytes[i] : 1, NULL, &rc);
    if (rc == CL_SUCCESS && bytes[i])
      rc = s->cl->clEnqueueCopyBuffer(q, (cl_mem)bufs[i], p->buf[i], 0, 0, bytes[i], 0, NULL, &p->done[i]);
  }
  if (rc == CL_SUCCESS) rc = s->cl->clFlush(q); /* started now, not when the caller next waits */
  if (rc != CL_SUCCESS) {
    cl_snapshot_free(s, p);
    return kt__err(eb, rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_RESOURCES ? KT_NOMEM : KT_IO,
                   "OpenCL: copying the caller's buffers: %s", kt__cl_error_name(rc));
  }
  *out = p;
  return KT_OK;
}

static int cl_snapshot_read(void *state, void *snap, int i, void *host, kt__errbuf *eb) {
  cl_state *s = state;
  cl_snapshot *p = snap;
  if (!p->bytes[i]) return KT_OK;
  cl_int rc = s->cl->clEnqueueReadBuffer(s->queue, p->buf[i], CL_TRUE, 0, p->bytes[i], host, 1, &p->done[i], NULL);
  KT__RETURN_IF(rc != CL_SUCCESS, eb, KT_IO, "OpenCL: reading the copy of the caller's buffer: %s",
                kt__cl_error_name(rc));
  return KT_OK;
}

/* ---- output comparison on the device ----------------------------------- */

enum { COMPARE_GROUP = 256, COMPARE_GROUPS = 1024 };

/* The largest power of two at most LIMIT and COMPARE_GROUP. */
static size_t group_for(size_t limit) {
  size_t g = 1;
  while (g * 2 <= limit && g * 2 <= COMPARE_GROUP) g *= 2;
  return g;
}

/* The comparison kernel (compare_kernel.h) in this context: it needs
 * doubles (cl_khr_fp64), which PoCL and the GPU vendors' platforms have. */
static int build_compare(cl_state *s, kt__errbuf *eb) {
  const kt__cl_api *cl = s->cl;
  cl_device_fp_config fp64 = 0;
  if (cl->clGetDeviceInfo(s->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS || !fp64)
    return kt__err(eb, KT_NOTFOUND, "the device has no double precision (cl_khr_fp64)");
  char *source = kt__compare_kernel_source(KT__LANG_OPENCL);
  int built = build_own_program(s, source, "the comparison kernel", &s->compare_prog, eb);
  free(source);
  KT__FORWARD(built);
  cl_int rc = CL_SUCCESS;
  s->compare = cl->clCreateKernel(s->compare_prog, KT__COMPARE_KERNEL, &rc);
  CL_CHECK(rc, eb, "clCreateKernel (the comparison kernel)");
  s->decoy = cl->clCreateKernel(s->compare_prog, KT__DECOY_KERNEL, &rc);
  CL_CHECK(rc, eb, "clCreateKernel (the decoys' kernel)");
  size_t limit = 0;
  CL_CHECK(cl->clGetKernelWorkGroupInfo(s->compare, s->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL),
           eb, "clGetKernelWorkGroupInfo");
  s->compare_group = group_for(limit < s->max_group ? limit : s->max_group);
  s->compare_out = cl->clCreateBuffer(s->context, CL_MEM_READ_WRITE, 2 * COMPARE_GROUPS * sizeof(cl_ulong), NULL, &rc);
  CL_CHECK(rc, eb, "clCreateBuffer (the comparison's results)");
  return KT_OK;
}

static int load_compare(cl_state *s, kt__errbuf *eb) {
  if (s->compare_out) return KT_OK;
  if (!s->compare_failed && build_compare(s, eb) != KT_OK) {
    s->compare_failed = true;
    snprintf(s->compare_why, sizeof s->compare_why, "%.500s", eb ? eb->msg : "");
  }
  if (s->compare_out && !s->compare_failed) return KT_OK;
  return kt__err(eb, KT_NOTFOUND, "no comparison on the device: %s", s->compare_why);
}

static int compare_args(cl_state *s, cl_mem got, cl_mem want, cl_ulong count, cl_int dtype, double atol, double rtol,
                        kt__errbuf *eb) {
  const kt__cl_api *cl = s->cl;
  cl_kernel k = s->compare;
  CL_CHECK(cl->clSetKernelArg(k, 0, sizeof got, &got), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 1, sizeof want, &want), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 2, sizeof count, &count), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 3, sizeof dtype, &dtype), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 4, sizeof atol, &atol), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 5, sizeof rtol, &rtol), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 6, sizeof s->compare_out, &s->compare_out), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(k, 7, 2 * s->compare_group * sizeof(cl_ulong), NULL), eb, "clSetKernelArg");
  return KT_OK;
}

static int cl_compare(void *state, kt__dtype t, void *got, void *want, uint64_t count, double atol, double rtol,
                      kt__device_mismatch *m, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  KT__FORWARD(load_compare(s, eb));
  KT__FORWARD(compare_args(s, got, want, count, (cl_int)t, atol, rtol, eb));
  uint64_t want_groups = (count + s->compare_group - 1) / s->compare_group;
  size_t groups = (size_t)(want_groups < 1 ? 1 : want_groups > COMPARE_GROUPS ? COMPARE_GROUPS : want_groups);
  size_t global = groups * s->compare_group, local = s->compare_group;
  cl_ulong out[2 * COMPARE_GROUPS];
  const kt__cl_api *cl = s->cl;
  CL_CHECK(cl->clEnqueueNDRangeKernel(s->queue, s->compare, 1, NULL, &global, &local, 0, NULL, NULL), eb,
           "clEnqueueNDRangeKernel (the comparison kernel)");
  CL_CHECK(
      cl->clEnqueueReadBuffer(s->queue, s->compare_out, CL_TRUE, 0, 2 * groups * sizeof out[0], out, 0, NULL, NULL), eb,
      "clEnqueueReadBuffer (the comparison's results)");
  kt__compare_reduce((const uint64_t *)out, (int)groups, &m->count, &m->first);
  memset(m->got, 0, sizeof m->got);
  if (m->count == 0) return KT_OK;
  size_t size = kt__dtype_size(t);
  CL_CHECK(
      cl->clEnqueueReadBuffer(s->queue, (cl_mem)got, CL_TRUE, (size_t)m->first * size, size, m->got, 0, NULL, NULL), eb,
      "clEnqueueReadBuffer (the first mismatching element)");
  return KT_OK;
}

static int cl_decoy(void *state, kt__dtype t, void *buf, void *ref, uint64_t count, kt__errbuf *eb) {
  cl_state *s = state;
  if (is_lost(s, eb)) return KT_NOBACKEND;
  KT__FORWARD(load_compare(s, eb));
  const kt__cl_api *cl = s->cl;
  cl_mem b = buf, r = ref;
  cl_ulong n = count;
  cl_int dtype = (cl_int)t;
  CL_CHECK(cl->clSetKernelArg(s->decoy, 0, sizeof b, &b), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->decoy, 1, sizeof r, &r), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->decoy, 2, sizeof n, &n), eb, "clSetKernelArg");
  CL_CHECK(cl->clSetKernelArg(s->decoy, 3, sizeof dtype, &dtype), eb, "clSetKernelArg");
  uint64_t want_groups = (count + s->compare_group - 1) / s->compare_group;
  size_t groups = (size_t)(want_groups < 1 ? 1 : want_groups > COMPARE_GROUPS ? COMPARE_GROUPS : want_groups);
  size_t global = groups * s->compare_group, local = s->compare_group;
  CL_CHECK(cl->clEnqueueNDRangeKernel(s->queue, s->decoy, 1, NULL, &global, &local, 0, NULL, NULL), eb,
           "clEnqueueNDRangeKernel (the decoys' kernel)");
  CL_CHECK(cl->clFinish(s->queue), eb, "clFinish (the decoys' kernel)");
  return KT_OK;
}

/* Overwrites a buffer twice the device's global memory cache, so the next
 * timed launch starts cold. Gives up quietly (untimed, best effort) if the
 * device cannot spare the buffer. */
static void cl_flush_cache(void *state) {
  cl_state *s = state;
  if (s->flush_failed || s->lost[0]) return;
  cl_int rc = CL_SUCCESS;
  if (!s->flush_buf) {
    uint64_t want = s->cache_bytes * 2;
    s->flush_bytes = (size_t)(want < FLUSH_MIN ? FLUSH_MIN : want > FLUSH_MAX ? FLUSH_MAX : want);
    s->flush_buf = s->cl->clCreateBuffer(s->context, CL_MEM_READ_WRITE, s->flush_bytes, NULL, &rc);
    if (rc != CL_SUCCESS) s->flush_buf = NULL;
  }
  static const cl_uint pattern = 0x5a5a5a5au;
  if (rc == CL_SUCCESS)
    rc = s->cl->clEnqueueFillBuffer(s->queue, s->flush_buf, &pattern, sizeof pattern, 0, s->flush_bytes, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = s->cl->clFinish(s->queue);
  if (rc != CL_SUCCESS) s->flush_failed = true;
}

#endif

const kt__backend kt__backend_opencl = {
    .name = "opencl",
    .timings = {[KT_TIMING_EVENTS] = "profiling"},
    .lang = KT__LANG_OPENCL,
    .extensions = {".cl"},
    .drivers = {"libOpenCL.so.1", "libOpenCL.so"},
#ifdef KTUNE_HAVE_CL_H
    .builds_at_load = true, /* in the worker that owns the context */
    .programs_kept = CACHE_SLOTS,
    .list_devices = cl_list_devices,
    .open = cl_open,
    .close = cl_close,
    .adopt = cl_adopt,
    .binary_flags = cl_binary_flags,
    .load = cl_load,
    .unload = cl_unload,
    .check = cl_check,
    .alloc = cl_alloc,
    .release = cl_release,
    .slice = cl_slice,
    .unslice = cl_release,
    .upload = cl_upload,
    .download = cl_download,
    .equal = cl_equal,
    .copy = cl_copy,
    .wait = cl_wait,
    .snapshot = cl_snapshot_take,
    .snapshot_read = cl_snapshot_read,
    .snapshot_free = cl_snapshot_free,
    .run = cl_run,
    .time = cl_time,
    .flush_cache = cl_flush_cache,
    .prebuild = cl_prebuild,
    .compare = cl_compare,
    .decoy = cl_decoy,
#else /* listed all the same, saying why it cannot work */
    .unavailable = "OpenCL: ktune was built without the OpenCL headers (CL/cl.h); "
                   "install opencl-headers and rebuild",
#endif
};
