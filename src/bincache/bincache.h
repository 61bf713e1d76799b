/* The on-disk cache of compiled binaries (a C backend's shared object, a
 * cubin, an OpenCL program binary), so that a configuration is compiled once
 * and not once per key: sizes are runtime values, and one binary serves them
 * all. The cache is content-addressed: an entry's name is the SHA-256 of its
 * key (key.h: everything that makes two binaries differ), and it holds an
 * opaque payload behind a header that makes a corrupt, truncated or foreign
 * file detectable:
 *
 *   offset  0  "KTUNEBIN"            magic
 *           8  u32 format version    KT__BINCACHE_FORMAT
 *          12  u32 0                 reserved
 *          16  key digest (32)       must match the name asked for
 *          48  u64 payload length    must match the file's length
 *          56  payload SHA-256 (32)
 *          88  8 bytes 0             reserved
 *          96  payload
 *
 * (integers little-endian). A file that fails any check is removed and
 * reported as a miss: the caller compiles again and stores a fresh entry.
 * Writers write a temporary file in the cache's own folder, fsync it and
 * rename it over the entry, so a reader sees a whole entry or none; a
 * reader marks an entry used by touching its mtime, and eviction removes
 * the least recently used entries once the folder is over its size limit.
 * Every function here is safe from several threads and processes at once. */
#ifndef KT_BINCACHE_H
#define KT_BINCACHE_H

#include <stdatomic.h>

#include "../common.h"

enum { KT__BINCACHE_FORMAT = 1, KT__BINCACHE_HEADER = 96 };
#define KT__BINCACHE_DEFAULT_MAX (1ull << 30) /* bytes: 1 GiB */

typedef struct kt__bincache {
  char dir[4096];         /* "" when the cache is off */
  uint64_t max_bytes;     /* size limit of the folder's entries */
  const char *off_reason; /* why it is off (static text), or NULL */
} kt__bincache;

/* How the binary cache served one build. The names are those of --json's
 * per-configuration "compile". */
typedef enum kt__bin_use {
  KT__BIN_NONE = 0, /* no build happened (a reused result) */
  KT__BIN_CACHED,   /* loaded from the cache: nothing compiled */
  KT__BIN_COMPILED, /* compiled (and stored, when the cache is on) */
  KT__BIN_REBUILT   /* a bad entry was found, removed, and compiled anew */
} kt__bin_use;
const char *kt__bin_use_name(kt__bin_use u); /* NULL for KT__BIN_NONE */

/* The cache's place and limit: PATH (kt_options.binary_cache), else
 * $KTUNE_BINARY_CACHE, else $XDG_CACHE_HOME/ktune/binaries, else
 * ~/.cache/ktune/binaries; OFF, or "off" as either path, turns it off.
 * MAX_BYTES is the limit (0: KT__BINCACHE_DEFAULT_MAX). Without a home
 * directory the cache is off (OFF_REASON says so); KT_INVALID when the path
 * is too long. */
int kt__bincache_resolve(const char *path, bool off, uint64_t max_bytes, kt__bincache *out, kt__errbuf *eb);
static inline bool kt__bincache_on(const kt__bincache *c) { return c && c->dir[0]; }

/* The payload stored under KEY into *PAYLOAD (an empty buffer first): KT_OK,
 * or KT_NOTFOUND when there is none or the entry was bad (then *REJECTED is
 * set, and the entry is gone). */
int kt__bincache_get(const kt__bincache *c, const unsigned char key[32], kt__sbuf *payload, bool *rejected);
/* Stores PAYLOAD under KEY, then evicts down to the limit. Failures (a full
 * disk, a read-only folder) only cost the next build its compile: KT_IO with
 * the reason in EB, nothing half-written left behind. */
int kt__bincache_put(const kt__bincache *c, const unsigned char key[32], const void *payload, size_t len,
                     kt__errbuf *eb);
/* Removes the entry of KEY (a payload the backend could not use). */
void kt__bincache_remove(const kt__bincache *c, const unsigned char key[32]);
/* One compile of an entry at a time, across threads and processes (the
 * key processes of a sweep over several devices of one model all want the
 * same configurations): a build that misses takes KEY's lock, looks again
 * (the holder before it may have stored the entry meanwhile) and compiles
 * only when it still misses, then stores and unlocks. The lock is one byte
 * (the key's) of the folder's ".compiling" file, taken with an
 * open-file-description lock (F_OFD_SETLK: per open file, so that threads of
 * one process exclude each other too; the kernel drops it when its holder
 * dies, however it dies). Waits until it is free, or CANCEL (may be NULL) or
 * kt__interrupted is set. Returns the lock (>= 0), or -1 when there is none
 * (the cache is off, the folder or the file cannot be made, cancelled): the
 * caller then compiles without it, as before. */
int kt__bincache_lock(const kt__bincache *c, const unsigned char key[32], const atomic_int *cancel);
/* Releases a lock kt__bincache_lock returned; -1 is a no-op. */
void kt__bincache_unlock(int lock);
/* Removes the least recently used entries until the folder's entries fit
 * the limit, and temporary files left more than an hour ago by writers that
 * died. */
void kt__bincache_evict(const kt__bincache *c);
/* Removes every entry of the folder DIR (a missing folder is empty):
 * *FILES and *BYTES say how much went. */
int kt__bincache_clear(const char *dir, uint64_t *files, uint64_t *bytes, kt__errbuf *eb);

#endif
