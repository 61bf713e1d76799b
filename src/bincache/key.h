/* The binary cache's key: a SHA-256 over named, length-prefixed fields, so
 * that no two different sets of fields hash alike ("ab" + "c" is not
 * "a" + "bc"). The backend adds what makes its binaries differ (backend,
 * device, compiler and version, flags, -D values: backend/binkey.c); the
 * source goes in with every file it includes. */
#ifndef KT_BINCACHE_KEY_H
#define KT_BINCACHE_KEY_H

#include "../common.h"
#include "../hash.h"

/* Bump when the key's fields or their meaning change: old entries are then
 * never found again (eviction removes them). */
#define KT__BINKEY_VERSION "ktune-binary-key 1"

typedef struct kt__binkey {
  kt__sha256 sha;
} kt__binkey;

void kt__binkey_init(kt__binkey *k);
void kt__binkey_add(kt__binkey *k, const char *field, const void *data, size_t len);
void kt__binkey_add_str(kt__binkey *k, const char *field, const char *s); /* NULL adds "" */
/* The source TEXT (read from PATH, NULL for a string) and, recursively,
 * every file a `#include "..."` of it names, found beside the including
 * file as the compilers find them. `#include <...>` names the toolchain's
 * headers, which its version (in the key) stands for. False, with the
 * reason in WHY, when an include cannot be hashed: a quoted include not
 * found beside its includer, an include whose name a macro gives, a chain
 * deeper than 16 or longer than 256 files; the build is then not cached. */
bool kt__binkey_add_source(kt__binkey *k, const char *text, size_t len, const char *path, char *why, size_t whylen);
void kt__binkey_final(kt__binkey *k, unsigned char digest[32]);

#endif
