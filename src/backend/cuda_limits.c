/* Pure decisions of the CUDA backend (see cuda_limits.h). The CUDA error
 * numbers below are those of cuda.h's CUresult; tests/unit/test_cuda.c checks
 * them against the header, so this file needs no CUDA header to build. */
#include "cuda_limits.h"

#include <stdio.h>
#include <string.h>

enum {
  KT__CUERR_ECC_UNCORRECTABLE = 214,
  KT__CUERR_ILLEGAL_ADDRESS = 700,
  KT__CUERR_LAUNCH_OUT_OF_RESOURCES = 701,
  KT__CUERR_LAUNCH_TIMEOUT = 702,
  KT__CUERR_ASSERT = 710,
  KT__CUERR_HARDWARE_STACK_ERROR = 714,
  KT__CUERR_ILLEGAL_INSTRUCTION = 715,
  KT__CUERR_MISALIGNED_ADDRESS = 716,
  KT__CUERR_INVALID_ADDRESS_SPACE = 717,
  KT__CUERR_INVALID_PC = 718,
  KT__CUERR_LAUNCH_FAILED = 719,
  KT__CUERR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  KT__CUERR_TENSOR_MEMORY_LEAK = 721,
  KT__CUERR_INVALID_CLUSTER_SIZE = 912
};

static kt__status refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static kt__status refuse(char *why, size_t whylen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
  return KT__ST_CONSTRAINT;
}

int64_t kt__cuda_block_registers(int regs_per_thread, int64_t threads) {
  /* Registers are handed out per warp, in units of 256. */
  int64_t per_warp = ((int64_t)regs_per_thread * 32 + 255) / 256 * 256;
  int64_t warps = (threads + 31) / 32;
  return per_warp * warps;
}

static const char *const axis[3] = {"x", "y", "z"};

/* CUDA's own ceilings, whatever a driver attribute says: a grid's x below
 * 2^31, y and z 16-bit, a block of at most 1024 threads (64 in z). A limit
 * the driver reports as 0 (the attribute query failed) is taken as the
 * ceiling: the launch then reports the driver's verdict. */
static const int64_t cuda_max_grid[3] = {2147483647, 65535, 65535};
static const int64_t cuda_max_block[3] = {1024, 1024, 64};
enum { CUDA_MAX_THREADS = 1024 };

static int64_t capped(int64_t device, int64_t ceiling) { return device > 0 && device < ceiling ? device : ceiling; }

/* The driver takes 32-bit dimensions; anything larger is refused here. */
static kt__status check_dims(const kt__cuda_device_limits *dev, const kt__launch *l, kt__cuda_launch_dims *out,
                             char *why, size_t whylen) {
  for (int i = 0; i < 3; i++) {
    int64_t max_block = capped(dev->max_block[i], cuda_max_block[i]),
            max_grid = capped(dev->max_grid[i], cuda_max_grid[i]);
    if (l->block[i] == 0 || l->grid[i] == 0)
      return refuse(why, whylen, "empty launch: grid %s = %llu, block %s = %llu", axis[i],
                    (unsigned long long)l->grid[i], axis[i], (unsigned long long)l->block[i]);
    if (l->block[i] > (uint64_t)max_block)
      return refuse(why, whylen, "block %s = %llu exceeds the maximum of %lld (the device's, at most CUDA's %lld)",
                    axis[i], (unsigned long long)l->block[i], (long long)max_block, (long long)cuda_max_block[i]);
    if (l->grid[i] > (uint64_t)max_grid)
      return refuse(why, whylen, "grid %s = %llu exceeds the maximum of %lld (the device's, at most CUDA's %lld)",
                    axis[i], (unsigned long long)l->grid[i], (long long)max_grid, (long long)cuda_max_grid[i]);
    out->grid[i] = (unsigned)l->grid[i];
    out->block[i] = (unsigned)l->block[i];
  }
  return KT__ST_OK;
}

/* After check_dims: each block extent is at most 1024, so the product fits. */
static kt__status check_threads(const kt__cuda_device_limits *dev, const kt__cuda_func_attrs *fn, const kt__launch *l,
                                char *why, size_t whylen) {
  int64_t threads = (int64_t)(l->block[0] * l->block[1] * l->block[2]);
  int64_t max_threads = capped(dev->max_threads_per_block, CUDA_MAX_THREADS);
  if (threads > max_threads)
    return refuse(why, whylen, "block of %lld threads exceeds the maximum of %lld (the device's, at most CUDA's %d)",
                  (long long)threads, (long long)max_threads, CUDA_MAX_THREADS);
  if (fn->max_threads_per_block > 0 && threads > fn->max_threads_per_block)
    return refuse(why, whylen,
                  "block of %lld threads exceeds this function's maximum of %d (it uses %d registers per thread)",
                  (long long)threads, fn->max_threads_per_block, fn->num_regs);
  int64_t regs = kt__cuda_block_registers(fn->num_regs, threads);
  if (dev->regs_per_block > 0 && regs > dev->regs_per_block)
    return refuse(why, whylen, "block needs %lld registers (%d per thread x %lld threads), the device has %d per block",
                  (long long)regs, fn->num_regs, (long long)threads, dev->regs_per_block);
  return KT__ST_OK;
}

static kt__status check_shared(const kt__cuda_device_limits *dev, const kt__cuda_func_attrs *fn, const kt__launch *l,
                               kt__cuda_launch_dims *out, char *why, size_t whylen) {
  uint64_t total = (uint64_t)fn->static_shared + l->shared_bytes;
  if (l->shared_bytes > UINT32_MAX || total > (uint64_t)dev->shared_optin)
    return refuse(
        why, whylen,
        "shared memory of %llu bytes per block (%lld static + %llu dynamic) exceeds the device's maximum of %lld",
        (unsigned long long)total, (long long)fn->static_shared, (unsigned long long)l->shared_bytes,
        (long long)dev->shared_optin);
  out->shared_bytes = (unsigned)l->shared_bytes;
  /* Past the default limit the function must opt in, once per function. */
  out->raise_shared = total > (uint64_t)dev->shared_default;
  return KT__ST_OK;
}

kt__status kt__cuda_cluster_config(const kt__cuda_device_limits *dev, const kt__launch *l, kt__cuda_launch_dims *out,
                                   char *why, size_t whylen) {
  memset(out->cluster, 0, sizeof out->cluster);
  out->use_cluster = out->non_portable_cluster = false;
  if (l->cluster[0] == 0 && l->cluster[1] == 0 && l->cluster[2] == 0) return KT__ST_OK;
  if (dev->cc_major < 9)
    return refuse(why, whylen, "thread-block clusters need compute capability 9.0 or later; the device is %d.%d",
                  dev->cc_major, dev->cc_minor);
  uint64_t blocks = 1;
  for (int i = 0; i < 3; i++) {
    /* An unset dimension of a cluster shape is 1 (CLUSTER_X alone). */
    uint64_t c = l->cluster[i] ? l->cluster[i] : 1;
    if (l->grid[i] % c != 0)
      return refuse(why, whylen, "cluster %s = %llu does not divide grid %s = %llu", axis[i], (unsigned long long)c,
                    axis[i], (unsigned long long)l->grid[i]);
    if (c > (uint64_t)dev->max_cluster)
      return refuse(why, whylen, "cluster %s = %llu exceeds the device's %d blocks per cluster", axis[i],
                    (unsigned long long)c, dev->max_cluster);
    blocks *= c;
    out->cluster[i] = (unsigned)c;
  }
  if (blocks > (uint64_t)dev->max_cluster)
    return refuse(why, whylen, "cluster of %llu blocks exceeds the device's maximum of %d", (unsigned long long)blocks,
                  dev->max_cluster);
  out->use_cluster = true;
  out->non_portable_cluster = blocks > 8;
  return KT__ST_OK;
}

kt__status kt__cuda_check_limits(const kt__cuda_device_limits *dev, const kt__cuda_func_attrs *fn, const kt__launch *l,
                                 kt__cuda_launch_dims *out, char *why, size_t whylen) {
  memset(out, 0, sizeof *out);
  if (whylen) why[0] = 0;
  kt__status st = check_dims(dev, l, out, why, whylen);
  if (st == KT__ST_OK) st = check_threads(dev, fn, l, why, whylen);
  if (st == KT__ST_OK) st = check_shared(dev, fn, l, out, why, whylen);
  if (st == KT__ST_OK) st = kt__cuda_cluster_config(dev, l, out, why, whylen);
  return st;
}

bool kt__cuda_error_is_sticky(int e) {
  switch (e) {
  case KT__CUERR_ECC_UNCORRECTABLE:
  case KT__CUERR_ILLEGAL_ADDRESS:
  case KT__CUERR_LAUNCH_TIMEOUT:
  case KT__CUERR_ASSERT:
  case KT__CUERR_HARDWARE_STACK_ERROR:
  case KT__CUERR_ILLEGAL_INSTRUCTION:
  case KT__CUERR_MISALIGNED_ADDRESS:
  case KT__CUERR_INVALID_ADDRESS_SPACE:
  case KT__CUERR_INVALID_PC:
  case KT__CUERR_LAUNCH_FAILED:
  case KT__CUERR_TENSOR_MEMORY_LEAK: return true;
  default: return false;
  }
}

bool kt__cuda_error_is_resource(int e) {
  return e == KT__CUERR_LAUNCH_OUT_OF_RESOURCES || e == KT__CUERR_COOPERATIVE_LAUNCH_TOO_LARGE ||
         e == KT__CUERR_INVALID_CLUSTER_SIZE;
}

int kt__cuda_fp32_lanes(int major, int minor) {
  switch (major) {
  case 6: return minor == 0 ? 64 : 128;
  case 7: return 64;
  case 8: return minor == 0 ? 64 : 128; /* A100: 64; GA10x, Ada: 128 */
  case 9: return 128;
  case 10:
  case 11:
  case 12: return 128;
  default: return 0;
  }
}

double kt__cuda_peak_gflops(int major, int minor, int sm_count, int clock_khz) {
  /* One fused multiply-add is two flops per lane per clock. */
  return (double)kt__cuda_fp32_lanes(major, minor) * 2.0 * sm_count * clock_khz * 1e-6;
}

double kt__cuda_peak_gbps(int mem_clock_khz, int bus_width_bits) {
  /* Double data rate: two transfers per memory clock. */
  return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) * 1e-9;
}

static bool is_arch(const char *s) { return s && strncmp(s, "sm_", 3) == 0 && s[3] >= '0' && s[3] <= '9'; }

/* "sm_90a" refines "sm_90": the same digits and a letter after them. */
static bool refines(const char *requested, const char *device) {
  size_t n = strlen(device);
  return strncmp(requested, device, n) == 0 && requested[n] >= 'a' && requested[n] <= 'z' && !requested[n + 1];
}

void kt__cuda_pick_arch(const char *override, const char *requested, const char *device_arch, char *out, size_t len) {
  if (override && *override) {
    snprintf(out, len, "%s%s", override[0] >= '0' && override[0] <= '9' ? "sm_" : "", override);
  } else if (is_arch(device_arch)) {
    bool use_req = is_arch(requested) && refines(requested, device_arch);
    snprintf(out, len, "%s", use_req ? requested : device_arch);
  } else {
    snprintf(out, len, "%s", is_arch(requested) ? requested : "sm_90");
  }
}

#ifdef KTUNE_HAVE_CUDA_H
void kt__cuda_fill_launch_config(const kt__cuda_launch_dims *d, CUstream stream, CUlaunchConfig *cfg,
                                 CUlaunchAttribute *attr) {
  memset(cfg, 0, sizeof *cfg);
  memset(attr, 0, sizeof *attr);
  cfg->gridDimX = d->grid[0], cfg->gridDimY = d->grid[1], cfg->gridDimZ = d->grid[2];
  cfg->blockDimX = d->block[0], cfg->blockDimY = d->block[1], cfg->blockDimZ = d->block[2];
  cfg->sharedMemBytes = d->shared_bytes;
  cfg->hStream = stream;
  if (!d->use_cluster) return;
  attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr->value.clusterDim.x = d->cluster[0];
  attr->value.clusterDim.y = d->cluster[1];
  attr->value.clusterDim.z = d->cluster[2];
  cfg->attrs = attr;
  cfg->numAttrs = 1;
}
#endif
