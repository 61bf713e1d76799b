/* The compile pool: worker threads that compile configurations while the
 * device worker times the ones already built. Jobs complete in any order;
 * the tuner takes finished ones with kt__pool_wait. */
#ifndef KT_POOL_H
#define KT_POOL_H

#include "backend/backend.h"

typedef struct kt__pool kt__pool;

typedef struct kt__compile_job {
  uint64_t id;              /* the caller's configuration id */
  kt__build build;          /* names/values must stay alive until done */
  int64_t values[64];
  char tag[64];
  /* filled in by the pool */
  kt__status status;
  kt__artifact artifact;
  kt__errbuf err;
  double started, finished; /* kt__now() */
} kt__compile_job;

kt__pool *kt__pool_create(const kt__backend *be, int threads);
/* Takes ownership of JOB (malloc'ed) until it comes back from wait. */
void kt__pool_submit(kt__pool *p, kt__compile_job *job);
/* The next finished job, or NULL when none is queued or running. */
kt__compile_job *kt__pool_wait(kt__pool *p);
/* Jobs submitted and not yet returned by wait. */
int kt__pool_pending(const kt__pool *p);
/* Total seconds threads spent compiling. */
double kt__pool_busy_seconds(const kt__pool *p);
/* Drops queued jobs not yet started (they come back from wait with status
 * PENDING) and joins the threads. */
void kt__pool_free(kt__pool *p);
void kt__pool_cancel_queued(kt__pool *p);

#endif
