/* Integer expressions: a precedence-climbing parser over the annotation
 * lexer, a checked int64 evaluator, and a printer that adds only the
 * parentheses the precedences need. */
#include "lexer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tree deeper than this (a long chain like a+a+...+a) is refused so that
 * evaluation, printing and freeing, which recurse, stay shallow. */
#define KT__EXPR_MAX_TREE 1000

typedef enum expr_kind { E_NUM, E_NAME, E_UNARY, E_BINARY, E_CALL } expr_kind;

typedef enum func_id { F_CDIV, F_MIN, F_MAX, F_LOG2, F_IS_POW2, F_COUNT } func_id;

static const struct {
  const char *name;
  int nargs;
} funcs[F_COUNT] = {
    [F_CDIV] = {"cdiv", 2}, [F_MIN] = {"min", 2},         [F_MAX] = {"max", 2},
    [F_LOG2] = {"log2", 1}, [F_IS_POW2] = {"is_pow2", 1},
};

struct kt__expr {
  expr_kind kind;
  kt__loc loc;        /* of the literal, name, operator or function name */
  int op;             /* kt__tok_kind of the operator, or func_id */
  int depth;          /* height of the tree below, 1 for a leaf */
  bool named;         /* a name occurs in the tree (else it is a constant) */
  bool parenthesised; /* written in parentheses (a comparison chain check) */
  int64_t num;        /* E_NUM */
  char *name;         /* E_NAME */
  kt__expr *a, *b;
};

/* Binary operators by precedence level, lowest first (C's order). */
static const kt__tok_kind levels[][4] = {
    {KT__T_OROR},
    {KT__T_ANDAND},
    {KT__T_EQ, KT__T_NE},
    {KT__T_LT, KT__T_LE, KT__T_GT, KT__T_GE},
    {KT__T_SHL, KT__T_SHR},
    {KT__T_PLUS, KT__T_MINUS},
    {KT__T_STAR, KT__T_SLASH, KT__T_PERCENT},
};
enum { NLEVELS = sizeof levels / sizeof levels[0], PREC_UNARY = NLEVELS, PREC_ATOM = NLEVELS + 1 };

static int binary_level(int op) {
  for (int l = 0; l < NLEVELS; l++)
    for (int i = 0; i < 4 && levels[l][i]; i++)
      if ((int)levels[l][i] == op) return l;
  return -1;
}

static kt__expr *new_node(expr_kind kind, kt__loc loc) {
  kt__expr *e = kt__xcalloc(1, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  e->depth = 1;
  return e;
}

void kt__expr_free(kt__expr *e) {
  if (!e) return;
  kt__expr_free(e->a);
  kt__expr_free(e->b);
  free(e->name);
  free(e);
}

kt__loc kt__expr_loc(const kt__expr *e) {
  kt__loc none = {0, 0};
  return e ? e->loc : none;
}

/* Reports "expected X" at the current token unless the lexer already
 * reported that token as bad. */
static void syntax_error(kt__lexer *lx, const char *expected) {
  if (lx->tok.kind == KT__T_ERROR) return;
  char got[64];
  kt__tok_describe(&lx->tok, got, sizeof got);
  kt__diag_error(lx->d, lx->tok.loc, "expected %s but found %s", expected, got);
}

/* Links A and B under N, refusing trees too deep to walk recursively. */
static kt__expr *attach(kt__lexer *lx, kt__expr *n, kt__expr *a, kt__expr *b) {
  n->a = a;
  n->b = b;
  int da = a ? a->depth : 0, db = b ? b->depth : 0;
  n->depth = 1 + (da > db ? da : db);
  n->named = (a && a->named) || (b && b->named);
  if (n->depth > KT__EXPR_MAX_TREE) {
    kt__diag_error(lx->d, n->loc,
                   "expression too long: more than %d operators deep; split it or "
                   "simplify it",
                   KT__EXPR_MAX_TREE);
    kt__expr_free(n);
    return NULL;
  }
  return n;
}

static kt__expr *parse_binary(kt__lexer *lx, int level);
static kt__expr *parse_unary(kt__lexer *lx);

/* call -> IDENT "(" [ expr { "," expr } ] ")"   (the name is the current token) */
static kt__expr *parse_call(kt__lexer *lx) {
  kt__token name = lx->tok;
  int f = 0;
  while (f < F_COUNT && !kt__tok_is(&name, funcs[f].name)) f++;
  if (f == F_COUNT) {
    kt__diag_error(lx->d, name.loc, "unknown function '%.*s' (known: cdiv, min, max, log2, is_pow2)", (int)name.len,
                   name.text);
    return NULL;
  }
  kt__lex_next(lx); /* name */
  kt__lex_next(lx); /* ( */
  kt__expr *args[2] = {NULL, NULL};
  int n = 0;
  bool ok = true;
  while (ok && lx->tok.kind != KT__T_RPAREN) {
    kt__expr *a = kt__expr_parse(lx);
    if (!a) ok = false;
    else if (n < 2) args[n++] = a;
    else {
      n++;
      kt__expr_free(a);
    }
    if (ok && lx->tok.kind == KT__T_COMMA) kt__lex_next(lx);
    else if (ok && lx->tok.kind != KT__T_RPAREN) {
      syntax_error(lx, "',' or ')' in the arguments");
      ok = false;
    }
  }
  if (ok && n != funcs[f].nargs) {
    kt__diag_error(lx->d, name.loc, "%s takes %d argument%s, not %d", funcs[f].name, funcs[f].nargs,
                   funcs[f].nargs == 1 ? "" : "s", n);
    ok = false;
  }
  if (!ok) {
    kt__expr_free(args[0]);
    kt__expr_free(args[1]);
    return NULL;
  }
  kt__lex_next(lx); /* ) */
  kt__expr *e = new_node(E_CALL, name.loc);
  e->op = f;
  return attach(lx, e, args[0], args[1]);
}

/* primary -> INT | IDENT | call | "(" expr ")" */
static kt__expr *parse_primary(kt__lexer *lx) {
  kt__token t = lx->tok;
  if (t.kind == KT__T_INT) {
    kt__lex_next(lx);
    kt__expr *e = new_node(E_NUM, t.loc);
    e->num = t.ival;
    return e;
  }
  if (t.kind == KT__T_FLOAT) {
    kt__diag_error(lx->d, t.loc, "non-integer value %.*s: expressions are 64-bit integers", (int)t.len, t.text);
    return NULL;
  }
  if (t.kind == KT__T_IDENT) {
    if (kt__lex_peek(lx)->kind == KT__T_LPAREN) return parse_call(lx);
    kt__lex_next(lx);
    kt__expr *e = new_node(E_NAME, t.loc);
    e->name = kt__xstrndup(t.text, t.len);
    e->named = true;
    return e;
  }
  if (t.kind == KT__T_LPAREN) {
    kt__lex_next(lx);
    kt__expr *e = kt__expr_parse(lx);
    if (e && lx->tok.kind != KT__T_RPAREN) {
      syntax_error(lx, "')'");
      kt__expr_free(e);
      return NULL;
    }
    if (e) kt__lex_next(lx), e->parenthesised = true;
    return e;
  }
  syntax_error(lx, "an expression");
  return NULL;
}

/* unary -> ("-" | "+" | "!") unary | primary
 * Every nesting (a unary operator, a parenthesis, a call) passes here, so the
 * depth count here bounds the recursion of the whole parser. */
static kt__expr *parse_unary(kt__lexer *lx) {
  if (++lx->depth > KT__EXPR_MAX_DEPTH) {
    kt__diag_error(lx->d, lx->tok.loc,
                   "expression nested too deeply (more than %d levels); "
                   "simplify it",
                   KT__EXPR_MAX_DEPTH);
    lx->depth--;
    return NULL;
  }
  kt__expr *e;
  kt__token t = lx->tok;
  if (t.kind == KT__T_MINUS || t.kind == KT__T_NOT || t.kind == KT__T_PLUS) {
    kt__lex_next(lx);
    kt__expr *a = parse_unary(lx);
    if (!a || t.kind == KT__T_PLUS) {
      e = a;
    } else {
      e = new_node(E_UNARY, t.loc);
      e->op = t.kind;
      e = attach(lx, e, a, NULL);
    }
  } else {
    e = parse_primary(lx);
  }
  lx->depth--;
  return e;
}

enum { LEVEL_EQUALITY = 2, LEVEL_RELATION = 3 };

static bool is_comparison_level(int level) { return level == LEVEL_EQUALITY || level == LEVEL_RELATION; }

/* `1 < A < 3` means (1 < A) < 3 in C, always true; nobody writes that on
 * purpose, so a chain of comparisons without parentheses is refused, with
 * the && form it was meant as: LEFT is `1 < A`, OP `<`, RIGHT `3`. */
static void refuse_chain(kt__lexer *lx, const kt__expr *left, kt__token op, const kt__expr *right) {
  kt__sbuf l = {0}, mid = {0}, r = {0};
  kt__expr_print(left, &l);
  kt__expr_print(left->b, &mid);
  kt__expr_print(right, &r);
  kt__diag_error(lx->d, op.loc,
                 "chained comparison: C reads %s %.*s %s as (%s) %.*s %s, comparing 0 or 1 with %s; write %s && %s "
                 "%.*s %s, or parenthesise the first comparison if that is meant",
                 l.s, (int)op.len, op.text, r.s, l.s, (int)op.len, op.text, r.s, r.s, l.s, mid.s, (int)op.len, op.text,
                 r.s);
  kt__sbuf_free(&l);
  kt__sbuf_free(&mid);
  kt__sbuf_free(&r);
}

/* binary(l) -> binary(l+1) { op(l) binary(l+1) }, left-associative; at the
 * comparison levels one operator only (a second one is a chain). */
static kt__expr *parse_binary(kt__lexer *lx, int level) {
  if (level == NLEVELS) return parse_unary(lx);
  kt__expr *e = parse_binary(lx, level + 1);
  while (e && binary_level(lx->tok.kind) == level) {
    kt__token op = lx->tok;
    kt__lex_next(lx);
    kt__expr *b = parse_binary(lx, level + 1);
    if (b && is_comparison_level(level) && e->kind == E_BINARY && binary_level(e->op) == level && !e->parenthesised) {
      refuse_chain(lx, e, op, b);
      kt__expr_free(b);
      b = NULL;
    }
    if (!b) {
      kt__expr_free(e);
      return NULL;
    }
    kt__expr *n = new_node(E_BINARY, op.loc);
    n->op = op.kind;
    e = attach(lx, n, e, b);
  }
  return e;
}

/* expr -> or_expr */
kt__expr *kt__expr_parse(kt__lexer *lx) { return parse_binary(lx, 0); }

kt__expr *kt__expr_parse_text(const char *text, kt__loc at, kt__diag *d) {
  kt__segment seg = {text, strlen(text), at};
  kt__lexer lx;
  kt__lex_init(&lx, &seg, 1, d);
  kt__expr *e = kt__expr_parse(&lx);
  if (e && lx.tok.kind != KT__T_EOF) {
    syntax_error(&lx, "an operator or the end of the expression");
    kt__expr_free(e);
    return NULL;
  }
  return e;
}

/* --- evaluation ------------------------------------------------------- */

static int fail(kt__eval_error *err, kt__loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(kt__eval_error *err, kt__loc at, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->loc = at;
  }
  return -1;
}

static bool lookup(const kt__env *env, const char *name, int64_t *out) {
  for (; env; env = env->parent)
    for (int i = 0; i < env->n; i++)
      if (strcmp(env->names[i], name) == 0) {
        *out = env->values[i];
        return true;
      }
  return false;
}

static int eval_shift(const kt__expr *e, int64_t a, int64_t b, int64_t *out, kt__eval_error *err) {
  if (b < 0 || b >= 63) return fail(err, e->loc, "shift by %lld is out of range (0 to 62)", (long long)b);
  if (e->op == KT__T_SHR) {
    *out = a >= 0 ? a >> b : -((-(a + 1)) >> b) - 1; /* floor, without relying on signed >> */
    return 0;
  }
  if (__builtin_mul_overflow(a, (int64_t)1 << b, out))
    return fail(err, e->loc, "overflow: %lld << %lld does not fit in 64 bits", (long long)a, (long long)b);
  return 0;
}

static int eval_arith(const kt__expr *e, int64_t a, int64_t b, int64_t *out, kt__eval_error *err) {
  bool ovf = false;
  const char *sym = kt__tok_kind_text(e->op);
  switch (e->op) {
  case KT__T_PLUS: ovf = __builtin_add_overflow(a, b, out); break;
  case KT__T_MINUS: ovf = __builtin_sub_overflow(a, b, out); break;
  case KT__T_STAR: ovf = __builtin_mul_overflow(a, b, out); break;
  case KT__T_SLASH:
  case KT__T_PERCENT:
    if (b == 0)
      return fail(err, e->loc, "%s by zero (%lld %s 0)", e->op == KT__T_SLASH ? "division" : "modulo", (long long)a,
                  sym);
    if (a == INT64_MIN && b == -1) ovf = e->op == KT__T_SLASH, *out = 0;
    else *out = e->op == KT__T_SLASH ? a / b : a % b;
    break;
  default: return eval_shift(e, a, b, out, err);
  }
  if (ovf) return fail(err, e->loc, "overflow: %lld %s %lld does not fit in 64 bits", (long long)a, sym, (long long)b);
  return 0;
}

static int eval_compare(int op, int64_t a, int64_t b) {
  switch (op) {
  case KT__T_LT: return a < b;
  case KT__T_LE: return a <= b;
  case KT__T_GT: return a > b;
  case KT__T_GE: return a >= b;
  case KT__T_EQ: return a == b;
  default: return a != b;
  }
}

static int eval_call(const kt__expr *e, int64_t a, int64_t b, int64_t *out, kt__eval_error *err) {
  switch ((func_id)e->op) {
  case F_CDIV:
    if (b == 0) return fail(err, e->loc, "division by zero in cdiv(%lld, 0)", (long long)a);
    if (a == INT64_MIN && b == -1) return fail(err, e->loc, "overflow in cdiv(%lld, -1)", (long long)a);
    *out = a / b + (a % b != 0 && (a < 0) == (b < 0));
    return 0;
  case F_MIN: *out = a < b ? a : b; return 0;
  case F_MAX: *out = a > b ? a : b; return 0;
  case F_LOG2:
    if (a <= 0) return fail(err, e->loc, "log2 of %lld: the argument must be positive", (long long)a);
    *out = 63 - __builtin_clzll((unsigned long long)a);
    return 0;
  case F_IS_POW2: *out = a > 0 && (a & (a - 1)) == 0; return 0;
  default: return fail(err, e->loc, "internal error: unknown function");
  }
}

int kt__expr_eval(const kt__expr *e, const kt__env *env, int64_t *out, kt__eval_error *err) {
  int64_t a = 0, b = 0;
  switch (e->kind) {
  case E_NUM: *out = e->num; return 0;
  case E_NAME:
    if (!lookup(env, e->name, out)) return fail(err, e->loc, "unknown name '%s'", e->name);
    return 0;
  case E_UNARY:
    if (kt__expr_eval(e->a, env, &a, err)) return -1;
    if (e->op == KT__T_NOT) *out = !a;
    else if (a == INT64_MIN) return fail(err, e->loc, "overflow: -(%lld) does not fit in 64 bits", (long long)a);
    else *out = -a;
    return 0;
  case E_CALL:
    if (kt__expr_eval(e->a, env, &a, err)) return -1;
    if (e->b && kt__expr_eval(e->b, env, &b, err)) return -1;
    return eval_call(e, a, b, out, err);
  case E_BINARY:
    if (kt__expr_eval(e->a, env, &a, err)) return -1;
    if (e->op == KT__T_ANDAND && !a) return *out = 0, 0; /* short-circuit, as in C */
    if (e->op == KT__T_OROR && a) return *out = 1, 0;
    if (kt__expr_eval(e->b, env, &b, err)) return -1;
    if (e->op == KT__T_ANDAND || e->op == KT__T_OROR) return *out = b != 0, 0;
    if (is_comparison_level(binary_level(e->op))) return *out = eval_compare(e->op, a, b), 0;
    return eval_arith(e, a, b, out, err);
  }
  return fail(err, e->loc, "internal error: bad expression node");
}

static const char *first_name(const kt__expr *e) {
  if (!e) return "its operand";
  if (e->kind == E_NAME) return e->name;
  const char *a = e->a && e->a->named ? first_name(e->a) : NULL;
  return a ? a : first_name(e->b);
}

/* An operator whose constant right operand fails for every left one:
 * A / 0, A % 0, cdiv(A, 0), A << 70, A >> -1. */
static int check_constant_operand(const kt__expr *e, kt__eval_error *err) {
  bool divides = (e->kind == E_BINARY && (e->op == KT__T_SLASH || e->op == KT__T_PERCENT)) ||
                 (e->kind == E_CALL && e->op == F_CDIV);
  bool shifts = e->kind == E_BINARY && (e->op == KT__T_SHL || e->op == KT__T_SHR);
  if ((!divides && !shifts) || !e->b || e->b->named) return 0;
  int64_t b;
  if (kt__expr_eval(e->b, NULL, &b, err) != 0) return -1;
  kt__sbuf text = {0};
  kt__expr_print(e, &text);
  int rc = 0;
  if (divides && b == 0)
    rc = fail(err, e->loc, "%s by zero (%s), whatever the value of %s", e->op == KT__T_PERCENT ? "modulo" : "division",
              text.s, first_name(e->a));
  else if (shifts && (b < 0 || b >= 63))
    rc = fail(err, e->loc, "shift by %lld is out of range (0 to 62) in %s", (long long)b, text.s);
  kt__sbuf_free(&text);
  return rc;
}

int kt__expr_check_constants(const kt__expr *e, kt__eval_error *err) {
  if (!e) return 0;
  if (!e->named) {
    int64_t v;
    return kt__expr_eval(e, NULL, &v, err);
  }
  if (kt__expr_check_constants(e->a, err) != 0) return -1;
  if (kt__expr_check_constants(e->b, err) != 0) return -1;
  return check_constant_operand(e, err);
}

void kt__expr_visit_names(const kt__expr *e, void (*fn)(void *ud, const char *name, kt__loc at), void *ud) {
  if (!e) return;
  if (e->kind == E_NAME) fn(ud, e->name, e->loc);
  kt__expr_visit_names(e->a, fn, ud);
  kt__expr_visit_names(e->b, fn, ud);
}

/* --- printing --------------------------------------------------------- */

static int prec(const kt__expr *e) {
  if (e->kind == E_BINARY) return binary_level(e->op);
  return e->kind == E_UNARY ? PREC_UNARY : PREC_ATOM;
}

static void print_prec(const kt__expr *e, int min_prec, kt__sbuf *out) {
  bool paren = prec(e) < min_prec;
  if (paren) kt__sbuf_append(out, "(", 1);
  switch (e->kind) {
  case E_NUM: kt__sbuf_printf(out, "%lld", (long long)e->num); break;
  case E_NAME: kt__sbuf_printf(out, "%s", e->name); break;
  case E_UNARY:
    kt__sbuf_printf(out, "%s", kt__tok_kind_text(e->op));
    print_prec(e->a, PREC_UNARY, out);
    break;
  case E_CALL:
    kt__sbuf_printf(out, "%s(", funcs[e->op].name);
    print_prec(e->a, 0, out);
    if (e->b) {
      kt__sbuf_append(out, ", ", 2);
      print_prec(e->b, 0, out);
    }
    kt__sbuf_append(out, ")", 1);
    break;
  case E_BINARY:
    /* Left-associative: the right operand needs parentheses at equal
     * precedence; a comparison's left one too, as chains are refused. */
    print_prec(e->a, prec(e) + is_comparison_level(prec(e)), out);
    kt__sbuf_printf(out, " %s ", kt__tok_kind_text(e->op));
    print_prec(e->b, prec(e) + 1, out);
    break;
  }
  if (paren) kt__sbuf_append(out, ")", 1);
}

const char *kt__expr_name(const kt__expr *e) { return e && e->kind == E_NAME ? e->name : NULL; }

void kt__expr_print(const kt__expr *e, kt__sbuf *out) {
  if (e) print_prec(e, 0, out);
}
