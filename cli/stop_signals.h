/* How a ktune command stops: Ctrl-C, kill and a closed terminal (SIGINT,
 * SIGTERM, SIGHUP) all stop it the same way, finished results kept and
 * temporary files removed. The handler records the signal and calls
 * kt_interrupt(), so a tuning in this process stops at its next check and a
 * loop of the command's own (an MPI rank's) sees stop_signal(). A file-size
 * limit (ulimit -f) makes a write fail with EFBIG, reported as an error,
 * instead of killing the process with SIGXFSZ and leaving its files behind. */
#ifndef KTUNE_CLI_STOP_SIGNALS_H
#define KTUNE_CLI_STOP_SIGNALS_H

void stop_signals_install(void);

/* The first stopping signal caught since the install, 0 for none. */
int stop_signal(void);

#endif
