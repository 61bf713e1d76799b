/* The device worker: a forked process that owns the backend's device state,
 * loads configurations, verifies and times them. A configuration that
 * crashes or hangs kills only the worker; the tuner records why and starts
 * a new one on the next request. Requests and replies travel over a socket
 * pair, what the worker prints over a pipe. */
#ifndef KT_WORKER_H
#define KT_WORKER_H

#include "args.h"
#include "backend/backend.h"
#include "config.h"
#include "measure/measure.h"

/* Everything a worker needs; must stay alive as long as the worker. */
typedef struct kt__worker_setup {
  const kt__backend *backend;
  int device;
  const kt__file *file;
  const kt__kernel_decl *decl;
  const kt__env *sizes;   /* runtime sizes */
  kt__argset *args;       /* shared host tensors */
  double atol, rtol;      /* < 0: per-type defaults */
  const char *workdir;
} kt__worker_setup;

/* Every run that is checked starts from the same state: each tensor holds
 * its initial content, except `out` tensors without an initial value, which
 * are poisoned (NaN, 0xA5) so that an element the kernel does not write
 * fails the comparison. Before each timed sample, inout tensors and outputs
 * with an initial value are restored again (not timed), and the device's
 * caches flushed. Outputs are compared with the setup's atol/rtol where
 * >= 0, else @verify's, else kt__default_tolerance of the element type. */
typedef enum kt__req_kind {
  KT__REQ_REFERENCE, /* run once; store outputs as the reference */
  KT__REQ_EVAL,      /* run once and verify against the reference, then measure */
  KT__REQ_VERIFY,    /* run once and verify only */
  KT__REQ_SAMPLE,    /* one timed sample of REPS launches (finalist rounds) */
  KT__REQ_PREBUILD   /* queue this configuration's build: backends that build at
                        load time (OpenCL) then build the queue on all cores before
                        the next other request */
} kt__req_kind;

typedef struct kt__request {
  kt__req_kind kind;
  uint64_t id;                     /* caller's id of the configuration */
  int nvalues;                     /* decl->ntune + decl->ncluster */
  int64_t values[KT__MAX_NAMES];   /* tuned values, then cluster values */
  char artifact[4096];             /* compiled file, "" when load compiles */
  kt__measure_opts measure;
  int reps;                        /* SAMPLE only */
} kt__request;

/* What a worker printed (stdout and stderr) while serving one request: the
 * first KT__OUTPUT_KEEP bytes, NUL-terminated, and the count of all. */
enum { KT__OUTPUT_KEEP = 4096 };
typedef struct kt__output {
  char text[KT__OUTPUT_KEEP + 1];
  size_t len;
  uint64_t total;
} kt__output;

typedef struct kt__reply {
  kt__status status;
  char msg[2048];                  /* reason for a failure */
  kt__stats stats;                 /* EVAL */
  double sample_s;                 /* SAMPLE: per-launch seconds */
  double load_s, verify_s, measure_s; /* where the worker's time went */
  kt__output output;               /* filled by the tuner's side from the output pipe */
  bool outside;                    /* tuner's side: the worker was killed from outside
                                      (a signal no fault of its kernel raises) */
} kt__reply;

typedef struct kt__worker kt__worker;

/* Starts the zygote (zygote.h), which forks the worker, and waits for the
 * worker's device to open; INFO describes it. Workers die with the zygote,
 * which kt__worker_stop ends (and which ends when the tuner dies). */
int kt__worker_start(const kt__worker_setup *setup, kt__device_info *info, kt__worker **out, kt__errbuf *eb);
/* kt__worker_start in two steps, so that the caller can work while the
 * worker opens its device: launch forks it; ready waits for it (on failure
 * the worker is gone and *W is NULL). Shared memory the worker is to see must
 * be mapped before launch; its contents may be written until the first
 * request. */
int kt__worker_launch(const kt__worker_setup *setup, kt__worker **out, kt__errbuf *eb);
int kt__worker_ready(kt__worker **w, kt__device_info *info, kt__errbuf *eb);
/* Sends REQ and waits at most TIMEOUT_S. A crash gives RUNTIME ("worker
 * crashed: SIGSEGV"), a hang TIMEOUT; the worker is then restarted lazily. */
void kt__worker_request(kt__worker *w, const kt__request *req, kt__reply *rep, double timeout_s);
/* Number of times a worker had to be replaced. */
int kt__worker_restarts(const kt__worker *w);
void kt__worker_stop(kt__worker *w);

/* Lists the devices of BE from a short-lived child process. */
int kt__worker_list_devices(const kt__backend *be, kt__device_info *out, int max, int *count, kt__errbuf *eb);

#endif
