/* The annotation lexer: identifiers, integers (decimal, hex), decimal
 * floats, strings, and the punctuation of the grammar. "//" inside an annotation
 * starts a trailing comment that runs to the end of its line. */
#include "lexer.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_ident_start(int c) { return isalpha(c) || c == '_'; }
static bool is_ident_char(int c) { return isalnum(c) || c == '_'; }

static kt__loc here(const kt__lexer *lx) {
  const kt__segment *s = &lx->segs[lx->seg];
  kt__loc at = {s->at.line, s->at.col + (int)lx->pos};
  return at;
}

/* Moves to the next non-blank character, across segments; false at the end. */
static bool skip_blanks(kt__lexer *lx) {
  while (lx->seg < lx->nsegs) {
    const kt__segment *s = &lx->segs[lx->seg];
    while (lx->pos < s->len && isspace((unsigned char)s->text[lx->pos])) lx->pos++;
    bool comment = lx->pos + 1 < s->len && s->text[lx->pos] == '/' && s->text[lx->pos + 1] == '/';
    if (lx->pos < s->len && !comment) return true;
    lx->seg++;
    lx->pos = 0;
  }
  return false;
}

static void lex_error(kt__lexer *lx, kt__token *t, const char *fmt, const char *what) {
  kt__diag_error(lx->d, t->loc, fmt, what);
  t->kind = KT__T_ERROR;
}

/* number -> digits [ "." digits ] [ ("e"|"E") ["+"|"-"] digits ] | "0x" hexdigits */
static void lex_number(kt__lexer *lx, kt__token *t, const char *p, size_t avail) {
  size_t n = 0;
  bool hex = avail > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  bool is_float = false;
  if (hex) {
    n = 2;
    while (n < avail && isxdigit((unsigned char)p[n])) n++;
  } else {
    while (n < avail && isdigit((unsigned char)p[n])) n++;
    if (n < avail && p[n] == '.') {
      is_float = true;
      n++;
      while (n < avail && isdigit((unsigned char)p[n])) n++;
    }
    if (n < avail && (p[n] == 'e' || p[n] == 'E')) {
      size_t m = n + 1;
      if (m < avail && (p[m] == '+' || p[m] == '-')) m++;
      if (m < avail && isdigit((unsigned char)p[m])) {
        is_float = true;
        n = m;
        while (n < avail && isdigit((unsigned char)p[n])) n++;
      }
    }
  }
  while (n < avail && is_ident_char((unsigned char)p[n])) n++; /* swallow a bad suffix whole */
  t->text = p;
  t->len = n;
  char buf[128];
  snprintf(buf, sizeof buf, "%.*s", (int)(n < 100 ? n : 100), p);
  char *end;
  errno = 0;
  if (is_float) {
    t->kind = KT__T_FLOAT;
    t->fval = strtod(buf, &end);
    /* Past a double's range strtod gives infinity or 0, which would quietly
     * turn a tolerance into none at all (1e400) or an exact one (1e-400). */
    if (errno == ERANGE && (size_t)(end - buf) == n) {
      bool huge = t->fval > 1 || t->fval < -1;
      lex_error(lx, t,
                huge ? "number %s is beyond a double's range (it would read as infinity); write at most 1e308"
                     : "number %s is below a double's range (it would read as 0); write at least 1e-307 or 0",
                buf);
      return;
    }
  } else {
    t->kind = KT__T_INT;
    unsigned long long v = strtoull(buf, &end, hex ? 16 : 10);
    if (errno == ERANGE || v > INT64_MAX || n >= 100) {
      lex_error(lx, t, "integer literal %s does not fit in 64 bits (the largest is 9223372036854775807)", buf);
      return;
    }
    t->ival = (int64_t)v;
    t->fval = (double)v;
  }
  if ((size_t)(end - buf) != n || (hex && n == 2))
    lex_error(lx, t, "malformed number '%s' (write decimal or 0x hexadecimal integers)", buf);
}

/* string -> '"' { any character but '"' } '"'   (on one comment line: a path
 * needs no escapes, and a quote inside one is refused rather than guessed) */
static void lex_string(kt__lexer *lx, kt__token *t, const char *p, size_t avail) {
  size_t n = 1;
  while (n < avail && p[n] != '"') n++;
  t->text = p;
  t->len = n < avail ? n + 1 : n;
  t->kind = KT__T_STRING;
  if (n == avail)
    lex_error(lx, t, "%s has no closing '\"' on its line (a string stays on one comment line)", "this string");
}

/* The punctuation, longest first so that "<<" wins over "<". */
static const struct {
  const char *text;
  kt__tok_kind kind;
} puncts[] = {
    {"<<", KT__T_SHL},   {">>", KT__T_SHR},     {"<=", KT__T_LE},      {">=", KT__T_GE},    {"==", KT__T_EQ},
    {"!=", KT__T_NE},    {"&&", KT__T_ANDAND},  {"||", KT__T_OROR},    {"@", KT__T_AT},     {"(", KT__T_LPAREN},
    {")", KT__T_RPAREN}, {"[", KT__T_LBRACKET}, {"]", KT__T_RBRACKET}, {"{", KT__T_LBRACE}, {"}", KT__T_RBRACE},
    {",", KT__T_COMMA},  {":", KT__T_COLON},    {"=", KT__T_ASSIGN},   {"+", KT__T_PLUS},   {"-", KT__T_MINUS},
    {"*", KT__T_STAR},   {"/", KT__T_SLASH},    {"%", KT__T_PERCENT},  {"<", KT__T_LT},     {">", KT__T_GT},
    {"!", KT__T_NOT},
};

static void lex_one(kt__lexer *lx, kt__token *t) {
  memset(t, 0, sizeof *t);
  if (!skip_blanks(lx)) {
    t->kind = KT__T_EOF;
    if (lx->nsegs > 0) { /* just past the end of the last segment */
      const kt__segment *s = &lx->segs[lx->nsegs - 1];
      t->loc.line = s->at.line;
      t->loc.col = s->at.col + (int)s->len;
    }
    return;
  }
  const kt__segment *s = &lx->segs[lx->seg];
  const char *p = s->text + lx->pos;
  size_t avail = s->len - lx->pos;
  t->loc = here(lx);
  if (is_ident_start((unsigned char)*p)) {
    size_t n = 1;
    while (n < avail && is_ident_char((unsigned char)p[n])) n++;
    t->kind = KT__T_IDENT;
    t->text = p;
    t->len = n;
  } else if (isdigit((unsigned char)*p) || (*p == '.' && avail > 1 && isdigit((unsigned char)p[1]))) {
    lex_number(lx, t, p, avail);
  } else if (*p == '"') {
    lex_string(lx, t, p, avail);
  } else {
    t->kind = KT__T_ERROR;
    for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
      size_t n = strlen(puncts[i].text);
      if (n <= avail && memcmp(p, puncts[i].text, n) == 0) {
        t->kind = puncts[i].kind;
        t->text = p;
        t->len = n;
        break;
      }
    }
    if (t->kind == KT__T_ERROR) {
      char what[16];
      if (isprint((unsigned char)*p)) snprintf(what, sizeof what, "'%c'", *p);
      else snprintf(what, sizeof what, "byte 0x%02x", (unsigned char)*p);
      t->text = p;
      t->len = 1;
      lex_error(lx, t, "unexpected character %s in an annotation", what);
    }
  }
  lx->pos += t->len ? t->len : 1;
}

void kt__lex_init(kt__lexer *lx, const kt__segment *segs, int nsegs, kt__diag *d) {
  memset(lx, 0, sizeof *lx);
  lx->segs = segs;
  lx->nsegs = nsegs;
  lx->d = d;
  lex_one(lx, &lx->tok);
}

void kt__lex_next(kt__lexer *lx) {
  if (lx->has_ahead) {
    lx->tok = lx->ahead;
    lx->has_ahead = false;
  } else if (lx->tok.kind != KT__T_EOF) {
    lex_one(lx, &lx->tok);
  }
}

const kt__token *kt__lex_peek(kt__lexer *lx) {
  if (!lx->has_ahead) {
    if (lx->tok.kind == KT__T_EOF) lx->ahead = lx->tok;
    else lex_one(lx, &lx->ahead);
    lx->has_ahead = true;
  }
  return &lx->ahead;
}

bool kt__tok_is(const kt__token *t, const char *word) {
  return t->kind == KT__T_IDENT && strlen(word) == t->len && memcmp(t->text, word, t->len) == 0;
}

const char *kt__tok_kind_text(kt__tok_kind k) {
  switch (k) {
  case KT__T_EOF: return "end of line";
  case KT__T_ERROR: return "bad token";
  case KT__T_IDENT: return "a name";
  case KT__T_INT: return "an integer";
  case KT__T_FLOAT: return "a number";
  case KT__T_STRING: return "a string";
  default: break;
  }
  for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++)
    if (puncts[i].kind == k) return puncts[i].text;
  return "?";
}

void kt__tok_describe(const kt__token *t, char *buf, size_t n) {
  if (t->kind == KT__T_EOF) snprintf(buf, n, "end of line");
  else snprintf(buf, n, "'%.*s'", (int)(t->len < 40 ? t->len : 40), t->text);
}
