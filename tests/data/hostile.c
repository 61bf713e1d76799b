/* A kernel whose fast configurations misbehave in ways that leave the
 * output right, to test that none of them can win:
 *   VARIANT 0   correct, slow (the default and reference)
 *   VARIANT 1   writes its input (x zeroed after use)
 *   VARIANT 2   writes three elements past the end of y
 *   VARIANT 3   writes one element before the start of y
 *   VARIANT 4   leaves a thread running that keeps writing y
 *   VARIANT 5   arms alarm(1)
 *   VARIANT 6   installs a SIGUSR1 handler
 *   VARIANT 7   changes the working directory
 *   VARIANT 8   changes the environment
 *   VARIANT 9   forks a child that sleeps for a minute
 *   VARIANT 10  sends SIGTERM to its whole process group
 *   VARIANT 11  correct and fast: the expected winner */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 100000)

static float *volatile scribble_target;
static void *scribble(void *arg) {
  (void)arg;
  for (;;) scribble_target[0] = 12345.0f;
  return NULL;
}
static void on_usr1(int sig) { (void)sig; }

void scale(float *x, float *y, int n) {
  int repeat = VARIANT == 0 ? 20 : 1; /* the default redoes the work */
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
  if (VARIANT == 1)
    for (int i = 0; i < n; i++) x[i] = 0;
  if (VARIANT == 2)
    for (int i = n; i < n + 3; i++) y[i] = 1;
  if (VARIANT == 3) y[-1] = 1;
  if (VARIANT == 4) {
    static int started;
    pthread_t t;
    scribble_target = y;
    if (!started++) pthread_create(&t, NULL, scribble, NULL);
  }
  if (VARIANT == 5) alarm(1);
  if (VARIANT == 6) signal(SIGUSR1, on_usr1);
  if (VARIANT == 7) (void)!chdir("/");
  if (VARIANT == 8) setenv("KTUNE_HOSTILE", "1", 1);
  if (VARIANT == 9) {
    pid_t child = fork();
    if (child == 0) {
      sleep(60);
      _exit(0);
    }
    const char *path = getenv("HOSTILE_CHILD_PIDS"); /* for the test to look for it */
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) fprintf(f, "%ld\n", (long)child), fclose(f);
  }
  if (VARIANT == 10) kill(0, SIGTERM);
}
