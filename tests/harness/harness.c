#include "harness.h"

#include <stdarg.h>
#include <sys/wait.h>
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
