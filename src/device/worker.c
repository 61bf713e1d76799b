/* The device worker. The zygote forks it; it opens the backend's device,
 * allocates the kernel's buffers once, and then serves fixed-size requests
 * (protocol.h) over a socket pair: load a configuration (cached by the
 * caller's id), restore what runs change, run, check, compare with the
 * reference, time. The tuner waits for each reply with a deadline
 * (tuner/worker_client.c), so a configuration that crashes or hangs costs
 * one worker, which is replaced on the next request. This file keeps the
 * loop (open, serve, tear down) and the configurations it loads; the checks
 * of a verified run are run_checks.c, binding to another tuning bind.c. */
#include "worker.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../envvars.h"
#include "../launch/launch.h"
#include "../parallel.h"
#include "../proc/fdpass.h"
#include "../proc/process.h"
#include "../proc/socket_io.h"
#include "bind.h"
#include "run_checks.h"
#include "worker_state.h"

enum { MAX_PARAMS = 256 };
/* The scratch's alignment: a huge page's (2 MiB on x86-64 and arm64). */
#define SCRATCH_ALIGN ((size_t)2 << 20)
static const double LOAD_COMPILE_TIMEOUT_S = 120;

/* --- configurations -------------------------------------------------------- */

static void evict_oldest(kt__worker_state *c) {
  int old = 0;
  for (int i = 1; i < c->ncache; i++)
    if (c->cache[i].last_used < c->cache[old].last_used) old = i;
  kt__be_unload(c->s->backend, c->state, c->cache[old].fn);
  c->cache[old] = c->cache[--c->ncache];
}

/* The launchable of the requested configuration, loaded once per id. */
static kt__status get_fn(kt__worker_state *c, const kt__request *rq, void **fn, kt__reply *rp, kt__errbuf *eb) {
  for (int i = 0; i < c->ncache; i++)
    if (c->cache[i].id == rq->id) {
      c->cache[i].last_used = ++c->clock;
      *fn = c->cache[i].fn;
      return KT__ST_OK;
    }
  char tag[64];
  snprintf(tag, sizeof tag, "w%ld-c%" PRIu64, (long)getpid(), rq->id);
  const char *names[2 * KT__MAX_NAMES];
  int64_t values[2 * KT__MAX_NAMES];
  int n = 0;
  for (int i = 0; i < c->config.n; i++, n++) names[n] = c->config.names[i], values[n] = rq->values[i];
  for (int i = 0; i < c->s->nextra && n < 2 * KT__MAX_NAMES; i++, n++)
    names[n] = c->s->extra_names[i], values[n] = c->s->extra_values[i];
  kt__build b = {.file = c->s->file,
                 .decl = c->s->decl,
                 .names = names,
                 .values = values,
                 .n = n,
                 .device = &c->info,
                 .workdir = c->s->workdir,
                 .tag = tag,
                 .timeout_s = LOAD_COMPILE_TIMEOUT_S,
                 .bincache = c->s->bincache,
                 .load_use = &rp->compile_use,
                 .load_environment = &rp->environment};
  kt__artifact a = {.path = rq->artifact[0] ? (char *)rq->artifact : NULL};
  kt__status st = kt__be_load(c->s->backend, c->state, &b, &a, fn, eb);
  if (st != KT__ST_OK) return st;
  /* Once per load: the symbols belong to the loaded module. */
  st = kt__constants_set(c->s->backend, c->state, *fn, c->s->decl, c->s->constants, eb);
  if (st != KT__ST_OK) {
    kt__be_unload(c->s->backend, c->state, *fn);
    return st;
  }
  if (c->ncache == KT__WORKER_CACHE_SLOTS) evict_oldest(c);
  c->cache[c->ncache++] = (kt__worker_loaded){.id = rq->id, .fn = *fn, .last_used = ++c->clock};
  return KT__ST_OK;
}

/* Launch description for one request (launch.h), with the worker's device
 * buffers as the tensor arguments. */
static kt__status make_launch(kt__worker_state *c, const kt__request *rq, kt__launch *l, kt__arg *args,
                              kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  if (kt__launch_describe(c->s->decl, &c->config, rq->values, c->s->sizes, args, l, eb) != KT_OK)
    return KT__ST_CONSTRAINT;
  for (int i = 0; i < c->s->decl->nparams; i++) {
    int t = a->tensor_of_param[i];
    if (t < 0) continue;
    args[i].is_tensor = true;
    args[i].buf = c->bufs[t];
    args[i].size = a->tensors[t].bytes;
  }
  return KT__ST_OK;
}

/* --- requests: timing, prebuilding, running ------------------------------- */

typedef struct timing {
  kt__worker_state *c;
  void *fn;
  const kt__launch *l;
} timing;

/* One sample: restore state and flush caches (not timed), then REPS launches. */
static kt__status timed_sample(void *ud, kt_timing how, int reps, bool energy, double *seconds, kt__reading *reading,
                               kt__errbuf *eb) {
  timing *t = ud;
  kt__status st = kt__run_restore_state(t->c, eb);
  if (st != KT__ST_OK) return st;
  kt__be_flush_cache(t->c->s->backend, t->c->state);
  return kt__be_time(t->c->s->backend, t->c->state, t->fn, t->l, reps, how, energy, seconds, reading, eb);
}

enum { PREBUILD_MAX = 256 };

/* Builds the queued configurations at once, on all cores where the backend
 * can (its load then finds them built). */
static void build_queued(kt__worker_state *c) {
  if (!c->nqueued) return;
  kt__build *b = kt__xcalloc((size_t)c->nqueued, sizeof *b);
  char(*tags)[64] = kt__xcalloc((size_t)c->nqueued, sizeof *tags);
  for (int i = 0; i < c->nqueued; i++) {
    snprintf(tags[i], sizeof tags[i], "w%ld-p%d", (long)getpid(), i);
    b[i] = (kt__build){.file = c->s->file,
                       .decl = c->s->decl,
                       .names = c->config.names,
                       .values = c->queued[i],
                       .n = c->config.n,
                       .device = &c->info,
                       .workdir = c->s->workdir,
                       .tag = tags[i],
                       .timeout_s = LOAD_COMPILE_TIMEOUT_S,
                       .bincache = c->s->bincache};
  }
  kt__be_prebuild(c->s->backend, c->state, b, c->nqueued);
  c->nqueued = 0;
  free(b);
  free(tags);
}

static kt__status queue_build(kt__worker_state *c, const kt__request *rq) {
  if (!c->queued) c->queued = kt__xcalloc(PREBUILD_MAX, sizeof *c->queued);
  if (c->nqueued == PREBUILD_MAX) build_queued(c);
  memcpy(c->queued[c->nqueued++], rq->values, (size_t)c->config.n * sizeof rq->values[0]);
  return KT__ST_OK;
}

/* VERIFY and EVAL: the verified run (once more from freshly uploaded inputs
 * when its outputs are wrong), then for EVAL the measurement and the checks
 * of what its timed runs did. */
static kt__status evaluate(kt__worker_state *c, const kt__request *rq, timing *tm, kt__reply *rp, kt__errbuf *eb) {
  double t0 = kt__now();
  kt__measure_opts mo = rq->measure;
  mo.timing = kt__be_timing(c->s->backend, mo.timing);
  mo.energy_window_s = c->info.energy_window_s;
  double *first_s = rq->kind == KT__REQ_EVAL ? &mo.first_s : NULL;
  kt__status st = kt__run_verified(c, tm->fn, tm->l, rq->values, first_s, eb);
  if (st == KT__ST_CORRECTNESS) { /* once more from freshly uploaded inputs */
    c->inputs_fresh = false;
    eb->msg[0] = 0;
    st = kt__run_verified(c, tm->fn, tm->l, rq->values, first_s, eb);
    c->inputs_fresh = false; /* this configuration may be the one that wrote them */
  }
  rp->verify_s = kt__now() - t0;
  kt__trace("worker: verified (%.4f s)", rp->verify_s);
  t0 = kt__now();
  if (st == KT__ST_OK && rq->kind == KT__REQ_EVAL) st = kt__measure(&mo, timed_sample, tm, &rp->stats, eb);
  double sampled = kt__now();
  if (st == KT__ST_OK && rq->kind == KT__REQ_EVAL) st = kt__run_after_timed(c, tm->fn, tm->l, rq->values, eb);
  rp->measure_s = kt__now() - t0;
  if (rq->kind == KT__REQ_EVAL)
    kt__trace("worker: measured (%.4f s: %d samples of %d launches %.4f s, the run after them and its checks %.4f s)",
              rp->measure_s, rp->stats.nsamples, rp->stats.reps, sampled - t0, rp->measure_s - (sampled - t0));
  return st;
}

/* SAMPLE: one timed sample of the request's repetitions, per launch, and
 * the checks of what those runs did (a finalist wins on its samples). */
static kt__status sample(timing *tm, const kt__request *rq, kt__reply *rp, kt__errbuf *eb) {
  int reps = rq->reps > 0 ? rq->reps : 1;
  double s = 0;
  double t0 = kt__now();
  kt__status st = timed_sample(tm, kt__be_timing(tm->c->s->backend, rq->measure.timing), reps, false, &s, NULL, eb);
  rp->sample_s = s / reps;
  double t1 = kt__now();
  if (st == KT__ST_OK) st = kt__run_after_timed(tm->c, tm->fn, tm->l, rq->values, eb);
  kt__trace("worker: sampled (%d launches %.4f s, the run after them and its checks %.4f s)", reps, t1 - t0,
            kt__now() - t1);
  return st;
}

/* A request that runs the configuration it names: loaded (or found loaded),
 * its launch described and checked, then served by its kind. */
static kt__status serve_request(kt__worker_state *c, const kt__request *rq, kt__reply *rp, kt__errbuf *eb) {
  const kt__kernel_decl *d = c->s->decl;
  if (rq->nvalues != c->config.n || d->nparams > MAX_PARAMS)
    return kt__fail(eb, KT__ST_RUNTIME, "bad request: %d values for %d names", rq->nvalues, c->config.n);
  if (rq->kind == KT__REQ_PREBUILD) return queue_build(c, rq);
  build_queued(c);
  void *fn;
  double t0 = kt__now();
  kt__status st = get_fn(c, rq, &fn, rp, eb);
  rp->load_s = kt__now() - t0;
  kt__arg args[MAX_PARAMS];
  kt__launch l;
  if (st == KT__ST_OK) st = make_launch(c, rq, &l, args, eb);
  if (st == KT__ST_OK) st = kt__be_check(c->s->backend, c->state, fn, &l, eb);
  if (st != KT__ST_OK) return st;
  timing tm = {c, fn, &l};
  switch (rq->kind) {
  case KT__REQ_REFERENCE:
    c->inputs_fresh = false;
    kt__trace("worker: reference loaded");
    return kt__run_reference(c, fn, &l, eb);
  case KT__REQ_VERIFY:
  case KT__REQ_EVAL: return evaluate(c, rq, &tm, rp, eb);
  case KT__REQ_SAMPLE: return sample(&tm, rq, rp, eb);
  case KT__REQ_PREBUILD: /* served above */
  case KT__REQ_BIND:
  case KT__REQ_RELEASE: break; /* served by the loop (bind, release) */
  }
  return kt__fail(eb, KT__ST_RUNTIME, "bad request kind %d", (int)rq->kind);
}

/* A device copy of input K to compare with after each run; without the
 * memory for it, inputs are compared on the host. */
static void keep_pristine_copy(kt__worker_state *c, int k) {
  kt__errbuf ignored;
  if (kt__devpool_take(&c->pool, c->s->backend, c->state, c->s->args->tensors[k].bytes, &c->pristine[k], &ignored) !=
      KT_OK)
    c->pristine[k] = NULL;
}

/* A device copy of output K's reference when the backend compares on the
 * device; without the memory for it (or with KTUNE_VERIFY_ON=host, which
 * bench/ and the tests use to compare both ways), the host compares. */
static void keep_device_reference(kt__worker_state *c, int k) {
  kt__errbuf ignored;
  if (!c->s->backend->compare || kt__envvar_choice(KT__ENV_VERIFY_ON) == KT__VERIFY_ON_HOST) return;
  if (kt__devpool_take(&c->pool, c->s->backend, c->state, c->s->args->tensors[k].bytes, &c->refdev[k], &ignored) !=
      KT_OK)
    c->refdev[k] = NULL;
}

/* Tensor K's initial content where the application shared it on the device
 * (a blocking miss, kt__host_tensor.shared), copied into a buffer of this
 * worker's once, on the device: nothing crosses host memory. */
static int copy_shared_initial(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  double t0 = kt__now();
  KT__FORWARD(kt__devpool_take(&c->pool, c->s->backend, c->state, t->bytes, &c->initdev[k], eb));
  int rc = kt__be_copy_shared(c->s->backend, c->state, c->initdev[k], &t->shared, eb);
  const char *name = c->s->decl->params[t->param].name;
  if (rc != KT_OK) {
    kt__devpool_give(&c->pool, c->s->backend, c->state, c->initdev[k]);
    c->initdev[k] = NULL;
    char why[512];
    snprintf(why, sizeof why, "%.500s", eb->msg);
    return kt__err(eb, KT_IO, KT__SHARED_COPY_FAILED " (%s): %s", name, why);
  }
  kt__trace("worker: tensor %s copied from the application's memory (%.0f MB in %.4f s)", name, (double)t->bytes / 1e6,
            kt__now() - t0);
  return KT_OK;
}

static size_t output_copy_bytes(const kt__host_tensor *t) { return t->bytes ? t->bytes : 1; }

/* The author's check: loaded before the process state is taken (dlopen
 * maps libraries), with a host buffer for each output it is shown. */
static int check_setup(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  KT__FORWARD(kt__check_load(c->s->check, eb));
  c->outputs = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->outputs);
  for (int k = 0; k < a->ntensors; k++) {
    if (a->tensors[k].mode == KT__MODE_IN) continue;
    void *p = mmap(NULL, output_copy_bytes(&a->tensors[k]), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return kt__err(eb, KT_NOMEM, "no memory for a copy of output %s", c->s->decl->params[a->tensors[k].param].name);
    c->outputs[k] = p;
  }
  return KT_OK;
}

/* Frees what the last tuning left in the pool and this one's tensors did
 * not take, but a buffer for each output's decoys, which are made later
 * (run_checks.c, keep_decoys); returns how many were freed. */
static int trim_pool(kt__worker_state *c) {
  const kt__argset *a = c->s->args;
  size_t *decoys = kt__xcalloc((size_t)a->ntensors + 1, sizeof *decoys);
  int n = 0;
  for (int k = 0; k < a->ntensors; k++)
    if (a->tensors[k].mode == KT__MODE_OUT) decoys[n++] = a->tensors[k].bytes;
  int freed = kt__devpool_trim(&c->pool, c->s->backend, c->state, decoys, n);
  free(decoys);
  return freed;
}

/* The buffers and state of C's setup, on its open device. */
int kt__worker_make_buffers(kt__worker_state *c, kt__errbuf *eb) {
  const kt__worker_setup *s = c->s;
  const kt__argset *a = s->args;
  c->bufs = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->bufs);
  c->guards = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->guards);
  c->pristine = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->pristine);
  c->refdev = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->refdev);
  c->refdev_ready = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->refdev_ready);
  c->decoydev = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->decoydev);
  c->ref_poisoned = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->ref_poisoned);
  c->initdev = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->initdev);
  c->initial_host = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->initial_host);
  size_t largest = 1;
  kt__devpool_count_anew(&c->pool);
  for (int k = 0; k < a->ntensors; k++) {
    KT__FORWARD(kt__guarded_alloc(s->backend, c->state, &c->pool, a->tensors[k].bytes, &c->guards[k], eb));
    KT__FORWARD(kt__guarded_arm(s->backend, c->state, &c->guards[k], eb));
    c->bufs[k] = c->guards[k].inner;
    if (a->tensors[k].mode == KT__MODE_IN && s->backend->equal && s->backend->copy) keep_pristine_copy(c, k);
    if (a->tensors[k].compared) keep_device_reference(c, k);
    if (a->tensors[k].shared.set) KT__FORWARD(copy_shared_initial(c, k, eb));
    if (a->tensors[k].bytes > largest) largest = a->tensors[k].bytes;
  }
  int reused = c->pool.reused, allocated = c->pool.allocated;
  int freed = trim_pool(c);
  kt__trace("worker: device buffers: %d kept from the last tuning, %d allocated, %d freed", reused, allocated, freed);
  if (c->scratch && c->scratch_bytes >= largest) {
    kt__trace("worker: scratch kept (%zu bytes)", c->scratch_bytes);
  } else {
    if (c->scratch) kt__trace("worker: scratch grown from %zu to %zu bytes", c->scratch_bytes, largest);
    kt__worker_drop_scratch(c);
    /* Aligned to huge pages (pin_scratch), page-aligned at least, so that
     * the backend can page-lock it for fast downloads. */
    if (posix_memalign(&c->scratch, SCRATCH_ALIGN, largest) != 0) {
      c->scratch = NULL;
      return kt__err(eb, KT_NOMEM, "no memory for a %zu-byte buffer", largest);
    }
    c->scratch_bytes = largest;
  }
  if (s->check) KT__FORWARD(check_setup(c, eb));
  kt__trace("worker: buffers allocated");
  c->cores = kt__ncores();
  kt__config_init(&c->config, s->decl);
  kt__run_protect_shared(a, false);
  c->watch_state = s->backend->runs_host_code;
  if (c->watch_state) kt__procstate_take(&c->initial);
  return KT_OK;
}

/* The device, and the buffers of a forked worker's setup; a spawned
 * zygote's worker has no tensors until it is bound (KT__REQ_BIND). */
static int device_setup(kt__worker_state *c, kt__errbuf *eb) {
  kt__trace("worker: starting");
  KT__FORWARD(kt__be_open(c->s->backend, c->s->device, &c->state, &c->info, eb));
  kt__trace("worker: device open");
  return c->s->args ? kt__worker_make_buffers(c, eb) : KT_OK;
}

void kt__worker_drop_scratch(kt__worker_state *c) {
  if (c->scratch_pinned) kt__be_unpin_host(c->s->backend, c->state, c->scratch);
  free(c->scratch);
  c->scratch = NULL;
  c->scratch_pinned = false;
  c->scratch_bytes = 0;
}

/* Page-locks the scratch buffer unless it is already. Its pages are
 * allocated first, on every core and in huge pages where the kernel grants
 * them: left to the driver's page-locking, each 4 KiB page was faulted in
 * on one thread, 0.099 s for 256 MB on the H100 (0.39 s for 1 GB) of a warm
 * helper's first key, against 0.015 s (0.051 s) so
 * (bench/pin_cost.c, docs/BENCHMARKS.md "The scratch's pages"). */
static void pin_scratch(kt__worker_state *c) {
  if (!c->scratch || c->scratch_pinned) return;
  if (c->s->backend->pin_host) {
#ifdef MADV_HUGEPAGE
    madvise(c->scratch, c->scratch_bytes, MADV_HUGEPAGE); /* advice: none where huge pages are off */
#endif
    kt__touch_pages(c->scratch, c->scratch_bytes);
    kt__trace("worker: scratch's pages allocated (%zu bytes)", c->scratch_bytes);
  }
  kt__be_pin_host(c->s->backend, c->state, c->scratch, c->scratch_bytes); /* every check downloads into it */
  c->scratch_pinned = true;
  kt__trace("worker: scratch pinned");
}

void kt__worker_free_buffers(kt__worker_state *c) {
  if (!c->s->args) return; /* a spawned zygote's worker before its first bind: nothing made yet */
  free(c->queued);
  kt__config_free(&c->config);
  for (int i = 0; i < c->ncache; i++) kt__be_unload(c->s->backend, c->state, c->cache[i].fn);
  const kt__backend *be = c->s->backend;
  for (int k = 0; c->pristine && k < c->s->args->ntensors; k++)
    kt__devpool_give(&c->pool, be, c->state, c->pristine[k]);
  for (int k = 0; c->refdev && k < c->s->args->ntensors; k++) kt__devpool_give(&c->pool, be, c->state, c->refdev[k]);
  for (int k = 0; c->decoydev && k < c->s->args->ntensors; k++)
    kt__devpool_give(&c->pool, be, c->state, c->decoydev[k]);
  for (int k = 0; c->initdev && k < c->s->args->ntensors; k++) kt__devpool_give(&c->pool, be, c->state, c->initdev[k]);
  for (int k = 0; c->initial_host && k < c->s->args->ntensors; k++)
    if (c->initial_host[k]) munmap(c->initial_host[k], output_copy_bytes(&c->s->args->tensors[k]));
  for (int k = 0; c->guards && k < c->s->args->ntensors; k++) kt__guarded_free(be, c->state, &c->pool, &c->guards[k]);
  free(c->bufs);
  free(c->guards);
  free(c->pristine);
  free(c->refdev);
  free(c->refdev_ready);
  free(c->decoydev);
  free(c->initdev);
  free(c->initial_host);
  free(c->ref_poisoned);
  kt__worker_drop_scratch(c);
  for (int k = 0; c->outputs && k < c->s->args->ntensors; k++)
    if (c->outputs[k]) munmap(c->outputs[k], output_copy_bytes(&c->s->args->tensors[k]));
  free(c->outputs);
}

static void worker_teardown(kt__worker_state *c) {
  kt__worker_free_buffers(c);
  kt__worker_drop_scratch(c); /* a released worker's, kept for a next tuning that did not come */
  kt__devpool_free(&c->pool, c->s->backend, c->state);
  kt__be_close(c->s->backend, c->state);
  kt__bound_free(c->bound);
}

/* Fatal signals take their default action in the worker, so that a crash
 * ends it by that signal, which the zygote reports. A handler inherited from
 * the application (a crash reporter, a sanitizer) would otherwise run, and
 * turn the crash into an ordinary exit or keep the process alive. */
static void default_fatal_signals(void) {
  /* SIGINT, SIGTERM and SIGHUP too: the zygote ignores them (Ctrl-C reaches
   * the tuner's whole process group), but a worker leads a group of its own,
   * and a kernel that signals its group must end only its worker. */
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
}

/* --- the worker's life: open, serve, tear down ----------------------------- */

/* Tied to the zygote that forked it (PR_SET_PDEATHSIG), with default fatal
 * signals, the device and buffers open and the hello sent. False: nothing
 * to serve with, the worker ends. */
static bool worker_open(kt__worker_state *c, int fd, pid_t parent) {
  kt__proc_die_with_parent(SIGKILL, parent, 1);
  default_fatal_signals();
  /* stdout is the output pipe (zygote.c): line-buffered, so that what a
   * kernel printed before it crashed still reaches the tuner. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  kt__errbuf eb = {{0}};
  kt__hello h = {0};
  h.rc = device_setup(c, &eb);
  kt__copy_msg(h.msg, sizeof h.msg, eb.msg);
  h.info = c->info;
  if (!kt__send_all(fd, &h, sizeof h) || h.rc != KT_OK) return false;
  /* Page-locking takes a while (0.08 s for 256 MB on the H200), and so
   * does building the comparison kernel (0.02 s, on a warm helper's first
   * key before): done after the hello, while the tuner compiles the
   * reference configuration, or before a spawned worker is bound. */
  pin_scratch(c);
  if (c->s->backend->prepare_checks) {
    kt__be_prepare_checks(c->s->backend, c->state);
    kt__trace("worker: checks prepared");
  }
  return true;
}

/* KT__REQ_BIND, answered with a hello as the first setup was. */
static void serve_bind(kt__worker_state *c, int fd, int memfd) {
  kt__errbuf eb = {{0}};
  kt__hello h = {0};
  h.rc = kt__worker_bind(c, fd, memfd, &eb);
  if (memfd >= 0) close(memfd);
  kt__copy_msg(h.msg, sizeof h.msg, eb.msg);
  h.info = c->info;
  if (!kt__send_all(fd, &h, sizeof h) || h.rc != KT_OK) _exit(1); /* half bound: a fresh worker then */
  pin_scratch(c);
}

/* KT__REQ_RELEASE: released, replied, then the tensors dropped. False: the
 * tuner is gone. */
static bool serve_release(kt__worker_state *c, int fd, kt__reply *rp) {
  kt__trace("worker: released, kept");
  kt__worker_release(c);
  rp->status = KT__ST_OK;
  if (!kt__send_all(fd, rp, sizeof *rp)) return false;
  kt__worker_drop_tensors(c);
  kt__trace("worker: the released tuning's tensors unmapped");
  return true;
}

/* A request to run a configuration, and its reply. False: the worker
 * retires (the tuner is gone, or the run left the device or the process
 * untrustworthy). */
static bool serve_run(kt__worker_state *c, int fd, const kt__request *rq, kt__reply *rp) {
  kt__errbuf eb = {{0}};
  if (!c->s->args) {
    rp->status = kt__fail(&eb, KT__ST_RUNTIME, "a spawned zygote's worker was asked to run before it was bound");
    kt__copy_msg(rp->msg, sizeof rp->msg, eb.msg);
    kt__send_all(fd, rp, sizeof *rp);
    return false;
  }
  c->check_faulted = false;
  rp->status = serve_request(c, rq, rp, &eb);
  rp->check_fault = c->check_faulted;
  if (rp->status == KT__ST_OK) rp->status = kt__run_check_state(c, &eb); /* the timed runs too */
  if (rp->status != KT__ST_OK) kt__copy_msg(rp->msg, sizeof rp->msg, eb.msg);
  fflush(stdout); /* the output before the reply: the tuner reads both */
  if (!kt__send_all(fd, rp, sizeof *rp)) return false;
  /* A device fault (illegal address, trap) poisons a GPU context for good:
   * after any RUNTIME failure this worker retires and a fresh one serves
   * the next configuration. */
  return rp->status != KT__ST_RUNTIME && rp->status != KT__ST_STATE;
}

/* One request after another until the tuner closes its end or the worker
 * retires. */
static void worker_serve(kt__worker_state *c, int fd) {
  kt__request rq;
  kt__reply *rp = kt__xmalloc(sizeof *rp);
  int memfd, nfds;
  bool more = true;
  while (more && kt__recv_fds(fd, &rq, sizeof rq, &memfd, 1, &nfds)) {
    if (rq.kind == KT__REQ_BIND) {
      serve_bind(c, fd, nfds ? memfd : -1);
      continue;
    }
    if (nfds) close(memfd);
    memset(rp, 0, sizeof *rp);
    more = rq.kind == KT__REQ_RELEASE ? serve_release(c, fd, rp) : serve_run(c, fd, &rq, rp);
  }
  free(rp);
}

/* The worker process: never returns. It dies with the zygote that forked it. */
void kt__worker_main(const kt__worker_setup *s, int fd, pid_t parent) {
  kt__worker_state c = {.s = s};
  if (!worker_open(&c, fd, parent)) _exit(1);
  worker_serve(&c, fd);
  kt__trace("worker: stopping");
  worker_teardown(&c);
  kt__trace("worker: torn down");
  _exit(0);
}
