/* TMA tensor maps on the CUDA backend: a tensor map argument's spec
 * (backend.h, kt__tensormap_spec) over a buffer's address, encoded by the
 * driver's cuTensorMapEncodeTiled and kept in a small cache per device
 * state, so that launching the same shapes on the same buffers again (every
 * timed run of a tuning, every kt_launch of a known shape) encodes nothing.
 * The enum mapping needs no GPU and is tested in CI. */
#ifndef KT_BACKEND_CUDA_TENSORMAP_H
#define KT_BACKEND_CUDA_TENSORMAP_H

#include "backend.h"

#ifdef KTUNE_HAVE_CUDA_H
#include <pthread.h>

#include <cuda.h>

typedef CUresult (*kt__cu_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                           const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                                           CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                           CUtensorMapFloatOOBfill);

/* Enough for the maps of a few kernels at a few shapes each; beyond that
 * the oldest is encoded again when it comes back (about a microsecond). */
enum { KT__CUDA_TENSORMAP_SLOTS = 32 };

typedef struct kt__cuda_tensormap_cache {
  pthread_mutex_t lock; /* kt_launch may launch from several threads */
  struct {
    kt__tensormap_spec spec;
    CUdeviceptr base;
    CUtensorMap map;
    bool used;
  } slots[KT__CUDA_TENSORMAP_SLOTS];
  unsigned next; /* the slot a miss replaces, round robin */
} kt__cuda_tensormap_cache;

void kt__cuda_tensormap_cache_init(kt__cuda_tensormap_cache *c);
void kt__cuda_tensormap_cache_destroy(kt__cuda_tensormap_cache *c);

/* CUDA's data type and swizzle for SPEC; false, the reason in WHY, for an
 * element type TMA has none for or a swizzle it does not know. */
bool kt__cuda_tensormap_enums(const kt__tensormap_spec *spec, CUtensorMapDataType *type, CUtensorMapSwizzle *swizzle,
                              char *why, size_t n);

/* The map of SPEC over BASE into OUT (copied: the cache slot may be
 * replaced by another thread before the launch reads it). CUDA_SUCCESS, or
 * the encoding's error with the reason in WHY (a misaligned address among
 * them: TMA needs 16 bytes). */
CUresult kt__cuda_tensormap_get(kt__cuda_tensormap_cache *c, kt__cu_encode_tiled_fn encode,
                                const kt__tensormap_spec *spec, CUdeviceptr base, CUtensorMap *out, char *why,
                                size_t n);
#endif

#endif
