/* The table of environment variables and the one reader of the environment
 * (envvars.h says how a context and the rest ask it). */
#include "envvars.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum row_kind { SECONDS, BYTES, ENUM, FLAG, PATH, TEXT } row_kind;

typedef struct row {
  row_kind kind;
  double default_seconds; /* SECONDS */
  double max_seconds;     /* SECONDS: the largest accepted */
  bool zero_allowed;      /* SECONDS: "0" is a value (none) and not refused */
  const char *choices[4]; /* ENUM: the words, the first the default */
  const char *expected;   /* the message's "expected ..." */
} row;

/* A new variable is a line in KT__ENVVARS (envvars.h) and one row here. */
static const row rows[KT__ENV_COUNT] = {
    [KT__ENV_COMPILE_TIMEOUT] = {SECONDS, .max_seconds = 1e7, .expected = "expected seconds, e.g. 120"},
    [KT__ENV_RUN_TIMEOUT] = {SECONDS, .max_seconds = 1e7, .expected = "expected seconds, e.g. 30"},
    [KT__ENV_BINARY_CACHE_MAX] = {BYTES, .expected = "expected bytes, e.g. 1G or 512M"},
    [KT__ENV_MAX_TENSOR_MEMORY] = {BYTES, .expected = "expected bytes, e.g. 8G or 512M"},
    [KT__ENV_HELPER_IDLE_S] = {SECONDS, 5, 1e7, true,
                               .expected = "expected seconds a tuning helper waits for the next miss, e.g. 5 (0: none "
                                           "waits)"},
    [KT__ENV_SAMPLE_S] = {SECONDS, .max_seconds = 1,
                          .expected = "expected the seconds a timing sample lasts at least, e.g. 0.002 (at most 1)"},
    [KT__ENV_ZYGOTE] = {ENUM, .choices = {"auto", "spawn"},
                        .expected = "expected spawn (every tuning's workers from a fresh ktune-tuner image) or auto "
                                    "(only where this process holds a GPU driver; also when unset)"},
    [KT__ENV_VERIFY_ON] = {ENUM, .choices = {"device", "host"},
                           .expected = "expected host (outputs compared on the host) or device (on the device where "
                                       "the backend can; also when unset)"},
    [KT__ENV_MISS_TENSORS] = {ENUM, .choices = {"device", "host"},
                              .expected = "expected device (a blocking miss shares the caller's tensors with the "
                                          "tuning helper where the backend can; also when unset) or host (copies "
                                          "them through host memory)"},
    [KT__ENV_DB] = {PATH},
    [KT__ENV_BINARY_CACHE] = {PATH},
    [KT__ENV_HELPER] = {PATH},
    [KT__ENV_CUDA_ARCH] = {TEXT},
    [KT__ENV_NVRTC] = {PATH},
    [KT__ENV_LIBCUDA] = {PATH},
    [KT__ENV_LIBNVML] = {PATH},
    [KT__ENV_POWERCAP_ROOT] = {PATH},
    [KT__ENV_TRACE] = {FLAG},
    [KT__ENV_PRINT_AUTOTUNING] = {FLAG},
    [KT__ENV_CC] = {PATH},
    [KT__ENV_CUDA_HOME] = {PATH},
    [KT__ENV_TMPDIR] = {PATH},
    [KT__ENV_HOME] = {PATH},
    [KT__ENV_PATH] = {TEXT},
    [KT__ENV_XDG_CACHE_HOME] = {PATH},
};

static const char *const names[KT__ENV_COUNT] = {
#define KT__ENVVAR_NAME(id, name) [KT__ENV_##id] = name,
    KT__ENVVARS(KT__ENVVAR_NAME)
#undef KT__ENVVAR_NAME
};

const char *kt__envvar_name(kt__envvar_id id) { return names[id]; }

bool kt__parse_seconds(const char *s, double max, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v > 0) || v > max) return false;
  *out = v;
  return true;
}

/* A binary suffix's shift: K 10, M 20, G 30, T 40 (either case), else 0. */
static int suffix_shift(char c) {
  switch (c) {
  case 'K':
  case 'k': return 10;
  case 'M':
  case 'm': return 20;
  case 'G':
  case 'g': return 30;
  case 'T':
  case 't': return 40;
  default: return 0;
  }
}

/* "4G", "512M", "1048576": bytes with an optional binary suffix and B. */
bool kt__parse_bytes(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *s == '-') return false;
  int shift = suffix_shift(*end);
  if (shift) end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end || v == 0 || v > (UINT64_MAX >> shift)) return false;
  *out = (uint64_t)v << shift;
  return true;
}

static int choice_of(const row *r, const char *s) {
  for (int i = 0; i < 4 && r->choices[i]; i++)
    if (strcmp(r->choices[i], s) == 0) return i;
  return -1;
}

/* The row's default in V (nothing given). */
static void set_default(const row *r, kt__envvar *v) {
  memset(v, 0, sizeof *v);
  v->seconds = r->default_seconds;
}

/* Reads TEXT (given, non-empty) by R's kind into V; false when R refuses it. */
static bool read_value(const row *r, const char *text, kt__envvar *v) {
  switch (r->kind) {
  case SECONDS:
    if (r->zero_allowed && strcmp(text, "0") == 0) v->seconds = 0;
    else if (!kt__parse_seconds(text, r->max_seconds, &v->seconds)) return false;
    break;
  case BYTES:
    if (!kt__parse_bytes(text, &v->bytes)) return false;
    break;
  case ENUM:
    if ((v->choice = choice_of(r, text)) < 0) return false;
    break;
  case FLAG: v->choice = strcmp(text, "0") != 0; break;
  case PATH:
  case TEXT: break;
  }
  v->set = true;
  return true;
}

/* Row ID read now into V (no copy of the text); its text, or NULL. */
static const char *read_now(kt__envvar_id id, kt__envvar *v) {
  const char *text = getenv(names[id]);
  set_default(&rows[id], v);
  if (text && *text && read_value(&rows[id], text, v)) return text;
  set_default(&rows[id], v);
  return NULL;
}

/* Row ID from the environment into V; false (V at the default) when the row
 * refuses the value. */
static bool read_row(kt__envvar_id id, kt__envvar *v) {
  const char *text = getenv(names[id]);
  if (read_now(id, v)) v->text = strdup(text);
  return !text || !*text || v->set;
}

const char *kt__envvar_text(kt__envvar_id id) {
  kt__envvar v;
  return read_now(id, &v);
}

int kt__envvar_choice(kt__envvar_id id) {
  kt__envvar v;
  read_now(id, &v);
  return v.choice;
}

bool kt__envvar_flag(kt__envvar_id id) {
  const char *text = kt__envvar_text(id);
  return text && strcmp(text, "0") != 0;
}

bool kt__envvars_resolve(kt__envvars *out, char *msg, size_t len) {
  memset(out, 0, sizeof *out);
  for (int id = 0; id < KT__ENV_COUNT; id++) {
    if (read_row((kt__envvar_id)id, &out->v[id])) continue;
    snprintf(msg, len, "ktune: error: %s=%s: %s", names[id], getenv(names[id]), rows[id].expected);
    kt__envvars_free(out);
    return false;
  }
  return true;
}

void kt__envvars_free(kt__envvars *e) {
  for (int id = 0; id < KT__ENV_COUNT; id++) {
    free(e->v[id].text);
    e->v[id].text = NULL;
  }
}
