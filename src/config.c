/* The configuration's vocabulary: names and defaults from the declaration,
 * the one tokenizer and the one formatter of "NAME=VALUE" lists, and the
 * parsing of --autotune pins. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void kt__config_init(kt__config *c, const kt__kernel_decl *d) {
  c->ntune = d->ntune;
  c->n = d->ntune + d->ncluster;
  c->names = kt__xcalloc((size_t)c->n + 1, sizeof *c->names);
  c->defaults = kt__xcalloc((size_t)c->n + 1, sizeof *c->defaults);
  for (int i = 0; i < c->n; i++) {
    const kt__tunedim *dim = i < d->ntune ? &d->tune[i] : &d->cluster[i - d->ntune];
    c->names[i] = dim->name;
    c->defaults[i] = dim->values[0];
  }
}

void kt__config_free(kt__config *c) {
  free(c->names);
  free(c->defaults);
  c->names = NULL;
  c->defaults = NULL;
}

int kt__config_check_size(const kt__config *c, const char *path, const char *kernel, kt__errbuf *eb) {
  KT__RETURN_IF(c->n > KT__MAX_NAMES, eb, KT_INVALID,
                "%s: error: kernel %s declares %d tuned names; ktune handles at most %d", path, kernel, c->n,
                KT__MAX_NAMES);
  return KT_OK;
}

int kt__config_stage_first(const kt__config *c, int stage) { return stage ? c->ntune : 0; }
int kt__config_stage_count(const kt__config *c, int stage) { return stage ? c->n - c->ntune : c->ntune; }

/* ---- "NAME=VALUE NAME=VALUE" text ---- */

static bool is_sep(int c) { return isspace(c) || c == ','; }

bool kt__config_next(const char **p, kt__config_item *item) {
  const char *s = *p;
  while (is_sep((unsigned char)*s)) s++;
  *p = s;
  if (!*s) return false;
  size_t len = 0;
  while (s[len] && !is_sep((unsigned char)s[len])) len++;
  const char *eq = memchr(s, '=', len);
  size_t name_len = eq ? (size_t)(eq - s) : len;
  *item = (kt__config_item){.text = s,
                            .len = len,
                            .name_len = name_len,
                            .value = eq ? eq + 1 : NULL,
                            .value_len = eq ? len - name_len - 1 : 0};
  *p = s + len;
  return true;
}

bool kt__config_split(const char *text, kt__config_item *item) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1]) return false;
  size_t len = strlen(text), name_len = (size_t)(eq - text);
  *item = (kt__config_item){
      .text = text, .len = len, .name_len = name_len, .value = eq + 1, .value_len = len - name_len - 1};
  return true;
}

bool kt__config_item_int(const kt__config_item *item, int64_t *v) {
  /* strtoll would skip white space: an empty value must not read the next item. */
  if (!item->value || item->value_len == 0) return false;
  char *end = NULL;
  errno = 0;
  long long x = strtoll(item->value, &end, 0);
  if (end != item->value + item->value_len || errno == ERANGE) return false;
  *v = (int64_t)x;
  return true;
}

int kt__config_find(const char *const *names, int n, const kt__config_item *item) {
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == item->name_len && memcmp(names[i], item->text, item->name_len) == 0) return i;
  return -1;
}

void kt__config_format(const char *const *names, const int64_t *values, int n, const char *prefix, kt__sbuf *out) {
  for (int i = 0; i < n; i++) kt__sbuf_printf(out, "%s%s%s=%" PRId64, i ? " " : "", prefix, names[i], values[i]);
  if (!out->s) kt__sbuf_append(out, "", 0);
}

void kt__config_read(const kt__config *c, const char *text, int64_t *values) {
  kt__config_item it;
  for (const char *p = text; kt__config_next(&p, &it);) {
    int i = kt__config_find(c->names, c->n, &it);
    int64_t v;
    if (i >= 0 && kt__config_item_int(&it, &v)) values[i] = v;
  }
}

/* ---- --autotune pins ---- */

void kt__config_pins_init(kt__config_pins *p, int n) {
  p->set = kt__xcalloc((size_t)n + 1, sizeof *p->set);
  p->values = kt__xcalloc((size_t)n + 1, sizeof *p->values);
}

void kt__config_pins_free(kt__config_pins *p) {
  free(p->set);
  free(p->values);
  p->set = NULL;
  p->values = NULL;
}

kt__config_pins kt__config_pins_stage(const kt__config *c, const kt__config_pins *p, int stage) {
  int first = kt__config_stage_first(c, stage);
  return (kt__config_pins){p->set + first, p->values + first};
}

static bool is_name(const kt__config_item *it) {
  if (it->name_len == 0 || !(isalpha((unsigned char)it->text[0]) || it->text[0] == '_')) return false;
  for (size_t i = 1; i < it->name_len; i++)
    if (!isalnum((unsigned char)it->text[i]) && it->text[i] != '_') return false;
  return true;
}

static int bad_pin_syntax(const kt__config_item *it, const char *label, kt__errbuf *eb) {
  return kt__err(eb, KT_INVALID,
                 "bad %s item '%.*s': expected NAME=VALUE pairs separated by spaces, "
                 "with VALUE an integer, as in \"BLOCK=256 VEC=4\"",
                 label, (int)it->len, it->text);
}

static int unknown_name(const char *const *names, int n, const kt__config_item *it, const char *label, kt__errbuf *eb) {
  kt__sbuf b = {0};
  for (int i = 0; i < n; i++) kt__sbuf_printf(&b, "%s%s", i ? ", " : "", names[i]);
  int rc = kt__err(eb, KT_INVALID, "unknown name %.*s in %s; the kernel declares: %s", (int)it->name_len, it->text,
                   label, n ? b.s : "(no tuned names)");
  kt__sbuf_free(&b);
  return rc;
}

/* Parses every item before OUT changes, so that a bad spec changes nothing. */
int kt__config_parse_pins(const char *const *names, int n, const char *spec, const char *label, kt__config_pins *out,
                          kt__errbuf *eb) {
  KT__RETURN_IF(!spec, eb, KT_INVALID, "empty %s value", label);
  kt__config_pins p;
  kt__config_pins_init(&p, n);
  int rc = KT_OK;
  kt__config_item it;
  for (const char *q = spec; rc == KT_OK && kt__config_next(&q, &it);) {
    int64_t v = 0;
    int i = kt__config_find(names, n, &it);
    if (!it.value || !is_name(&it) || !kt__config_item_int(&it, &v)) rc = bad_pin_syntax(&it, label, eb);
    else if (i < 0) rc = unknown_name(names, n, &it, label, eb);
    else if (p.set[i]) rc = kt__err(eb, KT_INVALID, "%s is pinned twice in %s", names[i], label);
    else p.set[i] = true, p.values[i] = v;
  }
  if (rc == KT_OK) {
    memcpy(out->set, p.set, (size_t)n * sizeof *p.set);
    memcpy(out->values, p.values, (size_t)n * sizeof *p.values);
  }
  kt__config_pins_free(&p);
  return rc;
}
