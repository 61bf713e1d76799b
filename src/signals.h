/* What the library's signal catching (kt_signals_catch, ktune.h) offers its
 * own processes: the tuning helper catches SIGINT, SIGTERM and SIGHUP with it
 * and never releases them. */
#ifndef KT_SIGNALS_H
#define KT_SIGNALS_H

#include <signal.h>

/* The first signal caught since the last kt_signals_catch that installed the
 * handler (0: none yet), as the handler writes it: a wait that a signal
 * interrupts (EINTR) reads it to tell a stop from a spurious wake-up. */
const volatile sig_atomic_t *kt__signals_caught(void);

#endif
