/* The annotation parser. Each attribute is read on its own (an error in one
 * does not hide errors in the next), then the kernel as a whole is checked:
 * @kernel present, runtime sizes collected, shapes that use tuned names marked,
 * @dims and @key naming runtime sizes, and the C signature below matching. */
#include "parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/backend.h"
#include "internal.h"

enum {
  KT__LINE_MAX = 4096,     /* characters in one annotation line */
  KT__CHOICES_MAX = 65536, /* choices of one tuned name */
  KT__KERNELS_MAX = 1024,  /* annotated kernels in one file (checks between them are quadratic) */
};

/* --- choice lists ------------------------------------------------------ */

int kt__expand_choices(const int64_t *written, int n, int64_t **out, int *count, char msg[256]) {
  *out = NULL;
  *count = 0;
  if (n <= 0) {
    snprintf(msg, 256, "empty list: give at least one value");
    return -1;
  }
  if (n > KT__CHOICES_MAX) {
    snprintf(msg, 256, "too many choices (%d; the limit is %d per name)", n, KT__CHOICES_MAX);
    return -1;
  }
  int64_t *v = kt__xmalloc(sizeof *v * (n == 2 ? 64 : (size_t)n));
  int c = 0;
  if (n == 2 && written[0] > 0 && written[0] < written[1]) {
    /* Doubling from a while below b, then b: at most 63 values. */
    for (int64_t x = written[0]; x < written[1]; x *= 2) {
      v[c++] = x;
      if (x > INT64_MAX / 2) break;
    }
    v[c++] = written[1];
  } else {
    memcpy(v, written, sizeof *v * (size_t)n);
    c = n;
  }
  *out = v;
  *count = c;
  return 0;
}

/* --- parser state and helpers ------------------------------------------- */

typedef struct parser {
  kt__diag *d;
  kt__kernel_decl *k;
  kt__lexer lx;
  const char *attr; /* the attribute being read, for messages */
  kt__loc attr_loc;
  kt__expr **uses; /* expressions whose free names are runtime sizes, in text order */
  int nuses;
  bool has_kernel;
  kt__lang lang; /* of the file: what @constant can mean */
} parser;

#define TOK (p->lx.tok)

static void next(parser *p) { kt__lex_next(&p->lx); }

static bool accept(parser *p, kt__tok_kind kind) {
  if (TOK.kind != kind) return false;
  next(p);
  return true;
}

/* "expected WHAT but found X", unless the lexer already reported the token. */
static bool expected(parser *p, const char *what) {
  if (TOK.kind != KT__T_ERROR) {
    char got[64];
    kt__tok_describe(&TOK, got, sizeof got);
    kt__diag_error(p->d, TOK.loc, "expected %s in @%s but found %s", what, p->attr, got);
  }
  return false;
}

static bool expect(parser *p, kt__tok_kind kind, const char *what) { return accept(p, kind) || expected(p, what); }

static char *tok_str(const kt__token *t) { return kt__xstrndup(t->text, t->len); }

/* A constant part of E that cannot be evaluated (1 / 0, 1 << 70) is an
 * error now, where it is written, rather than a failure of every
 * configuration later. WHAT names the attribute (@where, @dims(N)). */
static void check_constants(parser *p, const kt__expr *e, const char *what) {
  kt__eval_error ee;
  if (kt__expr_check_constants(e, &ee) != 0) kt__diag_error(p->d, ee.loc, "%s: %s", what, ee.msg);
}

static void add_use(parser *p, kt__expr *e) {
  char what[64];
  snprintf(what, sizeof what, "@%s", p->attr);
  check_constants(p, e, what);
  p->uses = kt__xreallocarray(p->uses, (size_t)p->nuses + 1, sizeof *p->uses);
  p->uses[p->nuses++] = e;
}

#define PUSH(arr, n) ((arr) = kt__xreallocarray((arr), (size_t)(n) + 1, sizeof *(arr)), &(arr)[(n)++])

/* args -> "(" [ item { "," item } ] ")" */
static bool parse_args(parser *p, bool (*item)(parser *, void *), void *ud, int *count) {
  *count = 0;
  if (!expect(p, KT__T_LPAREN, "'('")) return false;
  if (accept(p, KT__T_RPAREN)) return true;
  for (;;) {
    if (!item(p, ud)) return false;
    (*count)++;
    if (accept(p, KT__T_RPAREN)) return true;
    if (!expect(p, KT__T_COMMA, "',' or ')'")) return false;
  }
}

/* --- @autotune and @cluster --------------------------------------------- */

static const kt__tunedim *find_tuned(const kt__kernel_decl *k, const char *name) {
  for (int i = 0; i < k->ntune; i++)
    if (strcmp(k->tune[i].name, name) == 0) return &k->tune[i];
  for (int i = 0; i < k->ncluster; i++)
    if (strcmp(k->cluster[i].name, name) == 0) return &k->cluster[i];
  return NULL;
}

/* value -> [ "-" ] INT */
static bool choice_value(parser *p, const char *name, int64_t *v) {
  kt__token t = TOK;
  bool neg = accept(p, KT__T_MINUS);
  if (TOK.kind == KT__T_INT) {
    *v = neg ? -TOK.ival : TOK.ival;
    next(p);
    return true;
  }
  if (TOK.kind == KT__T_FLOAT || TOK.kind == KT__T_IDENT) {
    kt__diag_error(p->d, t.loc,
                   "non-integer value '%s%.*s' in the choices of %s; choices are "
                   "integer literals",
                   neg ? "-" : "", (int)TOK.len, TOK.text, name);
    return false;
  }
  return expected(p, "an integer choice");
}

static void warn_repeated_values(parser *p, const kt__tunedim *t) {
  for (int i = 0; i < t->count; i++)
    for (int j = 0; j < i; j++)
      if (t->values[i] == t->values[j]) {
        kt__diag_warning(p->d, t->loc,
                         "%s lists %lld twice; the repeated configurations are tried "
                         "only once",
                         t->name, (long long)t->values[i]);
        return;
      }
}

/* search_dim -> IDENT "in" ( "[" values "]" | "{" values "}" )
 * values -> value { "," value }
 * Brackets follow the doubling rule for two values (docs/LANGUAGE.md);
 * braces are always the values as written, two of them included. */
static bool item_search_dim(parser *p, void *ud) {
  bool cluster = *(const bool *)ud;
  kt__token name = TOK;
  if (name.kind != KT__T_IDENT || !kt__tok_is(kt__lex_peek(&p->lx), "in")) return expected(p, "NAME in [values]");
  next(p);
  next(p);
  char *id = tok_str(&name);
  kt__token open = TOK;
  int64_t *vals = NULL;
  int n = 0;
  bool explicit_list = accept(p, KT__T_LBRACE), ok = explicit_list || expect(p, KT__T_LBRACKET, "'[' or '{'");
  kt__tok_kind close = explicit_list ? KT__T_RBRACE : KT__T_RBRACKET;
  if (ok && TOK.kind == close) {
    kt__diag_error(p->d, open.loc, "empty list: %s in %s has no choices; give at least one value", id,
                   explicit_list ? "{}" : "[]");
    ok = false;
  }
  while (ok) {
    int64_t v;
    ok = choice_value(p, id, &v);
    if (ok) *PUSH(vals, n) = v;
    if (ok && accept(p, close)) break;
    if (ok) ok = expect(p, KT__T_COMMA, explicit_list ? "',' or '}'" : "',' or ']'");
  }
  const kt__tunedim *prev = ok ? find_tuned(p->k, id) : NULL;
  if (prev) {
    kt__diag_error(p->d, name.loc,
                   "%s is declared twice (first at line %d, column %d); give each "
                   "tuned name one list, in @autotune or @cluster",
                   id, prev->loc.line, prev->loc.col);
    ok = false;
  }
  kt__tunedim t = {id, name.loc, NULL, 0};
  char msg[256];
  if (ok && explicit_list) {
    t.values = vals, t.count = n, vals = NULL;
  } else if (ok && kt__expand_choices(vals, n, &t.values, &t.count, msg) != 0) {
    kt__diag_error(p->d, name.loc, "%s: %s", id, msg);
    ok = false;
  }
  free(vals);
  if (!ok) {
    free(id);
    return false;
  }
  warn_repeated_values(p, &t);
  if (cluster) *PUSH(p->k->cluster, p->k->ncluster) = t;
  else *PUSH(p->k->tune, p->k->ntune) = t;
  return true;
}

/* autotune -> "@autotune" "(" search_dim { "," search_dim } ")" */
static bool attr_autotune(parser *p) {
  int n;
  bool cluster = false;
  return parse_args(p, item_search_dim, &cluster, &n);
}

/* cluster -> "@cluster" "(" search_dim { "," search_dim } ")" */
static bool attr_cluster(parser *p) {
  int n;
  bool cluster = true;
  return parse_args(p, item_search_dim, &cluster, &n);
}

/* --- attributes holding expressions ------------------------------------- */

typedef struct expr_list {
  kt__expr *e[3];
  int n, max;
} expr_list;

/* positional -> expr   (NAME = value is refused with a clear message) */
static bool item_positional(parser *p, void *ud) {
  expr_list *l = ud;
  if (TOK.kind == KT__T_IDENT && kt__lex_peek(&p->lx)->kind == KT__T_ASSIGN) {
    kt__diag_error(p->d, TOK.loc, "@%s takes expressions, not NAME = value", p->attr);
    return false;
  }
  kt__token at = TOK;
  if (l->n == l->max) {
    kt__diag_error(p->d, at.loc, "@%s takes at most %d expression%s", p->attr, l->max, l->max == 1 ? "" : "s");
    return false;
  }
  kt__expr *e = kt__expr_parse(&p->lx);
  if (!e) return false;
  add_use(p, e);
  l->e[l->n++] = e;
  return true;
}

/* Reads "(" expr { "," expr } ")" with 1..MAX expressions into OUT. */
static bool expressions(parser *p, int max, kt__expr **out, int *n) {
  expr_list l = {{NULL, NULL, NULL}, 0, max};
  int count, uses = p->nuses;
  bool ok = parse_args(p, item_positional, &l, &count);
  if (ok && l.n == 0) {
    kt__diag_error(p->d, p->attr_loc, "@%s needs %s", p->attr, max == 1 ? "an expression" : "1 to 3 expressions");
    ok = false;
  }
  if (!ok) { /* drop what was read, and its place in the use list */
    for (int i = 0; i < l.n; i++) kt__expr_free(l.e[i]);
    p->nuses = uses;
    *n = 0;
    return false;
  }
  for (int i = 0; i < l.n; i++) out[i] = l.e[i];
  *n = l.n;
  return true;
}

/* grid -> "@grid" "(" expr [ "," expr [ "," expr ] ] ")" */
static bool attr_grid(parser *p) { return expressions(p, 3, p->k->grid, &p->k->ngrid); }

/* block -> "@block" "(" expr [ "," expr [ "," expr ] ] ")" */
static bool attr_block(parser *p) { return expressions(p, 3, p->k->block, &p->k->nblock); }

/* where -> "@where" "(" expr ")" */
static bool attr_where(parser *p) {
  kt__expr *e;
  int n;
  if (!expressions(p, 1, &e, &n)) return false;
  *PUSH(p->k->where, p->k->nwhere) = e;
  return true;
}

/* shared -> "@shared" "(" expr ")"   (and the same for @flops and @bytes) */
static bool attr_shared(parser *p) {
  int n;
  return expressions(p, 1, &p->k->shared, &n);
}
static bool attr_flops(parser *p) {
  int n;
  return expressions(p, 1, &p->k->flops, &n);
}
static bool attr_bytes(parser *p) {
  int n;
  return expressions(p, 1, &p->k->bytes, &n);
}

/* --- @dims, @key, @verify ------------------------------------------------ */

/* binding -> IDENT "=" expr */
static bool item_dim(parser *p, void *ud) {
  kt__token name = TOK;
  if (name.kind != KT__T_IDENT || kt__lex_peek(&p->lx)->kind != KT__T_ASSIGN) return expected(p, "NAME = value");
  next(p);
  next(p);
  kt__expr *e = kt__expr_parse(&p->lx);
  if (!e) return false;
  kt__binding b = {tok_str(&name), name.loc, e, NULL};
  char what[300];
  snprintf(what, sizeof what, "@dims(%s)", b.name);
  check_constants(p, e, what);
  *PUSH(p->k->dims, p->k->ndims) = b;
  return true;
}

/* dims -> "@dims" "(" binding { "," binding } ")" */
static bool attr_dims(parser *p) {
  int n;
  return parse_args(p, item_dim, NULL, &n);
}

/* key_item -> IDENT [ "=" IDENT ]   (the IDENT after "=" names a bucketing) */
static bool item_key(parser *p, void *ud) {
  kt__token name = TOK;
  if (!expect(p, KT__T_IDENT, "a runtime size name")) return false;
  kt__binding b = {tok_str(&name), name.loc, NULL, NULL};
  if (accept(p, KT__T_ASSIGN)) {
    if (!kt__tok_is(&TOK, "pow2")) {
      if (TOK.kind != KT__T_ERROR)
        kt__diag_error(p->d, TOK.loc,
                       "unknown bucketing in @key: write %s = pow2 (sizes rounded up "
                       "to a power of two) or just %s",
                       b.name, b.name);
      free(b.name);
      return false;
    }
    b.bucket = tok_str(&TOK);
    next(p);
  }
  *PUSH(p->k->key, p->k->nkey) = b;
  return true;
}

/* key -> "@key" "(" key_item { "," key_item } ")" */
static bool attr_key(parser *p) {
  int n;
  p->k->has_key = true;
  return parse_args(p, item_key, NULL, &n);
}

/* tolerance -> ("atol" | "rtol") "=" number */
static bool item_tolerance(parser *p, void *ud) {
  kt__token name = TOK;
  bool is_atol = kt__tok_is(&name, "atol");
  if (!is_atol && !kt__tok_is(&name, "rtol")) {
    if (name.kind == KT__T_ERROR) return false;
    char got[64];
    kt__tok_describe(&name, got, sizeof got);
    kt__diag_error(p->d, name.loc, "@verify takes atol = <number> and rtol = <number>, not %s", got);
    return false;
  }
  next(p);
  if (!expect(p, KT__T_ASSIGN, "'='")) return false;
  if (TOK.kind == KT__T_MINUS) {
    kt__diag_error(p->d, TOK.loc, "a tolerance cannot be negative");
    return false;
  }
  if (TOK.kind != KT__T_INT && TOK.kind != KT__T_FLOAT) return expected(p, "a number");
  *(is_atol ? &p->k->atol : &p->k->rtol) = TOK.fval;
  *(is_atol ? &p->k->has_atol : &p->k->has_rtol) = true;
  next(p);
  return true;
}

/* verify -> "@verify" "(" tolerance { "," tolerance } ")" */
static bool attr_verify(parser *p) {
  int n;
  p->k->has_verify = true;
  return parse_args(p, item_tolerance, NULL, &n);
}

/* --- @kernel ------------------------------------------------------------- */

/* C spellings users reach for, mapped to the annotation's type names. */
static const char *suggest_type(const char *c) {
  static const char *const map[][2] = {
      {"float", "f32"}, {"double", "f64"},  {"half", "f16"},     {"__half", "f16"},   {"__nv_bfloat16", "bf16"},
      {"int", "i32"},   {"int32_t", "i32"}, {"unsigned", "u32"}, {"uint", "u32"},     {"uint32_t", "u32"},
      {"long", "i64"},  {"int64_t", "i64"}, {"size_t", "u64"},   {"uint64_t", "u64"}, {"char", "i8"},
      {"int8_t", "i8"}, {"uint8_t", "u8"},  {"uchar", "u8"},     {"f8", "u8"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(map[i][0], c) == 0) return map[i][1];
  return NULL;
}

/* scalar_type -> "f16" | "bf16" | "f32" | "f64" | "i8" | "u8" | "i32" | "u32" | "i64" | "u64" */
static bool scalar_type(parser *p, kt__dtype *out) {
  if (TOK.kind != KT__T_IDENT) return expected(p, "a type");
  char *name = tok_str(&TOK);
  int t = kt__dtype_from_name(name);
  if (t < 0) {
    const char *s = suggest_type(name);
    kt__diag_error(p->d, TOK.loc,
                   "unknown type '%s'%s%s%s (the types are f16, bf16, f32, f64, i8, "
                   "u8, i32, u32, i64, u64)",
                   name, s ? "; did you mean " : "", s ? s : "", s ? "?" : "");
    free(name);
    return false;
  }
  free(name);
  *out = (kt__dtype)t;
  next(p);
  return true;
}

/* extents -> "[" expr { "," expr } "]"   (a tensor's shape, a tensor map's
 * box: outermost first). OPENING says what '[' begins, EMPTY what an empty
 * list lacks (with %s the parameter's name). */
static bool extents(parser *p, const kt__param *q, const char *opening, const char *empty, kt__expr ***items, int *n) {
  kt__token open = TOK;
  if (!expect(p, KT__T_LBRACKET, opening)) return false;
  if (TOK.kind == KT__T_RBRACKET) {
    kt__diag_error(p->d, open.loc, empty, q->name);
    return false;
  }
  for (;;) {
    kt__expr *e = kt__expr_parse(&p->lx);
    if (!e) return false;
    add_use(p, e);
    *PUSH(*items, *n) = e;
    if (accept(p, KT__T_RBRACKET)) return true;
    if (!expect(p, KT__T_COMMA, "',' or ']'")) return false;
  }
}

/* shape -> extents */
static bool tensor_shape(parser *p, kt__param *q) {
  return extents(p, q, "'[' and the tensor's shape", "tensor '%s' has an empty shape; give its sizes, e.g. [N]",
                 &q->dims, &q->ndims);
}

static const char *const init_names[] = {"random", "zeros", "ones", "iota", "file"};
enum { NINIT_NAMES = sizeof init_names / sizeof init_names[0] };

/* random_range -> "(" expr "," expr ")"   (after "random") */
static bool random_range(parser *p, kt__param *q) {
  next(p); /* ( */
  kt__expr *lo = kt__expr_parse(&p->lx);
  if (!lo) return false;
  add_use(p, lo);
  q->random_lo = lo;
  if (!expect(p, KT__T_COMMA, "',' and the end of the range (random(LO, HI): LO <= value < HI)")) return false;
  kt__expr *hi = kt__expr_parse(&p->lx);
  if (!hi) return false;
  add_use(p, hi);
  q->random_hi = hi;
  return expect(p, KT__T_RPAREN, "')' after random(LO, HI)");
}

/* file_source -> "(" STRING [ "," scalar_type ] ")"   (after "file") */
static bool file_source(parser *p, kt__param *q) {
  if (!expect(p, KT__T_LPAREN, "'(' and a quoted path: file(\"data.npy\")")) return false;
  if (TOK.kind != KT__T_STRING) return expected(p, "a quoted path (file(\"data.npy\"), or file(\"data.bin\", f32))");
  q->file_loc = TOK.loc;
  q->file = kt__xstrndup(TOK.text + 1, TOK.len - 2);
  if (!q->file[0]) {
    kt__diag_error(p->d, TOK.loc, "the path of tensor '%s' is empty", q->name);
    return false;
  }
  next(p);
  if (accept(p, KT__T_COMMA)) {
    if (!scalar_type(p, &q->file_type)) return false;
    q->file_raw = true;
  }
  return expect(p, KT__T_RPAREN, "')' (file(\"data.npy\"), or file(\"data.bin\", f32) for raw binary)");
}

/* init -> "random" [ random_range ] | "zeros" | "ones" | "iota" | "file" file_source */
static bool tensor_init(parser *p, kt__param *q) {
  for (int i = 0; i < NINIT_NAMES; i++)
    if (kt__tok_is(&TOK, init_names[i])) {
      q->init = (kt__init)i;
      q->init_given = true;
      next(p);
      if (q->init == KT__INIT_FILE) return file_source(p, q);
      if (q->init == KT__INIT_RANDOM && TOK.kind == KT__T_LPAREN) return random_range(p, q);
      return true;
    }
  if (TOK.kind != KT__T_ERROR) {
    char got[64];
    kt__tok_describe(&TOK, got, sizeof got);
    kt__diag_error(p->d, TOK.loc,
                   "unknown initial value %s for tensor '%s' (expected random, random(LO, HI), zeros, "
                   "ones, iota or file(\"PATH\"))",
                   got, q->name);
  }
  return false;
}

/* scalar_value -> expr   (a tensor initial value here is a mistake worth naming) */
static bool scalar_value(parser *p, kt__param *q) {
  for (int i = 0; i < NINIT_NAMES; i++)
    if (kt__tok_is(&TOK, init_names[i]) && kt__lex_peek(&p->lx)->kind != KT__T_LPAREN) {
      kt__diag_error(p->d, TOK.loc,
                     "'%s' is an initial value for tensors; scalar '%s' takes an "
                     "integer expression",
                     init_names[i], q->name);
      return false;
    }
  q->value = kt__expr_parse(&p->lx);
  if (!q->value) return false;
  add_use(p, q->value);
  return true;
}

/* box -> extents   (a tensor map's tile, outermost first) */
static bool tensormap_box(parser *p, kt__param *q) {
  return extents(p, q, "'[' and the box, outermost first: box = [TILE_M, TILE_K]",
                 "tensor map '%s' has an empty box; give one extent per dimension", &q->box, &q->nbox);
}

/* One "box = [...]" or "swizzle = expr" of a tensor map. */
static bool tensormap_option(parser *p, kt__param *q) {
  kt__token key = TOK;
  bool is_box = kt__tok_is(&key, "box"), is_swizzle = kt__tok_is(&key, "swizzle");
  if (!is_box && !is_swizzle) return expected(p, "box = [...] or swizzle = 0, 32, 64 or 128");
  if ((is_box && q->nbox) || (is_swizzle && q->swizzle)) {
    kt__diag_error(p->d, key.loc, "'%.*s' is given twice for tensor map '%s'", (int)key.len, key.text, q->name);
    return false;
  }
  next(p);
  if (!expect(p, KT__T_ASSIGN, "'='")) return false;
  if (is_box) return tensormap_box(p, q);
  q->swizzle = kt__expr_parse(&p->lx);
  if (!q->swizzle) return false;
  add_use(p, q->swizzle);
  return true;
}

/* tensormap -> "tensormap" "(" IDENT { "," ( "box" "=" box | "swizzle" "=" expr ) } ")"
 * The tensor it names is looked up once every parameter is read. */
static bool tensormap_type(parser *p, kt__param *q, const kt__token *mode_tok) {
  if (q->mode != KT__MODE_UNSET) {
    kt__diag_error(p->d, mode_tok->loc, "'%.*s' applies to tensors; tensor map '%s' is passed by value",
                   (int)mode_tok->len, mode_tok->text, q->name);
    return false;
  }
  if (p->lang != KT__LANG_CUDA) {
    kt__diag_error(p->d, TOK.loc,
                   "tensor map '%s': tensor maps are CUDA's (the Tensor Memory Accelerator of sm_90 and later); "
                   "this kernel's backend has none, so pass the tensor itself",
                   q->name);
    return false;
  }
  q->is_tensormap = true;
  q->map_tensor = -1;
  next(p);
  if (!expect(p, KT__T_LPAREN, "'(' and the tensor it maps: tensormap(a, box = [TILE_M, TILE_K])")) return false;
  if (TOK.kind != KT__T_IDENT) return expected(p, "the name of the tensor parameter it maps");
  q->map_of = tok_str(&TOK);
  q->map_of_loc = TOK.loc;
  next(p);
  while (accept(p, KT__T_COMMA))
    if (!tensormap_option(p, q)) return false;
  if (!expect(p, KT__T_RPAREN, "',' or ')'")) return false;
  if (!q->nbox) {
    kt__diag_error(p->d, q->loc, "tensor map '%s' needs its box: tensormap(%s, box = [TILE_M, TILE_K])", q->name,
                   q->map_of);
    return false;
  }
  return true;
}

/* param_type -> [ "in" | "out" | "inout" ] ( "tensor" "<" scalar_type ">" shape | tensormap | scalar_type ) */
static bool param_type(parser *p, kt__param *q) {
  static const char *const modes[] = {"in", "out", "inout"};
  kt__token mode_tok = TOK;
  for (int i = 0; i < 3; i++)
    if (kt__tok_is(&TOK, modes[i]) && kt__lex_peek(&p->lx)->kind == KT__T_IDENT) {
      q->mode = (kt__mode)(KT__MODE_IN + i);
      next(p);
    }
  if (kt__tok_is(&TOK, "tensormap")) return tensormap_type(p, q, &mode_tok);
  if (!kt__tok_is(&TOK, "tensor")) {
    if (!scalar_type(p, &q->type)) return false;
    if (q->mode != KT__MODE_UNSET) {
      kt__diag_error(p->d, mode_tok.loc, "'%.*s' applies to tensors; scalar '%s' is passed by value", (int)mode_tok.len,
                     mode_tok.text, q->name);
      return false;
    }
    return true;
  }
  q->is_tensor = true;
  next(p);
  return expect(p, KT__T_LT, "'<' (write tensor<f32>[N])") && scalar_type(p, &q->type) && expect(p, KT__T_GT, "'>'") &&
         tensor_shape(p, q);
}

/* Expressions already handed to add_use are owned by the parameter; on
 * failure they are freed here, so drop them from the use list too. */
static void forget_uses(parser *p, int keep) { p->nuses = keep; }

/* param -> IDENT ":" param_type [ "=" ( init | expr ) ] */
static bool item_param(parser *p, void *ud) {
  kt__token name = TOK;
  if (!expect(p, KT__T_IDENT, "a parameter name")) return false;
  kt__param q;
  memset(&q, 0, sizeof q);
  q.name = tok_str(&name);
  q.loc = name.loc;
  int uses = p->nuses;
  bool ok = expect(p, KT__T_COLON, "':' and a type (x: tensor<f32>[N], n: i32)") && param_type(p, &q);
  if (ok && q.is_tensormap && TOK.kind == KT__T_ASSIGN) {
    kt__diag_error(p->d, TOK.loc, "tensor map '%s' is built from its tensor; it takes no value", q.name);
    ok = false;
  }
  if (ok && accept(p, KT__T_ASSIGN)) ok = q.is_tensor ? tensor_init(p, &q) : scalar_value(p, &q);
  for (int i = 0; ok && i < p->k->nparams; i++)
    if (strcmp(p->k->params[i].name, q.name) == 0) {
      kt__diag_error(p->d, name.loc, "parameter '%s' is declared twice in @kernel", q.name);
      ok = false;
    }
  if (!ok) {
    forget_uses(p, uses);
    kt__param_free(&q);
    return false;
  }
  *PUSH(p->k->params, p->k->nparams) = q;
  return true;
}

static bool named(const kt__param *list, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(list[i].name, name) == 0) return true;
  return false;
}

static void refuse_name_in_constant(void *ud, const char *name, kt__loc at) {
  parser *p = ud;
  kt__diag_error(p->d, at,
                 "a @constant is made once, whatever the sizes and configuration (its shape is fixed when the "
                 "kernel is compiled: a CUDA __constant__ or C global array), so its shape and range take "
                 "integers only, not the name %s",
                 name);
}

/* Only what a @constant can be: device-side data the kernel reads, of a
 * fixed shape, in a language whose kernels have such symbols. */
static bool constant_is_valid(parser *p, const kt__token *name, kt__param *q) {
  if (!q->is_tensor) {
    kt__diag_error(p->d, name->loc,
                   "@constant '%s' is a scalar; a @constant is an array the kernel reads (%s: tensor<f32>[16] "
                   "= ones); a scalar belongs in @kernel or is a -D name",
                   q->name, q->name);
    return false;
  }
  if (q->mode != KT__MODE_UNSET && q->mode != KT__MODE_IN) {
    kt__diag_error(p->d, name->loc, "@constant '%s' is read-only data: write it without a mode, or `in`", q->name);
    return false;
  }
  if (p->lang == KT__LANG_OPENCL) {
    kt__diag_error(p->d, name->loc,
                   "OpenCL C has no constant symbols that the host fills: pass '%s' as a `__constant` pointer "
                   "parameter and declare it in @kernel (%s: in tensor<...>[...]), where it is a buffer",
                   q->name, q->name);
    return false;
  }
  if (named(p->k->params, p->k->nparams, q->name) || named(p->k->constants, p->k->nconstants, q->name)) {
    kt__diag_error(p->d, name->loc, "'%s' is declared twice (in @kernel or @constant)", q->name);
    return false;
  }
  int errors = p->d->nerrors;
  for (int j = 0; j < q->ndims; j++) kt__expr_visit_names(q->dims[j], refuse_name_in_constant, p);
  if (q->random_lo) kt__expr_visit_names(q->random_lo, refuse_name_in_constant, p);
  if (q->random_hi) kt__expr_visit_names(q->random_hi, refuse_name_in_constant, p);
  q->mode = KT__MODE_IN;
  return p->d->nerrors == errors;
}

/* constant -> IDENT ":" [ "in" ] "tensor" "<" scalar_type ">" shape [ "=" init ] */
static bool item_constant(parser *p, void *ud) {
  kt__token name = TOK;
  if (!expect(p, KT__T_IDENT, "a constant's name")) return false;
  kt__param q;
  memset(&q, 0, sizeof q);
  q.name = tok_str(&name);
  q.loc = name.loc;
  int uses = p->nuses;
  bool ok = expect(p, KT__T_COLON, "':' and a type (w: tensor<f32>[225] = ones)") && param_type(p, &q);
  if (ok && q.is_tensor && accept(p, KT__T_ASSIGN)) ok = tensor_init(p, &q);
  forget_uses(p, uses); /* a constant's shape holds no runtime size */
  if (!ok || !constant_is_valid(p, &name, &q)) {
    kt__param_free(&q);
    return false;
  }
  *PUSH(p->k->constants, p->k->nconstants) = q;
  return true;
}

/* constant_attr -> "@constant" "(" constant { "," constant } ")" */
static bool attr_constant(parser *p) {
  int n;
  return parse_args(p, item_constant, NULL, &n);
}

/* Ties each tensor map to the tensor it names: a tensor parameter of the
 * same @kernel, of the box's rank (1 to 5, TMA's limit). */
static bool tensormaps_resolve(parser *p) {
  bool ok = true;
  int count = 0;
  for (int i = 0; i < p->k->nparams; i++) {
    kt__param *q = &p->k->params[i];
    if (!q->is_tensormap) continue;
    if (++count > KT__MAX_TENSORMAPS) {
      kt__diag_error(p->d, q->loc, "tensor map '%s' is one too many: a kernel takes at most %d", q->name,
                     KT__MAX_TENSORMAPS);
      ok = false;
    }
    for (int j = 0; j < p->k->nparams; j++)
      if (p->k->params[j].is_tensor && strcmp(p->k->params[j].name, q->map_of) == 0) q->map_tensor = j;
    if (q->map_tensor < 0) {
      kt__diag_error(p->d, q->map_of_loc, "tensor map '%s' maps '%s', which is no tensor parameter of @kernel %s",
                     q->name, q->map_of, p->k->name);
      ok = false;
      continue;
    }
    const kt__param *t = &p->k->params[q->map_tensor];
    q->type = t->type;
    if (q->nbox != t->ndims || q->nbox > 5) {
      kt__diag_error(p->d, q->loc,
                     "tensor map '%s' has a box of %d dimension%s but tensor '%s' has %d; give one extent per "
                     "dimension (at most 5)",
                     q->name, q->nbox, q->nbox == 1 ? "" : "s", t->name, t->ndims);
      ok = false;
    }
  }
  return ok;
}

/* kernel -> "@kernel" IDENT "(" [ param { "," param } ] ")" */
static bool attr_kernel(parser *p) {
  p->has_kernel = true;
  p->k->loc = p->attr_loc;
  if (TOK.kind != KT__T_IDENT) return expected(p, "the kernel's name (@kernel NAME(params))");
  p->k->name = tok_str(&TOK);
  next(p);
  int n;
  return parse_args(p, item_param, NULL, &n) && tensormaps_resolve(p);
}

/* --- @reference, @check ------------------------------------------------- */

/* One name in parentheses into *OUT, for WHAT (messages). */
static bool one_name(parser *p, char **out, kt__loc *loc, const char *what) {
  if (!expect(p, KT__T_LPAREN, "'('")) return false;
  if (TOK.kind != KT__T_IDENT) return expected(p, what);
  *out = tok_str(&TOK);
  *loc = TOK.loc;
  next(p);
  return expect(p, KT__T_RPAREN, "')' after the name");
}

/* reference -> "@reference" "(" IDENT ")" */
static bool attr_reference(parser *p) {
  return one_name(p, &p->k->reference, &p->k->reference_loc, "the name of the reference kernel");
}

/* check -> "@check" "(" IDENT ")" */
static bool attr_check(parser *p) {
  return one_name(p, &p->k->check, &p->k->check_loc, "the name of the C check function");
}

/* --- attribute dispatch ---------------------------------------------------- */

static const struct attr_def {
  const char *name;
  bool once;
  bool (*parse)(parser *p);
} attr_defs[] = {
    {"autotune", false, attr_autotune},  {"cluster", false, attr_cluster}, {"kernel", true, attr_kernel},
    {"grid", true, attr_grid},           {"block", true, attr_block},      {"where", false, attr_where},
    {"dims", false, attr_dims},          {"key", true, attr_key},          {"verify", true, attr_verify},
    {"shared", true, attr_shared},       {"flops", true, attr_flops},      {"bytes", true, attr_bytes},
    {"reference", true, attr_reference}, {"check", true, attr_check},      {"constant", false, attr_constant},
};
enum { NATTRS = sizeof attr_defs / sizeof attr_defs[0] };

static int find_attr(const char *name, size_t len) {
  for (int i = 0; i < NATTRS; i++)
    if (strlen(attr_defs[i].name) == len && memcmp(attr_defs[i].name, name, len) == 0) return i;
  return -1;
}

/* The attribute name of an annotation's first segment ("@name..."). */
static size_t attr_name_len(const kt__attr_text *a) {
  const kt__segment *s = &a->segs[0];
  size_t n = 1;
  while (n < s->len && (s->text[n] == '_' || (s->text[n] >= 'a' && s->text[n] <= 'z') ||
                        (s->text[n] >= 'A' && s->text[n] <= 'Z') || (s->text[n] >= '0' && s->text[n] <= '9')))
    n++;
  return n - 1;
}

static bool too_long(parser *p, const kt__attr_text *a) {
  for (int i = 0; i < a->nsegs; i++)
    if (a->segs[i].len > KT__LINE_MAX) {
      kt__diag_error(p->d, a->segs[i].at,
                     "annotation line too long (%zu characters; the limit is %d); "
                     "split the attribute over several comment lines",
                     a->segs[i].len, KT__LINE_MAX);
      return true;
    }
  return false;
}

/* Attributes the language leaves to a backend, which reads them from the
 * kernel's unknown attributes: kept without the "ignored" note, which would
 * be untrue (`@arch(sm_90a)`: NVRTC's target, src/backend/nvrtc.c). */
static bool read_by_a_backend(const char *name) { return strcmp(name, "arch") == 0; }

/* attribute -> "@" IDENT [ "(" ... ")" ]   (one per line, continued while
 * brackets are open) */
static void parse_attribute(parser *p, const kt__attr_text *a, kt__loc *seen) {
  if (too_long(p, a)) return;
  size_t len = attr_name_len(a);
  int which = find_attr(a->segs[0].text + 1, len);
  kt__loc at = a->segs[0].at;
  if (which < 0) {
    kt__unknown_attr u = {kt__xstrndup(a->segs[0].text + 1, len), at};
    *PUSH(p->k->unknown, p->k->nunknown) = u;
    if (!read_by_a_backend(u.name)) kt__diag_note(p->d, at, "unknown attribute @%s ignored", u.name);
    return;
  }
  const struct attr_def *def = &attr_defs[which];
  if (def->once && seen[which].line) {
    kt__diag_error(p->d, at, "@%s is given twice (first at line %d); keep one", def->name, seen[which].line);
    return;
  }
  seen[which] = at;
  p->attr = def->name;
  p->attr_loc = at;
  kt__lex_init(&p->lx, a->segs, a->nsegs, p->d);
  next(p); /* @ */
  next(p); /* name */
  if (!def->parse(p) || TOK.kind == KT__T_EOF) return;
  char got[64];
  kt__tok_describe(&TOK, got, sizeof got);
  if (TOK.kind != KT__T_ERROR)
    kt__diag_error(p->d, TOK.loc, "unexpected %s after @%s(...); write one attribute per line", got, def->name);
}

/* --- whole-kernel checks ----------------------------------------------------- */

static void note_size(void *ud, const char *name, kt__loc at) {
  parser *p = ud;
  if (find_tuned(p->k, name) || kt__decl_size_index(p->k, name) >= 0) return;
  *PUSH(p->k->sizes, p->k->nsizes) = kt__xstrdup(name);
}

typedef struct shape_check {
  parser *p;
  kt__param *tensor;
} shape_check;

/* A shape that uses a tuned name is allocated for the largest
 * configuration, and its content depends on the configuration. */
static void mark_tuned_shape(void *ud, const char *name, kt__loc at) {
  (void)at;
  shape_check *c = ud;
  if (find_tuned(c->p->k, name)) c->tensor->shape_tuned = true;
}

/* The inputs must be the same for every configuration. */
static void refuse_tuned_in_range(void *ud, const char *name, kt__loc at) {
  shape_check *c = ud;
  if (find_tuned(c->p->k, name))
    kt__diag_error(c->p->d, at,
                   "the random range of '%s' uses %s, a tuned name; every configuration runs on the same "
                   "inputs (use runtime sizes or constants)",
                   c->tensor->name, name);
}

static void refuse_tuned_in_dims(void *ud, const char *name, kt__loc at) {
  parser *p = ud;
  if (find_tuned(p->k, name))
    kt__diag_error(p->d, at, "@dims values must not depend on tuned names, and %s is tuned", name);
}

static void list_sizes(const kt__kernel_decl *k, kt__sbuf *b) {
  kt__sbuf_append(b, "", 0);
  for (int i = 0; i < k->nsizes; i++) kt__sbuf_printf(b, "%s%s", i ? ", " : "", k->sizes[i]);
  if (!k->nsizes) kt__sbuf_printf(b, "none");
}

/* @dims and @key must name runtime sizes, each once. */
static void check_bindings(parser *p, const kt__binding *b, int n, const char *attr) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++)
      if (strcmp(b[i].name, b[j].name) == 0) kt__diag_error(p->d, b[i].loc, "%s appears twice in @%s", b[i].name, attr);
    if (find_tuned(p->k, b[i].name)) {
      kt__diag_error(p->d, b[i].loc, "%s is a tuned name; @%s is about runtime sizes", b[i].name, attr);
    } else if (kt__decl_size_index(p->k, b[i].name) < 0) {
      kt__sbuf s = {0};
      list_sizes(p->k, &s);
      kt__diag_error(p->d, b[i].loc,
                     "@%s names %s, which is not a runtime size of %s (its runtime "
                     "sizes: %s)",
                     attr, b[i].name, p->k->name ? p->k->name : "this kernel", s.s);
      kt__sbuf_free(&s);
    }
    if (b[i].value) kt__expr_visit_names(b[i].value, refuse_tuned_in_dims, p);
  }
}

/* The space of one stage is a product of choice counts; it is enumerated
 * by a 64-bit index, so a product that overflows is refused here, pointing at
 * the name that tips it over. */
static void check_product(parser *p, const kt__tunedim *dims, int n, const char *attr) {
  uint64_t size = 1;
  for (int i = 0; i < n; i++)
    if (!kt__mul_u64(size, (uint64_t)dims[i].count, &size)) {
      kt__diag_error(p->d, dims[i].loc,
                     "the @%s space overflows 64 bits at %s (%d choices): the "
                     "product of the choice counts must stay below 2^64",
                     attr, dims[i].name, dims[i].count);
      return;
    }
}

/* Each tuned name becomes -DNAME=VALUE: one the code already uses for
 * something else would be rewritten into a number there. */
static void check_tuned_name(parser *p, const kt__tunedim *t) {
  char why[160];
  const kt__kernel_decl *k = p->k;
  if (kt__name_taken(t->name, p->lang, why)) {
    kt__diag_error(p->d, t->loc,
                   "%s cannot be a tuned name: it is %s, and -D%s=VALUE would rewrite it in the code; rename it",
                   t->name, why, t->name);
    return;
  }
  if (k->name && strcmp(k->name, t->name) == 0) {
    kt__diag_error(p->d, t->loc,
                   "%s cannot be a tuned name: it is the kernel's own name, and -D%s=VALUE would rename the function; "
                   "rename it",
                   t->name, t->name);
    return;
  }
  for (int i = 0; i < k->nparams; i++)
    if (strcmp(k->params[i].name, t->name) == 0) {
      kt__diag_error(p->d, t->loc,
                     "%s cannot be a tuned name: it is a parameter of %s (line %d), and -D%s=VALUE would replace the "
                     "parameter's name in the C function with a number; rename the parameter and bind it, e.g. "
                     "%s_value: %s = %s",
                     t->name, k->name, k->params[i].loc.line, t->name, t->name,
                     k->params[i].is_tensor ? "i32" : kt__dtype_name(k->params[i].type), t->name);
      return;
    }
}

typedef struct name_search {
  const char *name;
  bool found;
} name_search;

static void match_name(void *ud, const char *name, kt__loc at) {
  name_search *n = ud;
  (void)at;
  n->found |= strcmp(n->name, name) == 0;
}

/* A runtime size is declared by what gives it a meaning: a tensor's shape,
 * a scalar (its binding, or a bare scalar of that name) or @dims. */
static bool declared_size(const kt__kernel_decl *k, const char *name) {
  name_search n = {name, false};
  for (int i = 0; i < k->ndims; i++) n.found |= strcmp(k->dims[i].name, name) == 0;
  for (int i = 0; i < k->nparams && !n.found; i++) {
    const kt__param *q = &k->params[i];
    for (int j = 0; j < q->ndims; j++) kt__expr_visit_names(q->dims[j], match_name, &n);
    kt__expr_visit_names(q->value, match_name, &n);
    n.found |= !q->is_tensor && !q->is_tensormap && !q->value && strcmp(q->name, name) == 0;
  }
  return n.found;
}

typedef struct undeclared_check {
  parser *p;
  const char *attr;
} undeclared_check;

static void list_tuned(const kt__kernel_decl *k, kt__sbuf *b) {
  for (int i = 0; i < k->ntune + k->ncluster; i++)
    kt__sbuf_printf(b, "%s%s", i ? ", " : "", i < k->ntune ? k->tune[i].name : k->cluster[i - k->ntune].name);
  if (!b->len) kt__sbuf_printf(b, "none");
}

/* A name in @where (or @grid, @block, @shared, @flops, @bytes) that is
 * neither tuned nor a declared runtime size is a typo or a missing
 * declaration, whatever --dim might later give it. */
static void refuse_undeclared(void *ud, const char *name, kt__loc at) {
  undeclared_check *c = ud;
  const kt__kernel_decl *k = c->p->k;
  if (find_tuned(k, name) || declared_size(k, name)) return;
  kt__sbuf tuned = {0};
  list_tuned(k, &tuned);
  kt__diag_error(c->p->d, at,
                 "@%s names %s, which is undeclared: not a tuned name (the kernel's: %s) and not a runtime size (no "
                 "tensor shape, scalar or @dims uses it); correct the spelling or declare it",
                 c->attr, name, tuned.s);
  kt__sbuf_free(&tuned);
}

static void check_declared(parser *p) {
  const kt__kernel_decl *k = p->k;
  undeclared_check c = {p, "where"};
  for (int i = 0; i < k->nwhere; i++) kt__expr_visit_names(k->where[i], refuse_undeclared, &c);
  static const char *const labels[] = {"grid", "block"};
  for (int g = 0; g < 2; g++) {
    c.attr = labels[g];
    for (int i = 0; i < (g ? k->nblock : k->ngrid); i++)
      kt__expr_visit_names(g ? k->block[i] : k->grid[i], refuse_undeclared, &c);
  }
  const kt__expr *single[] = {k->shared, k->flops, k->bytes};
  static const char *const single_labels[] = {"shared", "flops", "bytes"};
  for (int i = 0; i < 3; i++) {
    c.attr = single_labels[i];
    kt__expr_visit_names(single[i], refuse_undeclared, &c);
  }
}

static void finish_kernel(parser *p, kt__loc first) {
  kt__kernel_decl *k = p->k;
  if (!p->has_kernel) {
    kt__diag_error(p->d, first,
                   "these annotations have no @kernel; add `// @kernel NAME(params)` to "
                   "the group, directly above the kernel function");
    return;
  }
  for (int i = 0; i < k->ntune; i++) check_tuned_name(p, &k->tune[i]);
  for (int i = 0; i < k->ncluster; i++) check_tuned_name(p, &k->cluster[i]);
  for (int i = 0; i < p->nuses; i++) kt__expr_visit_names(p->uses[i], note_size, p);
  for (int i = 0; i < k->nparams; i++) {
    kt__param *q = &k->params[i];
    shape_check c = {p, q};
    for (int j = 0; j < q->ndims; j++) kt__expr_visit_names(q->dims[j], mark_tuned_shape, &c);
    if (q->random_lo) kt__expr_visit_names(q->random_lo, refuse_tuned_in_range, &c);
    if (q->random_hi) kt__expr_visit_names(q->random_hi, refuse_tuned_in_range, &c);
  }
  check_declared(p);
  check_bindings(p, k->dims, k->ndims, "dims");
  check_bindings(p, k->key, k->nkey, "key");
  check_product(p, k->tune, k->ntune, "autotune");
  check_product(p, k->cluster, k->ncluster, "cluster");
}

/* --- files ------------------------------------------------------------------- */

static bool group_is_ours(const kt__group *g) {
  for (int i = 0; i < g->nattrs; i++)
    if (find_attr(g->attrs[i].segs[0].text + 1, attr_name_len(&g->attrs[i])) >= 0) return true;
  return false;
}

static void check_signature(kt__file *f, const kt__group *g, kt__kernel_decl *k, kt__diag *d) {
  kt__csig sig;
  kt__loc where = k->loc;
  char msg[256];
  if (kt__csig_parse(&f->src, g, k->name, &sig, &where, msg) != 0) {
    kt__diag_error(d, where, "%s", msg);
    return;
  }
  /* OpenCL passes @shared (dynamic local memory) as one trailing __local
   * pointer that @kernel does not declare: the backend supplies it. */
  int all = sig.nparams;
  if (f->lang == KT__LANG_OPENCL && k->shared && sig.nparams == k->nparams + 1 && sig.is_pointer[sig.nparams - 1])
    sig.nparams--;
  kt__csig_check(k, &sig, d);
  sig.nparams = all;
  kt__csig_free(&sig);
}

static void parse_group(kt__file *f, const kt__group *g, kt__diag *d) {
  kt__kernel_decl *k = PUSH(f->kernels, f->nkernels);
  memset(k, 0, sizeof *k);
  parser p;
  memset(&p, 0, sizeof p);
  p.d = d;
  p.k = k;
  p.lang = f->lang;
  kt__loc seen[NATTRS];
  memset(seen, 0, sizeof seen);
  int errors = d->nerrors;
  for (int i = 0; i < g->nattrs; i++) parse_attribute(&p, &g->attrs[i], seen);
  finish_kernel(&p, g->attrs[0].segs[0].at);
  free(p.uses);
  /* The signature check needs the parameters; skip it when they failed. */
  if (k->name && d->nerrors == errors) check_signature(f, g, k, d);
  for (int i = 0; k->name && i < f->nkernels - 1; i++)
    if (f->kernels[i].name && strcmp(f->kernels[i].name, k->name) == 0)
      kt__diag_error(d, k->loc,
                     "kernel '%s' is annotated twice (first at line %d); kernel names "
                     "must be unique in a file",
                     k->name, f->kernels[i].loc.line);
}

static kt__file *parse_source(kt__file *f, kt__diag *d) {
  int errors = d->nerrors;
  d->src = &f->src;
  kt__group *groups;
  int ngroups;
  kt__find_groups(&f->src, &groups, &ngroups);
  for (int i = 0; i < ngroups; i++) {
    if (!group_is_ours(&groups[i])) continue;
    if (f->nkernels == KT__KERNELS_MAX) {
      kt__diag_error(d, groups[i].attrs[0].segs[0].at, "more than %d annotated kernels in one file; split the file",
                     KT__KERNELS_MAX);
      break;
    }
    parse_group(f, &groups[i], d);
  }
  kt__groups_free(groups, ngroups);
  if (d->nerrors == errors) return f;
  d->src = NULL; /* the messages are already formatted; the source goes with F */
  kt__file_free(f);
  return NULL;
}

/* The language of the backend PATH's extension is registered by; C when
 * none is. */
static kt__lang lang_of(const char *path) {
  const kt__backend *be = kt__backend_for_path(path);
  return be ? be->lang : KT__LANG_C;
}

kt__file *kt__parse_file(const char *path, int lang, kt__diag *d, kt__errbuf *eb) {
  kt__file *f = kt__xcalloc(1, sizeof *f);
  if (kt__source_read(path, &f->src, eb) != KT_OK) {
    free(f);
    return NULL;
  }
  f->lang = lang >= 0 ? (kt__lang)lang : lang_of(path);
  f = parse_source(f, d);
  if (!f) kt__err(eb, KT_INVALID, "%s: invalid annotations", path);
  return f;
}

kt__file *kt__parse_string(const char *label, const char *text, kt__lang lang, kt__diag *d) {
  kt__file *f = kt__xcalloc(1, sizeof *f);
  kt__source_from_string(label, text, &f->src);
  f->lang = lang;
  return parse_source(f, d);
}
