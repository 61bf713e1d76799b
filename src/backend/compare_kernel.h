/* The output comparison as device code: one source, in the common subset
 * of OpenCL C and CUDA C++, that the GPU backends build in their own
 * context (OpenCL: clBuildProgram; CUDA: NVRTC, in the worker) to compare a
 * configuration's output with the reference without downloading it.
 *
 * It applies kt__compare's rule (verify/verify.h) exactly: elements as
 * doubles (f16, bf16 and f32 decoded from their bits, so that no device
 * flushes a denormal), NaN matches only NaN, an infinity only itself,
 * integers by their exact distance, |got - want| <= atol + rtol * |want|
 * with every operation rounded on its own (no fused multiply-add). Each
 * group of threads writes two 64-bit words: how many of its elements
 * differ and the lowest index among them (all ones when none), which the
 * backend sums and takes the minimum of. */
#ifndef KT_BACKEND_COMPARE_KERNEL_H
#define KT_BACKEND_COMPARE_KERNEL_H

#include "../lang/decl.h"

/* The kernel's name, and its parameters in order: got, want (buffers of
 * the element type), count (u64), dtype (int, a kt__dtype), atol, rtol
 * (double), out (2 u64 per group); on OpenCL a trailing __local buffer of
 * 2 u64 per thread, on CUDA as many bytes of dynamic shared memory. The
 * group size must be a power of two. */
#define KT__COMPARE_KERNEL "kt_compare"
/* In the same source: the decoys of an output (verify.h, kt__decoy, bit for
 * bit), so that a worker makes them on the device from its copy of the
 * reference instead of on the host and uploading them. Parameters: buf,
 * ref (buffers of the element type), count (u64), dtype (int). */
#define KT__DECOY_KERNEL "kt_decoy"

/* The source for LANG (KT__LANG_OPENCL or KT__LANG_CUDA), malloc'ed: the
 * dtype codes and the language's spellings, then the common body. */
char *kt__compare_kernel_source(kt__lang lang);

/* Sums and takes the minimum of NGROUPS (count, first) pairs from OUT. */
void kt__compare_reduce(const uint64_t *out, int ngroups, uint64_t *count, uint64_t *first);

#endif
