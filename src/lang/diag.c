/* Diagnostics with a caret under the offending column, and reading source
 * files with the checks that keep the parser away from binary or huge input. */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
  KT__SOURCE_MAX = 16 << 20, /* bytes: no kernel source is this large */
  KT__DIAG_WIDTH = 160       /* source characters shown around the caret */
};

void kt__diag_init(kt__diag *d, const kt__source *src) {
  memset(d, 0, sizeof *d);
  d->src = src;
}

void kt__diag_free(kt__diag *d) {
  kt__sbuf_free(&d->errors);
  kt__sbuf_free(&d->notes);
  d->nerrors = 0;
}

/* Finds line LINE (1-based) of the source; NULL when out of range. */
static const char *source_line(const kt__source *src, int line, size_t *len) {
  if (!src || !src->text || line < 1) return NULL;
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return NULL;
    p = nl + 1;
  }
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
  if (n && p[n - 1] == '\r') n--;
  *len = n;
  return p;
}

/* Prints the source line (a window of it when long) and a caret under COL.
 * Tabs are copied into the caret line so that it lines up in a terminal. */
static void show_caret(kt__sbuf *b, const kt__source *src, kt__loc at) {
  size_t len;
  const char *line = source_line(src, at.line, &len);
  if (!line || at.col < 1) return;
  size_t col = (size_t)at.col - 1;
  if (col > len) col = len;
  size_t from = 0, to = len;
  if (len > KT__DIAG_WIDTH) {
    from = col > KT__DIAG_WIDTH / 2 ? col - KT__DIAG_WIDTH / 2 : 0;
    to = from + KT__DIAG_WIDTH < len ? from + KT__DIAG_WIDTH : len;
  }
  kt__sbuf_printf(b, "%s", from ? "..." : "");
  kt__sbuf_append(b, line + from, to - from);
  kt__sbuf_printf(b, "%s\n%s", to < len ? "..." : "", from ? "   " : "");
  for (size_t i = from; i < col; i++) kt__sbuf_append(b, line[i] == '\t' ? "\t" : " ", 1);
  kt__sbuf_append(b, "^\n", 2);
}

static void emit(kt__sbuf *b, const kt__source *src, kt__loc at, const char *kind, bool caret, const char *fmt,
                 va_list ap) {
  const char *path = src && src->path ? src->path : NULL;
  if (path && at.line > 0) kt__sbuf_printf(b, "%s:%d:%d: ", path, at.line, at.col);
  else if (path) kt__sbuf_printf(b, "%s: ", path);
  kt__sbuf_printf(b, "%s: ", kind);
  kt__sbuf_vprintf(b, fmt, ap);
  kt__sbuf_append(b, "\n", 1);
  if (caret) show_caret(b, src, at);
}

void kt__diag_error(kt__diag *d, kt__loc at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(&d->errors, d->src, at, "error", true, fmt, ap);
  va_end(ap);
  d->nerrors++;
}

void kt__diag_warning(kt__diag *d, kt__loc at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(&d->notes, d->src, at, "warning", true, fmt, ap);
  va_end(ap);
}

void kt__diag_note(kt__diag *d, kt__loc at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(&d->notes, d->src, at, "note", false, fmt, ap);
  va_end(ap);
}

/* Reads all of F (at most KT__SOURCE_MAX bytes, one more to detect excess). */
static int read_all(FILE *f, const char *path, kt__source *out, kt__errbuf *eb) {
  size_t cap = 1 << 16, len = 0;
  char *buf = kt__xmalloc(cap + 1);
  for (;;) {
    if (len == cap) {
      if (cap > KT__SOURCE_MAX) break;
      cap *= 2;
      buf = kt__xrealloc(buf, cap + 1);
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    return kt__err(eb, KT_IO, "%s: error: cannot read: %s", path, strerror(e));
  }
  if (len > KT__SOURCE_MAX) {
    free(buf);
    return kt__err(eb, KT_INVALID,
                   "%s: error: file is larger than 16 MiB; ktune reads kernel source files, "
                   "not data",
                   path);
  }
  const char *nul = memchr(buf, '\0', len);
  if (nul) {
    size_t at = (size_t)(nul - buf);
    free(buf);
    return kt__err(eb, KT_INVALID,
                   "%s: error: looks like a binary file (NUL byte at offset %zu); ktune "
                   "reads C, OpenCL C or CUDA C source",
                   path, at);
  }
  buf[len] = 0;
  out->path = kt__xstrdup(path);
  out->text = buf;
  out->len = len;
  return KT_OK;
}

int kt__source_read(const char *path, kt__source *out, kt__errbuf *eb) {
  memset(out, 0, sizeof *out);
  struct stat st;
  KT__RETURN_IF(stat(path, &st) != 0, eb, KT_IO, "%s: error: cannot open: %s", path, strerror(errno));
  KT__RETURN_IF(S_ISDIR(st.st_mode), eb, KT_INVALID, "%s: error: is a directory, not a source file", path);
  /* A FIFO or a device would block the read, or never end it. */
  KT__RETURN_IF(!S_ISREG(st.st_mode), eb, KT_INVALID,
                "%s: error: is not a regular file (%s); give the path of a kernel source file", path,
                S_ISFIFO(st.st_mode)   ? "a FIFO"
                : S_ISSOCK(st.st_mode) ? "a socket"
                                       : "a device");
  KT__RETURN_IF(S_ISREG(st.st_mode) && st.st_size > KT__SOURCE_MAX, eb, KT_INVALID,
                "%s: error: file is larger than 16 MiB (%lld bytes); ktune reads kernel source files, "
                "not data",
                path, (long long)st.st_size);
  FILE *f = fopen(path, "rb");
  KT__RETURN_IF(!f, eb, KT_IO, "%s: error: cannot open: %s", path, strerror(errno));
  int rc = read_all(f, path, out, eb);
  fclose(f);
  return rc;
}

void kt__source_from_string(const char *label, const char *text, kt__source *out) {
  out->path = kt__xstrdup(label ? label : "<string>");
  out->len = strlen(text);
  out->text = kt__xstrndup(text, out->len);
}

void kt__source_free(kt__source *s) {
  if (!s) return;
  free(s->path);
  free(s->text);
  memset(s, 0, sizeof *s);
}
