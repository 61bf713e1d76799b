/* The configuration's vocabulary: names and defaults of both stages from a
 * declaration, the tokenizer and formatter of "NAME=VALUE" lists (round
 * trips, malformed text), the single-item split, and --autotune pins split
 * by stage. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "handles/context.h"
#include "lang/parser.h"

/* Two stages: @autotune A, B and @cluster CLUSTER_X. */
static const char *const SOURCE = "// @autotune(A in [4, 1, 2], B in [16, 64])\n"
                                  "// @cluster(CLUSTER_X in [1, 8])\n"
                                  "// @kernel k(x: out tensor<f32>[N])\n"
                                  "// @dims(N = 4)\n"
                                  "__global__ void k(float *x) {}\n";

static kt__file *parse(const char *source) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("k.cu", source, KT__LANG_CUDA, &d);
  if (!f) kt_test_fail(__FILE__, __LINE__, "parse: %s", d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  return f;
}

static kt__config config_of(const kt__file *f) {
  kt__config c;
  kt__config_init(&c, kt__file_kernel(f, NULL, "the name", NULL));
  return c;
}

TEST(names_of_both_stages_with_defaults) {
  kt__file *f = parse(SOURCE);
  kt__config c = config_of(f);
  ASSERT_EQ(c.n, 3);
  ASSERT_EQ(c.ntune, 2);
  ASSERT_STREQ(c.names[0], "A");
  ASSERT_STREQ(c.names[1], "B");
  ASSERT_STREQ(c.names[2], "CLUSTER_X");
  ASSERT_TRUE(c.names[3] == NULL);
  ASSERT_EQ(c.defaults[0], 4); /* the first choice, as written */
  ASSERT_EQ(c.defaults[1], 16);
  ASSERT_EQ(c.defaults[2], 1);
  ASSERT_EQ(kt__config_stage_first(&c, 0), 0);
  ASSERT_EQ(kt__config_stage_count(&c, 0), 2);
  ASSERT_EQ(kt__config_stage_first(&c, 1), 2);
  ASSERT_EQ(kt__config_stage_count(&c, 1), 1);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__config_check_size(&c, "k.cu", "k", &eb), KT_OK);
  kt__config_free(&c);
  kt__file_free(f);
}

TEST(too_many_names_is_bad_input) {
  kt__sbuf src = {0};
  kt__sbuf_printf(&src, "// @autotune(");
  for (int i = 0; i <= KT__MAX_NAMES; i++) kt__sbuf_printf(&src, "%sP%d in [1]", i ? ", " : "", i);
  kt__sbuf_printf(&src, ")\n// @kernel k(x: out tensor<f32>[N])\n// @dims(N = 4)\n__global__ void k(float *x) {}\n");
  kt__file *f = parse(src.s);
  kt__config c = config_of(f);
  ASSERT_EQ(c.n, KT__MAX_NAMES + 1);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__config_check_size(&c, "k.cu", "k", &eb), KT_INVALID);
  ASSERT_STREQ(eb.msg, "k.cu: error: kernel k declares 65 tuned names; ktune handles at most 64");
  kt__config_free(&c);
  kt__file_free(f);
  kt__sbuf_free(&src);
}

/* The items of TEXT as "name|value" ("name|-" without '='), one per line. */
static void items(const char *text, kt__sbuf *out) {
  kt__config_item it;
  for (const char *p = text; kt__config_next(&p, &it);) {
    kt__sbuf_printf(out, "%.*s|", (int)it.name_len, it.text);
    if (it.value) kt__sbuf_printf(out, "%.*s\n", (int)it.value_len, it.value);
    else kt__sbuf_printf(out, "-\n");
  }
  if (!out->s) kt__sbuf_append(out, "", 0);
}

TEST(tokenizer_splits_items) {
  kt__sbuf b = {0};
  items("  A=1\tB=-2,C=0x10 ,, D  E= =3 F==4 ", &b);
  ASSERT_STREQ(b.s, "A|1\nB|-2\nC|0x10\nD|-\nE|\n|3\nF|=4\n");
  kt__sbuf_free(&b);
  kt__sbuf empty = {0};
  items(" \t, ", &empty);
  ASSERT_STREQ(empty.s, "");
  kt__sbuf_free(&empty);
}

TEST(split_takes_the_whole_text_as_one_item) {
  kt__config_item it;
  ASSERT_TRUE(kt__config_split("N=2 * 1024, 3", &it)); /* white space and commas stay in the value */
  ASSERT_EQ(it.name_len, 1);
  ASSERT_STREQ(it.value, "2 * 1024, 3");
  ASSERT_EQ(it.value_len, strlen("2 * 1024, 3"));
  ASSERT_TRUE(kt__config_split("x=a=b.bin:f32", &it)); /* the first '=' ends the name */
  ASSERT_EQ(it.name_len, 1);
  ASSERT_STREQ(it.value, "a=b.bin:f32");
  static const char *const bad[] = {"", "N", "=4", "N=", "="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (kt__config_split(bad[i], &it)) kt_test_fail(__FILE__, __LINE__, "'%s' split", bad[i]);
}

static bool int_of(const char *text, int64_t *v) {
  kt__config_item it;
  const char *p = text;
  if (!kt__config_next(&p, &it)) kt_test_fail(__FILE__, __LINE__, "no item in '%s'", text);
  return kt__config_item_int(&it, v);
}

TEST(item_values_as_integers) {
  int64_t v = 0;
  ASSERT_TRUE(int_of("A=42", &v));
  ASSERT_EQ(v, 42);
  ASSERT_TRUE(int_of("A=-4", &v));
  ASSERT_EQ(v, -4);
  ASSERT_TRUE(int_of("A=0x14", &v));
  ASSERT_EQ(v, 20);
  ASSERT_TRUE(int_of("A=-9223372036854775808", &v));
  ASSERT_TRUE(v == INT64_MIN);
  static const char *const bad[] = {"A", "A=", "A= 3", "A=x", "A=3x", "A==3", "A=0x", "A=99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = 7;
    if (int_of(bad[i], &v)) kt_test_fail(__FILE__, __LINE__, "'%s' read as %lld", bad[i], (long long)v);
    ASSERT_EQ(v, 7); /* untouched */
  }
}

TEST(format_and_read_round_trip) {
  kt__file *f = parse(SOURCE);
  kt__config c = config_of(f);
  int64_t values[] = {2, -64, INT64_MAX};
  kt__sbuf text = {0}, flags = {0}, none = {0};
  kt__config_format(c.names, values, c.n, "", &text);
  ASSERT_STREQ(text.s, "A=2 B=-64 CLUSTER_X=9223372036854775807");
  kt__config_format(c.names, values, c.n, "-D", &flags);
  ASSERT_STREQ(flags.s, "-DA=2 -DB=-64 -DCLUSTER_X=9223372036854775807");
  kt__config_format(c.names, values, 0, "", &none);
  ASSERT_STREQ(none.s, ""); /* a string, not NULL */
  int64_t back[3];
  memcpy(back, c.defaults, sizeof back);
  kt__config_read(&c, text.s, back);
  for (int i = 0; i < 3; i++) ASSERT_EQ(back[i], values[i]);
  /* Every item reads back to the name and value it was made of. */
  kt__config_item it;
  int i = 0;
  for (const char *p = text.s; kt__config_next(&p, &it); i++) {
    int64_t v;
    ASSERT_EQ(kt__config_find(c.names, c.n, &it), i);
    ASSERT_TRUE(kt__config_item_int(&it, &v));
    ASSERT_EQ(v, values[i]);
  }
  ASSERT_EQ(i, 3);
  kt__sbuf_free(&text);
  kt__sbuf_free(&flags);
  kt__sbuf_free(&none);
  kt__config_free(&c);
  kt__file_free(f);
}

TEST(read_keeps_what_text_lacks_and_skips_malformed_items) {
  kt__file *f = parse(SOURCE);
  kt__config c = config_of(f);
  int64_t v[3];
  memcpy(v, c.defaults, sizeof v);
  kt__config_read(&c, "Q=5 B B=x CLUSTER_X=8 A==2", v);
  ASSERT_EQ(v[0], 4); /* A==2 is no integer */
  ASSERT_EQ(v[1], 16);
  ASSERT_EQ(v[2], 8);
  kt__config_read(&c, "", v);
  ASSERT_EQ(v[2], 8);
  kt__config_free(&c);
  kt__file_free(f);
}

TEST(pins_split_by_stage) {
  kt__file *f = parse(SOURCE);
  kt__config c = config_of(f);
  kt__config_pins pins;
  kt__config_pins_init(&pins, c.n);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__config_parse_pins(c.names, c.n, "CLUSTER_X=8, A=1", "pins", &pins, &eb), KT_OK);
  kt__config_pins tune = kt__config_pins_stage(&c, &pins, 0), cluster = kt__config_pins_stage(&c, &pins, 1);
  ASSERT_TRUE(tune.set[0]);
  ASSERT_EQ(tune.values[0], 1);
  ASSERT_FALSE(tune.set[1]);
  ASSERT_TRUE(cluster.set[0]);
  ASSERT_EQ(cluster.values[0], 8);
  /* A new spec replaces the old one. */
  ASSERT_EQ(kt__config_parse_pins(c.names, c.n, "B=64", "pins", &pins, &eb), KT_OK);
  ASSERT_FALSE(pins.set[0]);
  ASSERT_TRUE(pins.set[1]);
  ASSERT_FALSE(pins.set[2]);
  kt__config_pins_free(&pins);
  kt__config_free(&c);
  kt__file_free(f);
}

/* Each bad spec: its message, and the pins left as they were (B=64). */
TEST(bad_pins_say_what_where_and_how_to_fix) {
  kt__file *f = parse(SOURCE);
  kt__config c = config_of(f);
  kt__config_pins pins;
  kt__config_pins_init(&pins, c.n);
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__config_parse_pins(c.names, c.n, "B=64", "pins", &pins, &eb), KT_OK);
  static const struct {
    const char *spec, *msg;
  } bad[] = {
      {"A=1 B", "bad pins item 'B': expected NAME=VALUE pairs separated by spaces, with VALUE an integer, "
                "as in \"BLOCK=256 VEC=4\""},
      {"A=two", "bad pins item 'A=two': expected NAME=VALUE"},
      {"1A=3", "bad pins item '1A=3': expected NAME=VALUE"},
      {"=3", "bad pins item '=3': expected NAME=VALUE"},
      {"A=99999999999999999999", "bad pins item 'A=99999999999999999999': expected NAME=VALUE"},
      {"CLUSTER_Y=2", "unknown name CLUSTER_Y in pins; the kernel declares: A, B, CLUSTER_X"},
      {"A=1 CLUSTER_X=2 A=2", "A is pinned twice in pins"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (kt__config_parse_pins(c.names, c.n, bad[i].spec, "pins", &pins, &eb) != KT_INVALID)
      kt_test_fail(__FILE__, __LINE__, "'%s' accepted", bad[i].spec);
    ASSERT_CONTAINS(eb.msg, bad[i].msg);
    ASSERT_FALSE(pins.set[0]);
    ASSERT_TRUE(pins.set[1]);
    ASSERT_EQ(pins.values[1], 64);
    ASSERT_FALSE(pins.set[2]);
  }
  ASSERT_EQ(kt__config_parse_pins(NULL, 0, "A=1", "pins", &pins, &eb), KT_INVALID);
  ASSERT_STREQ(eb.msg, "unknown name A in pins; the kernel declares: (no tuned names)");
  kt__config_pins_free(&pins);
  kt__config_free(&c);
  kt__file_free(f);
}

/* `ktune space` takes the @cluster pins `ktune tune` takes (it refused them
 * once). Both stages' pins reach the spaces, and the message of a bad
 * one names the file and the kernel. */
TEST(space_takes_pins_of_both_stages) {
  kt_options o = {.no_db = 1, .quiet = 1};
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  kt_kernel *k;
  ASSERT_EQ(kt_kernel_load_string(ctx, "k.cu", SOURCE, "cu", NULL, &k), KT_OK);
  ASSERT_EQ(kt_kernel_pin(k, "CLUSTER_X=8 B=64"), KT_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  ASSERT_EQ(kt_space_print(k, out, 0), KT_OK);
  fclose(out);
  ASSERT_CONTAINS(text, "B            64   (pinned)");
  ASSERT_CONTAINS(text, "CLUSTER_X    8   (pinned)");
  ASSERT_CONTAINS(text, "size: 3 configurations");
  ASSERT_CONTAINS(text, "cluster space 1");
  free(text);
  ASSERT_EQ(kt_kernel_pin(k, "CLUSTER_X=eight"), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "k.cu: error: kernel k: bad pins item 'CLUSTER_X=eight': expected NAME=VALUE");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* Messages name sizes and pins in the library's words, or as the caller
 * labels them (the command line: its flags). */
TEST(messages_name_inputs_by_labels) {
  kt_options o = {.no_db = 1, .quiet = 1};
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  kt_kernel *k;
  ASSERT_EQ(kt_kernel_load_string(ctx, "k.cu", SOURCE, "cu", NULL, &k), KT_OK);
  ASSERT_EQ(kt_kernel_set_size_arg(k, "N=3x"), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "size N=3x: bad value\nsize:1:1: error: malformed number '3x'");
  ASSERT_EQ(kt_kernel_set_size_arg(k, "N"), KT_INVALID);
  ASSERT_STREQ(kt_errmsg(ctx), "size \"N\": expected NAME=VALUE, e.g. size N=4096");
  ASSERT_EQ(kt_kernel_pin(k, "Q=1"), KT_INVALID);
  ASSERT_STREQ(kt_errmsg(ctx), "k.cu: error: kernel k: unknown name Q in pins; the kernel declares: A, B, CLUSTER_X");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  o.labels = (kt_labels){.size = "--dim", .pin = "--autotune"};
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  ASSERT_EQ(kt_kernel_load_string(ctx, "k.cu", SOURCE, "cu", NULL, &k), KT_OK);
  ASSERT_EQ(kt_kernel_set_size(k, "N", 0), KT_INVALID);
  ASSERT_STREQ(kt_errmsg(ctx), "--dim N=0: sizes must be positive");
  ASSERT_EQ(kt_kernel_pin(k, "A=1 A=2"), KT_INVALID);
  ASSERT_STREQ(kt_errmsg(ctx), "k.cu: error: kernel k: A is pinned twice in --autotune");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}
