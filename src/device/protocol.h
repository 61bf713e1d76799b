/* What the tuner and a device worker exchange. The worker is forked (by the
 * zygote) with a copy of the setup; it answers with a hello saying how
 * opening the device went, then serves one request at a time with one reply,
 * fixed-size structs over a socket pair (proc/socket_io.h). The worker's loop is
 * device/worker.c, the tuner's side tuner/worker_client.c. */
#ifndef KT_PROTOCOL_H
#define KT_PROTOCOL_H

#include <string.h>

#include "../backend/backend.h"
#include "../check/check.h"
#include "../config.h"
#include "../launch/args.h"
#include "../launch/constants.h"
#include "../measure/measure.h"

/* Everything a worker needs; must stay alive as long as the worker. */
typedef struct kt__worker_setup {
  const kt__backend *backend;
  int device;
  const kt__file *file;
  const kt__kernel_decl *decl;
  const kt__env *sizes;           /* runtime sizes */
  kt__argset *args;               /* shared host tensors */
  const kt__constants *constants; /* @constant data, or NULL */
  double atol, rtol;              /* < 0: per-type defaults */
  const char *workdir;
  kt__check *check; /* the author's check, which judges outputs instead of the
                       comparison (kt__host_tensor.compared); NULL: none */
  /* Names defined at a fixed value in every build the worker makes, after
   * the configuration's: the @reference kernel's worker compiles the file
   * with the tuned kernel's names at their first choices. */
  const char *const *extra_names;
  const int64_t *extra_values;
  int nextra;
  const kt__bincache *bincache; /* for backends that build at load */
  uint64_t constants_seed;      /* what CONSTANTS was made with (a kept worker remakes it) */
  bool spawn_zygote;            /* the tuner's: its zygote is a fresh image even where no driver is
                                   loaded (KTUNE_ZYGOTE=spawn, asked of the context) */
} kt__worker_setup;

/* A worker that is not a fork of its tuning's tuner is bound to it by a
 * KT__REQ_BIND request, followed by this and its bytes, with the tuning's
 * tensors' memfd (kt__argset.fd) passed along: it parses the same source,
 * plans and maps the same tensors, remakes the same @constant data and
 * loads the same compiled check, keeping its device open. It answers with a
 * kt__hello. Two kinds of worker are bound: one kept for the next tuning
 * (tuner/worker_client.h, kt__worker_park), and every worker of a spawned
 * zygote (device/zygote.h, kt__zygote_exec), which starts with its device
 * only. A check that is a callback (kt_tune_options.check: a function of the
 * tuner's process) cannot be carried. The bytes: NSIZES sizes (int64),
 * NTENSORS compared flags and as many reference_set flags (one byte each),
 * with HAS_SHARED NTENSORS kt__shared_buffer (kt__host_tensor.shared), then the path, the source, the kernel's name and the workdir, each LEN
 * bytes and a NUL; then NEXTRA extra values (int64) and EXTRA_LEN bytes of
 * their names, each with its NUL; then, with HAS_CHECK, the check's object,
 * symbol and source, each LEN bytes and a NUL. */
typedef struct kt__bind {
  int32_t lang, nsizes, ntensors, has_constants;
  uint64_t constants_seed;
  double atol, rtol;
  kt__bincache bincache;
  uint64_t path_len, source_len, kernel_len, workdir_len;
  int32_t nextra, has_check, has_shared, pad_;
  uint64_t extra_len, check_object_len, check_symbol_len, check_source_len;
  uint64_t tensors_offset; /* where the tensors' layout starts in the memfd sent with it */
} kt__bind;

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
  KT__REQ_PREBUILD,  /* queue this configuration's build: backends that build at
                        load time (OpenCL) then build the queue on all cores before
                        the next other request */
  KT__REQ_BIND,      /* serve another tuning from now on (kt__bind) */
  KT__REQ_RELEASE    /* free the tuning's buffers and configurations, keep the
                        device open: the worker is kept for a later KT__REQ_BIND */
} kt__req_kind;

typedef struct kt__request {
  kt__req_kind kind;
  uint64_t id;                   /* caller's id of the configuration */
  int nvalues;                   /* decl->ntune + decl->ncluster */
  int64_t values[KT__MAX_NAMES]; /* tuned values, then cluster values */
  char artifact[4096];           /* compiled file, "" when load compiles */
  kt__measure_opts measure;
  int reps; /* SAMPLE only */
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
  char msg[2048];                     /* reason for a failure */
  kt__stats stats;                    /* EVAL */
  double sample_s;                    /* SAMPLE: per-launch seconds */
  double load_s, verify_s, measure_s; /* where the worker's time went */
  kt__bin_use compile_use;            /* backends that build at load: how the binary
                                         cache served this request's build */
  kt__output output;                  /* filled by the tuner's side from the output pipe */
  bool outside;                       /* tuner's side: the worker was killed from outside
                                      (a signal no fault of its kernel raises) */
  bool environment;                   /* the load's build failed for the machine's reason, not
                                         the configuration's (kt__build.load_environment) */
  bool check_fault;                   /* the author's check failed (crashed, wrote what it is
                                         given, changed directory), not the configuration */
} kt__reply;

/* The worker's first message: how opening the device went. */
typedef struct kt__hello {
  int rc;
  char msg[2048];
  kt__device_info info;
} kt__hello;

/* Copies SRC into a message's DST, cut to fit: long compiler logs are cut on
 * purpose. */
static inline void kt__copy_msg(char *dst, size_t size, const char *src) {
  size_t n = src ? strnlen(src, size - 1) : 0;
  if (n) memcpy(dst, src, n);
  dst[n] = 0;
}

#endif
