/* The binary cache: entries and their header, bad entries, eviction,
 * concurrent writers, the key's source and includes. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bincache/bincache.h"
#include "bincache/key.h"
#include "harness.h"

static void temp_cache(kt__bincache *c, uint64_t max) {
  char tmpl[128];
  kt_test_tmp_dir("bincache", tmpl, sizeof tmpl);
  memset(c, 0, sizeof *c);
  snprintf(c->dir, sizeof c->dir, "%s/bin", tmpl);
  c->max_bytes = max ? max : KT__BINCACHE_DEFAULT_MAX;
}

static void key_of(const char *text, unsigned char key[32]) {
  kt__binkey k;
  kt__binkey_init(&k);
  kt__binkey_add_str(&k, "test", text);
  kt__binkey_final(&k, key);
}

static void entry_file(const kt__bincache *c, const unsigned char key[32], char *out, size_t len) {
  char hex[65];
  kt__sha256_hex(key, hex);
  snprintf(out, len, "%s/%s.ktbin", c->dir, hex);
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.' || strncmp(e->d_name, ".tmp-", 5) == 0;
  if (d) closedir(d);
  return n;
}

/* Get after put gives the payload back; a key never stored is a miss. */
TEST(put_then_get) {
  kt__bincache c;
  temp_cache(&c, 0);
  unsigned char k1[32], k2[32];
  key_of("one", k1);
  key_of("two", k2);
  kt__errbuf eb;
  ASSERT_EQ(kt__bincache_put(&c, k1, "payload bytes", 13, &eb), KT_OK);
  kt__sbuf got = {0};
  bool rejected = true;
  ASSERT_EQ(kt__bincache_get(&c, k1, &got, &rejected), KT_OK);
  ASSERT_FALSE(rejected);
  ASSERT_EQ(got.len, 13);
  ASSERT_TRUE(memcmp(got.s, "payload bytes", 13) == 0);
  got.len = 0;
  ASSERT_EQ(kt__bincache_get(&c, k2, &got, &rejected), KT_NOTFOUND);
  ASSERT_FALSE(rejected);
  kt__sbuf_free(&got);
  struct stat st;
  ASSERT_EQ(stat(c.dir, &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0700);
}

/* Writes BYTES at OFFSET of the entry of KEY (or truncates it to OFFSET). */
static void damage(const kt__bincache *c, const unsigned char key[32], long offset, const char *bytes) {
  char path[4200];
  entry_file(c, key, path, sizeof path);
  if (!bytes) {
    ASSERT_EQ(truncate(path, offset), 0);
    return;
  }
  int fd = open(path, O_WRONLY);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(pwrite(fd, bytes, strlen(bytes), offset), (long)strlen(bytes));
  close(fd);
}

static void expect_rejected(const kt__bincache *c, const unsigned char key[32]) {
  kt__sbuf got = {0};
  bool rejected = false;
  ASSERT_EQ(kt__bincache_get(c, key, &got, &rejected), KT_NOTFOUND);
  ASSERT_TRUE(rejected);
  ASSERT_EQ(got.len, 0);
  char path[4200];
  entry_file(c, key, path, sizeof path);
  ASSERT_TRUE(access(path, F_OK) != 0); /* removed */
  kt__sbuf_free(&got);
}

/* A flipped payload byte, a flipped header byte, a truncated file, an empty
 * file and another key's entry under this name are all detected and
 * removed, never returned. */
TEST(bad_entries_are_removed) {
  kt__bincache c;
  temp_cache(&c, 0);
  unsigned char k[32], other[32];
  key_of("k", k);
  key_of("other", other);
  kt__errbuf eb;
  const char *payload = "0123456789abcdef0123456789abcdef";
  struct {
    long offset;
    const char *bytes;
  } cases[] = {{KT__BINCACHE_HEADER + 5, "X"},   {60, "X"}, {8, "\x07"},
               {KT__BINCACHE_HEADER + 10, NULL}, {0, NULL}, {40, NULL}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ASSERT_EQ(kt__bincache_put(&c, k, payload, strlen(payload), &eb), KT_OK);
    damage(&c, k, cases[i].offset, cases[i].bytes);
    expect_rejected(&c, k);
  }
  /* a whole entry, but of another key, renamed */
  ASSERT_EQ(kt__bincache_put(&c, other, payload, strlen(payload), &eb), KT_OK);
  char from[4200], to[4200];
  entry_file(&c, other, from, sizeof from);
  entry_file(&c, k, to, sizeof to);
  ASSERT_EQ(rename(from, to), 0);
  expect_rejected(&c, k);
  /* a foreign file */
  FILE *f = fopen(to, "w");
  fputs("not a ktune binary at all, but long enough to hold a header ......................................", f);
  fclose(f);
  expect_rejected(&c, k);
}

static void set_mtime(const kt__bincache *c, const unsigned char key[32], time_t when) {
  char path[4200];
  entry_file(c, key, path, sizeof path);
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool present(const kt__bincache *c, const unsigned char key[32]) {
  char path[4200];
  entry_file(c, key, path, sizeof path);
  return access(path, F_OK) == 0;
}

/* Past the limit, the least recently used entries go; a get counts as a use. */
TEST(eviction_is_least_recently_used) {
  kt__bincache c;
  temp_cache(&c, 0);
  char big[1000];
  memset(big, 'b', sizeof big);
  unsigned char k[5][32];
  kt__errbuf eb;
  time_t now = time(NULL);
  for (int i = 0; i < 4; i++) {
    char name[8];
    snprintf(name, sizeof name, "e%d", i);
    key_of(name, k[i]);
    ASSERT_EQ(kt__bincache_put(&c, k[i], big, sizeof big, &eb), KT_OK);
    set_mtime(&c, k[i], now - 100 + i); /* e0 oldest */
  }
  kt__sbuf got = {0};
  bool rejected;
  ASSERT_EQ(kt__bincache_get(&c, k[0], &got, &rejected), KT_OK); /* e0 used now: e1 is the oldest */
  kt__sbuf_free(&got);
  c.max_bytes = 4 * (sizeof big + KT__BINCACHE_HEADER); /* room for four of the five */
  key_of("e4", k[4]);
  ASSERT_EQ(kt__bincache_put(&c, k[4], big, sizeof big, &eb), KT_OK);
  ASSERT_TRUE(present(&c, k[0]));
  ASSERT_FALSE(present(&c, k[1]));
  ASSERT_TRUE(present(&c, k[2]));
  ASSERT_TRUE(present(&c, k[3]));
  ASSERT_TRUE(present(&c, k[4]));
  ASSERT_EQ(count_files(c.dir), 4);
}

/* Two processes storing and reading the same keys at once: every read is a
 * whole, right payload or a miss, and no temporary file stays. */
TEST(concurrent_writers_and_readers) {
  kt__bincache c;
  temp_cache(&c, 0);
  enum { KEYS = 8, ROUNDS = 150 };
  pid_t kids[2];
  for (int p = 0; p < 2; p++) {
    kids[p] = fork();
    if (kids[p] == 0) {
      int bad = 0;
      for (int r = 0; r < ROUNDS; r++) {
        char name[16], payload[3000];
        snprintf(name, sizeof name, "key%d", r % KEYS);
        unsigned char k[32];
        key_of(name, k);
        memset(payload, 'a' + r % KEYS, sizeof payload);
        kt__errbuf eb;
        kt__sbuf got = {0};
        bool rejected;
        if ((r + p) % 2) kt__bincache_put(&c, k, payload, sizeof payload, &eb);
        if (kt__bincache_get(&c, k, &got, &rejected) == KT_OK)
          bad += got.len != sizeof payload || memcmp(got.s, payload, sizeof payload) != 0;
        bad += rejected;
        kt__sbuf_free(&got);
      }
      _exit(bad ? 1 : 0);
    }
  }
  for (int p = 0; p < 2; p++) {
    int st;
    ASSERT_EQ(waitpid(kids[p], &st, 0), kids[p]);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  ASSERT_EQ(count_files(c.dir), KEYS); /* the entries, no .tmp- */
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The compile lock: a second taker (another process, or another open in
 * this one) waits for the holder; other keys do not; a dead holder's lock
 * is free at once; a cancelled wait gives up. */
TEST(compile_lock_waits_for_its_holder) {
  kt__bincache c;
  temp_cache(&c, 0);
  unsigned char k1[32], k2[32];
  key_of("one", k1);
  key_of("two", k2);
  int held = kt__bincache_lock(&c, k1, NULL);
  ASSERT_TRUE(held >= 0);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t kid = fork();
  if (kid == 0) { /* other key at once, then this key once the parent lets go */
    close(held);  /* the parent's open, shared by the fork: its lock is the parent's */
    double t0 = now_s();
    int other = kt__bincache_lock(&c, k2, NULL);
    double other_s = now_s() - t0;
    ASSERT_EQ(write(pipefd[1], "x", 1), 1);
    int same = kt__bincache_lock(&c, k1, NULL);
    double same_s = now_s() - t0;
    /* other_s: at once, 0.2 s x the slowdown (a loaded machine may not run
     * this child for a while; a lock that blocked other keys would never let
     * it write, the parent would wait for ever, and the case time out). */
    _exit(other >= 0 && same >= 0 && other_s < 0.2 * kt_test_slowdown() && same_s >= 0.25 ? 0 : 1);
  }
  char x;
  ASSERT_EQ(read(pipefd[0], &x, 1), 1);
  struct timespec hold = {0, 300 * 1000000L};
  nanosleep(&hold, NULL);
  kt__bincache_unlock(held);
  int st;
  ASSERT_EQ(waitpid(kid, &st, 0), kid);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(pipefd[0]);
  close(pipefd[1]);

  kid = fork(); /* a holder killed with its lock */
  if (kid == 0) {
    kt__bincache_lock(&c, k1, NULL);
    raise(SIGKILL);
  }
  ASSERT_EQ(waitpid(kid, &st, 0), kid);
  double t0 = now_s();
  int again = kt__bincache_lock(&c, k1, NULL);
  ASSERT_TRUE(again >= 0);
  ASSERT_TRUE(now_s() - t0 < 0.2);

  atomic_int cancel = 1; /* held (by this process's other open): a cancelled build stops waiting */
  ASSERT_EQ(kt__bincache_lock(&c, k1, &cancel), -1);
  kt__bincache_unlock(again);
  kt__bincache_unlock(-1);
  ASSERT_EQ(count_files(c.dir), 0); /* the lock file is no entry */
}

TEST(clear_removes_entries_only) {
  kt__bincache c;
  temp_cache(&c, 0);
  unsigned char k[32];
  key_of("x", k);
  kt__errbuf eb;
  ASSERT_EQ(kt__bincache_put(&c, k, "abc", 3, &eb), KT_OK);
  char other[4200];
  snprintf(other, sizeof other, "%s/README", c.dir);
  FILE *f = fopen(other, "w");
  fputs("mine", f);
  fclose(f);
  uint64_t files, bytes;
  ASSERT_EQ(kt__bincache_clear(c.dir, &files, &bytes, &eb), KT_OK);
  ASSERT_EQ(files, 1);
  ASSERT_EQ(bytes, KT__BINCACHE_HEADER + 3);
  ASSERT_FALSE(present(&c, k));
  ASSERT_EQ(access(other, F_OK), 0);
  snprintf(other, sizeof other, "%s/missing", c.dir);
  ASSERT_EQ(kt__bincache_clear(other, &files, &bytes, &eb), KT_OK);
  ASSERT_EQ(files, 0);
}

TEST(resolve_place_and_off) {
  kt__bincache c;
  kt__errbuf eb;
  setenv("KTUNE_BINARY_CACHE", "/somewhere/bins", 1);
  ASSERT_EQ(kt__bincache_resolve(NULL, false, 0, &c, &eb), KT_OK);
  ASSERT_STREQ(c.dir, "/somewhere/bins");
  ASSERT_EQ(c.max_bytes, KT__BINCACHE_DEFAULT_MAX);
  ASSERT_EQ(kt__bincache_resolve("/given", false, 5, &c, &eb), KT_OK);
  ASSERT_STREQ(c.dir, "/given");
  ASSERT_EQ(c.max_bytes, 5);
  setenv("KTUNE_BINARY_CACHE", "off", 1);
  ASSERT_EQ(kt__bincache_resolve(NULL, false, 0, &c, &eb), KT_OK);
  ASSERT_FALSE(kt__bincache_on(&c));
  ASSERT_CONTAINS(c.off_reason, "KTUNE_BINARY_CACHE=off");
  unsetenv("KTUNE_BINARY_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  ASSERT_EQ(kt__bincache_resolve(NULL, false, 0, &c, &eb), KT_OK);
  ASSERT_STREQ(c.dir, "/xdg/ktune/binaries");
  ASSERT_EQ(kt__bincache_resolve(NULL, true, 0, &c, &eb), KT_OK);
  ASSERT_FALSE(kt__bincache_on(&c));
  ASSERT_CONTAINS(c.off_reason, "--no-binary-cache");
  char *longpath = calloc(5000, 1);
  memset(longpath, 'a', 4999);
  longpath[0] = '/';
  ASSERT_EQ(kt__bincache_resolve(longpath, false, 0, &c, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "KTUNE_BINARY_CACHE or kt_options.binary_cache");
  ASSERT_FALSE(kt__bincache_on(&c));
  free(longpath);
}

/* ---- the key's source ------------------------------------------------- */

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT_TRUE(f != NULL);
  fputs(text, f);
  fclose(f);
}

static bool source_key(const char *text, const char *path, unsigned char key[32], char *why) {
  kt__binkey k;
  kt__binkey_init(&k);
  bool ok = kt__binkey_add_source(&k, text, strlen(text), path, why, 256);
  kt__binkey_final(&k, key);
  return ok;
}

/* An included file's content is part of the key, down the include chain;
 * a system header is not looked for; a missing or computed include refuses. */
TEST(key_follows_includes) {
  char dir[128];
  kt_test_tmp_dir("binkey", dir, sizeof dir);
  char main_c[256], a_h[256], b_h[256], sub[256];
  snprintf(main_c, sizeof main_c, "%s/k.c", dir);
  snprintf(sub, sizeof sub, "%s/inc", dir);
  mkdir(sub, 0700);
  snprintf(a_h, sizeof a_h, "%s/inc/a.h", dir);
  snprintf(b_h, sizeof b_h, "%s/inc/b.h", dir);
  const char *text = "#include <stdint.h>\n  #  include \"inc/a.h\"\nint f(void) { return A; }\n";
  write_text(a_h, "#include \"b.h\"\n#define A B\n");
  write_text(b_h, "#define B 1\n");
  unsigned char k1[32], k2[32], k3[32];
  char why[256] = "";
  ASSERT_TRUE(source_key(text, main_c, k1, why));
  ASSERT_TRUE(source_key(text, main_c, k2, why));
  ASSERT_TRUE(memcmp(k1, k2, 32) == 0);
  write_text(b_h, "#define B 2\n"); /* two levels down */
  ASSERT_TRUE(source_key(text, main_c, k3, why));
  ASSERT_TRUE(memcmp(k1, k3, 32) != 0);
  unlink(b_h);
  ASSERT_FALSE(source_key(text, main_c, k3, why));
  ASSERT_CONTAINS(why, "b.h");
  ASSERT_FALSE(source_key("#define H \"x.h\"\n#include H\n", main_c, k3, why));
  ASSERT_CONTAINS(why, "macro");
  write_text(a_h, "#include \"a.h\"\n"); /* includes itself: a chain too deep */
  ASSERT_FALSE(source_key(text, main_c, k3, why));
  ASSERT_CONTAINS(why, "deeper");
}

/* Fields are length-prefixed: moving a byte between two fields changes it. */
TEST(key_fields_do_not_run_together) {
  unsigned char a[32], b[32];
  kt__binkey k;
  kt__binkey_init(&k);
  kt__binkey_add_str(&k, "x", "ab");
  kt__binkey_add_str(&k, "x", "c");
  kt__binkey_final(&k, a);
  kt__binkey_init(&k);
  kt__binkey_add_str(&k, "x", "a");
  kt__binkey_add_str(&k, "x", "bc");
  kt__binkey_final(&k, b);
  ASSERT_TRUE(memcmp(a, b, 32) != 0);
}
