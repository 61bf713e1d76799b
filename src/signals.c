/* kt_signals_catch / kt_signals_release: interruptible calls for callers
 * whose own handlers cannot run while a call into ktune blocks (Python's run
 * between bytecodes). The handler only records the signal and calls
 * kt_interrupt(); the last release puts the caller's handlers back and
 * raises the recorded signal again, so that the caller reacts to it as it
 * would have (KeyboardInterrupt) once the tuning has stopped cleanly. */
#include "signals.h"

#include <pthread.h>
#include <string.h>

#include "common.h"

static const int caught_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { NCAUGHT = sizeof caught_signals / sizeof caught_signals[0] };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int depth;                          /* catches not yet released */
static struct sigaction previous[NCAUGHT]; /* the caller's handlers */
static volatile sig_atomic_t first_caught; /* 0: none yet */

static void on_signal(int sig) {
  if (!first_caught) first_caught = sig;
  kt_interrupt();
}

static int install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  first_caught = 0;
  for (int i = 0; i < NCAUGHT; i++)
    if (sigaction(caught_signals[i], &sa, &previous[i]) != 0) {
      while (--i >= 0) sigaction(caught_signals[i], &previous[i], NULL);
      return KT_IO;
    }
  return KT_OK;
}

const volatile sig_atomic_t *kt__signals_caught(void) { return &first_caught; }

int kt_signals_catch(void) {
  pthread_mutex_lock(&lock);
  int rc = depth == 0 ? install() : KT_OK;
  if (rc == KT_OK) depth++;
  pthread_mutex_unlock(&lock);
  return rc;
}

int kt_signals_release(void) {
  int sig = 0;
  pthread_mutex_lock(&lock);
  if (depth > 0 && --depth == 0) {
    for (int i = 0; i < NCAUGHT; i++) sigaction(caught_signals[i], &previous[i], NULL);
    sig = first_caught;
    first_caught = 0;
  }
  pthread_mutex_unlock(&lock);
  if (sig) raise(sig);
  return sig;
}
