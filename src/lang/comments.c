/* Finds the annotation comments of a C, OpenCL C or CUDA C file: lines
 * whose only content is a comment, "// @..." or " * @..." inside a block
 * comment, grouped into runs of consecutive comment lines. Strings and
 * character literals in code are skipped so that "/" inside them does not
 * open a comment. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef enum line_kind { LINE_BLANK, LINE_CODE, LINE_COMMENT } line_kind;

typedef struct line_info {
  line_kind kind;
  const char *content; /* LINE_COMMENT: the comment's text, marker removed */
  size_t len;
  bool starts_in_block;
} line_info;

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')) p++;
  return p;
}

/* Skips a string or character literal starting at P (the quote). */
static const char *skip_literal(const char *p, const char *end) {
  char q = *p++;
  while (p < end && *p != q) p += (*p == '\\' && p + 1 < end) ? 2 : 1;
  return p < end ? p + 1 : end;
}

static const char *find_block_end(const char *p, const char *end) {
  for (; p + 1 < end; p++)
    if (p[0] == '*' && p[1] == '/') return p;
  return NULL;
}

/* Records the text of the first comment of a line (after its marker). */
static void take_content(line_info *li, const char *from, const char *to) {
  if (li->content) return;
  li->content = from;
  li->len = (size_t)(to - from);
  while (li->len && isspace((unsigned char)li->content[li->len - 1])) li->len--;
}

/* Classifies [p, end), one line, updating *in_block across lines. */
static line_info classify(const char *p, const char *end, bool *in_block) {
  line_info li = {LINE_BLANK, NULL, 0, *in_block};
  bool has_code = false, has_comment = false;
  if (*in_block) {
    /* A block comment line: drop the conventional leading '*'. */
    const char *s = skip_ws(p, end);
    if (s < end && *s == '*' && !(s + 1 < end && s[1] == '/')) s = skip_ws(s + 1, end);
    const char *close = find_block_end(p, end);
    has_comment = true;
    take_content(&li, s, close && close >= s ? close : (close ? s : end));
    if (!close) return li.kind = LINE_COMMENT, li;
    *in_block = false;
    p = close + 2;
  }
  while ((p = skip_ws(p, end)) < end) {
    if (p + 1 < end && p[0] == '/' && p[1] == '/') {
      const char *s = p + 2;
      while (s < end && (*s == '/' || *s == '!')) s++;
      if (!has_code) take_content(&li, skip_ws(s, end), end);
      has_comment = true;
      break;
    }
    if (p + 1 < end && p[0] == '/' && p[1] == '*') {
      const char *s = p + 2;
      while (s < end && (*s == '*' || *s == '!') && !(s + 1 < end && s[0] == '*' && s[1] == '/')) s++;
      const char *close = find_block_end(s, end);
      if (!has_code) take_content(&li, skip_ws(s, end), close ? close : end);
      has_comment = true;
      if (!close) {
        *in_block = true;
        break;
      }
      p = close + 2;
      continue;
    }
    has_code = true;
    p = (*p == '"' || *p == '\'') ? skip_literal(p, end) : p + 1;
  }
  li.kind = has_code ? LINE_CODE : has_comment ? LINE_COMMENT : LINE_BLANK;
  return li;
}

static bool is_annotation(const line_info *li) {
  return li->kind == LINE_COMMENT && li->len >= 2 && li->content[0] == '@' &&
         (isalpha((unsigned char)li->content[1]) || li->content[1] == '_');
}

/* Open parentheses and brackets left by a segment: the attribute goes on. */
static int open_count(const kt__segment *s) {
  int n = 0;
  for (size_t i = 0; i < s->len; i++) {
    if (i + 1 < s->len && s->text[i] == '/' && s->text[i + 1] == '/') break;
    if (s->text[i] == '(' || s->text[i] == '[') n++;
    if (s->text[i] == ')' || s->text[i] == ']') n--;
  }
  return n;
}

typedef struct scanner {
  kt__group *groups;
  int ngroups;
  kt__group cur; /* the run being read */
  int open;      /* brackets left open by the current attribute */
  bool in_run;   /* the current run has an annotation */
} scanner;

static void add_segment(kt__attr_text *a, const line_info *li, const char *line_start, int line) {
  kt__segment s = {li->content, li->len, {line, (int)(li->content - line_start) + 1}};
  a->segs = kt__xreallocarray(a->segs, (size_t)a->nsegs + 1, sizeof *a->segs);
  a->segs[a->nsegs++] = s;
}

static void end_run(scanner *sc, size_t offset, int line, bool in_comment) {
  if (sc->in_run) {
    sc->cur.code_offset = offset;
    sc->cur.code_line = line;
    sc->cur.code_in_comment = in_comment;
    sc->groups = kt__xreallocarray(sc->groups, (size_t)sc->ngroups + 1, sizeof *sc->groups);
    sc->groups[sc->ngroups++] = sc->cur;
  }
  memset(&sc->cur, 0, sizeof sc->cur);
  sc->in_run = false;
  sc->open = 0;
}

static void comment_line(scanner *sc, const line_info *li, const char *line_start, int line) {
  if (is_annotation(li)) {
    kt__group *g = &sc->cur;
    g->attrs = kt__xreallocarray(g->attrs, (size_t)g->nattrs + 1, sizeof *g->attrs);
    memset(&g->attrs[g->nattrs], 0, sizeof g->attrs[0]);
    add_segment(&g->attrs[g->nattrs++], li, line_start, line);
    sc->open = open_count(&g->attrs[g->nattrs - 1].segs[0]);
    sc->in_run = true;
  } else if (sc->open > 0 && li->len > 0) {
    kt__attr_text *a = &sc->cur.attrs[sc->cur.nattrs - 1];
    add_segment(a, li, line_start, line);
    sc->open += open_count(&a->segs[a->nsegs - 1]);
  }
}

void kt__find_groups(const kt__source *src, kt__group **out, int *n) {
  scanner sc;
  memset(&sc, 0, sizeof sc);
  bool in_block = false;
  const char *p = src->text, *end = src->text + src->len;
  int line = 1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl ? nl : end;
    line_info li = classify(p, eol, &in_block);
    if (li.kind == LINE_COMMENT) comment_line(&sc, &li, p, line);
    else end_run(&sc, (size_t)(p - src->text), line, li.starts_in_block);
    p = nl ? nl + 1 : end;
    line++;
  }
  end_run(&sc, src->len, line, false);
  *out = sc.groups;
  *n = sc.ngroups;
}

void kt__groups_free(kt__group *g, int n) {
  for (int i = 0; i < n; i++) {
    for (int a = 0; a < g[i].nattrs; a++) free(g[i].attrs[a].segs);
    free(g[i].attrs);
  }
  free(g);
}
