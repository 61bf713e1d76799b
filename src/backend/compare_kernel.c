/* The comparison kernel's source (compare_kernel.h). */
#include "compare_kernel.h"

#include <stdio.h>
#include <string.h>

/* Each language's spelling of what the body needs. CUDA's __dadd_rn and
 * __dmul_rn are never fused into a multiply-add (NVRTC fuses by default);
 * OpenCL C gets FP_CONTRACT OFF. */
static const char opencl_prelude[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "typedef ulong kt_u64;\n"
    "typedef long kt_i64;\n"
    "typedef uint kt_u32;\n"
    "typedef ushort kt_u16;\n"
    "typedef uchar kt_u8;\n"
    "typedef char kt_i8;\n"
    "typedef int kt_i32;\n"
    "#define KT_FN static\n"
    "#define KT_G __global\n"
    "#define KT_ADD(a, b) ((a) + (b))\n"
    "#define KT_SUB(a, b) ((a) - (b))\n"
    "#define KT_MUL(a, b) ((a) * (b))\n"
    "#define KT_AS_DOUBLE(x) as_double(x)\n"
    "#define KT_TID get_local_id(0)\n"
    "#define KT_GROUP get_group_id(0)\n"
    "#define KT_LSIZE get_local_size(0)\n"
    "#define KT_GSIZE get_global_size(0)\n"
    "#define KT_BARRIER barrier(CLK_LOCAL_MEM_FENCE)\n"
    "#define KT_KERNEL_HEAD __kernel void kt_compare(KT_G const void *got, KT_G const void *want, kt_u64 count, "
    "int dtype, double atol, double rtol, KT_G kt_u64 *out, __local kt_u64 *red)\n";

static const char cuda_prelude[] =
    "typedef unsigned long long kt_u64;\n"
    "typedef long long kt_i64;\n"
    "typedef unsigned int kt_u32;\n"
    "typedef unsigned short kt_u16;\n"
    "typedef unsigned char kt_u8;\n"
    "typedef signed char kt_i8;\n"
    "typedef int kt_i32;\n"
    "#define KT_FN static __device__\n"
    "#define KT_G\n"
    "#define KT_ADD(a, b) __dadd_rn(a, b)\n"
    "#define KT_SUB(a, b) __dsub_rn(a, b)\n"
    "#define KT_MUL(a, b) __dmul_rn(a, b)\n"
    "#define KT_AS_DOUBLE(x) __longlong_as_double((long long)(x))\n"
    "#define KT_TID threadIdx.x\n"
    "#define KT_GROUP blockIdx.x\n"
    "#define KT_LSIZE blockDim.x\n"
    "#define KT_GSIZE ((kt_u64)gridDim.x * blockDim.x)\n"
    "#define KT_BARRIER __syncthreads()\n"
    "#define KT_KERNEL_HEAD extern \"C\" __global__ void kt_compare(const void *got, const void *want, "
    "kt_u64 count, int dtype, double atol, double rtol, kt_u64 *out)\n"
    "#define KT_SHARED_DECL extern __shared__ kt_u64 red[];\n";

/* The body, in both languages. */
static const char body[] =
    "#ifndef KT_SHARED_DECL\n"
    "#define KT_SHARED_DECL\n"
    "#endif\n"
    "#define KT_SIGN(bit) ((kt_u64)(bit) << 63)\n"
    /* f32 bits to double: exact, denormals included (m * 2^-149). */
    "KT_FN double kt_from_f32(kt_u32 x) {\n"
    "  kt_u64 s = KT_SIGN(x >> 31);\n"
    "  kt_u32 e = (x >> 23) & 0xffu, m = x & 0x7fffffu;\n"
    "  if (e == 0xffu) return KT_AS_DOUBLE(s | ((kt_u64)0x7ff00000u << 32) | ((kt_u64)m << 29));\n"
    "  if (e == 0u) {\n"
    "    double v = KT_MUL((double)m, KT_AS_DOUBLE((kt_u64)(1023 - 149) << 52));\n"
    "    return s ? -v : v;\n"
    "  }\n"
    "  return KT_AS_DOUBLE(s | ((kt_u64)(e - 127u + 1023u) << 52) | ((kt_u64)m << 29));\n"
    "}\n"
    /* f16 bits to double: exact (m * 2^-24 below the normal range). */
    "KT_FN double kt_from_f16(kt_u32 h) {\n"
    "  kt_u64 s = KT_SIGN(h >> 15);\n"
    "  kt_u32 e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1fu) return KT_AS_DOUBLE(s | ((kt_u64)0x7ff00000u << 32) | ((kt_u64)m << 42));\n"
    "  if (e == 0u) {\n"
    "    double v = KT_MUL((double)m, KT_AS_DOUBLE((kt_u64)(1023 - 24) << 52));\n"
    "    return s ? -v : v;\n"
    "  }\n"
    "  return KT_AS_DOUBLE(s | ((kt_u64)(e - 15u + 1023u) << 52) | ((kt_u64)m << 42));\n"
    "}\n"
    "KT_FN double kt_float_at(int t, KT_G const void *p, kt_u64 i) {\n"
    "  if (t == KT_DT_F16) return kt_from_f16(((KT_G const kt_u16 *)p)[i]);\n"
    "  if (t == KT_DT_BF16) return kt_from_f32((kt_u32)((KT_G const kt_u16 *)p)[i] << 16);\n"
    "  if (t == KT_DT_F32) return kt_from_f32(((KT_G const kt_u32 *)p)[i]);\n"
    "  return ((KT_G const double *)p)[i];\n"
    "}\n"
    "KT_FN kt_i64 kt_int_at(int t, KT_G const void *p, kt_u64 i) {\n"
    "  if (t == KT_DT_I8) return ((KT_G const kt_i8 *)p)[i];\n"
    "  if (t == KT_DT_U8) return ((KT_G const kt_u8 *)p)[i];\n"
    "  if (t == KT_DT_I32) return ((KT_G const kt_i32 *)p)[i];\n"
    "  if (t == KT_DT_U32) return ((KT_G const kt_u32 *)p)[i];\n"
    "  return ((KT_G const kt_i64 *)p)[i];\n"
    "}\n"
    "KT_FN int kt_is_inf(double v) { return v == v && KT_SUB(v, v) != KT_SUB(v, v); }\n"
    "KT_FN int kt_within(double d, double w, double atol, double rtol) {\n"
    "  return d <= KT_ADD(atol, KT_MUL(rtol, fabs(w)));\n"
    "}\n"
    "KT_FN int kt_float_matches(int t, KT_G const void *got, KT_G const void *want, kt_u64 i, double atol,\n"
    "                           double rtol) {\n"
    "  double g = kt_float_at(t, got, i), w = kt_float_at(t, want, i);\n"
    "  if (g != g || w != w) return g != g && w != w;\n"
    "  if (g == w) return 1;\n"
    "  if (kt_is_inf(g) || kt_is_inf(w)) return 0;\n"
    "  return kt_within(fabs(KT_SUB(g, w)), w, atol, rtol);\n"
    "}\n"
    "KT_FN int kt_int_matches(int t, KT_G const void *got, KT_G const void *want, kt_u64 i, double atol,\n"
    "                         double rtol) {\n"
    "  kt_u64 d;\n"
    "  double w;\n"
    "  if (t == KT_DT_U64) {\n"
    "    kt_u64 x = ((KT_G const kt_u64 *)got)[i], y = ((KT_G const kt_u64 *)want)[i];\n"
    "    d = x > y ? x - y : y - x;\n"
    "    w = (double)y;\n"
    "  } else {\n"
    "    kt_i64 x = kt_int_at(t, got, i), y = kt_int_at(t, want, i);\n"
    "    d = x > y ? (kt_u64)x - (kt_u64)y : (kt_u64)y - (kt_u64)x;\n"
    "    w = (double)y;\n"
    "  }\n"
    "  return d == 0 || kt_within((double)d, w, atol, rtol);\n"
    "}\n"
    "KT_KERNEL_HEAD {\n"
    "  KT_SHARED_DECL\n"
    "  int is_float = dtype == KT_DT_F16 || dtype == KT_DT_BF16 || dtype == KT_DT_F32 || dtype == KT_DT_F64;\n"
    "  kt_u64 n = 0, first = ~(kt_u64)0, step = KT_GSIZE;\n"
    "  for (kt_u64 i = (kt_u64)KT_GROUP * KT_LSIZE + KT_TID; i < count; i += step) {\n"
    "    int ok = is_float ? kt_float_matches(dtype, got, want, i, atol, rtol)\n"
    "                      : kt_int_matches(dtype, got, want, i, atol, rtol);\n"
    "    if (!ok && n++ == 0) first = i;\n"
    "  }\n"
    "  red[2 * KT_TID] = n;\n"
    "  red[2 * KT_TID + 1] = first;\n"
    "  KT_BARRIER;\n"
    "  for (unsigned stride = KT_LSIZE / 2; stride > 0; stride /= 2) {\n"
    "    if (KT_TID < stride) {\n"
    "      red[2 * KT_TID] += red[2 * (KT_TID + stride)];\n"
    "      kt_u64 other = red[2 * (KT_TID + stride) + 1];\n"
    "      if (other < red[2 * KT_TID + 1]) red[2 * KT_TID + 1] = other;\n"
    "    }\n"
    "    KT_BARRIER;\n"
    "  }\n"
    "  if (KT_TID == 0) {\n"
    "    out[2 * KT_GROUP] = red[0];\n"
    "    out[2 * KT_GROUP + 1] = red[1];\n"
    "  }\n"
    "}\n";

char *kt__compare_kernel_source(kt__lang lang) {
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%s", lang == KT__LANG_CUDA ? cuda_prelude : opencl_prelude);
#define KT__DT_DEFINE_(name, text, size) kt__sbuf_printf(&s, "#define KT_DT_%s %d\n", #name, (int)KT__DT_##name);
  KT__DTYPE_MAP(KT__DT_DEFINE_)
#undef KT__DT_DEFINE_
  kt__sbuf_printf(&s, "%s", body);
  return s.s;
}

void kt__compare_reduce(const uint64_t *out, int ngroups, uint64_t *count, uint64_t *first) {
  uint64_t n = 0, lowest = UINT64_MAX;
  for (int g = 0; g < ngroups; g++) {
    n += out[2 * g];
    if (out[2 * g + 1] < lowest) lowest = out[2 * g + 1];
  }
  *count = n;
  *first = lowest;
}
