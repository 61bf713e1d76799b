/* Seeded fills, poisoning, comparison and the f16/bf16 conversions. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "verify/verify.h"

TEST(fill_random_is_reproducible) {
  float a[1000], b[1000], c[1000];
  kt__fill(KT__DT_F32, a, 1000, KT__INIT_RANDOM, 42);
  kt__fill(KT__DT_F32, b, 1000, KT__INIT_RANDOM, 42);
  kt__fill(KT__DT_F32, c, 1000, KT__INIT_RANDOM, 43);
  ASSERT_EQ(memcmp(a, b, sizeof a), 0);
  ASSERT_NE(memcmp(a, c, sizeof a), 0);
}

TEST(fill_random_floats_in_range_and_spread) {
  static const kt__dtype types[] = {KT__DT_F16, KT__DT_BF16, KT__DT_F32, KT__DT_F64};
  static double buf[4096];
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    kt__fill(types[k], buf, 4096, KT__INIT_RANDOM, 7);
    double lo = 2, hi = -2, sum = 0;
    for (int i = 0; i < 4096; i++) {
      double v = kt__element(types[k], buf, (uint64_t)i);
      lo = fmin(lo, v), hi = fmax(hi, v), sum += v;
    }
    ASSERT_GE(lo, -1.0);
    ASSERT_TRUE(hi < 1.0);
    ASSERT_TRUE(lo < -0.9 && hi > 0.9); /* uses the whole range */
    ASSERT_NEAR(sum / 4096, 0.0, 0.05);
  }
}

TEST(fill_random_small_ints) {
  int32_t s[2000];
  uint8_t u[2000];
  kt__fill(KT__DT_I32, s, 2000, KT__INIT_RANDOM, 1);
  kt__fill(KT__DT_U8, u, 2000, KT__INIT_RANDOM, 1);
  bool neg = false;
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(s[i] >= -8 && s[i] <= 7);
    ASSERT_TRUE(u[i] <= 15);
    neg |= s[i] < 0;
  }
  ASSERT_TRUE(neg);
}

TEST(fill_zeros_ones_iota) {
  double d[5];
  uint16_t h[5];
  int8_t c[300];
  kt__fill(KT__DT_F64, d, 5, KT__INIT_ONES, 0);
  kt__fill(KT__DT_F16, h, 5, KT__INIT_IOTA, 0);
  kt__fill(KT__DT_I8, c, 300, KT__INIT_IOTA, 0);
  for (int i = 0; i < 5; i++) {
    ASSERT_EQ(d[i], 1);
    ASSERT_EQ(kt__element(KT__DT_F16, h, (uint64_t)i), i);
  }
  ASSERT_EQ(c[127], 127);
  ASSERT_EQ(c[128], -128); /* wraps modulo the width */
  kt__fill(KT__DT_F64, d, 5, KT__INIT_ZEROS, 0);
  for (int i = 0; i < 5; i++) ASSERT_EQ(d[i], 0);
}

TEST(poison_makes_unwritten_element_fail) {
  float want[8], got[8];
  kt__fill(KT__DT_F32, want, 8, KT__INIT_RANDOM, 3);
  kt__poison(KT__DT_F32, got, 8);
  for (int i = 0; i < 8; i++)
    if (i != 5) got[i] = want[i];
  kt__mismatch m;
  ASSERT_EQ(kt__compare(KT__DT_F32, got, want, 8, 1e-3, 1e-3, &m), 1);
  ASSERT_EQ(m.first, 5);
  ASSERT_TRUE(isnan(m.got));

  int32_t wi[4] = {1, 2, 3, 4}, gi[4];
  kt__poison(KT__DT_I32, gi, 4);
  gi[0] = 1, gi[1] = 2, gi[3] = 4;
  ASSERT_EQ(kt__compare(KT__DT_I32, gi, wi, 4, 0, 0, &m), 1);
  ASSERT_EQ(m.first, 2);
  ASSERT_EQ((uint32_t)gi[2], 0xA5A5A5A5u);
}

/* Decoys are neither the reference (within a loose tolerance) nor poison,
 * in every float type and for the values that break a byte trick (1.0, whose
 * bits XOR 0x40 are NaN; NaN and infinities; the largest f16). */
TEST(decoys_differ_from_the_reference_and_from_poison) {
  float want[8] = {1.0f, -1.0f, 0.0f, 0.5f, 3e38f, NAN, INFINITY, -7.25f}, got[8];
  kt__decoy(KT__DT_F32, got, want, 8);
  ASSERT_EQ(kt__compare(KT__DT_F32, got, want, 8, 0.5, 0.5, NULL), 8);
  ASSERT_EQ(kt__count_poison(KT__DT_F32, got, 8, false, 1), 0);
  for (int i = 0; i < 8; i++) ASSERT_TRUE(!isnan(got[i]));
  uint16_t h[3] = {kt__f32_to_f16(1.0f), kt__f32_to_f16(65504.0f), kt__f32_to_f16(-2.0f)}, hd[3];
  kt__decoy(KT__DT_F16, hd, h, 3);
  ASSERT_EQ(kt__compare(KT__DT_F16, hd, h, 3, 0.5, 0.5, NULL), 3);
  ASSERT_EQ(kt__count_poison(KT__DT_F16, hd, 3, false, 1), 0);
  int32_t wi[3] = {0, -1, (int32_t)0xE5E5E5E5u}, gi[3];
  kt__decoy(KT__DT_I32, gi, wi, 3);
  ASSERT_EQ(kt__compare(KT__DT_I32, gi, wi, 3, 0, 0, NULL), 3);
  ASSERT_EQ(kt__count_poison(KT__DT_I32, gi, 3, false, 1), 0); /* 0xE5... XOR 0x40 would be the poison */
}

TEST(compare_tolerances) {
  float want[3] = {1.0f, 100.0f, 0.0f}, got[3] = {1.0005f, 100.05f, 0.00005f};
  kt__mismatch m;
  ASSERT_EQ(kt__compare(KT__DT_F32, got, want, 3, 1e-4, 1e-3, &m), 0);
  got[1] = 100.2f; /* 0.2 > 1e-4 + 1e-3 * 100 */
  ASSERT_EQ(kt__compare(KT__DT_F32, got, want, 3, 1e-4, 1e-3, &m), 1);
  ASSERT_EQ(m.first, 1);
  ASSERT_NEAR(m.want, 100.0, 1e-9);
  got[2] = 0.001f; /* atol alone governs near zero */
  ASSERT_EQ(kt__compare(KT__DT_F32, got, want, 3, 1e-4, 1e-3, &m), 2);
  ASSERT_EQ(m.count, 2);
}

TEST(compare_nan_and_infinity) {
  double want[3] = {NAN, INFINITY, 1}, got[3] = {NAN, INFINITY, 1};
  ASSERT_EQ(kt__compare(KT__DT_F64, got, want, 3, 0, 0, NULL), 0);
  got[1] = -INFINITY;
  got[2] = NAN;
  ASSERT_EQ(kt__compare(KT__DT_F64, got, want, 3, 1e9, 1e9, NULL), 2);
  got[1] = INFINITY, got[2] = 1, got[0] = 0;
  ASSERT_EQ(kt__compare(KT__DT_F64, got, want, 3, 1e9, 1e9, NULL), 1);
}

TEST(compare_large_integers_exactly) {
  int64_t want[2] = {(int64_t)1 << 60, 5}, got[2] = {((int64_t)1 << 60) + 1, 5};
  double atol, rtol;
  kt__default_tolerance(KT__DT_I64, &atol, &rtol);
  ASSERT_EQ(atol, 0);
  ASSERT_EQ(rtol, 0);
  /* Equal as doubles, different as integers. */
  ASSERT_EQ(kt__compare(KT__DT_I64, got, want, 2, atol, rtol, NULL), 1);
  got[0] = want[0];
  ASSERT_EQ(kt__compare(KT__DT_I64, got, want, 2, atol, rtol, NULL), 0);
}

TEST(default_tolerances_loosen_with_precision) {
  double a16, r16, ab, rb, a32, r32, a64, r64;
  kt__default_tolerance(KT__DT_F16, &a16, &r16);
  kt__default_tolerance(KT__DT_BF16, &ab, &rb);
  kt__default_tolerance(KT__DT_F32, &a32, &r32);
  kt__default_tolerance(KT__DT_F64, &a64, &r64);
  ASSERT_TRUE(r64 < r32 && r32 < r16 && r16 <= rb);
  ASSERT_TRUE(a64 < a32 && a32 < a16 && a16 <= ab);
}

TEST(f16_conversions) {
  ASSERT_EQ(kt__f32_to_f16(1.0f), 0x3c00);
  ASSERT_EQ(kt__f32_to_f16(-2.0f), 0xc000);
  ASSERT_EQ(kt__f32_to_f16(65504.0f), 0x7bff);
  ASSERT_EQ(kt__f32_to_f16(65520.0f), 0x7c00);            /* rounds up to infinity */
  ASSERT_EQ(kt__f32_to_f16(5.9604645e-8f), 0x0001);       /* smallest subnormal */
  ASSERT_EQ(kt__f32_to_f16(2.9802322e-8f), 0x0000);       /* half of it: tie to even */
  ASSERT_EQ(kt__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);     /* tie to even (down) */
  ASSERT_EQ(kt__f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie to even (up) */
  ASSERT_EQ(kt__f32_to_f16(6.097555e-5f), 0x03ff);        /* largest subnormal */
  ASSERT_TRUE(isnan(kt__f16_to_f32(kt__f32_to_f16(NAN))));
  ASSERT_TRUE(isinf(kt__f16_to_f32(0xfc00)) && kt__f16_to_f32(0xfc00) < 0);
  /* Every finite half survives a round trip through float. */
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(kt__f32_to_f16(kt__f16_to_f32((uint16_t)h)), h);
  }
}

TEST(bf16_conversions) {
  ASSERT_EQ(kt__f32_to_bf16(1.0f), 0x3f80);
  ASSERT_EQ(kt__f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie to even */
  ASSERT_EQ(kt__f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  ASSERT_NEAR(kt__bf16_to_f32(0x4049), 3.140625, 0);
  ASSERT_TRUE(isnan(kt__bf16_to_f32(kt__f32_to_bf16(NAN))));
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7f80) == 0x7f80) continue;
    ASSERT_EQ(kt__f32_to_bf16(kt__bf16_to_f32((uint16_t)h)), h);
  }
}

/* The threaded comparison finds the same mismatches, and the lowest index
 * first, whatever the split; the vectorised screen must not hide a NaN or
 * an infinity in a block that is otherwise close. */
TEST(compare_parallel_matches_serial) {
  uint64_t n = (1u << 22) + 17;
  float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
  kt__fill(KT__DT_F32, want, n, KT__INIT_RANDOM, 3);
  memcpy(got, want, n * sizeof *got);
  got[2000000] = NAN;
  got[n - 1] += 1.0f;
  got[1234567] = INFINITY;
  kt__mismatch serial, parallel;
  uint64_t a = kt__compare(KT__DT_F32, got, want, n, 1e-4, 1e-3, &serial);
  uint64_t b = kt__compare_parallel(KT__DT_F32, got, want, n, 1e-4, 1e-3, 4, &parallel);
  ASSERT_EQ(a, 3);
  ASSERT_EQ(b, 3);
  ASSERT_EQ(serial.first, 1234567);
  ASSERT_EQ(parallel.first, 1234567);
  free(want);
  free(got);
}

/* Poison counted bitwise in every part of a split buffer, at its ends too:
 * a NaN the kernel computed is not the poison, nor is an infinity; integer
 * types count their byte pattern. */
TEST(count_poison_in_every_type_and_part) {
  uint64_t n = (3u << 22) + 5;
  float *f = calloc(n, sizeof *f);
  kt__poison(KT__DT_F32, &f[0], 1);
  kt__poison(KT__DT_F32, &f[n / 2], 1);
  kt__poison(KT__DT_F32, &f[n - 1], 1);
  f[7] = INFINITY;
  uint32_t other_nan = 0x7fc00001u;
  memcpy(&f[8], &other_nan, 4);
  ASSERT_EQ(kt__count_poison(KT__DT_F32, f, n, false, 1), 3);
  ASSERT_EQ(kt__count_poison(KT__DT_F32, f, n, false, 8), 3);
  ASSERT_EQ(kt__count_poison(KT__DT_F32, f, n, true, 8), 0);
  kt__poison_alt(KT__DT_F32, &f[9], 2);
  ASSERT_EQ(kt__count_poison(KT__DT_F32, f, n, true, 8), 2);
  free(f);
  uint16_t h[3];
  kt__poison(KT__DT_F16, h, 3);
  ASSERT_EQ(kt__count_poison(KT__DT_F16, h, 3, false, 1), 3);
  int32_t i[4] = {-1, 0x7fc00000, 0, 0};
  kt__poison(KT__DT_I32, &i[2], 1);
  ASSERT_EQ(kt__count_poison(KT__DT_I32, i, 4, false, 1), 1);
  uint8_t u[3] = {0xA5, 0x5A, 7};
  ASSERT_EQ(kt__count_poison(KT__DT_U8, u, 3, false, 1), 1);
  ASSERT_EQ(kt__count_poison(KT__DT_U8, u, 3, true, 1), 1);
}

/* Unwritten: the poison after the first run and the second poison after
 * the second, at the same index; a value that equals one poison by chance
 * is written. */
TEST(count_unwritten_needs_both_poisons) {
  uint8_t run1[5] = {0xA5, 0xA5, 3, 0xA5, 0x5A}, run2[5] = {0x5A, 0xA5, 3, 0x5A, 0x5A};
  uint64_t first = 99;
  ASSERT_EQ(kt__count_unwritten(KT__DT_U8, run1, run2, 5, &first), 2);
  ASSERT_EQ(first, 0);
  float a[2], b[2] = {1, 2};
  kt__poison(KT__DT_F32, a, 2);
  kt__poison_alt(KT__DT_F32, b + 1, 1);
  ASSERT_EQ(kt__count_unwritten(KT__DT_F32, a, b, 2, &first), 1);
  ASSERT_EQ(first, 1);
}

/* The vectorised screen passes whole blocks of close elements; an infinite
 * reference among them must still fail a finite output (rtol * inf would
 * excuse it), as it does element by element. */
TEST(compare_screen_does_not_excuse_an_infinite_reference) {
  enum { N = 8192 };
  float *g = kt__xcalloc(N, sizeof *g), *w = kt__xcalloc(N, sizeof *w);
  double *gd = kt__xcalloc(N, sizeof *gd), *wd = kt__xcalloc(N, sizeof *wd);
  for (int i = 0; i < N; i++) g[i] = w[i] = (float)i, gd[i] = wd[i] = i;
  w[5000] = INFINITY, wd[5000] = -INFINITY;
  kt__mismatch m;
  ASSERT_EQ(kt__compare(KT__DT_F32, g, w, N, 1e-4, 1e-3, &m), 1);
  ASSERT_EQ(m.first, 5000);
  ASSERT_EQ(kt__compare(KT__DT_F64, gd, wd, N, 1e-9, 1e-7, &m), 1);
  ASSERT_EQ(m.first, 5000);
  free(g), free(w), free(gd), free(wd);
}
