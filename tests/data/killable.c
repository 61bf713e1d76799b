/* A kernel for the tests of failures that are not a configuration's own
 * doing, and of what the database keeps:
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  correct and fast; with KILLABLE_PIDS set it writes its pid
 *              there and sleeps 5 s, so that the test can kill its worker
 *              from outside (once: KILLABLE_ONCE names a marker file)
 *   VARIANT 2  correct and fast at first, then crashes once another
 *              configuration has run after it (KILLABLE_LAST, a file, says
 *              which ran last, across workers): in the finalist rounds
 *   VARIANT 3  always crashes (a failure of its own)
 *   VARIANT 4  correct, slow */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// @autotune(VARIANT in [0, 1, 2, 3, 4])
// @kernel scale(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 20000)

static void sleep_to_be_killed(void) {
  const char *pids = getenv("KILLABLE_PIDS"), *once = getenv("KILLABLE_ONCE");
  if (!pids) return;
  if (once && access(once, F_OK) == 0) return;
  FILE *f = fopen(pids, "a");
  if (f) fprintf(f, "%ld\n", (long)getpid()), fclose(f);
  if (once && (f = fopen(once, "w"))) fclose(f);
  sleep(5);
}

/* The variant that ran last (0 if none); records this one. */
static int swap_last(int me) {
  const char *path = getenv("KILLABLE_LAST");
  if (!path) return me;
  int last = 0;
  FILE *f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%d", &last) != 1) last = 0;
    fclose(f);
  }
  if ((f = fopen(path, "w"))) fprintf(f, "%d\n", me), fclose(f);
  return last;
}

void scale(const float *x, float *y, int n) {
  if (VARIANT == 1) sleep_to_be_killed();
  static int runs;
  int last = swap_last(VARIANT + 1);
  if (VARIANT == 2 && runs++ > 0 && last != VARIANT + 1) raise(SIGSEGV);
  if (VARIANT == 3) raise(SIGSEGV);
  int repeat = VARIANT == 0 || VARIANT == 4 ? 20 : 1;
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
}
