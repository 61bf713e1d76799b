/* Integer expressions of the annotation language:
 *   literals, names, + - * / % << >>, comparisons, && || !, unary -,
 *   parentheses, and cdiv(a, b), min(a, b), max(a, b), log2(a), is_pow2(a).
 * Evaluation is in int64 and checked: overflow, division by zero and shifts
 * out of range are errors with the place of the operator. */
#ifndef KT_LANG_EXPR_H
#define KT_LANG_EXPR_H

#include "diag.h"

typedef struct kt__expr kt__expr;

/* Values of names during evaluation. Lookup goes through NAMES[0..n) first,
 * then PARENT. */
typedef struct kt__env {
  const char *const *names;
  const int64_t *values;
  int n;
  const struct kt__env *parent;
} kt__env;

typedef struct kt__eval_error {
  kt__loc loc;
  char msg[256];
} kt__eval_error;

/* Parses a standalone expression (from --dim, tests); errors go to D with
 * columns relative to TEXT placed at AT (line AT.line, columns from AT.col). */
kt__expr *kt__expr_parse_text(const char *text, kt__loc at, kt__diag *d);

/* 0 on success, -1 with ERR filled (unknown name, division by zero, ...). */
int kt__expr_eval(const kt__expr *e, const kt__env *env, int64_t *out, kt__eval_error *err);

/* Evaluates every constant part of E (the largest subexpressions without
 * names): 0 when each evaluates, else -1 with ERR at the first that does not
 * (1 / 0 in A > 0 && 1 / 0 > 2), so that such an error is found when the
 * file is read instead of for each configuration. */
int kt__expr_check_constants(const kt__expr *e, kt__eval_error *err);

/* Calls FN for every name the expression mentions (duplicates included). */
void kt__expr_visit_names(const kt__expr *e, void (*fn)(void *ud, const char *name, kt__loc at), void *ud);

/* Writes the expression back as text (fully parenthesised where needed). */
void kt__expr_print(const kt__expr *e, kt__sbuf *out);
kt__loc kt__expr_loc(const kt__expr *e);
/* The name when the expression is a bare name (N), else NULL. */
const char *kt__expr_name(const kt__expr *e);
void kt__expr_free(kt__expr *e);

#endif
