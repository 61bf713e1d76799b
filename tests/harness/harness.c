#include "harness.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { KT_TEST_MAX = 512 };
static struct {
  const char *name;
  kt_test_fn fn;
} cases[KT_TEST_MAX];
static int ncases;

void kt_test_register(const char *name, kt_test_fn fn) {
  if (ncases == KT_TEST_MAX) {
    fprintf(stderr, "harness: too many tests\n");
    exit(2);
  }
  cases[ncases].name = name;
  cases[ncases].fn = fn;
  ncases++;
}

void kt_test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s:%d: assertion failed: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

/* Runs one case in a child so that a crash is a failure, not the end. */
static int run_isolated(int i) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    cases[i].fn();
    fflush(NULL);
    _exit(0);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) return 1;
  return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static char tmpdir[64];
static pid_t tmp_owner;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* The case's folder goes when the case's own process ends (not a child's). */
static void remove_tmpdir(void) {
  if (tmpdir[0] && getpid() == tmp_owner) nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *kt_test_tmp_path(const char *name) {
  static char buf[32][256];
  static int next;
  char *p = buf[next++ % 32];
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kt-test-XXXXXX");
    if (!mkdtemp(tmpdir)) kt_test_fail(__FILE__, __LINE__, "mkdtemp %s failed", tmpdir);
    tmp_owner = getpid();
    atexit(remove_tmpdir);
  }
  snprintf(p, 256, "%s/%s", tmpdir, name);
  return p;
}

void kt_test_tmp_dir(const char *tag, char *dir, size_t len) {
  char name[64];
  snprintf(name, sizeof name, "%s-XXXXXX", tag);
  if ((size_t)snprintf(dir, len, "%s", kt_test_tmp_path(name)) >= len)
    kt_test_fail(__FILE__, __LINE__, "the folder %s does not fit in %zu bytes", kt_test_tmp_path(name), len);
  if (!mkdtemp(dir)) kt_test_fail(__FILE__, __LINE__, "mkdtemp %s failed", dir);
}

void kt_test_private_store(const char *tag, char *dir, size_t len) {
  kt_test_tmp_dir(tag, dir, len);
  char path[4200];
  snprintf(path, sizeof path, "%s/results.db", dir);
  setenv("KTUNE_DB", path, 1);
  snprintf(path, sizeof path, "%s/bin", dir);
  setenv("KTUNE_BINARY_CACHE", path, 1);
}

int main(int argc, char **argv) {
  if (argc > 1) {
    for (int i = 0; i < ncases; i++)
      if (strcmp(cases[i].name, argv[1]) == 0) {
        cases[i].fn();
        return 0;
      }
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
  }
  int failed = 0;
  for (int i = 0; i < ncases; i++) {
    int bad = run_isolated(i);
    printf("%s %s\n", bad ? "FAIL" : "ok  ", cases[i].name);
    failed += bad;
  }
  printf("%d passed, %d failed\n", ncases - failed, failed);
  return failed != 0;
}

int kt_test_slowdown(void) {
  const char *s = getenv("KTUNE_TEST_SLOWDOWN");
  if (!s || !*s) return 10;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < 1 || v > 1000) {
    fprintf(stderr, "KTUNE_TEST_SLOWDOWN=%s: expected a whole number from 1 to 1000\n", s);
    exit(2);
  }
  return (int)v;
}

static int capture_saved = -1, capture_fd = -1;

void kt_test_capture_start(void) {
  fflush(stderr);
  capture_saved = dup(2);
  capture_fd = open(kt_test_tmp_path("stderr.txt"), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_TRUE(capture_saved >= 0 && capture_fd >= 0);
  dup2(capture_fd, 2);
}

const char *kt_test_captured(void) {
  static char text[1 << 21]; /* traces of several tunings */
  fflush(stderr);
  ssize_t n = pread(capture_fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = 0;
  return text;
}

void kt_test_capture_end(void) {
  fflush(stderr);
  dup2(capture_saved, 2);
  close(capture_saved);
  close(capture_fd);
}

int kt_test_count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

void kt_test_sleep(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}
