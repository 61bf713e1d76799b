/* A tuning on a miss, from the application's side: the helper process
 * (tune_helper.h) found beside the library, started with posix_spawn, and
 * waited for by a thread of its own, so that a blocking miss waits on the
 * job and a background one does not wait at all.
 *
 * One job per key in this process: threads (on their own kernel handles)
 * that miss the same key while its tuning runs get the same job, so one
 * helper runs; the helper's key lock (key_lock.h) does the same across
 * processes. The registry is process-wide and locked; nothing here is on
 * kt_launch's hot path except kt__miss_job_done, one atomic load. */
#ifndef KT_MISS_JOB_H
#define KT_MISS_JOB_H

#include <stdbool.h>

#include "../common.h"
#include "../envvars.h"
#include "tune_request.h"

typedef struct kt__miss_job kt__miss_job;

typedef enum kt__miss_outcome {
  KT__MISS_TUNED,    /* the helper tuned it (and printed its own line) */
  KT__MISS_STORED,   /* another process tuned it meanwhile: its stored winner */
  KT__MISS_VERIFIED, /* KT_MISS_ONLINE: the configurations that passed verification,
                        "CONFIG;CONFIG;..." (runtime/online.h) */
  KT__MISS_FAILED    /* no winner: why() says why */
} kt__miss_outcome;

/* The job of KEY: the running one, or a new one (*CREATED), which the
 * caller must then start or fail. A reference for the caller either way. */
kt__miss_job *kt__miss_job_get(const char *key, bool *created);
/* Starts the job's thread on the request in REQUEST_FD (closed by it),
 * returning at once: the thread hands the request to a warm helper or
 * spawns a new one (the caller waits for no process start), writes
 * PENDING's tensors into the request (kt__tune_request_fill; NULL: it is
 * complete) while the helper starts, tells the helper that its data is
 * there and waits for its reply. A helper that is not there (no
 * executable: checked here, so the caller learns it at once) or cannot
 * start fails the job. */
void kt__miss_job_start(kt__miss_job *j, int request_fd, kt__tune_pending *pending, const char *warm_key,
                        double idle_s);
/* WARM_KEY (NULL: none) names the backend and device of the tuning: a
 * helper that tuned for the same one and is still warm (waiting for the
 * application's next miss, IDLE_S seconds: kt__miss_helper_idle_s; 0: no
 * helper stays) serves it, else a new one starts, which then stays warm. */
double kt__miss_helper_idle_s(const kt__envvars *env);
/* The memfd of a finished request that a warm helper served, taken (the
 * caller owns it), for kt__tune_request_create to reuse: its pages exist
 * already. Any helper's will do (memory is memory; nothing maps it any
 * more). -1 when there is none. A warm helper keeps the memfd of the last
 * request it served while it lives (its memory is the application's until
 * the helper leaves, KTUNE_HELPER_IDLE_S after its last miss). */
int kt__miss_request_spare(void);
/* kt_kernel_prepare: starts the warm helper of WARM_KEY (as
 * kt__miss_job_start names it) before any miss, on the bare request in
 * REQUEST_FD (closed here, tune_request.h): it opens its device and waits
 * for the first miss, KTUNE_HELPER_IDLE_S from then. Nothing when one is
 * there already or none stays warm (idle 0); a helper that cannot start is
 * said in the trace only (the miss then starts one and says why). */
void kt__miss_helper_prepare(int request_fd, const char *warm_key, double idle_s);
/* kt_kernel_prepare: starts a job thread ahead, which the next
 * kt__miss_job_start hands its job to instead of creating one; each thread
 * that takes a job starts the next (one waits at most). */
void kt__miss_thread_prepare(void);
/* Holds back the writing of PENDING's tensors (started or not yet) until
 * kt__miss_job_unhold: a background miss first loads and launches its
 * fallback, which the download's driver calls (page-locking the request)
 * would otherwise delay by tens of milliseconds. Call before
 * kt__miss_job_start. */
void kt__miss_job_hold(kt__miss_job *j);
void kt__miss_job_unhold(kt__miss_job *j);
/* Ends a job that could not be started, saying WHY. */
void kt__miss_job_fail(kt__miss_job *j, const char *why);
/* Whether the job ended (an acquire load: what it produced is visible). */
bool kt__miss_job_done(const kt__miss_job *j);
void kt__miss_job_wait(kt__miss_job *j);
/* After done: the outcome, the winner's "NAME=VALUE ..." (tuned, stored;
 * verified: the list)
 * and why it failed (failed). */
kt__miss_outcome kt__miss_job_outcome(const kt__miss_job *j, const char **config, const char **why);
/* After a failure: the helper's kt_err for the tuning (KT_NOVALID: no
 * configuration was valid), 0 when the helper did not start or died. */
int kt__miss_job_rc(const kt__miss_job *j);
void kt__miss_job_release(kt__miss_job *j);

#endif
