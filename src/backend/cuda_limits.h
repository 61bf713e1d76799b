/* The CUDA backend's decisions that need no GPU: resource limits of a
 * launch, the thread-block-cluster launch shape, which driver errors poison a
 * context, the device's peak figures and the choice of target architecture.
 * Kept apart from cuda.c (which needs the driver) so that CI tests them. */
#ifndef KT_BACKEND_CUDA_LIMITS_H
#define KT_BACKEND_CUDA_LIMITS_H

#include "backend.h"

/* What the device allows one block and one grid (driver attributes). */
typedef struct kt__cuda_device_limits {
  int max_threads_per_block;
  int max_block[3];
  int64_t max_grid[3];
  int regs_per_block;     /* registers one block may use */
  int64_t shared_optin;   /* shared memory per block, opt-in maximum */
  int64_t shared_default; /* without opting in (48 KiB) */
  int max_cluster;        /* blocks per cluster: 8 portable, 16 non-portable */
  int cc_major, cc_minor;
} kt__cuda_device_limits;

/* What the compiled function needs (function attributes). */
typedef struct kt__cuda_func_attrs {
  int num_regs;              /* per thread */
  int64_t static_shared;     /* bytes per block */
  int max_threads_per_block; /* the most this function can be launched with */
} kt__cuda_func_attrs;

/* A launch checked against the limits: the values the driver is given. */
typedef struct kt__cuda_launch_dims {
  unsigned grid[3], block[3];
  unsigned cluster[3];       /* 0 0 0 when no cluster launch */
  unsigned shared_bytes;     /* dynamic */
  bool use_cluster;          /* launch with cuLaunchKernelEx + cluster attribute */
  bool raise_shared;         /* set MAX_DYNAMIC_SHARED_SIZE_BYTES first */
  bool non_portable_cluster; /* more than 8 blocks per cluster */
} kt__cuda_launch_dims;

/* Checks launch L for a function with attributes FN on a device with limits
 * DEV and fills OUT. KT__ST_OK, or KT__ST_CONSTRAINT with the reason in WHY
 * (a sentence naming the limit and both values). */
kt__status kt__cuda_check_limits(const kt__cuda_device_limits *dev, const kt__cuda_func_attrs *fn, const kt__launch *l,
                                 kt__cuda_launch_dims *out, char *why, size_t whylen);

/* The cluster part of the above, on its own: validates L's cluster shape
 * (each dimension divides the grid's, at most DEV->max_cluster blocks, a
 * device of compute capability 9.0 or later) and fills OUT's cluster fields.
 * A cluster of 0 0 0 is no cluster launch. */
kt__status kt__cuda_cluster_config(const kt__cuda_device_limits *dev, const kt__launch *l, kt__cuda_launch_dims *out,
                                   char *why, size_t whylen);

/* Registers one block occupies: per warp, regs*32 rounded up to the
 * allocation unit of 256, times the number of warps. */
int64_t kt__cuda_block_registers(int regs_per_thread, int64_t threads);

/* True for the driver errors after which the context is unusable (illegal
 * address, misaligned access, trap, ...): the worker must be replaced. */
bool kt__cuda_error_is_sticky(int cuda_error);
/* True for launch errors that mean "too many resources" rather than a fault. */
bool kt__cuda_error_is_resource(int cuda_error);

/* FP32 lanes per SM for a compute capability (0 when unknown). */
int kt__cuda_fp32_lanes(int cc_major, int cc_minor);
/* Peaks from driver attributes: clock in kHz, SM count, memory clock in kHz,
 * bus width in bits. 0 where an input is 0. */
double kt__cuda_peak_gflops(int cc_major, int cc_minor, int sm_count, int clock_khz);
double kt__cuda_peak_gbps(int mem_clock_khz, int bus_width_bits);

/* The architecture to compile for: OVERRIDE (KTUNE_CUDA_ARCH) when set, else
 * the kernel's @arch request when it refines the device's (sm_90a on an sm_90
 * device), else the device's, else "sm_90". Writes "sm_XY[a]" into OUT. */
void kt__cuda_pick_arch(const char *override, const char *requested, const char *device_arch, char *out, size_t len);

#ifdef KTUNE_HAVE_CUDA_H
#include <cuda.h>
/* The cuLaunchKernelEx configuration of D on STREAM: its dimensions, shared
 * memory and, for a cluster launch, one CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
 * attribute stored in ATTR. */
void kt__cuda_fill_launch_config(const kt__cuda_launch_dims *d, CUstream stream, CUlaunchConfig *cfg,
                                 CUlaunchAttribute *attr);
#endif

#endif
