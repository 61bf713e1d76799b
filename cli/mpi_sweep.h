/* `mpirun -np R ktune tune FILE ... --mpi`: the keys of a sweep shared by
 * MPI ranks (docs/DESIGN.md, "Many hosts through MPI").
 *
 * Rank 0 owns the one results database and deals keys to the ranks as they
 * ask for work, itself included; every rank tunes its keys in key processes
 * (key_process.h) on its own device(s). A worker rank's key process writes
 * a rank-local database, and the key's rows travel to rank 0 as one message
 * (their `cache export`), imported there in one transaction; rank 0's own
 * key processes write its database directly. Rank 0 prints the closing
 * tables or JSON of every key; the other ranks print nothing on stdout.
 *
 * Faults: a rank that falls silent (killed, its host gone) loses only its
 * keys in flight, which rank 0 deals again; the first result of a key wins,
 * later duplicates are dropped. This needs `mpirun --enable-recovery`
 * (without it Open MPI ends the whole job when one rank dies). */
#ifndef KTUNE_CLI_MPI_SWEEP_H
#define KTUNE_CLI_MPI_SWEEP_H

#include <stddef.h>

#include "keys.h"
#include "ktune.h"

/* What every rank knows of the run: the command line as given, for the key
 * processes (less --dim, --sizes, --mpi, --device and, on worker ranks,
 * --db). */
typedef struct mpi_run {
  int argc;
  char **argv;
  const int *devices; /* --device N, 0,2,3 or all, resolved on each rank: a key process per device */
  int ndevices;
  int json, quiet;
} mpi_run;

/* The results key of key I, for filtering its rows: the kernel's name and
 * its key sizes (kt_kernel_key_sizes). Returns 0, or -1 with the reason on
 * stderr. */
typedef struct mpi_key_id {
  char kernel[256];
  char sizes[2048];
} mpi_key_id;
typedef int (*mpi_key_id_fn)(void *ud, int i, mpi_key_id *id);

/* " (MPI: Open MPI 4.1.4)" or " (no MPI)", for `ktune --version`. */
const char *mpi_build_note(void);

/* Whether --mpi can run in this process: 0, or exit status 2 with the
 * reason and the fix on stderr (a build without MPI; a process not started
 * by an MPI launcher, which MPI_Init would not join to any job). */
int mpi_check_launcher(void);

/* MPI_Init: this process's rank into *RANK and 0, or exit status 2 with the
 * reason on stderr. */
int mpi_start(int *rank);

/* A rank other than 0: asks rank 0 for keys and tunes them until told to
 * stop. Returns the exit status, after MPI_Finalize. */
int mpi_worker(const mpi_run *run);

/* Rank 0: deals the keys KS (checked already) to every rank and itself,
 * imports their results into CTX's database, prints every key's table or
 * JSON document and the summary. Returns the exit status as a sweep's (0,
 * 1 when a key had no valid configuration, else the first key's error),
 * after MPI_Finalize. */
int mpi_dealer(const mpi_run *run, kt_context *ctx, const keys *ks, mpi_key_id_fn key_id, void *ud);

/* Rank 0 that stops before dealing (bad input, found once, on rank 0):
 * tells every rank to stop and returns STATUS, after MPI_Finalize. */
int mpi_abandon(int status);

#endif
