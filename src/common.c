#include "common.h"

#include "envvars.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int kt__interrupted;
void kt_interrupt(void) { kt__interrupted = 1; }

__attribute__((format(printf, 2, 0))) static void set_message(kt__errbuf *eb, const char *fmt, va_list ap) {
  if (eb) vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
}

kt_err kt__err(kt__errbuf *eb, kt_err code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_message(eb, fmt, ap);
  va_end(ap);
  return code;
}

kt__status kt__fail(kt__errbuf *eb, kt__status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_message(eb, fmt, ap);
  va_end(ap);
  return st;
}

static const char *const status_names[] = {
#define KT__ST_NAME_(name, text) text,
    KT__STATUS_MAP(KT__ST_NAME_)
#undef KT__ST_NAME_
};

const char *kt__status_name(kt__status st) { return (unsigned)st < KT__ST_COUNT ? status_names[st] : "unknown"; }

int kt__status_from_name(const char *name) {
  for (int i = 0; i < KT__ST_COUNT; i++)
    if (strcmp(status_names[i], name) == 0) return i;
  return -1;
}

static const struct {
  const char *name;
  size_t size;
} dtypes[] = {
#define KT__DT_INFO_(name, text, size) {text, size},
    KT__DTYPE_MAP(KT__DT_INFO_)
#undef KT__DT_INFO_
};

const char *kt__dtype_name(kt__dtype t) { return (unsigned)t < KT__DT_COUNT ? dtypes[t].name : "?"; }
size_t kt__dtype_size(kt__dtype t) { return (unsigned)t < KT__DT_COUNT ? dtypes[t].size : 0; }
int kt__dtype_from_name(const char *name) {
  for (int i = 0; i < KT__DT_COUNT; i++)
    if (strcmp(dtypes[i].name, name) == 0) return i;
  return -1;
}
bool kt__dtype_is_float(kt__dtype t) {
  return t == KT__DT_F16 || t == KT__DT_BF16 || t == KT__DT_F32 || t == KT__DT_F64;
}

static void out_of_memory(size_t n) {
  fprintf(stderr, "ktune: out of memory (asked for %zu bytes)\n", n);
  abort();
}

void *kt__xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) out_of_memory(n);
  return p;
}
void *kt__xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) out_of_memory(count * size);
  return p;
}
void *kt__xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) out_of_memory(n);
  return q;
}
void *kt__xreallocarray(void *p, size_t count, size_t size) {
  uint64_t total;
  if (!kt__mul_u64(count, size, &total) || total > SIZE_MAX) out_of_memory(SIZE_MAX);
  return kt__xrealloc(p, (size_t)total);
}
char *kt__xstrdup(const char *s) { return kt__xstrndup(s, strlen(s)); }
char *kt__xstrndup(const char *s, size_t n) {
  char *p = kt__xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}
bool kt__mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
bool kt__add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }

void kt__sbuf_append(kt__sbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1) cap *= 2;
    b->s = kt__xrealloc(b->s, cap);
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void kt__sbuf_vprintf(kt__sbuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof small) {
    kt__sbuf_append(b, small, (size_t)n);
  } else {
    char *big = kt__xmalloc((size_t)n + 1);
    vsnprintf(big, (size_t)n + 1, fmt, ap2);
    kt__sbuf_append(b, big, (size_t)n);
    free(big);
  }
  va_end(ap2);
}

void kt__sbuf_printf(kt__sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kt__sbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* The length of the well-formed UTF-8 sequence at P (1 to 4), or 0: a
 * stray continuation byte, a truncated or overlong sequence, a surrogate or
 * a code point past U+10FFFF. */
static int utf8_length(const unsigned char *p) {
  int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
  if (!n || p[0] > 0xf4) return 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  uint32_t c = p[0] & (0x7f >> n);
  for (int i = 1; i < n; i++) c = c << 6 | (p[i] & 0x3f);
  static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  return n;
}

/* Text that is not UTF-8 (a file name, what a kernel printed) becomes
 * U+FFFD byte by byte, so that the document stays JSON. */
void kt__sbuf_json_string(kt__sbuf *b, const char *s) {
  kt__sbuf_append(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    switch (*p) {
    case '"': kt__sbuf_append(b, "\\\"", 2); break;
    case '\\': kt__sbuf_append(b, "\\\\", 2); break;
    case '\n': kt__sbuf_append(b, "\\n", 2); break;
    case '\t': kt__sbuf_append(b, "\\t", 2); break;
    case '\r': kt__sbuf_append(b, "\\r", 2); break;
    default:
      if (*p < 0x20) {
        kt__sbuf_printf(b, "\\u%04x", *p);
      } else if (*p < 0x80) {
        kt__sbuf_append(b, (const char *)p, 1);
      } else {
        int n = utf8_length(p);
        if (n) kt__sbuf_append(b, (const char *)p, (size_t)n), p += n - 1;
        else kt__sbuf_append(b, "\\ufffd", 6);
      }
    }
  }
  kt__sbuf_append(b, "\"", 1);
}

void kt__sbuf_free(kt__sbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

double kt__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int kt__trace_fd = 2;

bool kt__tracing(void) {
  static int enabled = -1;
  if (enabled < 0) enabled = kt__envvar_flag(KT__ENV_TRACE);
  return enabled;
}

void kt__trace(const char *fmt, ...) {
  if (!kt__tracing()) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  dprintf(kt__trace_fd, "ktune-trace %.6f %d %s\n", kt__now(), (int)getpid(), line);
}

void kt__print_autotuning(const char *kernel, const char *key, const char *how, double secs, const char *config) {
  if (!kt__envvar_flag(KT__ENV_PRINT_AUTOTUNING)) return;
  fprintf(stderr, "ktune: kernel %s, key [%s]: %s in %.3f s: %s\n", kernel, key, how, secs,
          config && *config ? config : "(no tuned names)");
}

int kt__ncores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}
