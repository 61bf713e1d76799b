/* The compile pool: worker threads that compile configurations while the
 * device worker times the ones already built. Jobs complete in any order;
 * the tuner takes finished ones with kt__pool_wait.
 *
 * A time budget can run out while jobs compile: kt__pool_abandon stops
 * waiting for them. A compile that can stop (the C compiler, a child
 * process) is asked to; one that cannot (NVRTC, in the thread itself) runs
 * to its end, and its thread then frees the job. So an abandoned job may
 * outlive the tuning that made it: everything its build points to must be
 * held by the job (file, names, device) or live as long as the process
 * (workdir). */
#ifndef KT_POOL_H
#define KT_POOL_H

#include "../backend/backend.h"

typedef struct kt__pool kt__pool;

enum { KT__JOB_MAX_NAMES = 64 };

typedef struct kt__compile_job {
  uint64_t id;     /* the caller's configuration id */
  kt__build build; /* points into the job, at FILE and at the process's workdir */
  kt__file *file;  /* a holder (kt__file_retain) of build.file; released with the job */
  const char *names[KT__JOB_MAX_NAMES];
  int64_t values[KT__JOB_MAX_NAMES];
  kt__device_info device;
  char tag[64];
  atomic_int cancel; /* build.cancel: set when the job is abandoned */
  /* filled in by the pool */
  kt__status status;
  kt__artifact artifact;
  kt__errbuf err;
  double started, finished; /* kt__now() */
} kt__compile_job;

/* NULL when no compile thread could be started. */
kt__pool *kt__pool_create(const kt__backend *be, int threads);
/* Takes ownership of JOB (malloc'ed) until it comes back from wait. */
void kt__pool_submit(kt__pool *p, kt__compile_job *job);
/* The next finished job, or NULL when none is queued or running. */
kt__compile_job *kt__pool_wait(kt__pool *p);
/* The same, but NULL also once DEADLINE (kt__now() seconds; <= 0: none)
 * has passed with jobs still queued or running (kt__pool_pending tells). */
kt__compile_job *kt__pool_wait_until(kt__pool *p, double deadline);
/* Jobs submitted and not yet returned by wait (abandoned ones excluded). */
int kt__pool_pending(const kt__pool *p);
/* Total seconds threads spent compiling (abandoned jobs excluded). */
double kt__pool_busy_seconds(const kt__pool *p);
/* Drops queued jobs not yet started (they come back from wait with status
 * PENDING). */
void kt__pool_cancel_queued(kt__pool *p);
/* Gives up the jobs not finished yet: queued ones are freed, running ones
 * are asked to stop (build.cancel) and never come back from wait; each is
 * freed, with its artifact's file, by its thread when it ends. Finished
 * jobs still come back from wait. Returns the number given up. */
int kt__pool_abandon(kt__pool *p);
/* Stops the pool: joins the threads, except those still running an
 * abandoned compile that cannot stop, which finish on their own (the last
 * one frees what remains of the pool). Jobs not taken are freed. */
void kt__pool_free(kt__pool *p);
/* A job for configuration ID that builds B with FILE as its file: names,
 * values (B->n of each), device and tag are copied into the job and FILE is
 * held, so that the job depends on nothing its caller frees. */
kt__compile_job *kt__compile_job_new(uint64_t id, kt__file *file, const kt__build *b);
/* Frees a job taken from wait: its artifact's strings and its file hold. */
void kt__compile_job_free(kt__compile_job *j);

#endif
