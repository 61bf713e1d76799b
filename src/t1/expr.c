/* The Python expressions of T1 files as ktune expressions (t1.h). A small
 * recursive-descent reader of the subset Kernel Tuner's restrictions and
 * sizes use; each rule returns the translated text (malloc'ed) or NULL with
 * the reason in the reader. */
#include "t1.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
  const char *p;
  char *why; /* 256 bytes */
  const char *const *names;
  int64_t *const *values;
  const int *counts;
  int n;
} reader;

static void skip_space(reader *r) {
  while (isspace((unsigned char)*r->p)) r->p++;
}

static bool word_is(reader *r, const char *w) {
  skip_space(r);
  size_t n = strlen(w);
  return strncmp(r->p, w, n) == 0 && !isalnum((unsigned char)r->p[n]) && r->p[n] != '_';
}

static bool take_word(reader *r, const char *w) {
  if (!word_is(r, w)) return false;
  r->p += strlen(w);
  return true;
}

static bool take(reader *r, const char *op) {
  skip_space(r);
  size_t n = strlen(op);
  if (strncmp(r->p, op, n) != 0) return false;
  r->p += n;
  return true;
}

static char *fail(reader *r, const char *fmt, const char *what) {
  if (!r->why[0]) snprintf(r->why, 256, fmt, what);
  return NULL;
}

static char *join(const char *a, const char *op, const char *b) {
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%s %s %s", a, op, b);
  return s.s;
}

static char *expr_or(reader *r);

static int param_index(reader *r, const char *name, size_t len) {
  for (int i = 0; i < r->n; i++)
    if (strlen(r->names[i]) == len && strncmp(r->names[i], name, len) == 0) return i;
  return -1;
}

/* max(P) / min(P) of a tuning parameter: its largest / smallest value, as
 * Kernel Tuner evaluates sizes with the parameters bound to their lists. */
static char *extreme(reader *r, bool largest) {
  skip_space(r);
  const char *start = r->p;
  while (isalnum((unsigned char)*r->p) || *r->p == '_') r->p++;
  int i = param_index(r, start, (size_t)(r->p - start));
  if (i < 0 || !take(r, ")")) return fail(r, "%s(...) takes one tuning parameter here", largest ? "max" : "min");
  int64_t v = r->values[i][0];
  for (int j = 1; j < r->counts[i]; j++)
    if (largest ? r->values[i][j] > v : r->values[i][j] < v) v = r->values[i][j];
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%lld", (long long)v);
  return s.s;
}

/* ProblemSize[i] -> PROBLEM_SIZE_X, _Y, _Z */
static char *problem_size(reader *r) {
  skip_space(r);
  if (!take(r, "[") || !isdigit((unsigned char)*r->p))
    return fail(r, "%s", "ProblemSize takes an index: ProblemSize[0]");
  int i = (int)strtol(r->p, (char **)&r->p, 10);
  if (!take(r, "]") || i > 2) return fail(r, "%s", "ProblemSize[0], [1] or [2] only");
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "PROBLEM_SIZE_%c", "XYZ"[i]);
  return s.s;
}

/* call -> ( "min" | "max" ) "(" ( PARAM | expr "," expr ) ")" */
static char *call(reader *r, const char *fn) {
  const char *save = r->p;
  char *single = extreme(r, strcmp(fn, "max") == 0);
  if (single) return single;
  r->p = save, r->why[0] = 0;
  char *a = expr_or(r);
  char *b = a && take(r, ",") ? expr_or(r) : NULL;
  if (!b || !take(r, ")")) {
    free(a), free(b);
    return fail(r, "%s(a, b) or %s(PARAMETER) expected", fn);
  }
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%s(%s, %s)", fn, a, b);
  free(a), free(b);
  return s.s;
}

/* atom -> INT | NAME | "True" | "False" | ProblemSize "[" INT "]" | call | "(" expr ")" */
static char *atom(reader *r) {
  skip_space(r);
  kt__sbuf s = {0};
  if (take(r, "(")) {
    char *e = expr_or(r);
    if (!e || !take(r, ")")) return free(e), fail(r, "%s", "')' expected");
    kt__sbuf_printf(&s, "(%s)", e);
    free(e);
    return s.s;
  }
  if (isdigit((unsigned char)*r->p)) {
    const char *start = r->p;
    while (isalnum((unsigned char)*r->p) || *r->p == '.') r->p++;
    kt__sbuf_printf(&s, "%.*s", (int)(r->p - start), start);
    if (strpbrk(s.s, ".eE") && strncmp(s.s, "0x", 2) != 0) {
      kt__sbuf_free(&s);
      return fail(r, "%s", "a floating-point number has no integer meaning");
    }
    return s.s;
  }
  if (take_word(r, "True")) return kt__xstrdup("1");
  if (take_word(r, "False")) return kt__xstrdup("0");
  if (take_word(r, "ProblemSize")) return problem_size(r);
  const char *start = r->p;
  while (isalnum((unsigned char)*r->p) || *r->p == '_') r->p++;
  if (r->p == start) return fail(r, "unexpected '%.1s'", *r->p ? r->p : "end");
  kt__sbuf_printf(&s, "%.*s", (int)(r->p - start), start);
  if (take(r, "(")) {
    if (strcmp(s.s, "min") == 0 || strcmp(s.s, "max") == 0) {
      char *c = call(r, s.s);
      kt__sbuf_free(&s);
      return c;
    }
    fail(r, "the function %s() has no ktune equivalent", s.s);
    kt__sbuf_free(&s);
    return NULL;
  }
  return s.s;
}

/* power -> atom [ "**" unary ]: only a literal exponent, expanded */
static char *unary(reader *r);
static char *power(reader *r) {
  char *a = atom(r);
  if (!a || !take(r, "**")) return a;
  skip_space(r);
  char *end;
  long e = strtol(r->p, &end, 10);
  if (end == r->p || e < 0 || e > 8) {
    free(a);
    return fail(r, "%s", "'**' with an exponent other than an integer 0..8 has no ktune equivalent");
  }
  r->p = end;
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "(");
  for (long i = 0; i < e; i++) kt__sbuf_printf(&s, "%s(%s)", i ? " * " : "", a);
  kt__sbuf_printf(&s, "%s)", e ? "" : "1");
  free(a);
  return s.s;
}

/* unary -> ( "-" | "+" ) unary | power */
static char *unary(reader *r) {
  if (take(r, "-")) {
    char *e = unary(r);
    if (!e) return NULL;
    kt__sbuf s = {0};
    kt__sbuf_printf(&s, "-%s", e);
    free(e);
    return s.s;
  }
  if (take(r, "+")) return unary(r);
  return power(r);
}

/* term -> unary { ( "*" | "//" | "%" ) unary }; "/" is true division */
static char *term(reader *r) {
  char *a = unary(r);
  while (a) {
    const char *op = take(r, "//") ? "/" : take(r, "*") ? "*" : take(r, "%") ? "%" : NULL;
    if (!op) {
      skip_space(r);
      if (*r->p == '/') {
        free(a);
        return fail(r, "%s", "'/' is true division in Python (a float): write '//' for integer division");
      }
      return a;
    }
    char *b = unary(r);
    char *j = b ? join(a, op, b) : NULL;
    free(a), free(b);
    a = j;
  }
  return a;
}

/* arith -> term { ( "+" | "-" ) term } */
static char *arith(reader *r) {
  char *a = term(r);
  while (a) {
    const char *op = take(r, "+") ? "+" : take(r, "-") ? "-" : NULL;
    if (!op) return a;
    char *b = term(r);
    char *j = b ? join(a, op, b) : NULL;
    free(a), free(b);
    a = j;
  }
  return a;
}

static const char *comparison_op(reader *r) {
  static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
  for (int i = 0; i < 6; i++)
    if (take(r, ops[i])) return ops[i];
  return NULL;
}

/* comparison -> arith { op arith }: a chain is the conjunction of its links */
static char *comparison(reader *r) {
  char *left = arith(r);
  const char *op = left ? comparison_op(r) : NULL;
  if (!op) return left;
  kt__sbuf s = {0};
  int links = 0;
  while (op && left) {
    char *right = arith(r);
    if (!right) break;
    kt__sbuf_printf(&s, "%s(%s %s %s)", links++ ? " && " : "", left, op, right);
    free(left);
    left = right;
    op = comparison_op(r);
  }
  bool ok = !op && left;
  free(left);
  if (!ok) return kt__sbuf_free(&s), NULL;
  if (links == 1) return s.s;
  char *wrapped = join("(", s.s, ")");
  kt__sbuf_free(&s);
  return wrapped;
}

/* not -> "not" not | comparison */
static char *negation(reader *r) {
  if (!take_word(r, "not")) return comparison(r);
  char *e = negation(r);
  if (!e) return NULL;
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "!(%s)", e);
  free(e);
  return s.s;
}

/* and -> not { "and" not } */
static char *expr_and(reader *r) {
  char *a = negation(r);
  while (a && take_word(r, "and")) {
    char *b = negation(r);
    char *j = b ? join(a, "&&", b) : NULL;
    free(a), free(b);
    a = j;
  }
  return a;
}

/* or -> and { "or" and } */
static char *expr_or(reader *r) {
  char *a = expr_and(r);
  while (a && take_word(r, "or")) {
    char *b = expr_and(r);
    char *j = b ? join(a, "||", b) : NULL;
    free(a), free(b);
    a = j;
  }
  return a;
}

char *kt__t1_expr(const char *python, const char *const *names, int64_t *const *values, const int *counts, int n,
                  char why[256]) {
  why[0] = 0;
  reader r = {python, why, names, values, counts, n};
  char *e = expr_or(&r);
  skip_space(&r);
  if (e && *r.p) {
    free(e);
    e = fail(&r, "unexpected '%s'", r.p);
  }
  if (!e && !why[0]) snprintf(why, 256, "not an expression ktune reads");
  return e;
}
