/* The binary cache's key (key.h): fields, and a source with its includes. */
#include "key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 16, MAX_FILES = 256, MAX_INCLUDE_BYTES = 64 << 20 };

void kt__binkey_init(kt__binkey *k) {
  kt__sha256_init(&k->sha);
  kt__binkey_add_str(k, "version", KT__BINKEY_VERSION);
}

static void add_length(kt__binkey *k, uint64_t n) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(n >> (8 * i));
  kt__sha256_update(&k->sha, b, sizeof b);
}

void kt__binkey_add(kt__binkey *k, const char *field, const void *data, size_t len) {
  add_length(k, strlen(field));
  kt__sha256_update(&k->sha, field, strlen(field));
  add_length(k, len);
  kt__sha256_update(&k->sha, data, len);
}

void kt__binkey_add_str(kt__binkey *k, const char *field, const char *s) {
  kt__binkey_add(k, field, s ? s : "", s ? strlen(s) : 0);
}

void kt__binkey_final(kt__binkey *k, unsigned char digest[32]) { kt__sha256_final(&k->sha, digest); }

/* ---- includes ---------------------------------------------------------- */

typedef struct walk {
  kt__binkey *k;
  int files;
  char *why;
  size_t whylen;
} walk;

static bool refuse(walk *w, const char *fmt, const char *what) {
  snprintf(w->why, w->whylen, fmt, what);
  return false;
}

/* "dir/" of "dir/file.c"; "" of "file.c" or NULL (the current folder). */
static char *folder_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? kt__xstrndup(path, (size_t)(slash - path + 1)) : kt__xstrdup("");
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rbe");
  if (!f) return NULL;
  kt__sbuf s = {0};
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && s.len <= MAX_INCLUDE_BYTES) kt__sbuf_append(&s, buf, n);
  bool bad = ferror(f) || s.len > MAX_INCLUDE_BYTES;
  fclose(f);
  if (bad) {
    kt__sbuf_free(&s);
    return NULL;
  }
  *len = s.len;
  return s.s ? s.s : kt__xstrdup("");
}

static bool add_text(walk *w, const char *text, size_t len, const char *path, int depth);

/* The include of LINE (after `#include`): quoted, angled or computed. */
static bool add_include(walk *w, const char *p, const char *end, const char *folder, int depth) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p < end && *p == '<') return true; /* the toolchain's: its version is in the key */
  if (p >= end || *p != '"') return refuse(w, "an #include whose name a macro gives (%s)", "not a quoted name");
  const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
  if (!close) return refuse(w, "an unterminated #include \"%s\"", "...");
  kt__sbuf name = {0}, full = {0};
  kt__sbuf_append(&name, p + 1, (size_t)(close - p - 1));
  if (name.s && name.s[0] == '/') kt__sbuf_printf(&full, "%s", name.s);
  else kt__sbuf_printf(&full, "%s%s", folder, name.s ? name.s : "");
  size_t len = 0;
  char *text = read_file(full.s, &len);
  bool ok = text ? add_text(w, text, len, full.s, depth + 1)
                 : refuse(w, "#include \"%s\" is not beside the file that includes it", name.s ? name.s : "");
  free(text);
  kt__sbuf_free(&name);
  kt__sbuf_free(&full);
  return ok;
}

/* The start of the directive name when LINE is a preprocessor directive. */
static const char *directive(const char *line, const char *end) {
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  if (line >= end || *line != '#') return NULL;
  line++;
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  return line;
}

/* Hashes TEXT under its path, then each file it includes. Includes inside
 * comments or #if 0 are followed too: that can only refuse caching, never
 * reuse a binary wrongly. */
static bool add_text(walk *w, const char *text, size_t len, const char *path, int depth) {
  if (depth > MAX_DEPTH) return refuse(w, "#include chains deeper than 16 files (at %s)", path ? path : "the source");
  if (++w->files > MAX_FILES) return refuse(w, "more than 256 included files (at %s)", path ? path : "the source");
  kt__binkey_add(w->k, "source", text, len);
  char *folder = folder_of(path);
  bool ok = true;
  for (const char *line = text, *stop = text + len; ok && line < stop;) {
    const char *nl = memchr(line, '\n', (size_t)(stop - line));
    const char *end = nl ? nl : stop;
    const char *d = directive(line, end);
    if (d && (size_t)(end - d) >= 7 && memcmp(d, "include", 7) == 0) ok = add_include(w, d + 7, end, folder, depth);
    line = end + 1;
  }
  free(folder);
  return ok;
}

bool kt__binkey_add_source(kt__binkey *k, const char *text, size_t len, const char *path, char *why, size_t whylen) {
  walk w = {k, 0, why, whylen};
  return add_text(&w, text, len, path, 0);
}
