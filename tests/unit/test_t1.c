/* T1 files: the Python expressions of restrictions and sizes as ktune's
 * expressions, and what cannot be translated named. */
#include "harness.h"
#include "t1/t1.h"

#include <stdlib.h>

static const char *const names[] = {"block_size_x", "filter_width"};
static int64_t bx[] = {16, 32, 64}, fw[] = {15, 3, 7};
static int64_t *const values[] = {bx, fw};
static const int counts[] = {3, 3};

static void expect(const char *python, const char *want) {
  char why[256];
  char *got = kt__t1_expr(python, names, values, counts, 2, why);
  if (!got) kt_test_fail(__FILE__, __LINE__, "%s: not translated: %s", python, why);
  ASSERT_STREQ(got, want);
  free(got);
}

static void refuse(const char *python, const char *needle) {
  char why[256];
  char *got = kt__t1_expr(python, names, values, counts, 2, why);
  if (got) kt_test_fail(__FILE__, __LINE__, "%s: translated to %s, expected a refusal", python, got);
  ASSERT_CONTAINS(why, needle);
}

TEST(expressions_translate) {
  expect("block_size_x*2<=1024", "(block_size_x * 2 <= 1024)");
  expect("a==0 or b % 32 != 0", "(a == 0) || (b % 32 != 0)");
  expect("not a and b", "!(a) && b");
  expect("x // 2 + y", "x / 2 + y");
  expect("32 <= a * b <= 1024", "( (32 <= a * b) && (a * b <= 1024) )");
  expect("a < b < c < d", "( (a < b) && (b < c) && (c < d) )");
  expect("ProblemSize[0]*ProblemSize[1]", "PROBLEM_SIZE_X * PROBLEM_SIZE_Y");
  expect("(ProblemSize[0]+max(filter_width)-1)", "(PROBLEM_SIZE_X + 15 - 1)");
  expect("min(filter_width) * max(block_size_x)", "3 * 64");
  expect("max(a, b+1)", "max(a, b + 1)");
  expect("a**2", "((a) * (a))");
  expect("True", "1");
  expect("-a", "-a");
}

TEST(untranslatable_expressions_are_named) {
  refuse("a / 2 == 1", "'/' is true division");
  refuse("a == 1.5", "floating-point");
  refuse("sqrt(a) > 2", "sqrt() has no ktune equivalent");
  refuse("a ** b", "'**'");
  refuse("a == 'x'", "unexpected");
  refuse("(a + 1", "')' expected");
}
