/* How a ktune command stops (stop_signals.h). */
#include "stop_signals.h"

#include <signal.h>
#include <string.h>

#include "ktune.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig) {
  if (!caught) caught = sig;
  kt_interrupt();
}

void stop_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  caught = 0;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGXFSZ, SIG_IGN);
}

int stop_signal(void) { return caught; }
