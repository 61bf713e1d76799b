/* The annotation language: choice rules, attributes, @kernel and its C
 * signature, runtime sizes, and every error with its place and wording. */
#include "harness.h"
#include "lang/parser.h"

#include <stdlib.h>
#include <unistd.h>

/* Parses TEXT, which must be valid; notes and warnings go to *NOTES when given. */
static kt__file *parse_ok_notes(const char *text, char **notes) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.cu", text, KT__LANG_CUDA, &d);
  if (!f) kt_test_fail(__FILE__, __LINE__, "parse failed:\n%s", d.errors.s ? d.errors.s : "(no message)");
  if (notes) *notes = kt__xstrdup(d.notes.s ? d.notes.s : "");
  kt__diag_free(&d);
  return f;
}

static kt__file *parse_ok(const char *text) { return parse_ok_notes(text, NULL); }

/* Parses TEXT, which must be refused; returns the error text. */
static char *parse_err(const char *text) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.cu", text, KT__LANG_CUDA, &d);
  if (f) kt_test_fail(__FILE__, __LINE__, "parse succeeded, expected an error for:\n%s", text);
  ASSERT_TRUE(d.nerrors > 0);
  char *s = kt__xstrdup(d.errors.s);
  kt__diag_free(&d);
  return s;
}

#define EXPECT_ERROR(text, needle) \
  do {                             \
    char *m_ = parse_err(text);    \
    ASSERT_CONTAINS(m_, needle);   \
    free(m_);                      \
  } while (0)

/* Expands WRITTEN and compares with WANT (terminated by count). */
static void check_choices(const int64_t *written, int n, const int64_t *want, int nwant) {
  int64_t *out;
  int count;
  char msg[256];
  ASSERT_EQ(kt__expand_choices(written, n, &out, &count, msg), 0);
  ASSERT_EQ(count, nwant);
  for (int i = 0; i < nwant; i++) ASSERT_EQ(out[i], want[i]);
  free(out);
}

#define CHOICES(w, ...)                                                                            \
  do {                                                                                             \
    const int64_t want_[] = {__VA_ARGS__};                                                         \
    check_choices(w, (int)(sizeof w / sizeof w[0]), want_, (int)(sizeof want_ / sizeof want_[0])); \
  } while (0)

static const char SQUARE[] = "#include <cuda.h>\n"
                             "// @autotune(BLOCK in [64, 1024], VEC in [1, 2, 4, 8])\n"
                             "// @where(BLOCK * VEC <= 8192)\n"
                             "// @kernel square(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                             "// @grid(cdiv(N, BLOCK * VEC))\n"
                             "// @block(BLOCK)\n"
                             "// @dims(N = 16777216)\n"
                             "extern \"C\" __global__ void square(const float *x, float *y, int n) { }\n";

/* --- choice rules --------------------------------------------------------- */

TEST(choices_doubling) {
  const int64_t a[] = {16, 256};
  CHOICES(a, 16, 32, 64, 128, 256);
  const int64_t b[] = {4, 48};
  CHOICES(b, 4, 8, 16, 32, 48);
  const int64_t c[] = {3, 20};
  CHOICES(c, 3, 6, 12, 20);
  const int64_t d[] = {1, 2};
  CHOICES(d, 1, 2);
}

TEST(choices_two_values_as_written) {
  const int64_t a[] = {256, 16};
  CHOICES(a, 256, 16);
  const int64_t b[] = {0, 8};
  CHOICES(b, 0, 8);
  const int64_t c[] = {-4, 8};
  CHOICES(c, -4, 8);
  const int64_t d[] = {5, 5};
  CHOICES(d, 5, 5);
}

TEST(choices_one_and_many) {
  const int64_t a[] = {64};
  CHOICES(a, 64);
  const int64_t b[] = {1, 2, 4, 8};
  CHOICES(b, 1, 2, 4, 8);
  const int64_t c[] = {8, 1, 4};
  CHOICES(c, 8, 1, 4);
}

TEST(choices_up_to_int64_max) {
  const int64_t w[] = {1, INT64_MAX};
  int64_t *out;
  int count;
  char msg[256];
  ASSERT_EQ(kt__expand_choices(w, 2, &out, &count, msg), 0);
  ASSERT_EQ(count, 64);
  ASSERT_EQ(out[62], (int64_t)1 << 62);
  ASSERT_EQ(out[63], INT64_MAX);
  free(out);
}

TEST(choices_errors) {
  int64_t *out;
  int count;
  char msg[256];
  ASSERT_EQ(kt__expand_choices(NULL, 0, &out, &count, msg), -1);
  ASSERT_CONTAINS(msg, "empty list");
  int64_t *big = kt__xcalloc(70000, sizeof *big);
  ASSERT_EQ(kt__expand_choices(big, 70000, &out, &count, msg), -1);
  ASSERT_CONTAINS(msg, "too many choices");
  free(big);
}

TEST(choices_in_annotations) {
  kt__file *f = parse_ok("// @autotune(A in [16, 256], B in [256, 16], C in [64], D in [3, -1, 7], E in [-8, -2])\n"
                         "// @kernel k(n: i32)\n"
                         "void k(int n) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->ntune, 5);
  ASSERT_STREQ(k->tune[0].name, "A");
  ASSERT_EQ(k->tune[0].count, 5);
  ASSERT_EQ(k->tune[0].values[0], 16);
  ASSERT_EQ(k->tune[0].values[4], 256);
  ASSERT_EQ(k->tune[1].count, 2);
  ASSERT_EQ(k->tune[1].values[0], 256);
  ASSERT_EQ(k->tune[2].count, 1);
  ASSERT_EQ(k->tune[3].count, 3);
  ASSERT_EQ(k->tune[3].values[1], -1);
  ASSERT_EQ(k->tune[4].count, 2);
  ASSERT_EQ(k->tune[4].values[0], -8);
  kt__file_free(f);
}

/* Braces are the values as written, two of them included (a Kernel Tuner
 * port's [1, 32] keeps its default 1), in @autotune and @cluster alike. */
TEST(choices_in_braces_are_explicit) {
  kt__file *f = parse_ok("// @autotune(A in {1, 32}, B in {16, 256, 4}, C in {7})\n"
                         "// @cluster(CLUSTER_X in {1, 4})\n"
                         "// @kernel k(n: i32)\n"
                         "void k(int n) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->tune[0].count, 2);
  ASSERT_EQ(k->tune[0].values[0], 1);
  ASSERT_EQ(k->tune[0].values[1], 32);
  ASSERT_EQ(k->tune[1].count, 3);
  ASSERT_EQ(k->tune[1].values[2], 4);
  ASSERT_EQ(k->tune[2].count, 1);
  ASSERT_EQ(k->cluster[0].count, 2);
  ASSERT_EQ(k->cluster[0].values[1], 4);
  kt__file_free(f);
  char *e = parse_err("// @autotune(A in {})\n// @kernel k(n: i32)\nvoid k(int n) {}\n");
  ASSERT_CONTAINS(e, "empty list: A in {} has no choices");
  free(e);
  e = parse_err("// @autotune(A in {1, 2])\n// @kernel k(n: i32)\nvoid k(int n) {}\n");
  ASSERT_CONTAINS(e, "',' or '}'");
  free(e);
}

/* --- a whole kernel ----------------------------------------------------------- */

TEST(square_example) {
  kt__file *f = parse_ok(SQUARE);
  ASSERT_EQ(f->nkernels, 1);
  ASSERT_EQ(f->lang, KT__LANG_CUDA);
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_STREQ(k->name, "square");
  ASSERT_EQ(k->loc.line, 4);
  ASSERT_EQ(k->loc.col, 4);
  ASSERT_EQ(k->ntune, 2);
  ASSERT_EQ(k->tune[0].count, 5);
  ASSERT_EQ(k->tune[1].count, 4);
  ASSERT_EQ(k->nwhere, 1);
  ASSERT_EQ(k->ngrid, 1);
  ASSERT_EQ(k->nblock, 1);
  ASSERT_EQ(k->ndims, 1);
  ASSERT_STREQ(k->dims[0].name, "N");
  ASSERT_EQ(k->nparams, 3);
  ASSERT_TRUE(k->params[0].is_tensor);
  ASSERT_EQ(k->params[0].type, KT__DT_F32);
  ASSERT_EQ(k->params[0].mode, KT__MODE_IN);
  ASSERT_EQ(k->params[1].mode, KT__MODE_OUT);
  ASSERT_EQ(k->params[1].ndims, 1);
  ASSERT_FALSE(k->params[2].is_tensor);
  ASSERT_EQ(k->params[2].type, KT__DT_I32);
  ASSERT_TRUE(k->params[2].value != NULL);
  ASSERT_EQ(k->nsizes, 1);
  ASSERT_STREQ(k->sizes[0], "N");
  ASSERT_EQ(kt__decl_size_index(k, "N"), 0);
  ASSERT_EQ(kt__decl_size_index(k, "BLOCK"), -1);
  ASSERT_FALSE(k->has_key);
  ASSERT_FALSE(k->has_verify);
  ASSERT_EQ(k->sig_line, 8);
  ASSERT_EQ(k->sig_nparams, 3);
  ASSERT_STREQ(k->sig_names[1], "y");
  ASSERT_TRUE(k->sig_is_pointer[0]);
  ASSERT_TRUE(k->sig_is_const[0]);
  ASSERT_FALSE(k->sig_is_const[1]);
  ASSERT_FALSE(k->sig_is_pointer[2]);

  /* The grid evaluates with the tuned names and the runtime size. */
  static const char *const names[] = {"BLOCK", "VEC", "N"};
  static const int64_t values[] = {256, 4, 100000};
  kt__env env = {names, values, 3, NULL};
  int64_t v;
  kt__eval_error err;
  ASSERT_EQ(kt__expr_eval(k->grid[0], &env, &v, &err), 0);
  ASSERT_EQ(v, 98);
  ASSERT_EQ(kt__expr_eval(k->dims[0].value, NULL, &v, &err), 0);
  ASSERT_EQ(v, 16777216);
  kt__file_free(f);
}

TEST(all_attributes) {
  kt__file *f = parse_ok(
      "// @autotune(TILE_M in [64, 128], TILE_N in [64, 128])\n"
      "// @cluster(CLUSTER_X in [1, 2])\n"
      "// @kernel gemm(a: tensor<f16>[M, K], b: tensor<f16>[K, N], c: out tensor<f32>[M, N] = zeros, m: i32 = M)\n"
      "// @where(TILE_M >= TILE_N)\n"
      "// @where(M % TILE_M == 0)\n"
      "// @grid(cdiv(N, TILE_N), cdiv(M, TILE_M), CLUSTER_X)\n"
      "// @block(128, 1, 1)\n"
      "// @dims(M = 1024, N = M / 2, K = 1 << 10)\n"
      "// @key(M, N = pow2)\n"
      "// @verify(atol = 1e-3, rtol = 0.5)\n"
      "// @shared(TILE_M * 64 * 2)\n"
      "// @flops(2 * M * N * K)\n"
      "// @bytes(2 * (M * K + K * N) + 4 * M * N)\n"
      "__global__ void gemm(const __half *a, const __half *b, float *c, int m) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->ncluster, 1);
  ASSERT_STREQ(k->cluster[0].name, "CLUSTER_X");
  ASSERT_EQ(k->nwhere, 2);
  ASSERT_EQ(k->ngrid, 3);
  ASSERT_EQ(k->nblock, 3);
  ASSERT_EQ(k->ndims, 3);
  ASSERT_TRUE(k->has_key);
  ASSERT_EQ(k->nkey, 2);
  ASSERT_TRUE(k->key[0].bucket == NULL);
  ASSERT_STREQ(k->key[1].bucket, "pow2");
  ASSERT_TRUE(k->has_verify);
  ASSERT_NEAR(k->atol, 1e-3, 1e-12);
  ASSERT_NEAR(k->rtol, 0.5, 1e-12);
  ASSERT_TRUE(k->has_atol && k->has_rtol);
  ASSERT_TRUE(k->shared && k->flops && k->bytes);
  ASSERT_EQ(k->params[2].init, KT__INIT_ZEROS);
  ASSERT_TRUE(k->params[2].init_given);
  ASSERT_EQ(k->params[0].mode, KT__MODE_IN); /* resolved: const pointer */
  ASSERT_EQ(k->params[0].type, KT__DT_F16);
  ASSERT_EQ(k->params[0].ndims, 2);
  /* sizes in order of first appearance; CLUSTER_X is tuned, not a size */
  ASSERT_EQ(k->nsizes, 3);
  ASSERT_STREQ(k->sizes[0], "M");
  ASSERT_STREQ(k->sizes[1], "K");
  ASSERT_STREQ(k->sizes[2], "N");
  kt__file_free(f);
}

TEST(sizes_in_order_of_first_appearance) {
  kt__file *f = parse_ok("// @autotune(B in [32, 64])\n"
                         "// @where(Q > B)\n"
                         "// @kernel k(x: tensor<f32>[Z, Y], n: i32 = X + Y)\n"
                         "// @grid(W, B)\n"
                         "// @flops(V)\n"
                         "// @dims(V = 1, W = 2, Q = 100)\n" /* sizes only @where, @grid or @flops use are declared */
                         "void k(float *x, int n) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  const char *want[] = {"Q", "Z", "Y", "X", "W", "V"};
  ASSERT_EQ(k->nsizes, 6);
  for (int i = 0; i < 6; i++) ASSERT_STREQ(k->sizes[i], want[i]);
  kt__file_free(f);
}

TEST(modes_and_inits) {
  kt__file *f =
      parse_ok("// @kernel k(a: tensor<f32>[N], b: tensor<f32>[N], c: in tensor<i8>[N], d: out tensor<u8>[N] = ones,"
               " e: inout tensor<f64>[N] = iota, f: tensor<i64>[N] = random, s: u64, t: bf16 = 3)\n"
               "void k(const float *a, float *b, const signed char *c, unsigned char *d, double *e, long *f,\n"
               "       unsigned long s, short t) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->nparams, 8);
  ASSERT_EQ(k->params[0].mode, KT__MODE_IN);
  ASSERT_EQ(k->params[1].mode, KT__MODE_INOUT);
  ASSERT_EQ(k->params[2].mode, KT__MODE_IN);
  ASSERT_EQ(k->params[3].mode, KT__MODE_OUT);
  ASSERT_EQ(k->params[3].init, KT__INIT_ONES);
  ASSERT_EQ(k->params[4].mode, KT__MODE_INOUT);
  ASSERT_EQ(k->params[4].init, KT__INIT_IOTA);
  ASSERT_EQ(k->params[5].init, KT__INIT_RANDOM);
  ASSERT_TRUE(k->params[5].init_given);
  ASSERT_FALSE(k->params[0].init_given);
  ASSERT_EQ(k->params[0].init, KT__INIT_RANDOM);
  ASSERT_EQ(k->params[6].type, KT__DT_U64);
  ASSERT_TRUE(k->params[6].value == NULL);
  ASSERT_EQ(k->params[7].type, KT__DT_BF16);
  kt__file_free(f);
}

TEST(several_kernels) {
  kt__file *f = parse_ok("// @autotune(B in [1, 4])\n"
                         "// @kernel first(x: tensor<f32>[N])\n"
                         "void first(float *x) {}\n"
                         "\n"
                         "static int helper(int a) { return a; }\n"
                         "\n"
                         "// @autotune(C in [2, 8])\n"
                         "// @kernel second(y: tensor<f32>[M])\n"
                         "void second(float *y) {}\n");
  ASSERT_EQ(f->nkernels, 2);
  kt__errbuf eb;
  ASSERT_TRUE(kt__file_kernel(f, NULL, "the name", &eb) == NULL);
  ASSERT_STREQ(eb.msg, "k.cu: error: several kernels in k.cu: first, second; choose one with the name NAME");
  const kt__kernel_decl *k = kt__file_kernel(f, "second", "the name", &eb);
  ASSERT_TRUE(k != NULL);
  ASSERT_STREQ(k->tune[0].name, "C");
  ASSERT_STREQ(k->sizes[0], "M");
  ASSERT_TRUE(kt__file_kernel(f, "third", "the name", &eb) == NULL);
  ASSERT_CONTAINS(eb.msg, "no kernel named 'third' in k.cu; its kernels: first, second");
  kt__file_free(f);
}

TEST(one_kernel_by_default_and_none) {
  kt__file *f = parse_ok(SQUARE);
  kt__errbuf eb;
  ASSERT_TRUE(kt__file_kernel(f, NULL, "the name", &eb) == &f->kernels[0]);
  ASSERT_TRUE(kt__file_kernel(f, "square", "the name", &eb) == &f->kernels[0]);
  kt__file_free(f);
  f = parse_ok("int main(void) { return 0; }\n");
  ASSERT_EQ(f->nkernels, 0);
  ASSERT_TRUE(kt__file_kernel(f, NULL, "the name", &eb) == NULL);
  ASSERT_CONTAINS(eb.msg, "no annotated kernel in k.cu");
  kt__file_free(f);
}

/* --- comment styles ---------------------------------------------------------- */

TEST(block_comment_annotations) {
  kt__file *f = parse_ok("/*\n"
                         " * Scales a vector.\n"
                         " *\n"
                         " * @autotune(B in [32, 256])\n"
                         " * @kernel scale(x: inout tensor<f32>[N])\n"
                         " */\n"
                         "__kernel void scale(__global float *x) {}\n"
                         "/** @autotune(C in [1, 2]) */\n"
                         "/** @kernel two(y: tensor<f32>[M]) */\n"
                         "kernel void two(global const float * restrict y) {}\n");
  ASSERT_EQ(f->nkernels, 2);
  ASSERT_EQ(f->kernels[0].tune[0].count, 4);
  ASSERT_EQ(f->kernels[0].tune[0].loc.line, 4);
  ASSERT_EQ(f->kernels[0].tune[0].loc.col, 14);
  ASSERT_EQ(f->kernels[1].params[0].mode, KT__MODE_IN);
  kt__file_free(f);
}

TEST(attribute_continued_over_lines) {
  kt__file *f = parse_ok("// @autotune(A in [1, 2],\n"
                         "//           B in [4, 8])\n"
                         "// @kernel k(x: tensor<f32>[N,\n"
                         "//                          M])\n"
                         "void k(float *x) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->ntune, 2);
  ASSERT_EQ(k->tune[1].loc.line, 2);
  ASSERT_EQ(k->tune[1].loc.col, 14);
  ASSERT_EQ(k->params[0].ndims, 2);
  kt__file_free(f);
}

TEST(plain_comments_and_doxygen_are_ignored) {
  kt__file *f = parse_ok("/** @brief Adds. @param a the input */\n"
                         "int add(int a) { return a; }\n"
                         "// Copyright notice\n"
                         "// @autotune(B in [1, 4])  // trailing remark\n"
                         "// more words that are not an attribute\n"
                         "// @kernel k(x: tensor<f32>[N])\n"
                         "void k(float *x) { const char *s = \"/* not a comment\"; }\n"
                         "// @autotune(C in [1, 2])\n"
                         "// @kernel k2(y: tensor<f32>[N])\n"
                         "void k2(float *y) {}\n");
  ASSERT_EQ(f->nkernels, 2);
  ASSERT_STREQ(f->kernels[1].name, "k2");
  kt__file_free(f);
}

/* @arch is the CUDA backend's (the NVRTC target): kept, and no note says
 * it is ignored. */
TEST(arch_attribute_is_kept_without_a_note) {
  char *notes;
  kt__file *f = parse_ok_notes("// @arch(sm_90a)\n"
                               "// @kernel k(x: tensor<f32>[N])\n"
                               "void k(float *x) {}\n",
                               &notes);
  ASSERT_EQ(f->kernels[0].nunknown, 1);
  ASSERT_STREQ(f->kernels[0].unknown[0].name, "arch");
  ASSERT_TRUE(strstr(notes ? notes : "", "@arch") == NULL);
  free(notes);
  kt__file_free(f);
}

TEST(unknown_attribute_is_a_note) {
  char *notes;
  kt__file *f = parse_ok_notes("// @autotune(B in [1, 4])\n"
                               "// @frobnicate(3, x = 2)\n"
                               "// @kernel k(x: tensor<f32>[N])\n"
                               "void k(float *x) {}\n",
                               &notes);
  ASSERT_EQ(f->kernels[0].nunknown, 1);
  ASSERT_STREQ(f->kernels[0].unknown[0].name, "frobnicate");
  ASSERT_EQ(f->kernels[0].unknown[0].loc.line, 2);
  ASSERT_CONTAINS(notes, "k.cu:2:4: note: unknown attribute @frobnicate ignored");
  ASSERT_TRUE(strstr(notes, "error") == NULL);
  free(notes);
  kt__file_free(f);
}

TEST(repeated_value_warns) {
  char *notes;
  kt__file *f = parse_ok_notes("// @autotune(B in [8, 8, 16])\n"
                               "// @kernel k(x: tensor<f32>[N])\n"
                               "void k(float *x) {}\n",
                               &notes);
  ASSERT_CONTAINS(notes, "k.cu:1:14: warning: B lists 8 twice");
  free(notes);
  kt__file_free(f);
}

/* --- the C signature --------------------------------------------------------- */

TEST(signature_forms) {
  kt__file *f =
      parse_ok("// @kernel a(x: tensor<f32>[N], y: tensor<f32>[N], z: tensor<f32>[N], w: tensor<f32>[N], n: i32)\n"
               "extern \"C\" __global__ void __launch_bounds__(256, 2)\n"
               "a(const float* __restrict__ x, float *__restrict__ y, float const *z, float *const w, int n)\n"
               "{}\n"
               "// @kernel b(x: tensor<f32>[N], y: tensor<i32>[N])\n"
               "template <int B, typename T>\n"
               "__global__ void b(const float x[], int y[]) {}\n"
               "// @kernel c(x: tensor<f32>[N], s: tensor<f32>[N])\n"
               "#define UNUSED 1\n"
               "__kernel void c(__global const float *restrict x,\n"
               "                __constant float *s) {}\n"
               "// @kernel d()\n"
               "static void d(void) {}\n");
  ASSERT_EQ(f->nkernels, 4);
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->sig_line, 3);
  ASSERT_TRUE(k->sig_is_const[0]);
  ASSERT_FALSE(k->sig_is_const[1]);
  ASSERT_TRUE(k->sig_is_const[2]);
  ASSERT_FALSE(k->sig_is_const[3]); /* const pointer, writable pointee */
  ASSERT_EQ(k->params[3].mode, KT__MODE_INOUT);
  ASSERT_FALSE(k->sig_is_pointer[4]);
  k = &f->kernels[1];
  ASSERT_TRUE(k->sig_is_pointer[0] && k->sig_is_pointer[1]);
  ASSERT_EQ(k->params[0].mode, KT__MODE_IN);
  ASSERT_EQ(k->params[1].mode, KT__MODE_INOUT);
  k = &f->kernels[2];
  ASSERT_STREQ(k->sig_names[0], "x");
  ASSERT_TRUE(k->sig_is_const[0]);
  ASSERT_TRUE(k->sig_is_const[1]);
  ASSERT_EQ(f->kernels[3].sig_nparams, 0);
  kt__file_free(f);
}

TEST(signature_count_mismatch) {
  EXPECT_ERROR("// @kernel square(x: tensor<f32>[N], y: tensor<f32>[N], n: i32 = N)\n"
               "void square(const float *x, float *y) {}\n",
               "k.cu:1:4: error: @kernel declares 3 parameters but square() takes 2: @kernel has "
               "(x, y, n), the function has (x, y)");
}

TEST(signature_name_mismatch) {
  EXPECT_ERROR("// @kernel square(x: tensor<f32>[N], y: tensor<f32>[N])\n"
               "void square(const float *x, float *out) {}\n",
               "k.cu:1:38: error: parameter 2 is 'y' in @kernel but 'out' in square()");
  EXPECT_ERROR("// @kernel sq(x: tensor<f32>[N])\n"
               "void square(const float *x) {}\n",
               "k.cu:1:4: error: @kernel names 'sq' but no function 'sq' follows the annotations; "
               "the first function below (line 2) is 'square'");
}

TEST(signature_kind_mismatch) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N], n: i32)\n"
               "void k(float x, int n) {}\n",
               "'x' is a tensor in @kernel but not a pointer in k()");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N], n: i32)\n"
               "void k(float *x, int *n) {}\n",
               "k.cu:1:33: error: 'n' is a scalar in @kernel but a pointer in k(); declare it as a "
               "tensor: n: tensor<i32>[SIZE]");
}

TEST(signature_missing_or_unreadable) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n",
               "k.cu:1:4: error: no C function follows the annotations; put them directly above k()");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\nint table[4] = {0};\n", "no C function follows");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\nvoid k(float *x, ...) {}\n",
               "k.cu:2:18: error: a kernel cannot take variable arguments");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\nvoid k(float *) {}\n", "cannot find the name of this parameter");
}

TEST(helpers_between_annotations_and_kernel) {
  kt__file *f = parse_ok("// @autotune(VEC in [1, 4])\n"
                         "// @kernel k(x: tensor<f32>[N], n: i32 = N)\n"
                         "\n"
                         "#define HALF(v) ((v) / 2)\n"
                         "struct __align__(sizeof(float) * VEC) vec_t { float v[VEC]; };\n"
                         "__device__ float helper(const float *p, int i) { return k_scale(p[i]); }\n"
                         "using namespace nvcuda;\n"
                         "extern \"C\" __global__ void __launch_bounds__(256) k(float *x, int n) {}\n");
  ASSERT_EQ(f->kernels[0].sig_line, 8);
  ASSERT_EQ(f->kernels[0].params[0].mode, KT__MODE_INOUT);
  kt__file_free(f);
}

TEST(out_on_const_pointer_warns) {
  char *notes;
  kt__file *f = parse_ok_notes("// @kernel k(x: out tensor<f32>[N])\nvoid k(const float *x) {}\n", &notes);
  ASSERT_CONTAINS(notes, "'x' is declared out but k() takes it through a const pointer");
  free(notes);
  kt__file_free(f);
}

/* --- errors -------------------------------------------------------------------- */

TEST(error_format_with_caret) {
  char *m = parse_err("// @autotune(B in [1, 4], B in [2])\n"
                      "// @kernel k(x: tensor<f32>[N])\n"
                      "void k(float *x) {}\n");
  ASSERT_STREQ(m, "k.cu:1:27: error: B is declared twice (first at line 1, column 14); give each "
                  "tuned name one list, in @autotune or @cluster\n"
                  "// @autotune(B in [1, 4], B in [2])\n"
                  "                          ^\n");
  free(m);
}

TEST(duplicate_across_autotune_and_cluster) {
  EXPECT_ERROR("// @autotune(X in [1, 4])\n"
               "// @cluster(X in [1, 2])\n"
               "// @kernel k(x: tensor<f32>[N])\n"
               "void k(float *x) {}\n",
               "k.cu:2:13: error: X is declared twice (first at line 1, column 14)");
}

TEST(empty_list) {
  EXPECT_ERROR("// @autotune(B in [])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:19: error: empty list: B in [] has no choices; give at least one value");
}

TEST(non_integer_choice) {
  EXPECT_ERROR("// @autotune(B in [1.5, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:20: error: non-integer value '1.5' in the choices of B");
  EXPECT_ERROR("// @autotune(B in [1, N])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:23: error: non-integer value 'N' in the choices of B");
  EXPECT_ERROR("// @autotune(B in [1, 99999999999999999999])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "does not fit in 64 bits");
}

TEST(bad_autotune_forms) {
  EXPECT_ERROR("// @autotune(B = 4)\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:14: error: expected NAME in [values] in @autotune but found 'B'");
  EXPECT_ERROR("// @autotune(B in [1, 2)\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:24: error: expected ',' or ']' in @autotune but found ')'");
  EXPECT_ERROR("// @autotune(B in [1, 2]\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:25: error: expected ',' or ')' in @autotune but found end of line");
  EXPECT_ERROR("// @autotune B in [1, 2]\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "expected '(' in @autotune but found 'B'");
}

TEST(unknown_type) {
  EXPECT_ERROR("// @kernel k(x: tensor<float>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:24: error: unknown type 'float'; did you mean f32? (the types are f16, bf16");
  EXPECT_ERROR("// @kernel k(n: quux)\nvoid k(int n) {}\n", "unknown type 'quux' (the types are");
}

TEST(kernel_syntax_errors) {
  EXPECT_ERROR("// @kernel k(x tensor<f32>[N])\nvoid k(float *x) {}\n", "k.cu:1:16: error: expected ':' and a type");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>)\nvoid k(float *x) {}\n", "expected '[' and the tensor's shape");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[])\nvoid k(float *x) {}\n", "tensor 'x' has an empty shape");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N] = garbage)\nvoid k(float *x) {}\n",
               "unknown initial value 'garbage' for tensor 'x' (expected random, random(LO, HI), zeros, ones, iota or "
               "file(\"PATH\"))");
  EXPECT_ERROR("// @kernel k(n: out i32)\nvoid k(int n) {}\n",
               "k.cu:1:17: error: 'out' applies to tensors; scalar 'n' is passed by value");
  EXPECT_ERROR("// @kernel k(n: i32 = zeros)\nvoid k(int n) {}\n", "'zeros' is an initial value for tensors");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N], x: tensor<f32>[N])\nvoid k(float *x, float *y) {}\n",
               "parameter 'x' is declared twice");
  EXPECT_ERROR("// @kernel (x: tensor<f32>[N])\nvoid k(float *x) {}\n", "expected the kernel's name");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N]) extra\nvoid k(float *x) {}\n",
               "k.cu:1:33: error: unexpected 'extra' after @kernel(...)");
}

TEST(missing_kernel) {
  EXPECT_ERROR("\n// @autotune(B in [1, 4])\n// @grid(N)\nvoid k(float *x) {}\n",
               "k.cu:2:4: error: these annotations have no @kernel");
}

TEST(shape_may_use_tuned_names) {
  kt__file *f = parse_ok("// @autotune(TILE in [16, 64])\n"
                         "// @kernel k(x: tensor<f32>[N], part: out tensor<f32>[cdiv(N, TILE)])\n"
                         "void k(float *x, float *part) {}\n");
  ASSERT_FALSE(f->kernels[0].params[0].shape_tuned);
  ASSERT_TRUE(f->kernels[0].params[1].shape_tuned);
  ASSERT_EQ(f->kernels[0].nsizes, 1); /* TILE is no runtime size */
  kt__file_free(f);
}

TEST(file_and_random_range_inits) {
  kt__file *f =
      parse_ok("// @kernel k(a: tensor<f32>[N] = file(\"data/a.npy\"), b: tensor<i32>[N] = file(\"b.bin\", i32),"
               " c: tensor<i32>[N] = random(0, M + 1))\n"
               "void k(float *a, int *b, int *c) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->params[0].init, KT__INIT_FILE);
  ASSERT_STREQ(k->params[0].file, "data/a.npy");
  ASSERT_FALSE(k->params[0].file_raw);
  ASSERT_TRUE(k->params[1].file_raw);
  ASSERT_EQ(k->params[1].file_type, KT__DT_I32);
  ASSERT_EQ(k->params[2].init, KT__INIT_RANDOM);
  ASSERT_TRUE(k->params[2].random_lo != NULL && k->params[2].random_hi != NULL);
  ASSERT_EQ(k->nsizes, 2); /* N, and M from the range */
  kt__file_free(f);
  EXPECT_ERROR("// @kernel k(a: tensor<f32>[N] = file(data.npy))\nvoid k(float *a) {}\n", "expected a quoted path");
  EXPECT_ERROR("// @kernel k(a: tensor<f32>[N] = file(\"a.npy)\nvoid k(float *a) {}\n", "has no closing");
  EXPECT_ERROR("// @kernel k(a: tensor<f32>[N] = file(\"\"))\nvoid k(float *a) {}\n",
               "the path of tensor 'a' is empty");
  EXPECT_ERROR("// @kernel k(a: tensor<f32>[N] = file(\"a.bin\", float))\nvoid k(float *a) {}\n",
               "unknown type 'float'; did you mean f32?");
  EXPECT_ERROR("// @kernel k(a: tensor<i32>[N] = random(0))\nvoid k(int *a) {}\n", "random(LO, HI)");
  EXPECT_ERROR("// @autotune(B in [1, 4])\n// @kernel k(a: tensor<i32>[N] = random(0, B))\nvoid k(int *a) {}\n",
               "the random range of 'a' uses B, a tuned name");
}

TEST(reference_and_check_attributes) {
  kt__file *f = parse_ok("// @reference(naive)\n// @check(my_check)\n// @kernel k(a: tensor<f32>[N])\n"
                         "void k(float *a) {}\n");
  ASSERT_STREQ(f->kernels[0].reference, "naive");
  ASSERT_STREQ(f->kernels[0].check, "my_check");
  kt__file_free(f);
  EXPECT_ERROR("// @reference()\n// @kernel k(a: tensor<f32>[N])\nvoid k(float *a) {}\n",
               "expected the name of the reference kernel");
  EXPECT_ERROR("// @check(a, b)\n// @kernel k(a: tensor<f32>[N])\nvoid k(float *a) {}\n",
               "expected ')' after the name");
}

TEST(dims_and_key_name_runtime_sizes) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @dims(M = 4)\nvoid k(float *x) {}\n",
               "k.cu:2:10: error: @dims names M, which is not a runtime size of k (its runtime sizes: N)");
  EXPECT_ERROR("// @autotune(B in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @key(B)\nvoid k(float *x) {}\n",
               "B is a tuned name; @key is about runtime sizes");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @key(N = log)\nvoid k(float *x) {}\n", "unknown bucketing in @key");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @dims(N = 4, N = 5)\nvoid k(float *x) {}\n",
               "N appears twice in @dims");
  EXPECT_ERROR("// @autotune(B in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @dims(N = B)\nvoid k(float *x) {}\n",
               "@dims values must not depend on tuned names, and B is tuned");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @dims(4)\nvoid k(float *x) {}\n", "expected NAME = value in @dims");
}

TEST(attribute_argument_errors) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @grid(1, 2, 3, 4)\nvoid k(float *x) {}\n",
               "k.cu:2:19: error: @grid takes at most 3 expressions");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @block()\nvoid k(float *x) {}\n",
               "@block needs 1 to 3 expressions");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @where(A, B)\nvoid k(float *x) {}\n",
               "@where takes at most 1 expression");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @grid(N)\n// @grid(N)\nvoid k(float *x) {}\n",
               "k.cu:3:4: error: @grid is given twice (first at line 2); keep one");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @flops(X = 3)\nvoid k(float *x) {}\n",
               "@flops takes expressions, not NAME = value");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @shared(N +)\nvoid k(float *x) {}\n",
               "k.cu:2:15: error: expected an expression but found ')'");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @where(N > 1.5)\nvoid k(float *x) {}\n", "non-integer value 1.5");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "@kernel is given twice");
}

TEST(verify_one_tolerance) {
  kt__file *f = parse_ok("// @kernel k(x: tensor<f32>[N])\n// @verify(rtol = 2)\nvoid k(float *x) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_TRUE(k->has_verify);
  ASSERT_TRUE(k->has_rtol);
  ASSERT_FALSE(k->has_atol);
  ASSERT_NEAR(k->rtol, 2, 0);
  kt__file_free(f);
}

TEST(verify_errors) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @verify(eps = 1)\nvoid k(float *x) {}\n",
               "@verify takes atol = <number> and rtol = <number>, not 'eps'");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @verify(atol = -1)\nvoid k(float *x) {}\n",
               "a tolerance cannot be negative");
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\n// @verify(atol = N)\nvoid k(float *x) {}\n",
               "expected a number in @verify but found 'N'");
}

TEST(errors_in_several_attributes_all_reported) {
  char *m = parse_err("// @autotune(A in [])\n"
                      "// @autotune(B in [1.5])\n"
                      "// @kernel k(x: tensor<f32>[N])\n"
                      "void k(float *x) {}\n");
  ASSERT_CONTAINS(m, "k.cu:1:");
  ASSERT_CONTAINS(m, "k.cu:2:");
  free(m);
}

TEST(duplicate_kernel_names) {
  EXPECT_ERROR("// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n"
               "// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:3:4: error: kernel 'k' is annotated twice (first at line 1)");
}

TEST(deep_nesting_in_annotation) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "// @kernel k(x: tensor<f32>[N])\n// @where(");
  for (int i = 0; i < 1000; i++) kt__sbuf_append(&b, "(", 1);
  kt__sbuf_append(&b, "1", 1);
  for (int i = 0; i < 1000; i++) kt__sbuf_append(&b, ")", 1);
  kt__sbuf_printf(&b, ")\nvoid k(float *x) {}\n");
  EXPECT_ERROR(b.s, "nested too deeply (more than 200 levels)");
  kt__sbuf_free(&b);
}

TEST(very_long_line) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "// @kernel k(x: tensor<f32>[N])\n// @where(N");
  for (int i = 0; i < 5000; i++) kt__sbuf_append(&b, " ", 1);
  kt__sbuf_printf(&b, ")\nvoid k(float *x) {}\n");
  char *m = parse_err(b.s);
  ASSERT_CONTAINS(m, "k.cu:2:4: error: annotation line too long (5009 characters; the limit is 4096)");
  ASSERT_TRUE(strlen(m) < 1000); /* the source line is shown as a window */
  free(m);
  kt__sbuf_free(&b);
}

/* --- files --------------------------------------------------------------------- */

static char *write_temp(const char *suffix, const void *data, size_t n) {
  char *path = kt__xmalloc(64);
  snprintf(path, 64, "/tmp/kt_lang_XXXXXX%s", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(write(fd, data, n), (long long)n);
  close(fd);
  return path;
}

TEST(parse_file_language_from_extension) {
  const char *exts[] = {".c", ".cl", ".cu", ".txt"};
  const kt__lang want[] = {KT__LANG_C, KT__LANG_OPENCL, KT__LANG_CUDA, KT__LANG_C};
  for (int i = 0; i < 4; i++) {
    char *path = write_temp(exts[i], SQUARE, strlen(SQUARE));
    kt__diag d;
    kt__diag_init(&d, NULL);
    kt__errbuf eb;
    kt__file *f = kt__parse_file(path, -1, &d, &eb);
    ASSERT_TRUE(f != NULL);
    ASSERT_EQ(f->lang, want[i]);
    ASSERT_STREQ(f->src.path, path);
    kt__file_free(f);
    f = kt__parse_file(path, KT__LANG_OPENCL, &d, &eb);
    ASSERT_EQ(f->lang, KT__LANG_OPENCL);
    kt__file_free(f);
    kt__diag_free(&d);
    unlink(path);
    free(path);
  }
}

TEST(parse_file_error_names_the_file) {
  const char *text = "// @autotune(B in [])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n";
  char *path = write_temp(".c", text, strlen(text));
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__errbuf eb;
  ASSERT_TRUE(kt__parse_file(path, -1, &d, &eb) == NULL);
  char want[128];
  snprintf(want, sizeof want, "%s:1:19: error: empty list", path);
  ASSERT_CONTAINS(d.errors.s, want);
  kt__diag_free(&d);
  unlink(path);
  free(path);
}

TEST(source_read_refuses_binary_large_and_missing) {
  kt__source s;
  kt__errbuf eb;
  char *path = write_temp(".cu", "ab\0cd", 5);
  ASSERT_EQ(kt__source_read(path, &s, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "looks like a binary file (NUL byte at offset 2)");
  unlink(path);
  free(path);

  size_t big = (16u << 20) + 1;
  char *data = kt__xcalloc(big, 1);
  memset(data, ' ', big);
  path = write_temp(".c", data, big);
  ASSERT_EQ(kt__source_read(path, &s, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "larger than 16 MiB");
  unlink(path);
  free(path);
  free(data);

  ASSERT_EQ(kt__source_read("/nonexistent/kernel.cu", &s, &eb), KT_IO);
  ASSERT_CONTAINS(eb.msg, "/nonexistent/kernel.cu: error: cannot open: No such file");
  ASSERT_EQ(kt__source_read("/tmp", &s, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "is a directory");

  path = write_temp(".c", "int x;\n", 7);
  ASSERT_EQ(kt__source_read(path, &s, &eb), KT_OK);
  ASSERT_EQ(s.len, 7);
  ASSERT_STREQ(s.text, "int x;\n");
  kt__source_free(&s);
  unlink(path);
  free(path);
}

TEST(diag_levels) {
  kt__source src;
  kt__source_from_string("f.c", "line one\n\tx = y;\n", &src);
  kt__diag d;
  kt__diag_init(&d, &src);
  kt__loc at = {2, 6};
  kt__diag_error(&d, at, "bad %s", "thing");
  kt__diag_warning(&d, at, "odd");
  kt__diag_note(&d, at, "fyi");
  ASSERT_EQ(d.nerrors, 1);
  ASSERT_STREQ(d.errors.s, "f.c:2:6: error: bad thing\n\tx = y;\n\t    ^\n");
  ASSERT_STREQ(d.notes.s, "f.c:2:6: warning: odd\n\tx = y;\n\t    ^\nf.c:2:6: note: fyi\n");
  kt__diag_free(&d);
  kt__source_free(&src);
}

TEST(parse_text_with_offset_location) {
  kt__source src;
  kt__source_from_string("size", "N=1 <<", &src);
  kt__diag d;
  kt__diag_init(&d, &src);
  kt__loc at = {1, 3};
  ASSERT_TRUE(kt__expr_parse_text("1 <<", at, &d) == NULL);
  ASSERT_CONTAINS(d.errors.s, "size:1:7: error: expected an expression but found end of line");
  kt__diag_free(&d);
  kt__source_free(&src);
}

/* --- seeded fuzzing: mutated annotations must be parsed or refused, never crash --- */

static uint64_t fuzz_state;
static uint32_t fuzz_next(void) {
  fuzz_state = fuzz_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(fuzz_state >> 33);
}

static void eval_all(const kt__kernel_decl *k) {
  /* Every name bound to 3: evaluation may fail, but must fail cleanly. */
  const char *names[64];
  int64_t values[64];
  int n = 0;
  for (int i = 0; i < k->ntune && n < 64; i++) names[n] = k->tune[i].name, values[n++] = 3;
  for (int i = 0; i < k->nsizes && n < 64; i++) names[n] = k->sizes[i], values[n++] = 3;
  kt__env env = {names, values, n, NULL};
  int64_t v;
  kt__eval_error err;
  for (int i = 0; i < k->nwhere; i++) (void)kt__expr_eval(k->where[i], &env, &v, &err);
  for (int i = 0; i < k->ngrid; i++) (void)kt__expr_eval(k->grid[i], &env, &v, &err);
  for (int i = 0; i < k->nparams; i++)
    for (int j = 0; j < k->params[i].ndims; j++) (void)kt__expr_eval(k->params[i].dims[j], &env, &v, &err);
}

TEST(fuzz_mutated_annotations) {
  static const char alphabet[] = "()[],:=@<>-+*/%!&|0123456789xNMB \n\t*/\"'{};#";
  const char *seeds[] = {SQUARE,
                         "/*\n * @autotune(A in [1, 8], B in [3, 20])\n * @kernel k(x: out tensor<f32>[N, M] = zeros)\n"
                         " * @where(A * B <= 64)\n */\n__kernel void k(__global float *x) {}\n"};
  fuzz_state = 12345;
  int parsed = 0, refused = 0;
  for (int iter = 0; iter < 3000; iter++) {
    const char *seed = seeds[iter % 2];
    size_t n = strlen(seed);
    char *text = kt__xmalloc(n + 16);
    memcpy(text, seed, n + 1);
    int edits = 1 + (int)(fuzz_next() % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = fuzz_next() % n;
      char c = alphabet[fuzz_next() % (sizeof alphabet - 1)];
      switch (fuzz_next() % 3) {
      case 0: text[at] = c; break;
      case 1: memmove(text + at, text + at + 1, n - at), n--; break;
      default: memmove(text + at + 1, text + at, n - at + 1), text[at] = c, n++; break;
      }
      if (n == 0 || n > strlen(seed) + 8) break;
    }
    kt__diag d;
    kt__diag_init(&d, NULL);
    kt__file *f = kt__parse_string("fuzz.c", text, KT__LANG_C, &d);
    if (f) {
      parsed++;
      for (int k = 0; k < f->nkernels; k++) eval_all(&f->kernels[k]);
    } else {
      refused++;
      ASSERT_TRUE(d.nerrors > 0 && d.errors.s && strstr(d.errors.s, "error: "));
    }
    kt__file_free(f);
    kt__diag_free(&d);
    free(text);
  }
  ASSERT_TRUE(parsed > 100 && refused > 100);
}

/* What fails for every configuration fails when read. */
TEST(constant_arithmetic_errors_at_parse_time) {
  char *m = parse_err("// @autotune(A in [1, 2])\n"
                      "// @kernel k(x: tensor<f32>[N])\n"
                      "// @where(A / 0 > 1)\n"
                      "void k(float *x) {}\n");
  ASSERT_STREQ(m, "k.cu:3:13: error: @where: division by zero (A / 0), whatever the value of A\n"
                  "// @where(A / 0 > 1)\n"
                  "            ^\n");
  free(m);
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @where((1 << 70) > A)\n"
               "void k(float *x) {}\n",
               "k.cu:3:14: error: @where: shift by 70 is out of range");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @grid(N % 0)\nvoid k(float *x) {}\n",
               "k.cu:3:12: error: @grid: modulo by zero");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @block(A * (4611686018427387904 * 2))\n"
               "void k(float *x) {}\n",
               "error: @block: overflow");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @shared(cdiv(A, 0))\n"
               "void k(float *x) {}\n",
               "error: @shared: division by zero");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @flops(N >> 64)\nvoid k(float *x) {}\n",
               "error: @flops: shift by 64");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @bytes(-(-9223372036854775807 - 1))\n"
               "void k(float *x) {}\n",
               "error: @bytes: overflow");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N / 0])\nvoid k(float *x) {}\n",
               "k.cu:2:31: error: @kernel: division by zero (N / 0)");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N], n: i32 = A % 0)\n"
               "void k(float *x, int n) {}\n",
               "error: @kernel: modulo by zero");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @dims(N = 1 << 63)\n"
               "void k(float *x) {}\n",
               "k.cu:3:16: error: @dims(N): shift by 63 is out of range");
}

TEST(chained_comparison_and_huge_tolerance) {
  EXPECT_ERROR(
      "// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @where(1 < A < 3)\nvoid k(float *x) {}\n",
      "k.cu:3:17: error: chained comparison");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @verify(atol = 1e400)\n"
               "void k(float *x) {}\n",
               "k.cu:3:19: error: number 1e400 is beyond a double's range");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @verify(rtol = 1e-400)\n"
               "void k(float *x) {}\n",
               "below a double's range");
}

/* Annotations follow C's syntax. */
static const char ANNOTATED[] = "// @autotune(A in [1, 2])\n"
                                "// @kernel k(x: tensor<f32>[N])\n"
                                "__global__ void k(float *x) {\n";

static void expect_one_kernel_with_one_name(const char *text) {
  kt__file *f = parse_ok(text);
  ASSERT_EQ(f->nkernels, 1);
  ASSERT_EQ(f->kernels[0].ntune, 1);
  ASSERT_STREQ(f->kernels[0].tune[0].name, "A");
  kt__file_free(f);
}

TEST(comments_in_function_bodies_are_prose) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b,
                  "%s  // @dims(N = 8) was too small\n"
                  "  /* @autotune(B in [1, 4]) tried, slower\n"
                  "   * @where(B > 2) */\n"
                  "  if (x) {\n"
                  "    // @kernel old(y: tensor<f32>[M])\n"
                  "  }\n"
                  "}\n",
                  ANNOTATED);
  expect_one_kernel_with_one_name(b.s);
  kt__sbuf_free(&b);
}

TEST(annotation_text_in_string_literals_is_code) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b,
                  "static const char *help = \"\\\n"
                  "// @autotune(B in [1, 4])\\n\\\n"
                  "// @kernel other(y: tensor<f32>[M])\";\n"
                  "static const char c = '\"';\n"
                  "static const char *raw = R\"doc(\n"
                  "// @autotune(C in [1, 4])\n"
                  "// @kernel third(z: tensor<f32>[M])\n"
                  ")doc\";\n"
                  "%s}\n",
                  ANNOTATED);
  expect_one_kernel_with_one_name(b.s);
  kt__sbuf_free(&b);
}

TEST(extern_c_and_namespace_blocks_hold_kernels) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "extern \"C\" {\nnamespace tuned {\n%s  x[0] = A;\n}\n}\n}\n", ANNOTATED);
  expect_one_kernel_with_one_name(b.s);
  kt__sbuf_free(&b);
  kt__sbuf_printf(&b, "struct s { int a; };\nnamespace {\n%s}\n}\n", ANNOTATED);
  expect_one_kernel_with_one_name(b.s);
  kt__sbuf_free(&b);
}

TEST(byte_order_mark_keeps_the_first_line) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "\xEF\xBB\xBF%s}\n", ANNOTATED);
  expect_one_kernel_with_one_name(b.s);
  kt__sbuf_free(&b);
  char *m = parse_err("\xEF\xBB\xBF// @autotune(A in [])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n");
  ASSERT_CONTAINS(m, "k.cu:1:19: error: empty list"); /* columns as an editor shows them */
  free(m);
}

/* Names that cannot work are refused before compiling. */
TEST(tuned_names_that_cannot_work) {
  EXPECT_ERROR("// @autotune(int in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k.cu:1:14: error: int cannot be a tuned name: it is a keyword or built-in name of CUDA C++");
  EXPECT_ERROR("// @autotune(A in [1, 2], blockDim in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "blockDim cannot be a tuned name: it is a keyword or built-in name of CUDA C++");
  EXPECT_ERROR("// @autotune(k in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "k cannot be a tuned name: it is the kernel's own name");
  EXPECT_ERROR("// @autotune(n in [1, 2])\n// @kernel k(x: tensor<f32>[N], n: i32)\nvoid k(float *x, int n) {}\n",
               "n cannot be a tuned name: it is a parameter of k (line 2)");
  EXPECT_ERROR("// @autotune(x in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "x cannot be a tuned name: it is a parameter of k");
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @cluster(kt__args in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n"
               "void k(float *x) {}\n",
               "kt__args cannot be a tuned name: it is a name ktune's generated code uses");
  EXPECT_ERROR("// @autotune(uint32_t in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "a name ktune's generated code uses");
  EXPECT_ERROR("// @autotune(__CUDA_ARCH__ in [1, 2])\n// @kernel k(x: tensor<f32>[N])\nvoid k(float *x) {}\n",
               "reserved for the compiler");
  /* Per language: local is OpenCL's, class C++'s; in C both are plain names. */
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.cl",
                                 "// @autotune(local in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n"
                                 "__kernel void k(__global float *x) {}\n",
                                 KT__LANG_OPENCL, &d);
  ASSERT_TRUE(f == NULL);
  ASSERT_CONTAINS(d.errors.s, "local cannot be a tuned name: it is a keyword or built-in name of OpenCL C");
  kt__diag_free(&d);
  kt__diag_init(&d, NULL);
  f = kt__parse_string("k.c",
                       "// @autotune(local in [1, 2], class in [1])\n// @kernel k(x: tensor<f32>[N])\n"
                       "void k(float *x) {}\n",
                       KT__LANG_C, &d);
  ASSERT_TRUE(f != NULL);
  kt__file_free(f);
  kt__diag_free(&d);
}

TEST(undeclared_names) {
  EXPECT_ERROR("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @where(A < Q)\nvoid k(float *x) {}\n",
               "k.cu:3:15: error: @where names Q, which is undeclared: not a tuned name (the kernel's: A)");
  EXPECT_ERROR(
      "// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @flops(2 * N * K)\nvoid k(float *x) {}\n",
      "@flops names K, which is undeclared");
  EXPECT_ERROR(
      "// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N])\n// @grid(cdiv(M, A))\nvoid k(float *x) {}\n",
      "@grid names M, which is undeclared");
  /* Declared: by a shape, a scalar's binding, a bare scalar, or @dims. */
  kt__file *f = parse_ok("// @autotune(A in [1, 2])\n// @kernel k(x: tensor<f32>[N], m: i32 = M, q: i32)\n"
                         "// @where(A < N + M + q + D)\n// @dims(D = 3)\nvoid k(float *x, int m, int q) {}\n");
  kt__file_free(f);
}

/* @constant: arrays read from the kernel's own symbols, not parameters. */
TEST(constant_data) {
  kt__file *f = parse_ok("__constant__ float w[225];\n"
                         "// @autotune(B in [64, 128])\n"
                         "// @constant(w: tensor<f32>[15 * 15] = ones, lut: in tensor<i32>[4, 2])\n"
                         "// @kernel k(x: tensor<f32>[N], n: i32 = N)\n"
                         "__global__ void k(float *x, int n) {}\n");
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->nparams, 2);
  ASSERT_EQ(k->nconstants, 2);
  ASSERT_STREQ(k->constants[0].name, "w");
  ASSERT_EQ(k->constants[0].type, KT__DT_F32);
  ASSERT_EQ(k->constants[0].init, KT__INIT_ONES);
  ASSERT_EQ(k->constants[0].mode, KT__MODE_IN);
  ASSERT_EQ(k->constants[1].ndims, 2);
  ASSERT_EQ(k->constants[1].init, KT__INIT_RANDOM);
  ASSERT_EQ(k->nsizes, 1); /* N only: a constant's shape holds no size */
  kt__file_free(f);
}

TEST(constant_errors) {
  EXPECT_ERROR("// @constant(w: f32)\n// @kernel k()\n__global__ void k() {}\n", "@constant 'w' is a scalar");
  EXPECT_ERROR("// @constant(w: out tensor<f32>[4])\n// @kernel k()\n__global__ void k() {}\n", "read-only");
  EXPECT_ERROR("// @constant(w: tensor<f32>[N])\n// @kernel k()\n__global__ void k() {}\n",
               "integers only, not the name N");
  EXPECT_ERROR("// @autotune(T in [1, 2])\n// @constant(w: tensor<f32>[T])\n// @kernel k()\n__global__ void k() {}\n",
               "not the name T");
  EXPECT_ERROR("// @constant(w: tensor<f32>[4], w: tensor<f32>[4])\n// @kernel k()\n__global__ void k() {}\n",
               "'w' is declared twice");
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.cl", "// @constant(w: tensor<f32>[4])\n// @kernel k()\n__kernel void k() {}\n",
                                 KT__LANG_OPENCL, &d);
  ASSERT_TRUE(f == NULL);
  ASSERT_CONTAINS(d.errors.s, "pass 'w' as a `__constant` pointer parameter");
  kt__diag_free(&d);
}

/* tensormap(...): a TMA tensor map tied to a tensor parameter, its box and
 * swizzle expressions of tuned names. */
static const char TMAP_SIG[] = "__global__ void g(float *c, const __nv_bfloat16 *a, const __grid_constant__ "
                               "CUtensorMap amap) {}\n";

TEST(tensormap_param) {
  char text[1024];
  snprintf(text, sizeof text,
           "// @autotune(BM in [128, 64], BK in [64])\n"
           "// @kernel g(c: out tensor<f32>[M, N], a: tensor<bf16>[M, K], amap: tensormap(a, box = [BM, BK],\n"
           "//           swizzle = 2 * BK))\n%s",
           TMAP_SIG);
  kt__file *f = parse_ok(text);
  const kt__kernel_decl *k = &f->kernels[0];
  ASSERT_EQ(k->nparams, 3);
  const kt__param *m = &k->params[2];
  ASSERT_TRUE(m->is_tensormap);
  ASSERT_TRUE(!m->is_tensor);
  ASSERT_EQ(m->map_tensor, 1);
  ASSERT_EQ(m->type, KT__DT_BF16);
  ASSERT_EQ(m->nbox, 2);
  ASSERT_TRUE(m->swizzle != NULL);
  ASSERT_EQ(k->params[1].mode, KT__MODE_IN);
  ASSERT_EQ(k->nsizes, 3); /* M, N, K: BM and BK are tuned names */
  kt__file_free(f);
}

TEST(tensormap_errors) {
  char text[1024];
  const char *bad[][2] = {
      {"amap: tensormap(b, box = [64, 64])", "maps 'b', which is no tensor parameter"},
      {"amap: tensormap(a, box = [64])", "a box of 1 dimension but tensor 'a' has 2"},
      {"amap: tensormap(a)", "needs its box"},
      {"amap: tensormap(a, box = [64, 64], box = [64, 64])", "'box' is given twice"},
      {"amap: tensormap(a, size = [64, 64])", "box = [...] or swizzle"},
      {"amap: in tensormap(a, box = [64, 64])", "tensor map 'amap' is passed by value"},
      {"amap: tensormap(a, box = [64, 64]) = 3", "it takes no value"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text, "// @kernel g(c: out tensor<f32>[M, N], a: tensor<bf16>[M, K], %s)\n%s", bad[i][0],
             TMAP_SIG);
    EXPECT_ERROR(text, bad[i][1]);
  }
  EXPECT_ERROR("// @kernel g(c: out tensor<f32>[M, N], a: tensor<bf16>[M, K], amap: tensormap(a, box = [8, 8]))\n"
               "__global__ void g(float *c, const __nv_bfloat16 *a, CUtensorMap *amap) {}\n",
               "a tensor map is passed by value");
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string(
      "k.cl", "// @kernel g(a: tensor<f32>[N], m: tensormap(a, box = [64]))\n__kernel void g(float *a, int m) {}\n",
      KT__LANG_OPENCL, &d);
  ASSERT_TRUE(f == NULL);
  ASSERT_CONTAINS(d.errors.s, "tensor maps are CUDA's");
  kt__diag_free(&d);
}
