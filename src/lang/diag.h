/* Diagnostics about annotated source: "file:line:col: error: msg", then the
 * source line and a caret under the column, as compilers print them. */
#ifndef KT_LANG_DIAG_H
#define KT_LANG_DIAG_H

#include "../common.h"

/* The text of one source file (or string), kept for diagnostics. */
typedef struct kt__source {
  char *path; /* as given by the user; used in messages */
  char *text; /* NUL-terminated whole contents */
  size_t len;
} kt__source;

typedef struct kt__loc {
  int line, col; /* 1-based; 0 when unknown */
} kt__loc;

typedef struct kt__diag {
  const kt__source *src;
  kt__sbuf errors; /* formatted errors, in order */
  kt__sbuf notes;  /* formatted notes and warnings */
  int nerrors;
} kt__diag;

void kt__diag_init(kt__diag *d, const kt__source *src);
void kt__diag_free(kt__diag *d);
/* Appends "path:line:col: error: <fmt>\n<source line>\n<caret>\n". */
void kt__diag_error(kt__diag *d, kt__loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void kt__diag_warning(kt__diag *d, kt__loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void kt__diag_note(kt__diag *d, kt__loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Reads a whole file; KT_IO / KT_INVALID (binary, too large) with a message. */
int kt__source_read(const char *path, kt__source *out, kt__errbuf *eb);
void kt__source_from_string(const char *label, const char *text, kt__source *out);
void kt__source_free(kt__source *s);

#endif
