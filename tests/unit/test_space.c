/* The lazy space: enumeration order, round trips, @where, pinning, overflow,
 * neighbours, rendering; and the two basic strategies over it. */
#include "harness.h"

#include <stdlib.h>

#include "lang/parser.h"
#include "search/strategies.h"
#include "space/space.h"

static int64_t a_vals[] = {1, 2, 4};
static int64_t b_vals[] = {10, 20};
static int64_t c_vals[] = {7, 8, 9, 5};
static kt__tunedim abc[] = {
    {.name = "A", .values = a_vals, .count = 3},
    {.name = "B", .values = b_vals, .count = 2},
    {.name = "C", .values = c_vals, .count = 4},
};

static kt__space *make(const kt__tunedim *dims, int n, kt__expr *const *where, int nwhere, const kt__env *sizes) {
  kt__space *s = NULL;
  kt__errbuf eb = {{0}};
  int rc = kt__space_create(dims, n, where, nwhere, sizes, &s, &eb);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "space_create: %s", eb.msg);
  return s;
}

static kt__expr *parse(const char *text) {
  kt__source src;
  kt__source_from_string("test", text, &src);
  kt__diag d;
  kt__diag_init(&d, &src);
  kt__expr *e = kt__expr_parse_text(text, (kt__loc){1, 1}, &d);
  if (!e) kt_test_fail(__FILE__, __LINE__, "parse %s: %s", text, d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  kt__source_free(&src);
  return e;
}

/* Pins the space from "NAME=VALUE ..." over its own names, as the tuner does
 * with a stage's part of kt_kernel_pin's pins: a bad spec changes nothing. */
static int space_pin(kt__space *s, const char *spec, const char *label, kt__sbuf *warn, kt__errbuf *eb) {
  kt__config_pins pins;
  kt__config_pins_init(&pins, kt__space_ndims(s));
  int rc = kt__config_parse_pins(kt__space_names(s), kt__space_ndims(s), spec, label, &pins, eb);
  if (rc == KT_OK) kt__space_pin_values(s, &pins, warn);
  kt__config_pins_free(&pins);
  return rc;
}

TEST(choice_order_dim0_slowest) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  ASSERT_EQ(kt__space_size(s), 24);
  ASSERT_EQ(kt__space_ndims(s), 3);
  ASSERT_STREQ(kt__space_name(s, 1), "B");
  ASSERT_TRUE(kt__space_names(s)[3] == NULL);
  int64_t v[3];
  kt__space_values(s, 0, v);
  ASSERT_EQ(v[0], 1);
  ASSERT_EQ(v[1], 10);
  ASSERT_EQ(v[2], 7);
  kt__space_values(s, 1, v); /* the last dim varies fastest */
  ASSERT_EQ(v[0], 1);
  ASSERT_EQ(v[1], 10);
  ASSERT_EQ(v[2], 8);
  kt__space_values(s, 4, v);
  ASSERT_EQ(v[0], 1);
  ASSERT_EQ(v[1], 20);
  ASSERT_EQ(v[2], 7);
  kt__space_values(s, 8, v);
  ASSERT_EQ(v[0], 2);
  ASSERT_EQ(v[1], 10);
  ASSERT_EQ(v[2], 7);
  kt__space_values(s, 23, v);
  ASSERT_EQ(v[0], 4);
  ASSERT_EQ(v[1], 20);
  ASSERT_EQ(v[2], 5);
  kt__space_free(s);
}

TEST(decode_encode_round_trip) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  for (uint64_t i = 0; i < kt__space_size(s); i++) {
    int ch[3];
    int64_t v[3];
    kt__space_decode(s, i, ch);
    ASSERT_EQ(kt__space_encode(s, ch), i);
    kt__space_values(s, i, v);
    for (int d = 0; d < 3; d++) ASSERT_EQ(v[d], kt__space_choice(s, d, ch[d]));
    ASSERT_EQ(kt__space_index_of(s, v), i);
  }
  int64_t absent[3] = {3, 10, 7};
  ASSERT_TRUE(kt__space_index_of(s, absent) == UINT64_MAX);
  kt__space_free(s);
}

TEST(billion_points_cost_nothing) {
  static int64_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  kt__tunedim dims[10];
  static const char *names[10] = {"D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9"};
  for (int d = 0; d < 10; d++) dims[d] = (kt__tunedim){.name = (char *)names[d], .values = vals, .count = 8};
  kt__space *s = make(dims, 10, NULL, 0, NULL);
  ASSERT_EQ(kt__space_size(s), 1073741824); /* 8^10 */
  int64_t v[10];
  kt__space_values(s, kt__space_size(s) - 1, v);
  for (int d = 0; d < 10; d++) ASSERT_EQ(v[d], 8);
  ASSERT_TRUE(kt__space_count_valid(s, 1000) == UINT64_MAX);
  kt__space_free(s);
}

TEST(overflow_is_invalid_and_names_dims) {
  static int64_t vals[256];
  for (int i = 0; i < 256; i++) vals[i] = i + 1;
  static const char *names[9] = {"T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "TILE_K"};
  kt__tunedim dims[9];
  for (int d = 0; d < 9; d++) dims[d] = (kt__tunedim){.name = (char *)names[d], .values = vals, .count = 256};
  kt__space *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__space_create(dims, 9, NULL, 0, NULL, &s, &eb), KT_INVALID);
  ASSERT_TRUE(s == NULL);
  ASSERT_CONTAINS(eb.msg, "overflow");
  ASSERT_CONTAINS(eb.msg, "T0 (256)");
  ASSERT_CONTAINS(eb.msg, "TILE_K (256)");
  /* 8 of them fit exactly: 2^64 - 1 is the largest size, 2^64 is not. */
  ASSERT_EQ(kt__space_create(dims, 8, NULL, 0, NULL, &s, &eb), KT_INVALID);
  dims[7].count = 255;
  ASSERT_EQ(kt__space_create(dims, 8, NULL, 0, NULL, &s, &eb), KT_OK);
  ASSERT_TRUE(kt__space_size(s) == (uint64_t)255 << 56);
  kt__space_free(s);
}

TEST(where_filters_count) {
  kt__expr *w[2] = {parse("A * B <= 40"), parse("C != 9")};
  kt__space *s = make(abc, 3, w, 2, NULL);
  ASSERT_EQ(kt__space_size(s), 24);
  /* A*B <= 40: (1,10) (1,20) (2,10) (2,20) (4,10) -> 5 of 6 pairs; C != 9: 3 of 4. */
  ASSERT_EQ(kt__space_count_valid(s, 1000), 15);
  int64_t v[3] = {4, 20, 7};
  ASSERT_EQ(kt__space_check(s, v, NULL), 0);
  v[1] = 10;
  ASSERT_EQ(kt__space_check(s, v, NULL), 1);
  ASSERT_FALSE(kt__space_valid_index(s, kt__space_size(s))); /* out of range */
  kt__space_free(s);
  kt__expr_free(w[0]);
  kt__expr_free(w[1]);
}

TEST(where_sees_runtime_sizes_and_reports_errors) {
  static const char *const size_names[] = {"N"};
  static const int64_t size_vals[] = {2};
  kt__env sizes = {.names = size_names, .values = size_vals, .n = 1};
  kt__expr *w[1] = {parse("A <= N")};
  kt__space *s = make(abc, 3, w, 1, &sizes);
  ASSERT_EQ(kt__space_count_valid(s, 1000), 16); /* A in {1, 2} */
  kt__space_free(s);
  kt__expr_free(w[0]);

  kt__expr *bad[1] = {parse("C / (A - 1) > 0")}; /* division by zero when A == 1 */
  s = make(abc, 3, bad, 1, NULL);
  int64_t v[3] = {1, 10, 7};
  kt__eval_error err = {{0, 0}, {0}};
  ASSERT_EQ(kt__space_check(s, v, &err), -1);
  ASSERT_TRUE(err.msg[0] != 0);
  ASSERT_FALSE(kt__space_valid_index(s, 0)); /* an error excludes */
  ASSERT_EQ(kt__space_count_valid(s, 1000), 16);
  kt__space_free(s);
  kt__expr_free(bad[0]);
}

TEST(defaults_are_first_declared_choices) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  kt__sbuf warn = {0};
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "A=4", "pins", &warn, &eb), KT_OK);
  int64_t v[3];
  kt__space_default_values(s, v);
  ASSERT_EQ(v[0], 1); /* before pinning */
  ASSERT_EQ(v[1], 10);
  ASSERT_EQ(v[2], 7);
  kt__space_free(s);
  kt__sbuf_free(&warn);
}

TEST(default_outside_where_is_invalid) {
  static const char *const size_names[] = {"N"};
  int64_t n = 2;
  kt__env sizes = {.names = size_names, .values = &n, .n = 1};
  kt__errbuf eb = {{0}};
  kt__expr *w[2] = {parse("C != 5"), parse("A * N > 2")};
  kt__space *s = make(abc, 3, w, 2, &sizes);
  /* The default A=1 B=10 C=7: 1 * 2 > 2 fails, at the second @where. */
  ASSERT_EQ(kt__space_check_default(s, "k.c", &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "k.c:1:7: error: the default configuration A=1 B=10 C=7");
  ASSERT_CONTAINS(eb.msg, "violates @where(A * N > 2)");
  ASSERT_CONTAINS(eb.msg, "e.g. A=2 B=10 C=7 (valid)");
  /* The runtime size decides: with N = 3 the default is valid. */
  n = 3;
  ASSERT_EQ(kt__space_check_default(s, "k.c", &eb), KT_OK);
  /* Pins do not move the default: it stays the reference. */
  n = 2;
  kt__sbuf warn = {0};
  ASSERT_EQ(space_pin(s, "A=4", "pins", &warn, &eb), KT_OK);
  ASSERT_EQ(kt__space_check_default(s, "k.c", &eb), KT_INVALID);
  kt__space_free(s);
  kt__expr_free(w[0]);
  kt__expr_free(w[1]);
  /* Nothing valid to suggest; and an evaluation error counts as a violation. */
  kt__expr *none[1] = {parse("A > 100")}, *err[1] = {parse("C / (A - 1) > 0")};
  s = make(abc, 3, none, 1, NULL);
  ASSERT_EQ(kt__space_check_default(s, "k.c", &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "none of the 24 configurations satisfies it");
  kt__space_free(s);
  s = make(abc, 3, err, 1, NULL);
  ASSERT_EQ(kt__space_check_default(s, "k.c", &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "cannot be evaluated there: division by zero");
  kt__space_free(s);
  kt__expr_free(none[0]);
  kt__expr_free(err[0]);
}

TEST(no_valid_names_the_pins) {
  kt__expr *w[1] = {parse("A != 4")};
  kt__space *s = make(abc, 3, w, 1, NULL);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "A=4 C=9", "pins", NULL, &eb), KT_OK);
  ASSERT_EQ(kt__space_count_valid(s, 1000), 0);
  ASSERT_EQ(kt__space_none_valid(s, "k.c", "kern", "pins", &eb), KT_NOVALID);
  ASSERT_CONTAINS(eb.msg, "k.c: error: no valid configuration: none of the 2 configurations of kernel kern left by "
                          "pins \"A=4 C=9\" satisfies @where");
  kt__space_free(s);
  kt__expr_free(w[0]);
}

TEST(pin_shrinks_space) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  kt__sbuf warn = {0};
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "  C=5   A=2 ", "pins", &warn, &eb), KT_OK);
  ASSERT_TRUE(warn.len == 0);
  ASSERT_EQ(kt__space_size(s), 2);
  ASSERT_TRUE(kt__space_is_pinned(s, 0));
  ASSERT_FALSE(kt__space_is_pinned(s, 1));
  ASSERT_EQ(kt__space_nchoices(s, 2), 1);
  int64_t v[3];
  kt__space_values(s, 1, v);
  ASSERT_EQ(v[0], 2);
  ASSERT_EQ(v[1], 20);
  ASSERT_EQ(v[2], 5);
  int64_t unpinned[3] = {1, 20, 5};
  ASSERT_TRUE(kt__space_index_of(s, unpinned) == UINT64_MAX);
  kt__space_free(s);
}

TEST(pin_unknown_name_lists_declared) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "A=1 FOO=3", "pins", NULL, &eb), KT_INVALID);
  ASSERT_STREQ(eb.msg, "unknown name FOO in pins; the kernel declares: A, B, C");
  ASSERT_FALSE(kt__space_is_pinned(s, 0)); /* a bad spec changes nothing */
  ASSERT_EQ(kt__space_size(s), 24);
  kt__space_free(s);
}

TEST(pin_outside_choices_warns) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  kt__sbuf warn = {0};
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "B=15", "pins", &warn, &eb), KT_OK);
  ASSERT_CONTAINS(warn.s, "B=15");
  ASSERT_CONTAINS(warn.s, "10, 20");
  ASSERT_EQ(kt__space_choice(s, 1, 0), 15);
  ASSERT_EQ(kt__space_size(s), 12);
  kt__space_free(s);
  kt__sbuf_free(&warn);
}

TEST(pin_bad_syntax_explains_form) {
  static const char *const bad[] = {"A", "A=", "=3", "A=x", "A=3x", "A = 3", "1A=3", "A==3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    kt__space *s = make(abc, 3, NULL, 0, NULL);
    kt__errbuf eb = {{0}};
    int rc = space_pin(s, bad[i], "pins", NULL, &eb);
    if (rc != KT_INVALID) kt_test_fail(__FILE__, __LINE__, "'%s' accepted", bad[i]);
    ASSERT_CONTAINS(eb.msg, "NAME=VALUE");
    ASSERT_EQ(kt__space_size(s), 24);
    kt__space_free(s);
  }
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "A=1 A=2", "pins", NULL, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "twice");
  ASSERT_EQ(space_pin(s, "A=-4,B=0x14", "pins", NULL, &eb), KT_OK); /* signs, hex, commas */
  ASSERT_EQ(kt__space_choice(s, 0, 0), -4);
  ASSERT_EQ(kt__space_choice(s, 1, 0), 20);
  kt__space_free(s);
}

static bool contains(const uint64_t *a, int n, uint64_t x) {
  for (int i = 0; i < n; i++)
    if (a[i] == x) return true;
  return false;
}

TEST(neighbours_step_one_choice) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  int ch[3] = {1, 0, 2};
  uint64_t i = kt__space_encode(s, ch), nb[8];
  int n = kt__space_neighbours(s, i, nb, 8);
  ASSERT_EQ(n, 5); /* A: 0 and 2; B: 1; C: 1 and 3 */
  int expect[5][3] = {{0, 0, 2}, {2, 0, 2}, {1, 1, 2}, {1, 0, 1}, {1, 0, 3}};
  for (int k = 0; k < 5; k++) ASSERT_TRUE(contains(nb, n, kt__space_encode(s, expect[k])));
  ASSERT_EQ(kt__space_neighbours(s, i, nb, 2), 2); /* MAX respected */
  kt__errbuf eb = {{0}};
  ASSERT_EQ(space_pin(s, "A=2", "pins", NULL, &eb), KT_OK);
  int pinned[3] = {0, 0, 2};
  n = kt__space_neighbours(s, kt__space_encode(s, pinned), nb, 8);
  ASSERT_EQ(n, 3); /* a pinned name does not move */
  kt__space_free(s);
}

TEST(format_and_defines) {
  kt__space *s = make(abc, 3, NULL, 0, NULL);
  int64_t v[3] = {4, 20, -1};
  kt__sbuf a = {0}, b = {0};
  kt__space_format(s, v, &a);
  kt__space_format_defines(s, v, &b);
  ASSERT_STREQ(a.s, "A=4 B=20 C=-1");
  ASSERT_STREQ(b.s, "-DA=4 -DB=20 -DC=-1");
  /* The rendering pins back to the same configuration. */
  ASSERT_EQ(space_pin(s, a.s, "pins", NULL, &(kt__errbuf){{0}}), KT_OK);
  ASSERT_EQ(kt__space_size(s), 1);
  kt__sbuf_free(&a);
  kt__sbuf_free(&b);
  kt__space_free(s);
}

/* Drains a strategy, checking it proposes only new, valid indices. */
static int drain(kt__strategy *st, const kt__space *s, uint64_t *order, int cap) {
  uint64_t buf[5];
  int total = 0, n;
  while ((n = kt__strategy_ask(st, buf, 5)) > 0) {
    for (int k = 0; k < n; k++) {
      ASSERT_TRUE(kt__space_valid_index(s, buf[k]));
      ASSERT_FALSE(contains(order, total, buf[k]));
      ASSERT_TRUE(total < cap);
      order[total++] = buf[k];
      kt__strategy_tell(st, buf[k], KT__ST_OK, 1.0);
    }
  }
  return total;
}

TEST(exhaustive_index_order_valid_only) {
  kt__expr *w[1] = {parse("A * B <= 40")};
  kt__space *s = make(abc, 3, w, 1, NULL);
  kt__strategy *st = kt__strategy_create(kt__strategy_find("exhaustive"), s, 1, 0);
  ASSERT_STREQ(kt__strategy_name(st), "exhaustive");
  uint64_t order[24];
  int n = drain(st, s, order, 24);
  ASSERT_EQ(n, 20);
  for (int k = 1; k < n; k++) ASSERT_TRUE(order[k] > order[k - 1]);
  kt__strategy_free(st);
  kt__space_free(s);
  kt__expr_free(w[0]);
}

TEST(random_no_repeats_valid_seeded) {
  kt__expr *w[1] = {parse("A * B <= 40")};
  kt__space *s = make(abc, 3, w, 1, NULL);
  uint64_t o1[24], o2[24], o3[24];
  kt__strategy *st = kt__strategy_create(&kt__strategy_random, s, 42, 0);
  ASSERT_EQ(drain(st, s, o1, 24), 20); /* all valid ones, each once */
  kt__strategy_free(st);
  st = kt__strategy_create(&kt__strategy_random, s, 42, 0);
  ASSERT_EQ(drain(st, s, o2, 24), 20);
  kt__strategy_free(st);
  st = kt__strategy_create(&kt__strategy_random, s, 43, 0);
  ASSERT_EQ(drain(st, s, o3, 24), 20);
  kt__strategy_free(st);
  int same12 = 0, same13 = 0;
  for (int k = 0; k < 20; k++) {
    same12 += o1[k] == o2[k];
    same13 += o1[k] == o3[k];
  }
  ASSERT_EQ(same12, 20); /* same seed, same order */
  ASSERT_TRUE(same13 < 20);
  kt__space_free(s);
  kt__expr_free(w[0]);
}

TEST(random_on_huge_space_is_lazy) {
  static int64_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  kt__tunedim dims[10];
  static const char *names[10] = {"D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9"};
  for (int d = 0; d < 10; d++) dims[d] = (kt__tunedim){.name = (char *)names[d], .values = vals, .count = 8};
  kt__space *s = make(dims, 10, NULL, 0, NULL);
  kt__strategy *st = kt__strategy_create(kt__strategy_find("random"), s, 7, 100);
  uint64_t got[1000];
  int n = 0;
  while (n < 1000) n += kt__strategy_ask(st, got + n, 1000 - n);
  for (int i = 0; i < n; i++) ASSERT_TRUE(got[i] < kt__space_size(s));
  uint64_t sorted[1000];
  memcpy(sorted, got, sizeof got);
  for (int i = 1; i < n; i++) /* insertion sort, then no equal neighbours */
    for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
      uint64_t t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  for (int i = 1; i < n; i++) ASSERT_TRUE(sorted[i] != sorted[i - 1]);
  kt__strategy_free(st);
  kt__space_free(s);
}

TEST(registry_lists_and_finds) {
  const char *const *names = kt__strategy_names();
  int n = 0;
  for (; names[n]; n++) ASSERT_TRUE(kt__strategy_find(names[n]) != NULL);
  ASSERT_GE(n, 2);
  ASSERT_TRUE(kt__strategy_find("nonesuch") == NULL);
  ASSERT_TRUE(kt__strategy_find(NULL) == NULL);
}

/* A configuration whose @where cannot be evaluated is
 * found, with its index, instead of being counted as excluded. */
TEST(sweep_finds_the_first_fault) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.c",
                                 "// @autotune(A in {2, 1, 4}, B in {10, 20})\n"
                                 "// @kernel k(x: tensor<f32>[N], n: i32 = B / (A - 4))\n"
                                 "// @where(B / (A - 1) > 0)\n"
                                 "void k(float *x, int n) {}\n",
                                 KT__LANG_C, &d);
  ASSERT_TRUE(f != NULL);
  const kt__kernel_decl *k = &f->kernels[0];
  static const char *const size_names[] = {"N"};
  static const int64_t size_vals[] = {8};
  kt__env sizes = {.names = size_names, .values = size_vals, .n = 1};
  kt__space *s = make(k->tune, k->ntune, k->where, k->nwhere, &sizes);
  kt__space_fault fault;
  kt__space_sweep(s, k, 1000, &fault);
  ASSERT_TRUE(fault.found);
  ASSERT_EQ(fault.index, 2); /* A=1 B=10 */
  ASSERT_STREQ(fault.what, "@where");
  ASSERT_CONTAINS(fault.err.msg, "division by zero (10 / 0)");
  /* kt__space_valid_index records it too, for the strategies' proposals. */
  ASSERT_FALSE(kt__space_first_fault(s).found);
  ASSERT_FALSE(kt__space_valid_index(s, 3));
  ASSERT_TRUE(kt__space_first_fault(s).found);
  ASSERT_EQ(kt__space_first_fault(s).index, 3);
  kt__errbuf eb = {{0}};
  int64_t values[2] = {1, 20};
  kt__env config = {kt__space_names(s), values, 2, NULL};
  fault = kt__space_first_fault(s);
  ASSERT_EQ(kt__space_fault_error(&f->src, &config, &sizes, &fault, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "k.c:3:13: error: @where: division by zero (20 / 0) at the configuration A=1 B=20 with the "
                          "sizes N=8");
  ASSERT_CONTAINS(eb.msg, "\n// @where(B / (A - 1) > 0)\n            ^");
  kt__space_free(s);
  /* Without A=1, the scalar binding fails at A=4. */
  kt__config_pins pins;
  kt__config_pins_init(&pins, 2);
  pins.set[0] = true, pins.values[0] = 4;
  s = make(k->tune, k->ntune, k->where, k->nwhere, &sizes);
  kt__space_pin_values(s, &pins, NULL);
  ASSERT_EQ(kt__space_sweep(s, k, 1000, &fault), 0);
  ASSERT_TRUE(fault.found);
  ASSERT_STREQ(fault.what, "@kernel");
  kt__config_pins_free(&pins);
  kt__space_free(s);
  kt__file_free(f);
  kt__diag_free(&d);
}
