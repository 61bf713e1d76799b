/* Finds the annotation comments of a C, OpenCL C or CUDA C file: lines
 * whose only content is a comment, "// @..." or " * @..." inside a block
 * comment, grouped into runs of consecutive comment lines. The code between
 * them is followed as C reads it: string and character literals (continued
 * over lines by a backslash, and C++ raw strings in CUDA) hide comment
 * markers, and braces are counted, so that a comment inside a function body
 * (a commented-out "@dims(N = 8) was too small") is prose, not an
 * annotation. Braces of extern "C" { and namespace N { leave their contents
 * at the top level, where kernels are. */
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
  bool in_body; /* the line starts inside braces that are not extern "C" or namespace */
} line_info;

enum { RAW_DELIM_MAX = 16, BRACES_MAX = 256 };

/* What the scanner carries from one line to the next. */
typedef struct scan_state {
  bool in_block;                     /* inside a block comment */
  char quote;                        /* inside a literal continued by a backslash: its quote */
  bool in_raw;                       /* inside a raw string R"delim( ... )delim" */
  char raw_close[RAW_DELIM_MAX + 3]; /* ")delim\"" that ends it */
  int depth;                         /* open braces */
  int opaque;                        /* of those, braces that are not extern "C" or namespace */
  bool transparent[BRACES_MAX];      /* per open brace (the first BRACES_MAX): extern "C" or namespace */
  /* The last two words of code before a brace, to tell extern "C" { and
   * namespace N { from a body: 's' a string, 'w' a word, 0 anything else. */
  char last_kind, prev_kind;
  char last_word[16], prev_word[16];
} scan_state;

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')) p++;
  return p;
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Skips the rest of a literal quoted by Q from P; at the end of the line
 * (no closing quote) a trailing backslash continues it on the next. */
static const char *skip_literal_rest(const char *p, const char *end, char q, scan_state *st) {
  const char *start = p;
  while (p < end && *p != q) p += (*p == '\\' && p + 1 < end) ? 2 : 1;
  if (p < end) {
    st->quote = 0;
    return p + 1;
  }
  const char *last = end > start && end[-1] == '\r' ? end - 1 : end;
  st->quote = last > start && last[-1] == '\\' ? q : 0;
  return end;
}

/* Skips the rest of a raw string from P; false when it goes on past END. */
static const char *skip_raw_rest(const char *p, const char *end, scan_state *st) {
  size_t n = strlen(st->raw_close);
  for (; p + n <= end; p++)
    if (memcmp(p, st->raw_close, n) == 0) {
      st->in_raw = false;
      return p + n;
    }
  return end;
}

/* A raw string starts at P (R"delim( with R not part of a longer word, or
 * after u8, u, U or L): records its end and returns where its text starts. */
static const char *raw_start(const char *line, const char *p, const char *end, scan_state *st) {
  if (*p != 'R' || p + 1 >= end || p[1] != '"') return NULL;
  const char *w = p;
  while (w > line && ident_char(w[-1])) w--;
  size_t prefix = (size_t)(p - w);
  if (!(prefix == 0 || (prefix == 2 && w[0] == 'u' && w[1] == '8') ||
        (prefix == 1 && (w[0] == 'u' || w[0] == 'U' || w[0] == 'L'))))
    return NULL;
  const char *d = p + 2;
  while (d < end && *d != '(' && d - (p + 2) <= RAW_DELIM_MAX) d++;
  if (d >= end || *d != '(') return NULL;
  snprintf(st->raw_close, sizeof st->raw_close, ")%.*s\"", (int)(d - (p + 2)), p + 2);
  st->in_raw = true;
  return d + 1;
}

static void remember_word(scan_state *st, char kind, const char *w, size_t n) {
  st->prev_kind = st->last_kind;
  memcpy(st->prev_word, st->last_word, sizeof st->prev_word);
  st->last_kind = kind;
  snprintf(st->last_word, sizeof st->last_word, "%.*s", (int)(n < sizeof st->last_word ? n : 0), w);
}

/* extern "C" { and namespace [N] { hold top-level declarations. */
static bool opens_scope(const scan_state *st) {
  if (st->last_kind == 's' && st->prev_kind == 'w' && strcmp(st->prev_word, "extern") == 0) return true;
  if (st->last_kind == 'w' && strcmp(st->last_word, "namespace") == 0) return true;
  return st->last_kind == 'w' && st->prev_kind == 'w' && strcmp(st->prev_word, "namespace") == 0;
}

static void open_brace(scan_state *st) {
  bool scope = opens_scope(st);
  if (st->depth < BRACES_MAX) st->transparent[st->depth] = scope;
  st->depth++;
  st->opaque += !scope;
}

static void close_brace(scan_state *st) {
  if (st->depth == 0) return; /* unbalanced: stay at the top level */
  st->depth--;
  st->opaque -= st->depth < BRACES_MAX ? !st->transparent[st->depth] : 1;
  if (st->opaque < 0) st->opaque = 0;
}

/* One step through code at P: a literal, a word, a brace or another
 * character. Returns where the code goes on. */
static const char *code_step(const char *line, const char *p, const char *end, scan_state *st) {
  const char *raw = raw_start(line, p, end, st);
  if (raw) {
    remember_word(st, 's', "", 0);
    return skip_raw_rest(raw, end, st);
  }
  if (*p == '"' || *p == '\'') {
    if (*p == '"') remember_word(st, 's', "", 0);
    return skip_literal_rest(p + 1, end, *p, st);
  }
  if (ident_char(*p)) {
    const char *w = p;
    while (p < end && ident_char(*p)) p++;
    remember_word(st, 'w', w, (size_t)(p - w));
    return p;
  }
  if (*p == '{') open_brace(st);
  else if (*p == '}') close_brace(st);
  remember_word(st, 0, "", 0);
  return p + 1;
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

/* Classifies [p, end), one line, updating ST across lines. */
static line_info classify(const char *p, const char *end, scan_state *st) {
  const char *line = p;
  line_info li = {LINE_BLANK, NULL, 0, st->in_block, st->opaque > 0};
  bool has_code = false, has_comment = false;
  if (st->in_raw || st->quote) { /* a literal from the line above goes on */
    has_code = true;
    p = st->in_raw ? skip_raw_rest(p, end, st) : skip_literal_rest(p, end, st->quote, st);
  } else if (st->in_block) {
    /* A block comment line: drop the conventional leading '*'. */
    const char *s = skip_ws(p, end);
    if (s < end && *s == '*' && !(s + 1 < end && s[1] == '/')) s = skip_ws(s + 1, end);
    const char *close = find_block_end(p, end);
    has_comment = true;
    take_content(&li, s, close && close >= s ? close : (close ? s : end));
    if (!close) return li.kind = LINE_COMMENT, li;
    st->in_block = false;
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
        st->in_block = true;
        break;
      }
      p = close + 2;
      continue;
    }
    has_code = true;
    p = code_step(line, p, end, st);
  }
  li.kind = has_code ? LINE_CODE : has_comment ? LINE_COMMENT : LINE_BLANK;
  return li;
}

static bool is_annotation(const line_info *li) {
  return li->kind == LINE_COMMENT && !li->in_body && li->len >= 2 && li->content[0] == '@' &&
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
  scan_state *st = kt__xcalloc(1, sizeof *st);
  const char *p = src->text, *end = src->text + src->len;
  /* A UTF-8 byte-order mark is no part of the first line (columns count
   * from after it, as editors show them). */
  if (src->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  int line = 1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl ? nl : end;
    line_info li = classify(p, eol, st);
    if (li.kind == LINE_COMMENT && !li.in_body) comment_line(&sc, &li, p, line);
    else end_run(&sc, (size_t)(p - src->text), line, li.starts_in_block);
    p = nl ? nl + 1 : end;
    line++;
  }
  end_run(&sc, src->len, line, false);
  free(st);
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
