/* Tokens of the annotation language. An attribute may span several comment
 * lines, so the lexer reads a list of segments (the annotation text of each
 * line with the place of its first character) as one token stream. */
#ifndef KT_LANG_LEXER_H
#define KT_LANG_LEXER_H

#include "expr.h"

typedef enum kt__tok_kind {
  KT__T_EOF,
  KT__T_ERROR, /* a bad token, already reported */
  KT__T_IDENT,
  KT__T_INT,
  KT__T_FLOAT,  /* only @verify takes these; elsewhere "non-integer value" */
  KT__T_STRING, /* "text" on one line, no escapes (file("points.npy")); text and len include the quotes */
  KT__T_AT,
  KT__T_LPAREN,
  KT__T_RPAREN,
  KT__T_LBRACKET,
  KT__T_RBRACKET,
  KT__T_LBRACE, /* { : an explicit list of choices */
  KT__T_RBRACE,
  KT__T_COMMA,
  KT__T_COLON,
  KT__T_ASSIGN, /* = */
  KT__T_PLUS,
  KT__T_MINUS,
  KT__T_STAR,
  KT__T_SLASH,
  KT__T_PERCENT,
  KT__T_SHL,
  KT__T_SHR,
  KT__T_LT,
  KT__T_LE,
  KT__T_GT,
  KT__T_GE,
  KT__T_EQ, /* == */
  KT__T_NE,
  KT__T_ANDAND,
  KT__T_OROR,
  KT__T_NOT
} kt__tok_kind;

typedef struct kt__token {
  kt__tok_kind kind;
  kt__loc loc;
  const char *text; /* points into the segment; not NUL-terminated */
  size_t len;
  int64_t ival; /* KT__T_INT */
  double fval;  /* KT__T_INT and KT__T_FLOAT */
} kt__token;

typedef struct kt__segment {
  const char *text;
  size_t len;
  kt__loc at; /* place of text[0] */
} kt__segment;

typedef struct kt__lexer {
  const kt__segment *segs;
  int nsegs, seg;
  size_t pos;
  kt__diag *d;
  kt__token tok;   /* the current token */
  kt__token ahead; /* one token of look-ahead, when has_ahead */
  bool has_ahead;
  int depth; /* expression nesting, bounded by KT__EXPR_MAX_DEPTH */
} kt__lexer;

/* Deepest nesting of parentheses and unary operators an expression may have. */
#define KT__EXPR_MAX_DEPTH 200

/* Starts on SEGS and reads the first token into lx->tok. */
void kt__lex_init(kt__lexer *lx, const kt__segment *segs, int nsegs, kt__diag *d);
void kt__lex_next(kt__lexer *lx);
const kt__token *kt__lex_peek(kt__lexer *lx);
/* True when the current token is the identifier WORD. */
bool kt__tok_is(const kt__token *t, const char *word);
/* The token as text for messages ("end of line" at the end). */
void kt__tok_describe(const kt__token *t, char *buf, size_t n);
const char *kt__tok_kind_text(kt__tok_kind k);

/* expr -> or_expr: parses one expression from the current token on; NULL
 * after reporting an error to lx->d. */
kt__expr *kt__expr_parse(kt__lexer *lx);

#endif
