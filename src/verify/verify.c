/* Seeded fills, poisoned outputs and tolerant comparison. Elements are read
 * and written through one pair of helpers (element_get / element_set) so
 * that every operation handles the ten element types the same way. */
#include "verify.h"

#include "../parallel.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* --- f16 / bf16 ---------------------------------------------------------- */

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static float f32_from_bits(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* Drops SHIFT low bits of V rounding to nearest, ties to even. */
static uint32_t round_shift(uint32_t v, int shift) {
  uint32_t r = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
  return (rem > half || (rem == half && (r & 1))) ? r + 1 : r;
}

float kt__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    float f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t kt__f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) /* infinity, or NaN kept quiet */
    return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) { /* subnormal in f16: (1.man) scaled down, or zero */
    if (e < -10) return (uint16_t)sign;
    return (uint16_t)(sign | round_shift(man | 0x800000, 14 - e));
  }
  /* A carry out of the mantissa moves into the exponent, as it should. */
  return (uint16_t)(sign | round_shift(((uint32_t)e << 23) | man, 13));
}

float kt__bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

uint16_t kt__f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)round_shift(x, 16);
}

/* --- element access ------------------------------------------------------ */

double kt__element(kt__dtype t, const void *buf, uint64_t i) {
  switch (t) {
  case KT__DT_F16: return kt__f16_to_f32(((const uint16_t *)buf)[i]);
  case KT__DT_BF16: return kt__bf16_to_f32(((const uint16_t *)buf)[i]);
  case KT__DT_F32: return ((const float *)buf)[i];
  case KT__DT_F64: return ((const double *)buf)[i];
  case KT__DT_I8: return ((const int8_t *)buf)[i];
  case KT__DT_U8: return ((const uint8_t *)buf)[i];
  case KT__DT_I32: return ((const int32_t *)buf)[i];
  case KT__DT_U32: return ((const uint32_t *)buf)[i];
  case KT__DT_I64: return (double)((const int64_t *)buf)[i];
  case KT__DT_U64: return (double)((const uint64_t *)buf)[i];
  default: return NAN;
  }
}

/* Integer types take V modulo their width (iota past 127 in i8 wraps). */
static void element_set_int(kt__dtype t, void *buf, uint64_t i, int64_t v) {
  switch (t) {
  case KT__DT_I8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)v; break;
  case KT__DT_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
  case KT__DT_I32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)v; break;
  case KT__DT_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
  case KT__DT_I64: ((int64_t *)buf)[i] = v; break;
  case KT__DT_U64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
  default: break;
  }
}

static void element_set_float(kt__dtype t, void *buf, uint64_t i, double v) {
  switch (t) {
  case KT__DT_F16: ((uint16_t *)buf)[i] = kt__f32_to_f16((float)v); break;
  case KT__DT_BF16: ((uint16_t *)buf)[i] = kt__f32_to_bf16((float)v); break;
  case KT__DT_F32: ((float *)buf)[i] = (float)v; break;
  case KT__DT_F64: ((double *)buf)[i] = v; break;
  default: break;
  }
}

/* --- fills ---------------------------------------------------------------- */

/* splitmix64: tiny, fast and good enough to make test data; the same seed
 * always gives the same stream, on every machine. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Mantissa bits a random float may use so that every value drawn is exact in
 * the type: then "uniform in [-1, 1)" holds after the conversion too (a f32
 * value just below 1 would round up to 1.0 in f16). */
static int random_bits(kt__dtype t) {
  switch (t) {
  case KT__DT_F16: return 11;
  case KT__DT_BF16: return 8;
  case KT__DT_F32: return 24;
  default: return 53;
  }
}

static bool dtype_is_signed_int(kt__dtype t) { return t == KT__DT_I8 || t == KT__DT_I32 || t == KT__DT_I64; }

/* A range of random values: the default (RANGED false) is uniform in
 * [-1, 1) for floats and small integers for integer types; random(LO, HI)
 * is uniform in [LO, HI). */
typedef struct random_range {
  bool ranged;
  int64_t lo, hi;
} random_range;

/* Elements [BEGIN, BEGIN + COUNT) of the stream that SEED starts: the
 * generator is a counter, so any range can be made on its own. */
static void fill_random_range(kt__dtype t, void *buf, uint64_t begin, uint64_t count, uint64_t seed,
                              const random_range *r) {
  uint64_t state = seed + begin * 0x9e3779b97f4a7c15ull;
  if (kt__dtype_is_float(t)) {
    int bits = random_bits(t);
    double lo = r->ranged ? (double)r->lo : -1.0, span = r->ranged ? (double)r->hi - (double)r->lo : 2.0;
    for (uint64_t i = begin; i < begin + count; i++) {
      double u = ldexp((double)(next_random(&state) >> (64 - bits)), -bits);
      element_set_float(t, buf, i, lo + span * u);
    }
    return;
  }
  if (r->ranged) { /* the span fits: lo < hi, both within the type (args.c checks) */
    uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo;
    for (uint64_t i = begin; i < begin + count; i++)
      element_set_int(t, buf, i, (int64_t)((uint64_t)r->lo + next_random(&state) % span));
    return;
  }
  /* Small integers (-8..7 or 0..15) so that sums and products of a few of
   * them stay exact in every type. */
  for (uint64_t i = begin; i < begin + count; i++) {
    int64_t v = (int64_t)(next_random(&state) >> 60);
    element_set_int(t, buf, i, dtype_is_signed_int(t) ? v - 8 : v);
  }
}

typedef struct fill_job {
  kt__dtype t;
  void *buf;
  uint64_t seed;
  random_range range;
} fill_job;

static void fill_body(void *arg, int part, uint64_t begin, uint64_t len) {
  (void)part;
  fill_job *j = arg;
  fill_random_range(j->t, j->buf, begin, len, j->seed, &j->range);
}

/* Large tensors (GPU problem sizes run to gigabytes) are filled on every
 * core; the values do not depend on how the work is split. */
static void fill_random(kt__dtype t, void *buf, uint64_t count, uint64_t seed, random_range range) {
  fill_job j = {t, buf, seed, range};
  kt__split_run(count, 1 << 22, kt__ncores(), fill_body, &j);
}

void kt__fill_random_in(kt__dtype t, void *buf, uint64_t count, int64_t lo, int64_t hi, uint64_t seed) {
  fill_random(t, buf, count, seed, (random_range){true, lo, hi});
}

static void fill_value(kt__dtype t, void *buf, uint64_t i, int64_t v) {
  if (kt__dtype_is_float(t)) element_set_float(t, buf, i, (double)v);
  else element_set_int(t, buf, i, v);
}

void kt__fill(kt__dtype t, void *buf, uint64_t count, kt__init init, uint64_t seed) {
  switch (init) {
  case KT__INIT_RANDOM: fill_random(t, buf, count, seed, (random_range){false, 0, 0}); break;
  case KT__INIT_ZEROS: memset(buf, 0, (size_t)(count * kt__dtype_size(t))); break;
  case KT__INIT_ONES:
    for (uint64_t i = 0; i < count; i++) fill_value(t, buf, i, 1);
    break;
  case KT__INIT_IOTA:
    for (uint64_t i = 0; i < count; i++) fill_value(t, buf, i, (int64_t)i);
    break;
  case KT__INIT_FILE: break; /* the caller reads the file */
  }
}

void kt__poison_alt(kt__dtype t, void *buf, uint64_t count) { memset(buf, 0x5A, (size_t)(count * kt__dtype_size(t))); }

void kt__poison(kt__dtype t, void *buf, uint64_t count) {
  if (!kt__dtype_is_float(t)) {
    memset(buf, 0xA5, (size_t)(count * kt__dtype_size(t)));
    return;
  }
  for (uint64_t i = 0; i < count; i++) element_set_float(t, buf, i, NAN);
}

/* Far from V beyond any tolerance (4 (|V| + 1) away, at worst an infinity
 * in a narrow type), never NaN: a NaN or infinite V gets 1. */
static double decoy_of(double v) { return isfinite(v) ? v + 4 * (fabs(v) + 1) : 1; }

void kt__decoy(kt__dtype t, void *buf, const void *ref, uint64_t count) {
  if (!kt__dtype_is_float(t)) {
    size_t size = kt__dtype_size(t);
    unsigned char poison[8];
    kt__poison(t, poison, 1);
    for (uint64_t i = 0; i < count; i++) {
      const unsigned char *r = (const unsigned char *)ref + i * size;
      unsigned char *b = (unsigned char *)buf + i * size;
      for (size_t j = 0; j < size; j++) b[j] = r[j] ^ 0x40u;
      if (memcmp(b, poison, size) == 0)
        for (size_t j = 0; j < size; j++) b[j] = r[j] ^ 0x41u;
    }
    return;
  }
  for (uint64_t i = 0; i < count; i++) element_set_float(t, buf, i, decoy_of(kt__element(t, ref, i)));
}

/* --- comparison ----------------------------------------------------------- */

void kt__default_tolerance(kt__dtype t, double *atol, double *rtol) {
  /* Configurations legitimately reorder sums (other tile sizes, other
   * unrolling, FMA contraction), so floats get room for rounding of long
   * reductions; integers must match exactly. */
  switch (t) {
  case KT__DT_F16: *atol = 1e-2, *rtol = 1e-2; break;
  case KT__DT_BF16: *atol = 5e-2, *rtol = 5e-2; break;
  case KT__DT_F32: *atol = 1e-4, *rtol = 1e-3; break;
  case KT__DT_F64: *atol = 1e-9, *rtol = 1e-7; break;
  default: *atol = 0, *rtol = 0; break;
  }
}

/* |a - b| of two integer elements, exact for every type (doubles would
 * call 2^60 and 2^60 + 1 equal). */
static double int_distance(kt__dtype t, const void *a, const void *b, uint64_t i) {
  if (t == KT__DT_U64) {
    uint64_t x = ((const uint64_t *)a)[i], y = ((const uint64_t *)b)[i];
    return (double)(x > y ? x - y : y - x);
  }
  int64_t x = t == KT__DT_I64 ? ((const int64_t *)a)[i] : (int64_t)kt__element(t, a, i);
  int64_t y = t == KT__DT_I64 ? ((const int64_t *)b)[i] : (int64_t)kt__element(t, b, i);
  return (double)(x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x);
}

static bool element_matches(kt__dtype t, const void *got, const void *want, uint64_t i, double atol, double rtol) {
  double w = kt__element(t, want, i);
  if (!kt__dtype_is_float(t)) {
    double d = int_distance(t, got, want, i);
    return d == 0 || d <= atol + rtol * fabs(w);
  }
  double g = kt__element(t, got, i);
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (g == w) return true;
  if (isinf(w) || isinf(g)) return false; /* rtol * inf would excuse anything */
  return fabs(g - w) <= atol + rtol * fabs(w);
}

/* Fast screens for f32 and f64: true when every element of the block
 * passes |g - w| <= atol + rtol * |w| with finite values, which implies
 * element_matches; a block with any other element is checked one by one.
 * Written branch-free so that the compiler vectorises it. */
static bool block_ok_f32(const float *g, const float *w, uint64_t n, double atol, double rtol) {
  int bad = 0;
  for (uint64_t i = 0; i < n; i++) {
    double gi = g[i], wi = w[i];
    /* An infinite reference would pass (rtol * inf): element_matches decides. */
    bad |= !(fabs(gi - wi) <= atol + rtol * fabs(wi)) | !(fabs(wi) <= DBL_MAX);
  }
  return !bad;
}

static bool block_ok_f64(const double *g, const double *w, uint64_t n, double atol, double rtol) {
  int bad = 0;
  for (uint64_t i = 0; i < n; i++) bad |= !(fabs(g[i] - w[i]) <= atol + rtol * fabs(w[i])) | !(fabs(w[i]) <= DBL_MAX);
  return !bad;
}

static bool block_ok(kt__dtype t, const void *got, const void *want, uint64_t begin, uint64_t n, double atol,
                     double rtol) {
  if (t == KT__DT_F32) return block_ok_f32((const float *)got + begin, (const float *)want + begin, n, atol, rtol);
  if (t == KT__DT_F64) return block_ok_f64((const double *)got + begin, (const double *)want + begin, n, atol, rtol);
  return false;
}

uint64_t kt__compare(kt__dtype t, const void *got, const void *want, uint64_t count, double atol, double rtol,
                     kt__mismatch *m) {
  enum { BLOCK = 4096 };
  kt__mismatch mm = {0};
  for (uint64_t i = 0; i < count; i++) {
    if (i % BLOCK == 0 && block_ok(t, got, want, i, count - i < BLOCK ? count - i : BLOCK, atol, rtol)) {
      i += (count - i < BLOCK ? count - i : BLOCK) - 1;
      continue;
    }
    if (element_matches(t, got, want, i, atol, rtol)) continue;
    if (mm.count++ == 0) {
      mm.first = i;
      mm.got = kt__element(t, got, i);
      mm.want = kt__element(t, want, i);
    }
  }
  if (m) *m = mm;
  return mm.count;
}

/* --- comparison on several threads ----------------------------------------- */

typedef struct compare_job {
  kt__dtype t;
  const char *got, *want;
  double atol, rtol;
  kt__mismatch m[KT__SPLIT_MAX_PARTS];
} compare_job;

static void compare_body(void *arg, int part, uint64_t begin, uint64_t len) {
  compare_job *j = arg;
  size_t es = kt__dtype_size(j->t);
  kt__compare(j->t, j->got + begin * es, j->want + begin * es, len, j->atol, j->rtol, &j->m[part]);
  j->m[part].first += begin;
}

uint64_t kt__compare_parallel(kt__dtype t, const void *got, const void *want, uint64_t count, double atol, double rtol,
                              int threads, kt__mismatch *m) {
  compare_job j = {t, got, want, atol, rtol, {{0}}};
  int n = kt__split_run(count, 1 << 20, threads, compare_body, &j);
  kt__mismatch all = {0};
  for (int i = 0; i < n; i++) { /* in order, so "first" is the lowest index */
    if (j.m[i].count && all.count == 0) {
      all.first = j.m[i].first;
      all.got = j.m[i].got;
      all.want = j.m[i].want;
    }
    all.count += j.m[i].count;
  }
  if (m) *m = all;
  return all.count;
}

/* --- NaN count ------------------------------------------------------------- */

/* Typed loops: this runs over the whole reference output (hundreds of MB on a
 * GPU), where a call per element cost 0.2 s on the H200 host. */
/* Elements among [BEGIN, BEGIN + LEN) whose bits are POISON's (one element
 * of SIZE bytes): integer compares, which the compiler vectorises. */
static uint64_t count_poison_range(size_t size, const void *buf, const unsigned char *poison, uint64_t begin,
                                   uint64_t len) {
  uint64_t n = 0;
  switch (size) {
#define KT__COUNT_(type)                                                                       \
  {                                                                                            \
    type want;                                                                                 \
    memcpy(&want, poison, sizeof want);                                                        \
    for (const type *p = (const type *)buf + begin, *e = p + len; p < e; p++) n += *p == want; \
  }                                                                                            \
  break;
  case 1: KT__COUNT_(uint8_t)
  case 2: KT__COUNT_(uint16_t)
  case 4: KT__COUNT_(uint32_t)
  case 8: KT__COUNT_(uint64_t)
#undef KT__COUNT_
  default: break;
  }
  return n;
}

typedef struct poison_job {
  size_t size;
  const void *buf;
  unsigned char poison[8];
  uint64_t n[KT__SPLIT_MAX_PARTS];
} poison_job;

static void poison_body(void *arg, int part, uint64_t begin, uint64_t len) {
  poison_job *j = arg;
  j->n[part] = count_poison_range(j->size, j->buf, j->poison, begin, len);
}

uint64_t kt__count_poison(kt__dtype t, const void *buf, uint64_t count, bool alt, int threads) {
  poison_job j = {.size = kt__dtype_size(t), .buf = buf};
  (alt ? kt__poison_alt : kt__poison)(t, j.poison, 1);
  int n = kt__split_run(count, 1 << 22, threads, poison_body, &j);
  uint64_t total = 0;
  for (int i = 0; i < n; i++) total += j.n[i];
  return total;
}

uint64_t kt__count_unwritten(kt__dtype t, const void *run1, const void *run2, uint64_t count, uint64_t *first) {
  size_t size = kt__dtype_size(t);
  unsigned char p1[8], p2[8];
  kt__poison(t, p1, 1);
  kt__poison_alt(t, p2, 1);
  uint64_t n = 0;
  for (uint64_t i = 0; i < count; i++) {
    const unsigned char *a = (const unsigned char *)run1 + i * size, *b = (const unsigned char *)run2 + i * size;
    if (memcmp(a, p1, size) == 0 && memcmp(b, p2, size) == 0 && n++ == 0) *first = i;
  }
  return n;
}
