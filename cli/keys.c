/* The keys of a shape sweep (keys.h). */
#include "keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One size's choices: NAME and its values (each an expression). */
typedef struct choice {
  char name[128];
  char **values;
  int nvalues;
} choice;

static int fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

static char *copy_span(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (!out) return NULL;
  memcpy(out, s, n);
  out[n] = 0;
  return out;
}

static int blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i])) return 0;
  return 1;
}

/* "M=1024,2048" into C: an empty name or an empty item is an error naming
 * the option and the item. */
static int parse_dim(const char *arg, choice *c, char *err, size_t len) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || blank(arg, (size_t)(eq - arg)))
    return fail(err, len, "--dim \"%s\": expected NAME=VALUE or NAME=VALUE,VALUE,... (e.g. --dim M=1024,2048)", arg);
  if ((size_t)(eq - arg) >= sizeof c->name) return fail(err, len, "--dim %s: the name is too long", arg);
  memcpy(c->name, arg, (size_t)(eq - arg));
  c->name[eq - arg] = 0;
  const char *item = eq + 1;
  for (int index = 1;; index++) {
    const char *end = strchr(item, ',');
    size_t n = end ? (size_t)(end - item) : strlen(item);
    if (blank(item, n))
      return fail(err, len, "--dim %s: item %d of the list is empty (write the values comma-separated: %s=1024,2048)",
                  arg, index, c->name);
    if (c->nvalues == KEYS_MAX) return fail(err, len, "--dim %s: too many values (at most %d)", arg, KEYS_MAX);
    char **grown = realloc(c->values, (size_t)(c->nvalues + 1) * sizeof *grown);
    if (!grown) return fail(err, len, "out of memory");
    c->values = grown;
    if (!(c->values[c->nvalues++] = copy_span(item, n))) return fail(err, len, "out of memory");
    if (!end) return 0;
    item = end + 1;
  }
}

static void choice_free(choice *c) {
  for (int i = 0; i < c->nvalues; i++) free(c->values[i]);
  free(c->values);
  c->values = NULL;
  c->nvalues = 0;
}

/* Appends "NAME=VALUE" to K, refusing a name K already has. */
static int key_add(key *k, const char *name, size_t name_len, const char *value, size_t value_len) {
  for (int i = 0; i < k->nsizes; i++)
    if (strncmp(k->sizes[i], name, name_len) == 0 && k->sizes[i][name_len] == '=') return 1;
  if (k->nsizes == KEY_MAX_SIZES) return 2;
  char *s = malloc(name_len + value_len + 2);
  if (!s) return 3;
  memcpy(s, name, name_len);
  s[name_len] = '=';
  memcpy(s + name_len + 1, value, value_len);
  s[name_len + 1 + value_len] = 0;
  k->sizes[k->nsizes++] = s;
  return 0;
}

static void key_clear(key *k) {
  for (int i = 0; i < k->nsizes; i++) free(k->sizes[i]);
  k->nsizes = 0;
}

static int keys_push(keys *ks, const key *k, char *err, size_t len) {
  if (ks->n == KEYS_MAX) return fail(err, len, "too many keys (at most %d in one run)", KEYS_MAX);
  key *grown = realloc(ks->list, (size_t)(ks->n + 1) * sizeof *grown);
  if (!grown) return fail(err, len, "out of memory");
  ks->list = grown;
  ks->list[ks->n++] = *k;
  return 0;
}

/* One --sizes line ("M=1024 N=4096", its comment cut off) into K. An empty
 * line gives no sizes. */
static int parse_line(const char *line, const char *where, key *k, char *err, size_t len) {
  const char *p = line;
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') return 0;
    const char *start = p;
    while (*p && !isspace((unsigned char)*p) && *p != '#') p++;
    size_t n = (size_t)(p - start);
    const char *eq = memchr(start, '=', n);
    if (!eq || eq == start || eq == start + n - 1)
      return fail(err, len, "%s: '%.*s' is not NAME=VALUE (a line is sizes such as M=1024 N=4096; # starts a comment)",
                  where, (int)n, start);
    int rc = key_add(k, start, (size_t)(eq - start), eq + 1, (size_t)(start + n - eq - 1));
    if (rc == 1) return fail(err, len, "%s: %.*s is given twice on the line", where, (int)(eq - start), start);
    if (rc == 2) return fail(err, len, "%s: too many sizes on the line (at most %d)", where, KEY_MAX_SIZES);
    if (rc) return fail(err, len, "out of memory");
  }
}

/* The lines of the --sizes file as keys (blank and comment-only lines skipped). */
static int read_sizes_file(const char *path, keys *lines, char *err, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return fail(err, len, "--sizes %s: cannot open it: %s", path, strerror(errno));
  char buf[8192];
  int rc = 0;
  for (int lineno = 1; rc == 0 && fgets(buf, sizeof buf, f); lineno++) {
    key k = {0};
    snprintf(k.where, sizeof k.where, "%s:%d", path, lineno);
    if (!strchr(buf, '\n') && !feof(f))
      rc = fail(err, len, "%s: the line is too long (at most %zu characters)", k.where, sizeof buf - 2);
    else rc = parse_line(buf, k.where, &k, err, len);
    if (rc == 0 && k.nsizes > 0) rc = keys_push(lines, &k, err, len);
    else key_clear(&k);
  }
  if (rc == 0 && ferror(f)) rc = fail(err, len, "--sizes %s: cannot read it: %s", path, strerror(errno));
  if (rc == 0 && lines->n == 0)
    rc = fail(err, len, "--sizes %s: no keys in it (write one key a line, e.g. M=1024 N=4096)", path);
  fclose(f);
  return rc;
}

static void key_label(key *k) {
  size_t used = 0;
  k->label[0] = 0;
  for (int i = 0; i < k->nsizes && used < sizeof k->label; i++)
    used += (size_t)snprintf(k->label + used, sizeof k->label - used, "%s%s", i ? " " : "", k->sizes[i]);
}

/* The key BASE extended by the INDEX-th combination of the choices. */
static int combine(const key *base, const choice *cs, int nc, long index, key *out, char *err, size_t len) {
  *out = (key){0};
  memcpy(out->where, base->where, sizeof out->where);
  for (int i = 0; i < base->nsizes; i++) {
    const char *s = base->sizes[i], *eq = strchr(s, '=');
    if (key_add(out, s, (size_t)(eq - s), eq + 1, strlen(eq + 1))) return fail(err, len, "out of memory");
  }
  /* The last --dim varies fastest, as nested loops written in order would. */
  long stride = 1;
  for (int i = nc - 1; i >= 0; i--) {
    const char *v = cs[i].values[(index / stride) % cs[i].nvalues];
    stride *= cs[i].nvalues;
    int rc = key_add(out, cs[i].name, strlen(cs[i].name), v, strlen(v));
    if (rc == 1)
      return fail(err, len, "%s: %s is also given by --dim %s=...; give each size in one place", out->where, cs[i].name,
                  cs[i].name);
    if (rc) return fail(err, len, "too many sizes in one key (at most %d)", KEY_MAX_SIZES);
  }
  /* Back into the order written: the line's sizes, then the --dim ones. */
  int nbase = base->nsizes;
  for (int a = nbase, b = out->nsizes - 1; a < b; a++, b--) {
    char *t = out->sizes[a];
    out->sizes[a] = out->sizes[b];
    out->sizes[b] = t;
  }
  key_label(out);
  return 0;
}

static int expand(const keys *bases, const choice *cs, int nc, keys *ks, char *err, size_t len) {
  long product = 1;
  for (int i = 0; i < nc; i++)
    if ((product *= cs[i].nvalues) * bases->n > KEYS_MAX)
      return fail(err, len, "the --dim lists and --sizes lines make more than %d keys; tune fewer in one run",
                  KEYS_MAX);
  for (int b = 0; b < bases->n; b++)
    for (long i = 0; i < product; i++) {
      key k;
      if (combine(&bases->list[b], cs, nc, i, &k, err, len) != 0 || keys_push(ks, &k, err, len) != 0) {
        key_clear(&k);
        return -1;
      }
    }
  return 0;
}

int keys_build(const char *const *dims, int ndims, const char *sizes_file, keys *ks, char *err, size_t errlen) {
  *ks = (keys){0};
  keys bases = {0};
  choice *cs = calloc((size_t)(ndims ? ndims : 1), sizeof *cs);
  int rc = cs ? 0 : fail(err, errlen, "out of memory");
  for (int i = 0; rc == 0 && i < ndims; i++) rc = parse_dim(dims[i], &cs[i], err, errlen);
  if (rc == 0 && sizes_file) rc = read_sizes_file(sizes_file, &bases, err, errlen);
  if (rc == 0 && !sizes_file) rc = keys_push(&bases, &(key){0}, err, errlen);
  if (rc == 0) rc = expand(&bases, cs, ndims, ks, err, errlen);
  for (int i = 0; cs && i < ndims; i++) choice_free(&cs[i]);
  free(cs);
  keys_free(&bases);
  if (rc) keys_free(ks);
  return rc;
}

void keys_free(keys *ks) {
  for (int i = 0; i < ks->n; i++) key_clear(&ks->list[i]);
  free(ks->list);
  *ks = (keys){0};
}
