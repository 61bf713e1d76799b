/* A sweep over several devices: the dealer. One ktune process per device in
 * use (key_process), each given `--device D --quiet` and one key; a key is
 * dealt, in key order, to the first device that frees up. The processes'
 * standard output (a table, or a JSON document with --json) is kept and
 * printed in key order whatever order they end in; their standard error is
 * relayed line by line behind "[device D] ", so that several at once never
 * garble the terminal, and the dealer prints one line per key started and
 * one per key ended (key i/n, device, winner and time).
 *
 * SIGINT, SIGTERM and SIGHUP stop the dealing and reach every running key
 * process (SIGTERM: each stops as `ktune tune` does, keeping what it
 * measured); the dealer waits for them all, so that none outlives it. */
#ifndef KTUNE_CLI_SWEEP_H
#define KTUNE_CLI_SWEEP_H

#include "key_process.h"
#include "keys.h"

enum { SWEEP_DEVICES_MAX = 64 };

typedef struct sweep {
  const key_command *cmd; /* the run's own command line (--device is dropped) */
  const keys *ks;
  const int *devices; /* indices, at least one, at most SWEEP_DEVICES_MAX */
  int ndevices;
  int json, quiet;
  char *novalid; /* out, one per key (the caller's): 1 when the key had no valid configuration */
  int tuned;     /* out: keys that ran to their end, a winner or none valid */
} sweep;

/* Tunes every key of S. Returns 0 when every key ran to its end (a key
 * without a valid configuration is in novalid), else the first other exit
 * status of a key process (2: bad input or a database error), 130 when
 * interrupted. After a failure or an interruption no further key starts;
 * those running end first. */
int sweep_run(sweep *s);

#endif
