/* The environment variables ktune reads: one table (envvars.c) gives each
 * its name, kind, default, limits and what a bad value is told, and every
 * read of the environment in src/ goes through it.
 *
 * Two ways to read, one rule. A context resolves the whole table when it is
 * created (kt__envvars_resolve): a bad value of any row is refused there,
 * where it can still be reported, and what the library does per context (its
 * limits, the helper's idle time, the sample length, the zygote) is asked of
 * the context afterwards. Code that no context reaches (a trace line, the
 * device worker, a backend loading its driver, the default paths below the
 * handles) reads one row with kt__envvar_get, under the same rule; a value
 * the row refuses reads as unset there, since the context has said so. */
#ifndef KT_ENVVARS_H
#define KT_ENVVARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ID, NAME): every variable; its rules are its row in envvars.c. */
#define KT__ENVVARS(X)                            \
  X(COMPILE_TIMEOUT, "KTUNE_COMPILE_TIMEOUT")     \
  X(RUN_TIMEOUT, "KTUNE_RUN_TIMEOUT")             \
  X(BINARY_CACHE_MAX, "KTUNE_BINARY_CACHE_MAX")   \
  X(MAX_TENSOR_MEMORY, "KTUNE_MAX_TENSOR_MEMORY") \
  X(HELPER_IDLE_S, "KTUNE_HELPER_IDLE_S")         \
  X(SAMPLE_S, "KTUNE_SAMPLE_S")                   \
  X(ZYGOTE, "KTUNE_ZYGOTE")                       \
  X(VERIFY_ON, "KTUNE_VERIFY_ON")                 \
  X(MISS_TENSORS, "KTUNE_MISS_TENSORS")           \
  X(DB, "KTUNE_DB")                               \
  X(BINARY_CACHE, "KTUNE_BINARY_CACHE")           \
  X(HELPER, "KTUNE_HELPER")                       \
  X(CUDA_ARCH, "KTUNE_CUDA_ARCH")                 \
  X(NVRTC, "KTUNE_NVRTC")                         \
  X(LIBCUDA, "KTUNE_LIBCUDA")                     \
  X(LIBNVML, "KTUNE_LIBNVML")                     \
  X(POWERCAP_ROOT, "KTUNE_POWERCAP_ROOT")         \
  X(TRACE, "KTUNE_TRACE")                         \
  X(PRINT_AUTOTUNING, "KTUNE_PRINT_AUTOTUNING")   \
  X(CC, "CC")                                     \
  X(CUDA_HOME, "CUDA_HOME")                       \
  X(TMPDIR, "TMPDIR")                             \
  X(HOME, "HOME")                                 \
  X(PATH, "PATH")                                 \
  X(XDG_CACHE_HOME, "XDG_CACHE_HOME")

/* The words of the ENUM rows, in their rows' order (the first the default). */
enum { KT__ZYGOTE_AUTO, KT__ZYGOTE_SPAWN };
enum { KT__VERIFY_ON_DEVICE, KT__VERIFY_ON_HOST };
enum { KT__MISS_TENSORS_DEVICE, KT__MISS_TENSORS_HOST };

typedef enum kt__envvar_id {
#define KT__ENVVAR_ID(id, name) KT__ENV_##id,
  KT__ENVVARS(KT__ENVVAR_ID)
#undef KT__ENVVAR_ID
      KT__ENV_COUNT
} kt__envvar_id;

/* A variable's value as its kind reads it. */
typedef struct kt__envvar {
  bool set;       /* given, non-empty and accepted; else the fields hold the row's default */
  double seconds; /* SECONDS */
  uint64_t bytes; /* BYTES */
  int choice;     /* ENUM: the index of the word among the row's choices; FLAG: 0 or 1 */
  char *text;     /* as given (PATH, TEXT and every kind); NULL when unset */
} kt__envvar;

/* The whole table, read once (a context's). */
typedef struct kt__envvars {
  kt__envvar v[KT__ENV_COUNT];
} kt__envvars;

/* Reads every row into OUT. The first value a row refuses is 0 with its
 * message in MSG ("ktune: error: NAME=VALUE: expected ..."), OUT then freed. */
bool kt__envvars_resolve(kt__envvars *out, char *msg, size_t len);
void kt__envvars_free(kt__envvars *e);

/* One row, read now from the process's environment (see above). The row's text as given when set and accepted, else NULL: a pointer into
 * the environment, valid until it changes (what getenv gives). */
const char *kt__envvar_text(kt__envvar_id id);
/* A FLAG row: set and not "0". */
bool kt__envvar_flag(kt__envvar_id id);
/* An ENUM row: the index of its word among the row's choices (0, the
 * default, when unset or refused). */
int kt__envvar_choice(kt__envvar_id id);
/* The variable's name. */
const char *kt__envvar_name(kt__envvar_id id);

/* Parsers the rows use, shared with the command line's own values. */
bool kt__parse_seconds(const char *s, double max, double *out);
bool kt__parse_bytes(const char *s, uint64_t *out);

#endif
