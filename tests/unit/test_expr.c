/* The annotation lexer and the integer expression language: tokens,
 * precedence, every function, checked evaluation and its error places. */
#include "harness.h"
#include "lang/lexer.h"

#include <stdlib.h>

static const kt__loc AT = {1, 1};

/* Parses TEXT as a standalone expression; on failure returns NULL and, when
 * MSG is given, copies the diagnostics there. */
static kt__expr *parse(const char *text, kt__sbuf *msg) {
  kt__source src;
  kt__source_from_string("expr", text, &src);
  kt__diag d;
  kt__diag_init(&d, &src);
  kt__expr *e = kt__expr_parse_text(text, AT, &d);
  if (msg && d.errors.s) kt__sbuf_printf(msg, "%s", d.errors.s);
  if (!e && !msg && d.errors.s) fprintf(stderr, "%s", d.errors.s);
  kt__diag_free(&d);
  kt__source_free(&src);
  return e;
}

/* Evaluates TEXT with N=100, M=7, Z=0; the expression must parse and evaluate. */
static int64_t eval(const char *text) {
  static const char *const names[] = {"N", "M", "Z"};
  static const int64_t values[] = {100, 7, 0};
  kt__env env = {names, values, 3, NULL};
  kt__expr *e = parse(text, NULL);
  if (!e) kt_test_fail(__FILE__, __LINE__, "could not parse %s", text);
  int64_t v = 0;
  kt__eval_error err;
  if (kt__expr_eval(e, &env, &v, &err) != 0)
    kt_test_fail(__FILE__, __LINE__, "could not evaluate %s: %s", text, err.msg);
  kt__expr_free(e);
  return v;
}

/* Evaluates TEXT, which must parse, expecting an evaluation error. */
static kt__eval_error eval_fails(const char *text) {
  kt__expr *e = parse(text, NULL);
  if (!e) kt_test_fail(__FILE__, __LINE__, "could not parse %s", text);
  int64_t v = 0;
  kt__eval_error err;
  memset(&err, 0, sizeof err);
  if (kt__expr_eval(e, NULL, &v, &err) == 0)
    kt_test_fail(__FILE__, __LINE__, "%s evaluated to %lld, expected an error", text, (long long)v);
  kt__expr_free(e);
  return err;
}

/* The diagnostics of an expression that must not parse. */
static char *parse_error(const char *text) {
  kt__sbuf msg = {0};
  kt__expr *e = parse(text, &msg);
  if (e) kt_test_fail(__FILE__, __LINE__, "%s parsed, expected an error", text);
  return msg.s ? msg.s : kt__xstrdup("");
}

static char *printed(const char *text) {
  kt__expr *e = parse(text, NULL);
  ASSERT_TRUE(e != NULL);
  kt__sbuf out = {0};
  kt__expr_print(e, &out);
  kt__expr_free(e);
  return out.s;
}

TEST(lexer_tokens) {
  const char *text = "@autotune(X in [0x10, 256]) <<>><=>===!=&&||!:%-1.5e-3 _a9";
  kt__segment seg = {text, strlen(text), {3, 5}};
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__lexer lx;
  kt__lex_init(&lx, &seg, 1, &d);
  static const kt__tok_kind want[] = {
      KT__T_AT,      KT__T_IDENT, KT__T_LPAREN,   KT__T_IDENT,  KT__T_IDENT, KT__T_LBRACKET, KT__T_INT,
      KT__T_COMMA,   KT__T_INT,   KT__T_RBRACKET, KT__T_RPAREN, KT__T_SHL,   KT__T_SHR,      KT__T_LE,
      KT__T_GE,      KT__T_EQ,    KT__T_NE,       KT__T_ANDAND, KT__T_OROR,  KT__T_NOT,      KT__T_COLON,
      KT__T_PERCENT, KT__T_MINUS, KT__T_FLOAT,    KT__T_IDENT,  KT__T_EOF};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    if (lx.tok.kind != want[i])
      kt_test_fail(__FILE__, __LINE__, "token %zu: kind %d, expected %d", i, lx.tok.kind, want[i]);
    if (i == 6) ASSERT_EQ(lx.tok.ival, 16);
    if (i == 8) ASSERT_EQ(lx.tok.ival, 256);
    if (i == 23) ASSERT_NEAR(lx.tok.fval, 1.5e-3, 1e-12);
    kt__lex_next(&lx);
  }
  ASSERT_EQ(d.nerrors, 0);
  kt__diag_free(&d);
}

TEST(lexer_locations_across_segments) {
  kt__segment segs[2] = {{"@grid(N,", 8, {4, 4}}, {"  M)", 4, {5, 3}}};
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__lexer lx;
  kt__lex_init(&lx, segs, 2, &d);
  ASSERT_EQ(lx.tok.loc.line, 4);
  ASSERT_EQ(lx.tok.loc.col, 4);
  for (int i = 0; i < 3; i++) kt__lex_next(&lx);
  ASSERT_TRUE(kt__tok_is(&lx.tok, "N"));
  ASSERT_EQ(lx.tok.loc.col, 10);
  kt__lex_next(&lx);
  kt__lex_next(&lx);
  ASSERT_TRUE(kt__tok_is(&lx.tok, "M"));
  ASSERT_EQ(lx.tok.loc.line, 5);
  ASSERT_EQ(lx.tok.loc.col, 5);
  ASSERT_EQ(kt__lex_peek(&lx)->kind, KT__T_RPAREN);
  ASSERT_TRUE(kt__tok_is(&lx.tok, "M")); /* peeking does not advance */
  kt__diag_free(&d);
}

TEST(lexer_trailing_comment_ends_segment) {
  const char *text = "@block(B) // threads per block";
  kt__segment seg = {text, strlen(text), {1, 1}};
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__lexer lx;
  kt__lex_init(&lx, &seg, 1, &d);
  for (int i = 0; i < 5; i++) kt__lex_next(&lx);
  ASSERT_EQ(lx.tok.kind, KT__T_EOF);
  ASSERT_EQ(d.nerrors, 0);
  kt__diag_free(&d);
}

TEST(lexer_bad_tokens) {
  char *m = parse_error("N $ 2");
  ASSERT_CONTAINS(m, "expr:1:3: error: unexpected character '$'");
  free(m);
  m = parse_error("99999999999999999999");
  ASSERT_CONTAINS(m, "does not fit in 64 bits");
  free(m);
  m = parse_error("12ab + 1");
  ASSERT_CONTAINS(m, "malformed number '12ab'");
  free(m);
}

TEST(literals) {
  ASSERT_EQ(eval("42"), 42);
  ASSERT_EQ(eval("0x1F"), 31);
  ASSERT_EQ(eval("0"), 0);
  ASSERT_EQ(eval("9223372036854775807"), INT64_MAX);
  ASSERT_EQ(eval("-9223372036854775807 - 1"), INT64_MIN);
}

TEST(names) {
  ASSERT_EQ(eval("N"), 100);
  ASSERT_EQ(eval("N * M + Z + 7"), 707);
}

TEST(env_parent_chain) {
  static const char *const inner_names[] = {"A"};
  static const int64_t inner_values[] = {3};
  static const char *const outer_names[] = {"A", "B"};
  static const int64_t outer_values[] = {100, 5};
  kt__env outer = {outer_names, outer_values, 2, NULL};
  kt__env inner = {inner_names, inner_values, 1, &outer};
  kt__expr *e = parse("A * B", NULL);
  int64_t v;
  kt__eval_error err;
  ASSERT_EQ(kt__expr_eval(e, &inner, &v, &err), 0);
  ASSERT_EQ(v, 15); /* the inner A shadows the outer one */
  kt__expr_free(e);
}

TEST(precedence) {
  ASSERT_EQ(eval("2 + 3 * 4"), 14);
  ASSERT_EQ(eval("(2 + 3) * 4"), 20);
  ASSERT_EQ(eval("10 - 4 - 3"), 3);
  ASSERT_EQ(eval("100 / 10 / 5"), 2);
  ASSERT_EQ(eval("1 << 2 + 1"), 8);
  ASSERT_EQ(eval("1 + 2 < 4"), 1);
  ASSERT_EQ(eval("1 < 2 == 1"), 1);
  ASSERT_EQ(eval("0 || 1 && 0"), 0);
  ASSERT_EQ(eval("1 || 0 && 0"), 1);
  ASSERT_EQ(eval("-2 * 3"), -6);
  ASSERT_EQ(eval("!0 + 1"), 2);
  ASSERT_EQ(eval("- -5"), 5);
  ASSERT_EQ(eval("+5"), 5);
  ASSERT_EQ(eval("7 % 4 * 2"), 6);
}

TEST(operators) {
  ASSERT_EQ(eval("7 / 2"), 3);
  ASSERT_EQ(eval("-7 / 2"), -3);
  ASSERT_EQ(eval("7 % 3"), 1);
  ASSERT_EQ(eval("1 << 62"), (int64_t)1 << 62);
  ASSERT_EQ(eval("1024 >> 3"), 128);
  ASSERT_EQ(eval("-8 >> 1"), -4);
  ASSERT_EQ(eval("-1 >> 5"), -1);
  ASSERT_EQ(eval("3 <= 3"), 1);
  ASSERT_EQ(eval("3 < 3"), 0);
  ASSERT_EQ(eval("4 >= 5"), 0);
  ASSERT_EQ(eval("4 > 3"), 1);
  ASSERT_EQ(eval("4 != 4"), 0);
  ASSERT_EQ(eval("4 == 4"), 1);
  ASSERT_EQ(eval("!7"), 0);
  ASSERT_EQ(eval("2 && 3"), 1);
  ASSERT_EQ(eval("0 || 0"), 0);
}

TEST(short_circuit) {
  /* The right side would divide by zero, but is never evaluated. */
  ASSERT_EQ(eval("Z != 0 && N / Z > 1"), 0);
  ASSERT_EQ(eval("Z == 0 || N / Z > 1"), 1);
}

TEST(functions) {
  ASSERT_EQ(eval("cdiv(N, 7)"), 15);
  ASSERT_EQ(eval("cdiv(14, 7)"), 2);
  ASSERT_EQ(eval("cdiv(0, 7)"), 0);
  ASSERT_EQ(eval("cdiv(-7, 2)"), -3);
  ASSERT_EQ(eval("cdiv(7, -2)"), -3);
  ASSERT_EQ(eval("cdiv(-7, -2)"), 4);
  ASSERT_EQ(eval("min(3, -4)"), -4);
  ASSERT_EQ(eval("max(3, -4)"), 3);
  ASSERT_EQ(eval("log2(1)"), 0);
  ASSERT_EQ(eval("log2(1024)"), 10);
  ASSERT_EQ(eval("log2(1023)"), 9);
  ASSERT_EQ(eval("is_pow2(64)"), 1);
  ASSERT_EQ(eval("is_pow2(96)"), 0);
  ASSERT_EQ(eval("is_pow2(0)"), 0);
  ASSERT_EQ(eval("is_pow2(-4)"), 0);
  ASSERT_EQ(eval("max(min(N, 50), cdiv(M, 2)) * 2"), 100);
}

TEST(function_errors) {
  char *m = parse_error("foo(1)");
  ASSERT_CONTAINS(m, "expr:1:1: error: unknown function 'foo'");
  free(m);
  m = parse_error("min(1)");
  ASSERT_CONTAINS(m, "min takes 2 arguments, not 1");
  free(m);
  m = parse_error("log2(1, 2)");
  ASSERT_CONTAINS(m, "log2 takes 1 argument, not 2");
  free(m);
  m = parse_error("max(1 2)");
  ASSERT_CONTAINS(m, "expr:1:7: error: expected ',' or ')'");
  free(m);
}

TEST(overflow_is_an_error) {
  kt__eval_error err = eval_fails("9223372036854775807 + 1");
  ASSERT_CONTAINS(err.msg, "overflow");
  ASSERT_EQ(err.loc.col, 21);
  err = eval_fails("3037000500 * 3037000500");
  ASSERT_CONTAINS(err.msg, "overflow");
  err = eval_fails("-9223372036854775807 - 2");
  ASSERT_CONTAINS(err.msg, "overflow");
  err = eval_fails("-(-9223372036854775807 - 1)");
  ASSERT_CONTAINS(err.msg, "overflow");
  err = eval_fails("(-9223372036854775807 - 1) / -1");
  ASSERT_CONTAINS(err.msg, "overflow");
  err = eval_fails("3 << 62");
  ASSERT_CONTAINS(err.msg, "overflow");
}

TEST(division_by_zero) {
  kt__eval_error err = eval_fails("1 + 10 / 0");
  ASSERT_CONTAINS(err.msg, "division by zero");
  ASSERT_EQ(err.loc.line, 1);
  ASSERT_EQ(err.loc.col, 8);
  err = eval_fails("10 % (2 - 2)");
  ASSERT_CONTAINS(err.msg, "modulo by zero");
  ASSERT_EQ(err.loc.col, 4);
  err = eval_fails("cdiv(5, 0)");
  ASSERT_CONTAINS(err.msg, "division by zero in cdiv");
  err = eval_fails("log2(0)");
  ASSERT_CONTAINS(err.msg, "must be positive");
}

TEST(shift_out_of_range) {
  kt__eval_error err = eval_fails("1 << 63");
  ASSERT_CONTAINS(err.msg, "shift by 63 is out of range");
  ASSERT_EQ(err.loc.col, 3);
  err = eval_fails("1 >> -1");
  ASSERT_CONTAINS(err.msg, "shift by -1 is out of range");
  err = eval_fails("1 << 64");
  ASSERT_CONTAINS(err.msg, "out of range");
}

TEST(unknown_name_at_eval) {
  kt__eval_error err = eval_fails("2 * FOO");
  ASSERT_STREQ(err.msg, "unknown name 'FOO'");
  ASSERT_EQ(err.loc.col, 5);
}

TEST(syntax_errors) {
  char *m = parse_error("(1 + 2");
  ASSERT_CONTAINS(m, "expr:1:7: error: expected ')' but found end of line");
  free(m);
  m = parse_error("1 +");
  ASSERT_CONTAINS(m, "expected an expression but found end of line");
  free(m);
  m = parse_error("1 2");
  ASSERT_CONTAINS(m, "expr:1:3: error: expected an operator or the end of the expression but found '2'");
  free(m);
  m = parse_error("1.5 * N");
  ASSERT_CONTAINS(m, "non-integer value 1.5");
  free(m);
}

TEST(error_shows_line_and_caret) {
  char *m = parse_error("N + * 2");
  ASSERT_STREQ(m, "expr:1:5: error: expected an expression but found '*'\nN + * 2\n    ^\n");
  free(m);
}

TEST(deep_nesting_is_refused) {
  size_t n = 5000;
  char *text = kt__xmalloc(2 * n + 2);
  memset(text, '(', n);
  text[n] = '1';
  memset(text + n + 1, ')', n);
  text[2 * n + 1] = 0;
  char *m = parse_error(text);
  ASSERT_CONTAINS(m, "nested too deeply (more than 200 levels)");
  free(m);
  memset(text, '-', n);
  m = parse_error(text);
  ASSERT_CONTAINS(m, "nested too deeply");
  free(m);
  free(text);
  /* 150 levels are fine */
  char ok[400];
  memset(ok, '(', 150);
  ok[150] = '7';
  memset(ok + 151, ')', 150);
  ok[301] = 0;
  ASSERT_EQ(eval(ok), 7);
}

TEST(long_chain_is_refused) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "1");
  for (int i = 0; i < 3000; i++) kt__sbuf_printf(&b, "+1");
  char *m = parse_error(b.s);
  ASSERT_CONTAINS(m, "expression too long");
  free(m);
  kt__sbuf_free(&b);
  kt__sbuf_printf(&b, "1");
  for (int i = 0; i < 500; i++) kt__sbuf_printf(&b, "+1");
  ASSERT_EQ(eval(b.s), 501);
  kt__sbuf_free(&b);
}

TEST(print_round_trip) {
  char *s = printed("a + b * c");
  ASSERT_STREQ(s, "a + b * c");
  free(s);
  s = printed("(a + b) * c");
  ASSERT_STREQ(s, "(a + b) * c");
  free(s);
  s = printed("a - (b - c)");
  ASSERT_STREQ(s, "a - (b - c)");
  free(s);
  s = printed("((a - b)) - c");
  ASSERT_STREQ(s, "a - b - c");
  free(s);
  s = printed("-(a+1) << cdiv(N,  B*V) && !is_pow2(x)");
  ASSERT_STREQ(s, "-(a + 1) << cdiv(N, B * V) && !is_pow2(x)");
  free(s);
}

static void collect(void *ud, const char *name, kt__loc at) {
  kt__sbuf *b = ud;
  kt__sbuf_printf(b, "%s@%d ", name, at.col);
}

TEST(visit_names) {
  kt__expr *e = parse("N * max(M, N) + 2", NULL);
  kt__sbuf b = {0};
  kt__expr_visit_names(e, collect, &b);
  ASSERT_STREQ(b.s, "N@1 M@9 N@12 ");
  ASSERT_EQ(kt__expr_loc(e).col, 15);
  kt__sbuf_free(&b);
  kt__expr_free(e);
}

/* Random token soup: every string is parsed or refused with a message, and
 * whatever parses evaluates or fails cleanly. */
TEST(fuzz_random_expressions) {
  static const char *const pieces[] = {
      "N",  "M",  "Z",  "1",  "0", "-", "+", "*",     "/",    "%",     "<<",       ">>", "<",  ">=",
      "==", "!=", "&&", "||", "!", "(", ")", "cdiv(", "min(", "log2(", "is_pow2(", ",",  "63", "9223372036854775807",
      " "};
  static const char *const names[] = {"N", "M", "Z"};
  static const int64_t values[] = {INT64_MAX, -5, 0};
  kt__env env = {names, values, 3, NULL};
  uint64_t state = 99;
  int parsed = 0;
  for (int iter = 0; iter < 5000; iter++) {
    kt__sbuf b = {0};
    kt__sbuf_append(&b, "", 0);
    int len = 1 + (int)((state >> 40) % 12);
    for (int i = 0; i < len; i++) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      kt__sbuf_printf(&b, "%s", pieces[(state >> 33) % (sizeof pieces / sizeof pieces[0])]);
    }
    kt__diag d;
    kt__diag_init(&d, NULL);
    kt__expr *e = kt__expr_parse_text(b.s, AT, &d);
    if (e) {
      int64_t v;
      kt__eval_error err;
      err.msg[0] = 0;
      if (kt__expr_eval(e, &env, &v, &err) != 0) ASSERT_TRUE(err.msg[0] != 0);
      parsed++;
    } else {
      ASSERT_TRUE(d.nerrors > 0);
    }
    kt__expr_free(e);
    kt__diag_free(&d);
    kt__sbuf_free(&b);
  }
  ASSERT_TRUE(parsed > 100);
}

/* -1 and the message when a constant part of TEXT cannot be evaluated. */
static int constants(const char *text, kt__eval_error *err) {
  kt__expr *e = parse(text, NULL);
  if (!e) kt_test_fail(__FILE__, __LINE__, "could not parse %s", text);
  memset(err, 0, sizeof *err);
  int rc = kt__expr_check_constants(e, err);
  kt__expr_free(e);
  return rc;
}

TEST(constant_parts_are_checked) {
  kt__eval_error err;
  ASSERT_EQ(constants("N > 0 && (1 << 70) > N", &err), -1);
  ASSERT_CONTAINS(err.msg, "shift by 70 is out of range");
  ASSERT_EQ(err.loc.col, 13);
  ASSERT_EQ(constants("N / 0 > 1", &err), -1); /* whatever N is */
  ASSERT_CONTAINS(err.msg, "division by zero (N / 0), whatever the value of N");
  ASSERT_EQ(err.loc.col, 3);
  ASSERT_EQ(constants("N % (2 - 2)", &err), -1);
  ASSERT_CONTAINS(err.msg, "modulo by zero");
  ASSERT_EQ(constants("cdiv(N, 0)", &err), -1);
  ASSERT_EQ(constants("N >> -1", &err), -1);
  ASSERT_EQ(constants("N << 63", &err), -1);
  ASSERT_EQ(constants("M * 9223372036854775807 > 0 || (9223372036854775807 + 1) > 0", &err), -1);
  ASSERT_CONTAINS(err.msg, "overflow");
  /* What evaluates, or depends on a name, is left to evaluation time. */
  ASSERT_EQ(constants("N / (M - 7) + (1 << 62) / 2", &err), 0);
  ASSERT_EQ(constants("0 && 1 / 0", &err), 0); /* C does not evaluate the right side */
  ASSERT_EQ(constants("N << 62 > 0", &err), 0);
}

TEST(chained_comparisons_are_refused) {
  char *m = parse_error("1 < N < 3");
  ASSERT_CONTAINS(m, "expr:1:7: error: chained comparison");
  ASSERT_CONTAINS(m, "C reads 1 < N < 3 as (1 < N) < 3, comparing 0 or 1 with 3; write 1 < N && N < 3");
  free(m);
  m = parse_error("N == M == 1");
  ASSERT_CONTAINS(m, "chained comparison");
  free(m);
  m = parse_error("N >= 1 > 0");
  ASSERT_CONTAINS(m, "chained comparison");
  free(m);
  /* Parentheses say it is meant, and the printer keeps them. */
  ASSERT_EQ(eval("(1 < N) < 3"), 1);
  ASSERT_EQ(eval("(N == 100) == (M == 7)"), 1);
  ASSERT_EQ(eval("N < M == 0"), 1); /* two levels: C's precedence, not a chain */
  kt__expr *e = parse("(1 < N) < 3", NULL);
  kt__sbuf out = {0};
  kt__expr_print(e, &out);
  ASSERT_STREQ(out.s, "(1 < N) < 3");
  kt__sbuf_free(&out);
  kt__expr_free(e);
}

TEST(floats_beyond_a_double_are_refused) {
  char *m = parse_error("1e400");
  ASSERT_CONTAINS(m, "number 1e400 is beyond a double's range (it would read as infinity)");
  free(m);
  m = parse_error("1e-400");
  ASSERT_CONTAINS(m, "below a double's range (it would read as 0)");
  free(m);
}
