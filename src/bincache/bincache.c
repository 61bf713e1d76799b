/* The on-disk binary cache: entries, their header, eviction (bincache.h). */
#include "bincache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../envvars.h"
#include "../hash.h"

static const char MAGIC[8] = {'K', 'T', 'U', 'N', 'E', 'B', 'I', 'N'};
static const char SUFFIX[] = ".ktbin";
static const char TMP_PREFIX[] = ".tmp-";
enum { STALE_TMP_S = 3600 };

const char *kt__bin_use_name(kt__bin_use u) {
  switch (u) {
  case KT__BIN_CACHED: return "cached";
  case KT__BIN_COMPILED: return "compiled";
  case KT__BIN_REBUILT: return "rebuilt";
  default: return NULL;
  }
}

/* ---- where ------------------------------------------------------------- */

static bool is_off(const char *s) { return s && strcmp(s, "off") == 0; }

static const char *home_dir(void) {
  const char *h = kt__envvar_text(KT__ENV_HOME);
  if (h && *h) return h;
  const struct passwd *pw = getpwuid(getuid());
  return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}

/* The cache holds code that ktune loads and runs: as ssh and ccache do, it
 * trusts a folder only when this user owns it and nobody else can write to
 * it (another user could plant a binary under a key). A folder that does
 * not exist yet is made private (make_dirs); a path that names something
 * else than a folder is a mistake, not a silent "off". */
static int check_trusted(kt__bincache *c, kt__errbuf *eb) {
  struct stat st;
  if (stat(c->dir, &st) != 0) return KT_OK;
  int rc = KT_OK;
  if (!S_ISDIR(st.st_mode))
    rc = kt__err(eb, KT_INVALID,
                 "ktune: error: the binary cache %s (KTUNE_BINARY_CACHE or kt_options.binary_cache) is not a folder; "
                 "name a folder (it is created if missing), or off to turn the cache off",
                 c->dir);
  else if (st.st_uid != geteuid())
    rc = kt__err(eb, KT_INVALID,
                 "ktune: error: the binary cache's folder %s belongs to user %ld, not to you (%ld): its binaries "
                 "would be loaded and run as yours; use a folder of your own (KTUNE_BINARY_CACHE)",
                 c->dir, (long)st.st_uid, (long)geteuid());
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    rc = kt__err(eb, KT_INVALID,
                 "ktune: error: the binary cache's folder %s can be written by %s (mode %03o): anyone who can "
                 "could plant a binary that ktune loads and runs; `chmod go-w %s`, or use a private folder",
                 c->dir, st.st_mode & S_IWOTH ? "every user" : "its group", (unsigned)(st.st_mode & 0777), c->dir);
  if (rc != KT_OK) {
    c->dir[0] = 0;
    c->off_reason = "off: its folder is not trusted";
  }
  return rc;
}

/* An entry another user owns, or that others can write, is nobody's to
 * trust, whatever its header says. */
static bool entry_trusted(const struct stat *st) {
  return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int kt__bincache_resolve(const char *path, bool off, uint64_t max_bytes, kt__bincache *out, kt__errbuf *eb) {
  memset(out, 0, sizeof *out);
  out->max_bytes = max_bytes ? max_bytes : KT__BINCACHE_DEFAULT_MAX;
  const char *env = kt__envvar_text(KT__ENV_BINARY_CACHE), *xdg = kt__envvar_text(KT__ENV_XDG_CACHE_HOME);
  if (!path || !*path) path = env && *env ? env : NULL;
  if (off || is_off(path)) {
    out->off_reason = off ? "turned off (--no-binary-cache)" : "turned off (KTUNE_BINARY_CACHE=off)";
    return KT_OK;
  }
  int n;
  if (path) n = snprintf(out->dir, sizeof out->dir, "%s", path);
  else if (xdg && xdg[0] == '/') n = snprintf(out->dir, sizeof out->dir, "%s/ktune/binaries", xdg);
  else if (home_dir()) n = snprintf(out->dir, sizeof out->dir, "%s/.cache/ktune/binaries", home_dir());
  else { /* a daemon without HOME still runs: it compiles every configuration */
    out->off_reason = "off: no home directory to keep it in (set KTUNE_BINARY_CACHE)";
    return KT_OK;
  }
  if (n < 0 || (size_t)n >= sizeof out->dir) {
    out->dir[0] = 0;
    out->off_reason = "off: its path is too long";
    return kt__err(eb, KT_INVALID,
                   "ktune: error: the binary cache's folder (KTUNE_BINARY_CACHE or kt_options.binary_cache) is too "
                   "long: at most %zu bytes",
                   sizeof out->dir - 1);
  }
  return check_trusted(out, eb);
}

/* ---- the header -------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void digest_of(const void *data, size_t len, unsigned char out[32]) {
  kt__sha256 c;
  kt__sha256_init(&c);
  kt__sha256_update(&c, data, len);
  kt__sha256_final(&c, out);
}

static void make_header(unsigned char h[KT__BINCACHE_HEADER], const unsigned char key[32], const void *payload,
                        size_t len) {
  memset(h, 0, KT__BINCACHE_HEADER);
  memcpy(h, MAGIC, sizeof MAGIC);
  put_le(h + 8, KT__BINCACHE_FORMAT, 4);
  memcpy(h + 16, key, 32);
  put_le(h + 48, len, 8);
  digest_of(payload, len, h + 56);
}

/* Whether header H describes an entry of KEY whose payload has FILE_LEN -
 * header bytes; the payload's checksum is checked after reading it. */
static bool header_fits(const unsigned char h[KT__BINCACHE_HEADER], const unsigned char key[32], uint64_t file_len) {
  return memcmp(h, MAGIC, sizeof MAGIC) == 0 && get_le(h + 8, 4) == KT__BINCACHE_FORMAT &&
         memcmp(h + 16, key, 32) == 0 && get_le(h + 48, 8) == file_len - KT__BINCACHE_HEADER;
}

/* ---- entries ----------------------------------------------------------- */

static void entry_path(const kt__bincache *c, const unsigned char key[32], kt__sbuf *out) {
  char hex[65];
  kt__sha256_hex(key, hex);
  kt__sbuf_printf(out, "%s/%s%s", c->dir, hex, SUFFIX);
}

static bool read_all(int fd, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t k = read(fd, (char *)buf + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += (size_t)k;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t k = write(fd, (const char *)buf + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += (size_t)k;
  }
  return true;
}

/* Reads and checks the entry open at FD (ST its fstat) into PAYLOAD. */
static bool read_entry(int fd, const struct stat *st, const unsigned char key[32], kt__sbuf *payload) {
  unsigned char h[KT__BINCACHE_HEADER], sum[32];
  if (!S_ISREG(st->st_mode) || !entry_trusted(st) || st->st_size < KT__BINCACHE_HEADER) return false;
  if (!read_all(fd, h, sizeof h) || !header_fits(h, key, (uint64_t)st->st_size)) return false;
  size_t len = (size_t)get_le(h + 48, 8);
  char *data = kt__xmalloc(len + 1);
  bool ok = read_all(fd, data, len);
  if (ok) digest_of(data, len, sum);
  ok = ok && memcmp(sum, h + 56, 32) == 0;
  if (ok) kt__sbuf_append(payload, data, len);
  free(data);
  return ok;
}

/* Removes PATH if it is still the file ST describes: a writer may have
 * renamed a good entry over the bad one meanwhile, and that one stays. */
static void remove_if_same(const char *path, const struct stat *st) {
  struct stat now;
  if (stat(path, &now) == 0 && now.st_ino == st->st_ino && now.st_dev == st->st_dev) unlink(path);
}

int kt__bincache_get(const kt__bincache *c, const unsigned char key[32], kt__sbuf *payload, bool *rejected) {
  *rejected = false;
  if (!kt__bincache_on(c)) return KT_NOTFOUND;
  kt__sbuf path = {0};
  entry_path(c, key, &path);
  int fd = open(path.s, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  int rc = KT_NOTFOUND;
  if (fd >= 0 && fstat(fd, &st) == 0) {
    if (read_entry(fd, &st, key, payload)) {
      futimens(fd, NULL); /* used now: eviction takes the least recently used */
      rc = KT_OK;
    } else {
      *rejected = true;
      remove_if_same(path.s, &st);
    }
  } else if (fd < 0 && errno == ELOOP) { /* a symbolic link is nobody's entry */
    *rejected = true;
    unlink(path.s);
  }
  if (fd >= 0) close(fd);
  if (rc != KT_OK) payload->len = 0;
  kt__sbuf_free(&path);
  return rc;
}

/* mkdir -p DIR, private (0700): binaries reveal what a user builds. */
static int make_dirs(const char *dir, kt__errbuf *eb) {
  char *p = kt__xstrdup(dir);
  int rc = KT_OK;
  for (char *q = p + 1; rc == KT_OK; q++) {
    bool end = *q == 0;
    if (*q != '/' && !end) continue;
    *q = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
      rc = kt__err(eb, KT_IO, "cannot create the binary cache's folder %s: %s", p, strerror(errno));
    if (end) break;
    *q = '/';
  }
  free(p);
  return rc;
}

/* A name no other writer uses: pid, a process-wide counter, the time. */
static void temp_path(const kt__bincache *c, kt__sbuf *out) {
  static atomic_uint counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  kt__sbuf_printf(out, "%s/%s%ld-%u-%ld", c->dir, TMP_PREFIX, (long)getpid(), atomic_fetch_add(&counter, 1),
                  (long)ts.tv_nsec);
}

static int write_temp(const char *tmp, const unsigned char *h, const void *payload, size_t len, kt__errbuf *eb) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return kt__err(eb, KT_IO, "cannot write %s: %s", tmp, strerror(errno));
  bool ok = write_all(fd, h, KT__BINCACHE_HEADER) && write_all(fd, payload, len) && fsync(fd) == 0;
  int e = errno;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(tmp);
    return kt__err(eb, KT_IO, "cannot write %s: %s", tmp, strerror(e ? e : errno));
  }
  return KT_OK;
}

/* Whether a store of BYTES may have put the folder over its limit. Listing
 * the folder costs a stat per entry (50,000 entries of a full 1 GiB cache:
 * tens of ms), so the process keeps the total of its last listing plus what
 * it stored since, and lists again when that passes the limit, or after
 * RESCAN_EVERY stores (other processes store too). */
enum { RESCAN_EVERY = 64 };
static pthread_mutex_t estimate_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char dir[4096];
  uint64_t bytes;
  int stores;
} estimate;

static bool over_limit_perhaps(const kt__bincache *c, uint64_t bytes) {
  pthread_mutex_lock(&estimate_lock);
  bool same = strcmp(estimate.dir, c->dir) == 0;
  if (!same) snprintf(estimate.dir, sizeof estimate.dir, "%s", c->dir);
  estimate.bytes += bytes;
  bool scan = !same || ++estimate.stores >= RESCAN_EVERY || estimate.bytes > c->max_bytes;
  pthread_mutex_unlock(&estimate_lock);
  return scan;
}

/* What the last listing found left in the folder. */
static void note_listing(const kt__bincache *c, uint64_t total) {
  pthread_mutex_lock(&estimate_lock);
  snprintf(estimate.dir, sizeof estimate.dir, "%s", c->dir);
  estimate.bytes = total;
  estimate.stores = 0;
  pthread_mutex_unlock(&estimate_lock);
}

int kt__bincache_put(const kt__bincache *c, const unsigned char key[32], const void *payload, size_t len,
                     kt__errbuf *eb) {
  if (!kt__bincache_on(c)) return KT_OK;
  KT__FORWARD(make_dirs(c->dir, eb));
  unsigned char h[KT__BINCACHE_HEADER];
  make_header(h, key, payload, len);
  kt__sbuf tmp = {0}, path = {0};
  temp_path(c, &tmp);
  entry_path(c, key, &path);
  int rc = write_temp(tmp.s, h, payload, len, eb);
  if (rc == KT_OK && rename(tmp.s, path.s) != 0) {
    rc = kt__err(eb, KT_IO, "cannot rename %s to %s: %s", tmp.s, path.s, strerror(errno));
    unlink(tmp.s);
  }
  kt__sbuf_free(&tmp);
  kt__sbuf_free(&path);
  if (rc == KT_OK && over_limit_perhaps(c, KT__BINCACHE_HEADER + len)) kt__bincache_evict(c);
  return rc;
}

void kt__bincache_remove(const kt__bincache *c, const unsigned char key[32]) {
  if (!kt__bincache_on(c)) return;
  kt__sbuf path = {0};
  entry_path(c, key, &path);
  unlink(path.s);
  kt__sbuf_free(&path);
}

/* ---- one compile per entry --------------------------------------------- */

static const char LOCK_FILE[] = ".compiling";

/* The key's byte in the lock file: 40 bits of the digest, an offset any
 * file system takes (two keys sharing one only wait for each other). */
static off_t lock_offset(const unsigned char key[32]) {
  uint64_t v = 0;
  for (int i = 0; i < 5; i++) v = v << 8 | key[i];
  return (off_t)v;
}

static bool stop_waiting(const atomic_int *cancel) { return kt__interrupted || (cancel && atomic_load(cancel)); }

int kt__bincache_lock(const kt__bincache *c, const unsigned char key[32], const atomic_int *cancel) {
  if (!kt__bincache_on(c)) return -1;
  kt__errbuf *quiet = kt__xmalloc(sizeof *quiet); /* no lock only costs a compile the holder does too */
  int made = make_dirs(c->dir, quiet);
  free(quiet);
  if (made != KT_OK) return -1;
  kt__sbuf path = {0};
  kt__sbuf_printf(&path, "%s/%s", c->dir, LOCK_FILE);
  int fd = open(path.s, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  kt__sbuf_free(&path);
  if (fd < 0) return -1;
  /* Polled rather than F_OFD_SETLKW, so that a build the tuner abandons (a
   * time budget) or an interrupted one stops waiting within POLL_MS. */
  enum { POLL_MS = 5, POLL_MAX_MS = 50 };
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = lock_offset(key), .l_len = 1};
  for (int wait_ms = POLL_MS; fcntl(fd, F_OFD_SETLK, &fl) != 0;
       wait_ms = wait_ms * 2 > POLL_MAX_MS ? POLL_MAX_MS : wait_ms * 2) {
    bool held = errno == EAGAIN || errno == EACCES || errno == EINTR;
    if (!held || stop_waiting(cancel)) {
      close(fd);
      return -1;
    }
    nanosleep(&(struct timespec){0, wait_ms * 1000000L}, NULL);
  }
  return fd;
}

void kt__bincache_unlock(int lock) {
  if (lock >= 0) close(lock); /* closing the description drops its OFD locks */
}

/* ---- eviction ---------------------------------------------------------- */

typedef struct entry_stat {
  char *name;
  uint64_t bytes;
  struct timespec used;
} entry_stat;

static bool is_entry_name(const char *name) {
  size_t n = strlen(name), s = sizeof SUFFIX - 1;
  return n == 64 + s && strcmp(name + 64, SUFFIX) == 0;
}

static int older_first(const void *a, const void *b) {
  const entry_stat *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  if (x->used.tv_nsec != y->used.tv_nsec) return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Every entry of the folder, with its size and last use; removes stale
 * temporary files on the way. */
static entry_stat *list_entries(DIR *d, int dfd, size_t *count, uint64_t *total) {
  entry_stat *v = NULL;
  size_t n = 0, cap = 0;
  *total = 0;
  time_t now = time(NULL);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    struct stat st;
    bool tmp = strncmp(e->d_name, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0;
    if ((!tmp && !is_entry_name(e->d_name)) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (tmp) {
      if (now - st.st_mtime > STALE_TMP_S) unlinkat(dfd, e->d_name, 0);
      continue;
    }
    if (n == cap) v = kt__xreallocarray(v, cap = cap ? 2 * cap : 64, sizeof *v);
    v[n++] = (entry_stat){kt__xstrdup(e->d_name), (uint64_t)st.st_size, st.st_mtim};
    *total += (uint64_t)st.st_size;
  }
  *count = n;
  return v;
}

void kt__bincache_evict(const kt__bincache *c) {
  if (!kt__bincache_on(c)) return;
  DIR *d = opendir(c->dir);
  if (!d) return;
  size_t n;
  uint64_t total;
  entry_stat *v = list_entries(d, dirfd(d), &n, &total);
  if (total > c->max_bytes) {
    qsort(v, n, sizeof *v, older_first);
    for (size_t i = 0; i < n && total > c->max_bytes; i++)
      if (unlinkat(dirfd(d), v[i].name, 0) == 0 || errno == ENOENT) total -= v[i].bytes;
  }
  note_listing(c, total);
  for (size_t i = 0; i < n; i++) free(v[i].name);
  free(v);
  closedir(d);
}

int kt__bincache_clear(const char *dir, uint64_t *files, uint64_t *bytes, kt__errbuf *eb) {
  *files = *bytes = 0;
  DIR *d = opendir(dir);
  if (!d && errno == ENOENT) return KT_OK;
  if (!d) return kt__err(eb, KT_IO, "cannot read the binary cache's folder %s: %s", dir, strerror(errno));
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    struct stat st;
    bool ours = is_entry_name(e->d_name) || strncmp(e->d_name, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0;
    if (!ours || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
      (*files)++;
      *bytes += (uint64_t)st.st_size;
    }
  }
  closedir(d);
  return KT_OK;
}
