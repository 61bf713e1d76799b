/* Minimal unit-test harness: TEST(name) registers a case; CTest runs each
 * case as `test_<group> <name>` (see tests/CMakeLists.txt), and running the
 * binary with no argument runs every case in a child process. Assertions print
 * both values and the place, then abort the case. */
#ifndef KT_TEST_HARNESS_H
#define KT_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*kt_test_fn)(void);
void kt_test_register(const char *name, kt_test_fn fn);
void kt_test_fail(const char *file, int line, const char *fmt, ...);
/* A fresh folder TAG-XXXXXX inside the case's own folder (kt_test_tmp_path:
 * gone when the case ends) into DIR (LEN bytes). The case fails when it
 * cannot be made. */
void kt_test_tmp_dir(const char *tag, char *dir, size_t len);
/* A kt_test_tmp_dir holding the case's own results database and binary
 * cache: KTUNE_DB and KTUNE_BINARY_CACHE point there. */
void kt_test_private_store(const char *tag, char *dir, size_t len);
/* NAME inside the case's own folder (/tmp/kt-test-XXXXXX, made on first use
 * and removed, with what it holds, when the process that made it ends). The
 * returned path stays valid for the next 31 calls. */
const char *kt_test_tmp_path(const char *name);
/* How many times slower than a quiet machine this one may be
 * (KTUNE_TEST_SLOWDOWN, default 10, as tests/e2e/common.bash): a bounded wait
 * for an event lasts its quiet bound times this. A bad value exits 2. */
int kt_test_slowdown(void);
/* The case's stderr into a file of its own folder (the KTUNE_PRINT_AUTOTUNING
 * lines and the trace a test reads): start, what was printed so far (a
 * static buffer; the capture goes on), end (stderr restored). */
void kt_test_capture_start(void);
const char *kt_test_captured(void);
void kt_test_capture_end(void);
/* How many times NEEDLE occurs in HAY. */
int kt_test_count(const char *hay, const char *needle);
/* Sleeps S seconds. */
void kt_test_sleep(double s);

/* An OpenCL C kernel for the tests that need one: y = x + 1 at N = 1000,
 * ITEMS elements a work-item (two configurations). */
#define KT_TEST_ADDONE_CL                                                        \
  "// @autotune(ITEMS in [1, 4])\n"                                              \
  "// @kernel addone(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n" \
  "// @grid((N + 64 * ITEMS - 1) / (64 * ITEMS))\n"                              \
  "// @block(64)\n"                                                              \
  "// @dims(N = 1000)\n"                                                         \
  "__kernel void addone(__global const float *x, __global float *y, int n) {\n"  \
  "  for (int k = 0; k < ITEMS; k++) {\n"                                        \
  "    int i = get_global_id(0) * ITEMS + k;\n"                                  \
  "    if (i < n) y[i] = x[i] + 1.0f;\n"                                         \
  "  }\n"                                                                        \
  "}\n"

#define TEST(name)                                                                                         \
  static void test_##name(void);                                                                           \
  __attribute__((constructor)) static void register_##name(void) { kt_test_register(#name, test_##name); } \
  static void test_##name(void)

#define ASSERT_TRUE(c)                                                   \
  do {                                                                   \
    if (!(c)) kt_test_fail(__FILE__, __LINE__, "expected true: %s", #c); \
  } while (0)
#define ASSERT_FALSE(c) ASSERT_TRUE(!(c))

#define ASSERT_EQ(a, b)                                                                           \
  do {                                                                                            \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                         \
    if (va_ != vb_) kt_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, va_, vb_); \
  } while (0)
#define ASSERT_NE(a, b)                                                                   \
  do {                                                                                    \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                 \
    if (va_ == vb_) kt_test_fail(__FILE__, __LINE__, "%s != %s: both %lld", #a, #b, va_); \
  } while (0)
#define ASSERT_GE(a, b)                                                                         \
  do {                                                                                          \
    double va_ = (double)(a), vb_ = (double)(b);                                                \
    if (!(va_ >= vb_)) kt_test_fail(__FILE__, __LINE__, "%s >= %s: %g < %g", #a, #b, va_, vb_); \
  } while (0)
#define ASSERT_NEAR(a, b, tol)                                                 \
  do {                                                                         \
    double va_ = (double)(a), vb_ = (double)(b);                               \
    if (!(va_ - vb_ <= (tol) && vb_ - va_ <= (tol)))                           \
      kt_test_fail(__FILE__, __LINE__, "%s ~ %s: %g vs %g", #a, #b, va_, vb_); \
  } while (0)
#define ASSERT_STREQ(a, b)                                                                         \
  do {                                                                                             \
    const char *sa_ = (a), *sb_ = (b);                                                             \
    if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0)                                                     \
      kt_test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, sa_ ? sa_ : "(null)", \
                   sb_ ? sb_ : "(null)");                                                          \
  } while (0)
#define ASSERT_CONTAINS(hay, needle)                                                            \
  do {                                                                                          \
    const char *h_ = (hay), *n_ = (needle);                                                     \
    if (!h_ || !strstr(h_, n_))                                                                 \
      kt_test_fail(__FILE__, __LINE__, "\"%s\" should contain \"%s\"", h_ ? h_ : "(null)", n_); \
  } while (0)

#endif
