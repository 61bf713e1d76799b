#include "cuda_tensormap.h"

#ifdef KTUNE_HAVE_CUDA_H
#include <stdio.h>
#include <string.h>

void kt__cuda_tensormap_cache_init(kt__cuda_tensormap_cache *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
}

void kt__cuda_tensormap_cache_destroy(kt__cuda_tensormap_cache *c) { pthread_mutex_destroy(&c->lock); }

static bool data_type(kt__dtype t, CUtensorMapDataType *out) {
  switch (t) {
  case KT__DT_U8:
  case KT__DT_I8: *out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true; /* copies move bytes: the sign is the kernel's */
  case KT__DT_F16: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
  case KT__DT_BF16: *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
  case KT__DT_F32: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true;
  case KT__DT_F64: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; return true;
  case KT__DT_I32: *out = CU_TENSOR_MAP_DATA_TYPE_INT32; return true;
  case KT__DT_U32: *out = CU_TENSOR_MAP_DATA_TYPE_UINT32; return true;
  case KT__DT_I64: *out = CU_TENSOR_MAP_DATA_TYPE_INT64; return true;
  case KT__DT_U64: *out = CU_TENSOR_MAP_DATA_TYPE_UINT64; return true;
  default: return false;
  }
}

bool kt__cuda_tensormap_enums(const kt__tensormap_spec *spec, CUtensorMapDataType *type, CUtensorMapSwizzle *swizzle,
                              char *why, size_t n) {
  if (!data_type(spec->type, type)) {
    snprintf(why, n, "TMA has no data type for %s", kt__dtype_name(spec->type));
    return false;
  }
  switch (spec->swizzle) {
  case 0: *swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; return true;
  case 32: *swizzle = CU_TENSOR_MAP_SWIZZLE_32B; return true;
  case 64: *swizzle = CU_TENSOR_MAP_SWIZZLE_64B; return true;
  case 128: *swizzle = CU_TENSOR_MAP_SWIZZLE_128B; return true;
  default: snprintf(why, n, "TMA swizzles 0, 32, 64 or 128 bytes, not %u", spec->swizzle); return false;
  }
}

/* Elements out of the tensor read as zero (OOB fill NONE), so a box that
 * overhangs the last tile is safe to load; 256-byte L2 promotion suits the
 * 128-byte rows GEMM tiles read. */
static CUresult encode_one(kt__cu_encode_tiled_fn encode, const kt__tensormap_spec *s, CUdeviceptr base,
                           CUtensorMap *map, char *why, size_t n) {
  CUtensorMapDataType type;
  CUtensorMapSwizzle swizzle;
  if (!kt__cuda_tensormap_enums(s, &type, &swizzle, why, n)) return CUDA_ERROR_INVALID_VALUE;
  if (base % 16 != 0) {
    snprintf(why, n, "a tensor map needs its tensor's address 16-byte aligned; it is %#llx", (unsigned long long)base);
    return CUDA_ERROR_INVALID_VALUE;
  }
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], unit[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < s->rank; i++) dims[i] = s->dims[i], box[i] = s->box[i];
  for (int i = 0; i + 1 < s->rank; i++) strides[i] = s->strides[i];
  CUresult r = encode(map, type, (cuuint32_t)s->rank, (void *)(uintptr_t)base, dims, strides, box, unit,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) snprintf(why, n, "cuTensorMapEncodeTiled refused the map (rank %d, box %u)", s->rank, box[0]);
  return r;
}

CUresult kt__cuda_tensormap_get(kt__cuda_tensormap_cache *c, kt__cu_encode_tiled_fn encode,
                                const kt__tensormap_spec *spec, CUdeviceptr base, CUtensorMap *out, char *why,
                                size_t n) {
  pthread_mutex_lock(&c->lock);
  CUresult r = CUDA_SUCCESS;
  int found = -1;
  for (int i = 0; i < KT__CUDA_TENSORMAP_SLOTS && found < 0; i++)
    if (c->slots[i].used && c->slots[i].base == base && memcmp(&c->slots[i].spec, spec, sizeof *spec) == 0) found = i;
  if (found < 0) {
    found = (int)(c->next++ % KT__CUDA_TENSORMAP_SLOTS);
    c->slots[found].used = false;
    r = encode_one(encode, spec, base, &c->slots[found].map, why, n);
    if (r == CUDA_SUCCESS) {
      c->slots[found].spec = *spec;
      c->slots[found].base = base;
      c->slots[found].used = true;
    }
  }
  if (r == CUDA_SUCCESS) *out = c->slots[found].map;
  pthread_mutex_unlock(&c->lock);
  return r;
}
#endif
