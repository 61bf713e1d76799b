/* Reads the C function below an annotation group (name, and per parameter:
 * name, pointer-ness, const-ness of the pointee) and checks it against
 * @kernel. Only as much C as kernel signatures use is understood:
 * the kernel is the first function of its name after the annotations
 * (helpers, structs and macros may come between); its parameters may carry
 * qualifiers, pointers and array brackets. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum ctok_kind { C_EOF, C_IDENT, C_PUNCT, C_OTHER } ctok_kind;

typedef struct ctok {
  ctok_kind kind;
  const char *text;
  size_t len;
  kt__loc loc;
} ctok;

typedef struct cscan {
  const char *p, *end, *line_start;
  int line;
} cscan;

static bool tok_eq(const ctok *t, const char *s) { return strlen(s) == t->len && memcmp(t->text, s, t->len) == 0; }

static void newline(cscan *s) {
  s->line++;
  s->line_start = s->p;
}

/* Skips blanks, comments and preprocessor lines. */
static void skip_space(cscan *s) {
  bool at_line_start = s->p == s->line_start;
  while (s->p < s->end) {
    char c = *s->p;
    if (c == '\n') {
      s->p++;
      newline(s);
      at_line_start = true;
    } else if (isspace((unsigned char)c)) {
      s->p++;
    } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '/') {
      while (s->p < s->end && *s->p != '\n') s->p++;
    } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '*') {
      s->p += 2;
      while (s->p + 1 < s->end && !(s->p[0] == '*' && s->p[1] == '/')) {
        if (*s->p++ == '\n') newline(s);
      }
      s->p = s->p + 2 < s->end ? s->p + 2 : s->end;
    } else if (c == '#' && at_line_start) {
      /* A directive, with backslash continuations. */
      while (s->p < s->end && *s->p != '\n') {
        if (*s->p == '\\' && s->p + 1 < s->end && s->p[1] == '\n') {
          s->p += 2;
          newline(s);
        } else {
          s->p++;
        }
      }
    } else {
      return;
    }
  }
}

static ctok next_tok(cscan *s) {
  skip_space(s);
  ctok t = {C_EOF, s->p, 0, {s->line, (int)(s->p - s->line_start) + 1}};
  if (s->p >= s->end) return t;
  const char *p = s->p;
  if (isalpha((unsigned char)*p) || *p == '_') {
    while (p < s->end && (isalnum((unsigned char)*p) || *p == '_')) p++;
    t.kind = C_IDENT;
  } else if (*p == '"' || *p == '\'') {
    char q = *p++;
    while (p < s->end && *p != q && *p != '\n') p += (*p == '\\' && p + 1 < s->end) ? 2 : 1;
    if (p < s->end && *p == q) p++;
    t.kind = C_OTHER;
  } else if (p + 2 < s->end && memcmp(p, "...", 3) == 0) {
    p += 3;
    t.kind = C_PUNCT;
  } else {
    p++;
    t.kind = isdigit((unsigned char)*t.text) ? C_OTHER : C_PUNCT;
    while (t.kind == C_OTHER && p < s->end && (isalnum((unsigned char)*p) || *p == '.')) p++;
  }
  t.len = (size_t)(p - t.text);
  s->p = p;
  return t;
}

/* Words that precede attribute-like parenthesised arguments to skip. */
static bool is_attribute_word(const ctok *t) {
  static const char *const words[] = {"__attribute__",
                                      "__attribute",
                                      "__launch_bounds__",
                                      "__declspec",
                                      "__align__",
                                      "alignas",
                                      "_Alignas",
                                      "__cluster_dims__",
                                      "__maxnreg__",
                                      "__reqd_work_group_size__",
                                      "reqd_work_group_size"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (tok_eq(t, words[i])) return true;
  return false;
}

/* Qualifiers that may stand between a parameter's type and its name. */
static bool is_param_qualifier(const ctok *t) {
  static const char *const words[] = {
      "const",     "volatile",     "restrict",   "__restrict__", "__restrict", "__global",  "global",   "__local",
      "local",     "__constant",   "constant",   "__private",    "private",    "__generic", "generic",  "__read_only",
      "read_only", "__write_only", "write_only", "__read_write", "read_write", "struct",    "unsigned", "signed"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (tok_eq(t, words[i])) return true;
  return false;
}

/* Skips a balanced OPEN ... CLOSE group; the current token is OPEN. */
static bool skip_balanced(cscan *s, char open, char close) {
  int depth = 1;
  for (;;) {
    ctok t = next_tok(s);
    if (t.kind == C_EOF) return false;
    if (t.kind != C_PUNCT || t.len != 1) continue;
    if (*t.text == open) depth++;
    if (*t.text == close && --depth == 0) return true;
  }
}

static int sig_error(kt__loc *where, kt__loc at, char msg[256], const char *text) {
  *where = at;
  snprintf(msg, 256, "%s", text);
  return -1;
}

/* Finds "WANT (" at brace depth 0 after the group, skipping other functions'
 * parameter lists and attributes' arguments: helpers, structs and macros
 * may stand between the annotations and the kernel. Leaves the scanner
 * after the "(". *FIRST receives the first other function name seen. */
static bool find_function(cscan *s, const char *want, ctok *first, ctok *found) {
  ctok prev = {C_EOF, NULL, 0, {0, 0}};
  int depth = 0;
  for (;;) {
    ctok t = next_tok(s);
    if (t.kind == C_EOF) return false;
    bool punct = t.kind == C_PUNCT && t.len == 1;
    if (punct && *t.text == '{') depth++;
    if (punct && *t.text == '}' && depth > 0) depth--;
    if (punct && *t.text == '(' && depth == 0 && prev.kind == C_IDENT) {
      if (tok_eq(&prev, want)) return *found = prev, true;
      if (!is_attribute_word(&prev) && first->kind == C_EOF) *first = prev;
      if (!skip_balanced(s, '(', ')')) return false;
    }
    prev = t;
  }
}

/* Collects the tokens of one parameter, up to "," or ")" at depth 0. */
static int param_tokens(cscan *s, ctok *toks, int max, int *n, ctok *stop) {
  int depth = 0;
  *n = 0;
  for (;;) {
    ctok t = next_tok(s);
    if (t.kind == C_EOF) return -1;
    if (t.kind == C_PUNCT && t.len == 1) {
      if (depth == 0 && (*t.text == ',' || *t.text == ')')) return *stop = t, 0;
      if (*t.text == '(' || *t.text == '[') depth++;
      if (*t.text == ')' || *t.text == ']') depth--;
    }
    if (*n < max) toks[(*n)++] = t;
  }
}

/* param -> { type-word | qualifier | "*" } IDENT { "[" ... "]" } */
static int read_param(const ctok *toks, int n, kt__csig *out, kt__loc *where, char msg[256]) {
  int name = -1, first_star = -1;
  bool pointer = false, is_const = false;
  for (int i = 0; i < n; i++) {
    const ctok *t = &toks[i];
    if (t->kind == C_PUNCT && (*t->text == '*' || *t->text == '[')) {
      pointer = true;
      if (first_star < 0) first_star = i;
      if (*t->text == '[') break; /* array parameter: the name came before */
    } else if (t->kind == C_IDENT && !is_param_qualifier(t)) {
      name = i;
    }
  }
  for (int i = 0; i < n && (first_star < 0 || i < first_star); i++)
    if (tok_eq(&toks[i], "const") || tok_eq(&toks[i], "__constant") || tok_eq(&toks[i], "constant")) is_const = true;
  int idents = 0;
  for (int i = 0; i < n; i++) idents += toks[i].kind == C_IDENT && !is_param_qualifier(&toks[i]);
  if (name < 0 || (idents < 2 && !(n == 1 && tok_eq(&toks[0], "void"))))
    return sig_error(where, n ? toks[0].loc : *where, msg,
                     "cannot find the name of this parameter of the kernel's function; ktune needs "
                     "named parameters");
  int k = out->nparams++;
  out->names = kt__xreallocarray(out->names, (size_t)out->nparams, sizeof *out->names);
  out->locs = kt__xreallocarray(out->locs, (size_t)out->nparams, sizeof *out->locs);
  out->is_pointer = kt__xreallocarray(out->is_pointer, (size_t)out->nparams, sizeof *out->is_pointer);
  out->is_const = kt__xreallocarray(out->is_const, (size_t)out->nparams, sizeof *out->is_const);
  out->names[k] = kt__xstrndup(toks[name].text, toks[name].len);
  out->locs[k] = toks[name].loc;
  out->is_pointer[k] = pointer;
  out->is_const[k] = pointer && is_const;
  return 0;
}

/* params -> "(" [ "void" | param { "," param } ] ")" */
static int read_params(cscan *s, kt__csig *out, kt__loc *where, char msg[256]) {
  enum { MAXTOK = 64 };
  ctok toks[MAXTOK], stop;
  for (;;) {
    int n;
    if (param_tokens(s, toks, MAXTOK, &n, &stop) != 0)
      return sig_error(where, out->loc, msg, "the parameter list of the kernel's function never ends");
    bool only_void = n == 1 && tok_eq(&toks[0], "void");
    if (n == 0 && *stop.text == ')' && out->nparams == 0) return 0;
    if (only_void && *stop.text == ')' && out->nparams == 0) return 0;
    if (n == 0) return sig_error(where, stop.loc, msg, "empty parameter in the kernel's function");
    if (n == 1 && tok_eq(&toks[0], "..."))
      return sig_error(where, toks[0].loc, msg, "a kernel cannot take variable arguments (...)");
    *where = toks[0].loc;
    if (read_param(toks, n, out, where, msg) != 0) return -1;
    if (*stop.text == ')') return 0;
  }
}

int kt__csig_parse(const kt__source *src, const kt__group *g, const char *name, kt__csig *out, kt__loc *where,
                   char msg[256]) {
  memset(out, 0, sizeof *out);
  cscan s = {src->text + g->code_offset, src->text + src->len, src->text + g->code_offset, g->code_line};
  if (g->code_in_comment) { /* the rest of a block comment that the group ended in */
    while (s.p + 1 < s.end && !(s.p[0] == '*' && s.p[1] == '/')) s.p++;
    s.p = s.p + 2 <= s.end ? s.p + 2 : s.end;
  }
  ctok first = {C_EOF, NULL, 0, {0, 0}}, found;
  if (!find_function(&s, name, &first, &found)) {
    if (first.kind == C_EOF)
      snprintf(msg, 256, "no C function follows the annotations; put them directly above %s()", name);
    else
      snprintf(msg, 256,
               "@kernel names '%s' but no function '%s' follows the annotations; the first "
               "function below (line %d) is '%.*s'",
               name, name, first.loc.line, (int)first.len, first.text);
    return -1;
  }
  out->name = kt__xstrdup(name);
  out->loc = found.loc;
  if (read_params(&s, out, where, msg) != 0) {
    kt__csig_free(out);
    return -1;
  }
  return 0;
}

void kt__csig_free(kt__csig *s) {
  if (!s) return;
  for (int i = 0; i < s->nparams; i++) free(s->names[i]);
  free(s->names);
  free(s->locs);
  free(s->is_pointer);
  free(s->is_const);
  free(s->name);
  memset(s, 0, sizeof *s);
}

static void check_count(const kt__kernel_decl *k, const kt__csig *sig, kt__diag *d) {
  kt__sbuf a = {0}, b = {0};
  kt__sbuf_append(&a, "", 0);
  kt__sbuf_append(&b, "", 0);
  for (int i = 0; i < k->nparams; i++) kt__sbuf_printf(&a, "%s%s", i ? ", " : "", k->params[i].name);
  for (int i = 0; i < sig->nparams; i++) kt__sbuf_printf(&b, "%s%s", i ? ", " : "", sig->names[i]);
  kt__diag_error(d, k->loc,
                 "@kernel declares %d parameter%s but %s() takes %d: @kernel has (%s), "
                 "the function has (%s); list the function's parameters in @kernel, in order",
                 k->nparams, k->nparams == 1 ? "" : "s", sig->name, sig->nparams, a.s, b.s);
  kt__sbuf_free(&a);
  kt__sbuf_free(&b);
}

static void check_param(kt__param *p, int i, const kt__csig *sig, kt__diag *d) {
  if (strcmp(p->name, sig->names[i]) != 0) {
    kt__diag_error(d, p->loc,
                   "parameter %d is '%s' in @kernel but '%s' in %s(); the names must "
                   "match, in order",
                   i + 1, p->name, sig->names[i], sig->name);
    return;
  }
  if (p->is_tensor && !sig->is_pointer[i]) {
    kt__diag_error(d, p->loc,
                   "'%s' is a tensor in @kernel but not a pointer in %s(); declare it "
                   "as a scalar (%s: %s) or make the C parameter a pointer",
                   p->name, sig->name, p->name, kt__dtype_name(p->type));
    return;
  }
  if (p->is_tensormap && sig->is_pointer[i]) {
    kt__diag_error(d, p->loc,
                   "'%s' is a tensor map in @kernel but a pointer in %s(); a tensor map is passed by value: "
                   "`const __grid_constant__ CUtensorMap %s` (a 64-byte aligned struct of 128 bytes)",
                   p->name, sig->name, p->name);
    return;
  }
  if (!p->is_tensor && sig->is_pointer[i]) {
    kt__diag_error(d, p->loc,
                   "'%s' is a scalar in @kernel but a pointer in %s(); declare it as "
                   "a tensor: %s: tensor<%s>[SIZE]",
                   p->name, sig->name, p->name, kt__dtype_name(p->type));
    return;
  }
  if (!p->is_tensor) return;
  if (p->mode == KT__MODE_UNSET) p->mode = sig->is_const[i] ? KT__MODE_IN : KT__MODE_INOUT;
  else if (p->mode != KT__MODE_IN && sig->is_const[i])
    kt__diag_warning(d, p->loc, "'%s' is declared %s but %s() takes it through a const pointer", p->name,
                     p->mode == KT__MODE_OUT ? "out" : "inout", sig->name);
}

static void store_signature(kt__kernel_decl *k, const kt__csig *sig) {
  k->sig_line = sig->loc.line;
  k->sig_nparams = sig->nparams;
  k->sig_names = kt__xcalloc((size_t)sig->nparams + 1, sizeof *k->sig_names);
  k->sig_is_pointer = kt__xcalloc((size_t)sig->nparams + 1, sizeof *k->sig_is_pointer);
  k->sig_is_const = kt__xcalloc((size_t)sig->nparams + 1, sizeof *k->sig_is_const);
  for (int i = 0; i < sig->nparams; i++) {
    k->sig_names[i] = kt__xstrdup(sig->names[i]);
    k->sig_is_pointer[i] = sig->is_pointer[i];
    k->sig_is_const[i] = sig->is_const[i];
  }
}

void kt__csig_check(kt__kernel_decl *k, const kt__csig *sig, kt__diag *d) {
  store_signature(k, sig);
  if (k->nparams != sig->nparams) {
    check_count(k, sig, d);
    return;
  }
  for (int i = 0; i < k->nparams; i++) check_param(&k->params[i], i, sig, d);
}
