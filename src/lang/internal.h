/* Pieces of the annotation parser shared by its files: finding annotation
 * comments (comments.c) and reading the C signature below them (signature.c). */
#ifndef KT_LANG_INTERNAL_H
#define KT_LANG_INTERNAL_H

#include "decl.h"
#include "lexer.h"

/* One attribute's text: its first line and any continuation lines (comment
 * lines that follow while its parentheses or brackets are still open). */
typedef struct kt__attr_text {
  kt__segment *segs;
  int nsegs;
} kt__attr_text;

/* A run of consecutive comment lines holding at least one "@name" line. */
typedef struct kt__group {
  kt__attr_text *attrs;
  int nattrs;
  size_t code_offset;   /* where the source continues after the run */
  int code_line;        /* line number at code_offset */
  bool code_in_comment; /* code_offset is inside a block comment that closes later */
} kt__group;

/* Finds every group in SRC, in file order. */
void kt__find_groups(const kt__source *src, kt__group **out, int *n);
void kt__groups_free(kt__group *g, int n);

/* The C function after a group, as far as ktune needs it. */
typedef struct kt__csig {
  char *name;
  kt__loc loc; /* of the function name */
  int nparams;
  char **names;
  kt__loc *locs;
  bool *is_pointer;
  bool *is_const; /* const-qualified (or __constant) pointee */
} kt__csig;

/* Reads the first function called NAME after G (scanning at brace depth 0);
 * -1 with a message when there is none or it cannot be read (*where is
 * moved to the offending parameter; otherwise left as the caller set it). */
int kt__csig_parse(const kt__source *src, const kt__group *g, const char *name, kt__csig *out, kt__loc *where,
                   char msg[256]);
void kt__csig_free(kt__csig *s);

/* Compares the @kernel declaration with the C function, resolves unset
 * tensor modes from it, and stores it in K's sig_* fields. Errors go to D. */
void kt__csig_check(kt__kernel_decl *k, const kt__csig *sig, kt__diag *d);

/* Why NAME cannot be a tuned name in a LANG kernel (written into WHY and
 * returned: a keyword, a name ktune's generated code uses, a reserved one),
 * or NULL when it can. */
const char *kt__name_taken(const char *name, kt__lang lang, char why[160]);

/* Frees what a parameter owns (not the struct itself). */
void kt__param_free(kt__param *q);

#endif
