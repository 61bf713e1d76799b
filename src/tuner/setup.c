/* A tuning's setup and teardown: sizes and names checked, the tensors mapped
 * and written, how outputs are judged, the device worker started (or a kept
 * one bound again), the compile threads; then all of it ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../parallel.h"
#include "../workdir.h"
#include "internal.h"

static double eval_work(const kt__tuning *t, const kt__expr *e) {
  if (!e) return 0;
  kt__env env = {t->cfg->names, t->cfg->defaults, t->cfg->n, &t->size_env};
  int64_t v;
  kt__eval_error ee;
  return kt__expr_eval(e, &env, &v, &ee) == 0 ? (double)v : 0;
}

static void describe_sizes(kt__tuning *t) {
  kt__sbuf b = {0};
  kt__config_format((const char *const *)t->d->sizes, t->sizes, t->d->nsizes, "", &b);
  t->r->sizes = b.s;
}

/* Messages from the argument setup point at "line:col: ..." or nowhere;
 * the user needs the file too, in the `file:line:col: error:` form. */
static int locate_error(kt__tuning *t, int rc) {
  char msg[sizeof t->eb->msg];
  int line, col, n = 0;
  snprintf(msg, sizeof msg, "%s", t->eb->msg);
  const char *path = t->k->file->src.path;
  if (sscanf(msg, "%d:%d: %n", &line, &col, &n) != 2 || n == 0) return kt__err(t->eb, rc, "%s: error: %s", path, msg);
  /* With the source line and a caret, as the parser's errors have them. */
  kt__diag d;
  kt__diag_init(&d, &t->k->file->src);
  kt__diag_error(&d, (kt__loc){line, col}, "%s", msg + n);
  size_t len = d.errors.len;
  while (len && d.errors.s[len - 1] == '\n') len--;
  kt__err(t->eb, rc, "%.*s", (int)len, d.errors.s);
  kt__diag_free(&d);
  return rc;
}

/* kt_launch tunes on the caller's data (CPU backend, host pointers): the
 * inputs and inout tensors start from the caller's contents, so the
 * reference and every trial see the real data. Outputs keep their declared
 * initial value or poison. The caller's memory is only read. */
/* The caller's data (the tuning helper's), once the application has
 * written it: the wait overlaps the worker's opening of its device. */
static int use_caller_data(kt__tuning *t) {
  if (t->h.args_wait) KT__FORWARD(t->h.args_wait(t->h.args_ud, t->eb));
  if (!t->args->adopted) kt__argset_take(t->args, t->h.args);
  else kt__trace("setup: the caller's tensors used where the application wrote them");
  return KT_OK;
}

/* The tensors' shared memory: the application's, where it wrote the
 * caller's tensors in the tuner's layout, else made here. */
static int map_tensors(kt__tuning *t) {
  uint64_t max = t->k->ctx->opts.max_tensor_bytes;
  const kt__tune_helper_opts *h = &t->h;
  if (h->tensors_bytes) {
    int rc = kt__argset_adopt(t->d, &t->size_env, max, h->tensors_fd, (size_t)h->tensors_at, (size_t)h->tensors_bytes,
                              &t->args, t->eb);
    if (rc != KT_NOTFOUND) return rc;
    kt__trace("setup: %s: copied", t->eb->msg);
    t->eb->msg[0] = 0;
  }
  return kt__argset_map(t->d, &t->size_env, max, &t->args, t->eb);
}

/* The pages of the references in the tensors' memfd (outputs' spans, which
 * the worker fills with the reference run's results), allocated by threads
 * of the tuner while the worker starts and the tensors are written, for
 * every tuning (kt__argset_fill leaves them alone), rather than allocated
 * and zeroed during the reference's download, after the run; the worker's
 * copy (kt__run_reference) then only maps them, on every core. Nothing
 * waits for them but the teardown
 * (kt__setup_finish): populating writes no page's content, and a page the
 * worker's download reaches first is simply there for it. In parts of
 * REFERENCE_PART bytes, each only where a page is missing: a populate call
 * holds this process's mmap lock throughout, and the H100 traces (2026-12-06
 * 04:29 UTC, docs/BENCHMARKS.md) showed the tuner's own setup blocked behind
 * one call over the whole span for 0.05-0.09 s, whose pages existed already
 * on a warm helper's second key. On up to KT__REFERENCE_THREADS threads:
 * once the worker's scratch was locked in 0.02 s, its download of a fresh
 * 256 MB reference on the H100 waited for one thread until 0.185 s into
 * the miss, for eight until 0.083 s (docs/BENCHMARKS.md, "The scratch's
 * pages"). The threads are started by
 * the tuner's main thread once the launch has forked the worker's zygote,
 * call no malloc and create no threads: a child forked while another
 * thread allocates, starts or ends inherits the locks that thread held
 * (ASAN's allocator and thread registry), and an OpenCL worker forked so
 * never opened its device (e2e.verify_device and e2e.decoys_once under
 * ASAN, with a thread started before the fork). */
enum { REFERENCE_PART = 16 << 20 };

/* Whether every page of the LEN bytes at P is in memory already (a reused
 * request's memfd: the last miss's pages), so that populating them would
 * allocate nothing. */
static bool pages_resident(void *p, size_t len) {
  /* No malloc here (above). One part of REFERENCE_PART bytes at most. */
  unsigned char vec[4096];
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page;
  if (n > sizeof vec) return false;
  bool all = mincore(p, len, vec) == 0;
  for (size_t i = 0; all && i < n; i++) all = vec[i] & 1;
  return all;
}

/* One thread's share: every nthreads-th part of the references, counted
 * over all of them. */
static void *populate_references(void *arg) {
  const kt__reference_share *share = arg;
  kt__reference_pages *rp = share->all;
  const kt__argset *a = rp->args;
  size_t bytes = 0, part = 0;
  for (int k = 0; k < a->ntensors; k++) {
    char *ref = a->tensors[k].reference;
    for (size_t at = 0; ref && at < a->tensors[k].bytes; at += REFERENCE_PART, part++) {
      if ((int)(part % (size_t)rp->nthreads) != share->index) continue;
      size_t len = a->tensors[k].bytes - at < REFERENCE_PART ? a->tensors[k].bytes - at : REFERENCE_PART;
      if (!pages_resident(ref + at, len) && kt__populate(ref + at, len)) bytes += len;
    }
  }
  atomic_fetch_add(&rp->missing, bytes);
  if (atomic_fetch_sub(&rp->running, 1) == 1)
    kt__trace("setup: the references' pages filled (%zu bytes were missing, threads: %d)", atomic_load(&rp->missing),
              rp->nthreads);
  return NULL;
}

/* One for every two cores, two at least, no more than there are parts. */
static int reference_threads(const kt__argset *a) {
  size_t parts = 0;
  for (int k = 0; k < a->ntensors; k++)
    if (a->tensors[k].reference) parts += (a->tensors[k].bytes + REFERENCE_PART - 1) / REFERENCE_PART;
  int n = kt__ncores() / 2;
  if (n < 2) n = 2;
  if (n > KT__REFERENCE_THREADS) n = KT__REFERENCE_THREADS;
  if ((size_t)n > parts) n = (int)parts;
  return n < 1 ? 1 : n;
}

static void start_reference_pages(kt__tuning *t) {
  kt__reference_pages *rp = &t->reference_pages;
  rp->args = t->args;
  rp->nthreads = reference_threads(t->args);
  atomic_init(&rp->missing, 0);
  atomic_init(&rp->running, rp->nthreads);
  for (int i = 0; i < rp->nthreads; i++) {
    rp->shares[i] = (kt__reference_share){rp, i};
    if (pthread_create(&rp->threads[i], NULL, populate_references, &rp->shares[i]) != 0) {
      populate_references(&rp->shares[i]); /* this share on this thread, then */
      continue;
    }
    rp->started |= 1 << i;
  }
}

static void join_reference_pages(kt__tuning *t) {
  kt__reference_pages *rp = &t->reference_pages;
  for (int i = 0; i < rp->nthreads; i++)
    if (rp->started & (1 << i)) pthread_join(rp->threads[i], NULL);
  rp->started = 0;
  rp->nthreads = 0;
}

/* The caller's tensors that the application shared on the device (a
 * blocking miss: runtime/tune_request.h): the workers copy them there, so
 * this is known before the first worker starts (a forked one inherits it, a
 * bound one is sent it). */
static void mark_shared(kt__tuning *t) {
  for (int k = 0; t->h.shared && k < t->args->ntensors; k++) {
    kt__host_tensor *ht = &t->args->tensors[k];
    const kt__shared_buffer *s = &t->h.shared[ht->param];
    if (!s->set || ht->mode == KT__MODE_OUT || s->bytes != ht->bytes) continue;
    ht->shared = *s;
    kt__trace("setup: tensor %s comes from the application's device memory", t->d->params[ht->param].name);
  }
}

/* Whether builds for A serve B: the same compiler input. */
static bool same_build_target(const kt__device_info *a, const kt__device_info *b) {
  return strcmp(a->backend, b->backend) == 0 && strcmp(a->name, b->name) == 0 && strcmp(a->arch, b->arch) == 0 &&
         strcmp(a->toolchain_version, b->toolchain_version) == 0;
}

/* The compile threads; in the tuning helper, where the application's view
 * of the device came with the request, the default's compile starts now,
 * while the worker still opens the device (cuInit and a context: about
 * 0.3 s on the H200, as long as an NVRTC compile). Only for the plain
 * reference (the default) and a backend that compiles in the tuner; on the
 * host's own cores too, as nothing is timed yet. */
static int start_compiles(kt__tuning *t) {
  int jobs = t->k->ctx->opts.jobs > 0 ? t->k->ctx->opts.jobs : kt__ncores();
  t->r->compile_threads = jobs;
  t->pool = kt__pool_create(t->k->backend, jobs);
  if (!t->pool) return kt__err(t->eb, KT_NOMEM, "cannot start a compile thread");
  const kt__device_info *seen = t->h.device;
  if (!seen || !kt__be_compiles(t->k->backend) || t->k->backend->builds_at_load || !t->default_is_reference)
    return KT_OK;
  t->build_device = *seen;
  kt__trial tr = {.id = (uint64_t)t->r->ntrials}; /* the id kt__reference_run gives the default next */
  memcpy(tr.values, t->cfg->defaults, (size_t)t->cfg->n * sizeof *tr.values);
  kt__tuner_submit(t, &tr);
  t->early_default = true;
  kt__trace("setup: the default's compile started before the worker is ready");
  return KT_OK;
}

/* A GPU whose clocks and power cannot be read is timed all the same: said
 * once per process (a sweep's keys all share the reason). */
static void say_no_readings(const kt__tuning *t) {
  static bool said;
  if (said || !t->r->device.no_readings[0] || kt__tuning_quiet(t)) return;
  said = true;
  fprintf(stderr, "ktune: note: timing without clock, throttle, power or temperature readings: %s\n",
          t->r->device.no_readings);
}

/* The timing method asked for, checked against what the backend can do;
 * AUTO on a backend without graphs is its one method. */
static int resolve_timing(kt__tuning *t) {
  const kt__backend *be = t->k->backend;
  if ((unsigned)t->o.timing > KT_TIMING_EVENTS)
    return kt__err(t->eb, KT_INVALID, "timing method %d: expected auto, graph or events", (int)t->o.timing);
  if (!kt__be_can_time(be, t->o.timing))
    return kt__err(t->eb, KT_INVALID, "timing by %s: the %s backend has no graphs (it times by %s); use auto or events",
                   kt__timing_name(t->o.timing), be->name, be->timings[KT_TIMING_EVENTS]);
  t->o.timing = kt__be_timing(be, t->o.timing);
  return KT_OK;
}

/* An objective other than time needs the device's energy: a device that
 * reports none (no NVML energy counter, no RAPL, OpenCL) refuses it, saying
 * what is missing, before anything is measured or stored. */
static int check_objective(kt__tuning *t) {
  if (t->o.objective == KT_OBJECTIVE_TIME || !t->r->device.no_energy[0]) return KT_OK;
  return kt__err(t->eb, KT_INVALID,
                 "objective %s needs the energy of each launch, but %s (%s backend) reports none: %s. Tune for time "
                 "(--objective time), or on a device that reports its energy (CUDA with NVML, a CPU with RAPL)",
                 kt__objective_name(t->o.objective), t->r->device.name, t->k->backend->name, t->r->device.no_energy);
}

int kt__setup_start(kt__tuning *t) {
  const kt__kernel_decl *d = t->d;
  /* Bad options are refused before anything runs or is written. */
  if (t->o.strategy && !kt__strategy_find(t->o.strategy)) return kt__choice_unknown_strategy(t);
  KT__FORWARD(resolve_timing(t));
  if ((unsigned)t->o.objective > KT_OBJECTIVE_EDP)
    return kt__err(t->eb, KT_INVALID, "objective %d: expected time, energy or edp", (int)t->o.objective);
  t->sizes = kt__xcalloc((size_t)d->nsizes + 1, sizeof *t->sizes);
  KT__FORWARD(kt__kernel_resolve_sizes(t->k, t->sizes, t->eb));
  t->size_env = (kt__env){(const char *const *)d->sizes, t->sizes, d->nsizes, NULL};
  KT__FORWARD(kt__config_check_size(t->cfg, t->k->file->src.path, d->name, t->eb));
  uint64_t size, valid;
  KT__FORWARD(kt__choice_check_space(t, &size, &valid));
  t->r = kt__result_create(d->name, t->k->file->src.path, t->cfg->names, t->cfg->n, t->cfg->ntune);
  t->r->bincache = t->k->ctx->bincache;
  t->r->timings = t->k->backend->timings;
  t->r->timing = t->o.timing;
  t->r->objective = t->o.objective;
  t->r->space_size = size;
  t->r->valid_size = valid;
  t->r->budget_s = t->o.budget_s > 0 ? t->o.budget_s : 0;
  describe_sizes(t);
  t->r->flops = eval_work(t, d->flops);
  t->r->bytes = eval_work(t, d->bytes);
  if (!(t->workdir = kt__workdir(t->eb))) return KT_INVALID;
  kt__trace("setup: names and sizes");
  int rc = map_tensors(t);
  if (rc == KT_OK) mark_shared(t);
  if (rc == KT_OK) rc = kt__constants_create(d, t->k->file->src.path, kt__tuning_seed(t), &t->constants, t->eb);
  if (rc != KT_OK) return locate_error(t, rc);
  KT__FORWARD(kt__judging_check_files(t));
  KT__FORWARD(kt__judging_plan(t));
  kt__worker_setup ws = {.backend = t->k->backend,
                         .device = t->k->ctx->opts.device,
                         .file = t->k->file,
                         .decl = d,
                         .sizes = &t->size_env,
                         .args = t->args,
                         .constants = t->constants,
                         .atol = -1, /* the worker applies @verify and per-type defaults */
                         .rtol = -1,
                         .workdir = t->workdir,
                         .check = t->has_check ? &t->check : NULL,
                         .bincache = &t->k->ctx->bincache,
                         .constants_seed = kt__tuning_seed(t),
                         .spawn_zygote = t->k->ctx->env.v[KT__ENV_ZYGOTE].choice == KT__ZYGOTE_SPAWN};
  t->setup = ws;
  /* The worker opens its device (a CUDA context: 0.26 s on the H200) while
   * the tuner writes the tensors it will upload; a kept one has it open. */
  if (!t->h.keep_worker || kt__worker_rebind(&ws, &t->worker, t->eb) != KT_OK)
    KT__FORWARD(kt__worker_launch(&ws, &t->worker, t->eb));
  start_reference_pages(t); /* after the launch's fork: see REFERENCE_PART */
  rc = kt__argset_fill(d, kt__tuning_seed(t), t->k->inputs, t->k->expects, t->h.args, t->args, t->eb);
  if (rc != KT_OK) return locate_error(t, rc);
  if (t->h.args) KT__FORWARD(use_caller_data(t));
  kt__trace("setup: tensors written");
  KT__FORWARD(start_compiles(t));
  KT__FORWARD(kt__worker_ready(&t->worker, &t->r->device, t->eb));
  t->sample_s = kt__tuner_sample_length(&t->k->ctx->env, &t->r->device);
  say_no_readings(t);
  KT__FORWARD(check_objective(t));
  kt__trace("setup: worker started");
  if (t->early_default && !same_build_target(&t->build_device, &t->r->device)) {
    kt__trace("setup: the worker's device differs from the application's: the default is compiled again");
    kt__compile_job_free(kt__pool_wait(t->pool));
    t->early_default = false;
  }
  t->build_device = t->r->device; /* no compile runs now unless for the same target */
  return kt__records_open(t);
}

void kt__setup_finish(kt__tuning *t) {
  join_reference_pages(t); /* the references' threads (start_reference_pages) */
  if (t->pool) {
    kt__pool_cancel_queued(t->pool);
    kt__compile_job *j;
    while ((j = kt__pool_wait(t->pool)) != NULL) kt__compile_job_free(j);
    t->r->compile_busy_s = kt__pool_busy_seconds(t->pool);
  }
  kt__pool_free(t->pool);
  kt__trace("teardown: compile threads joined");
  if (t->worker) t->r->restarts = kt__worker_restarts(t->worker);
  if (!t->h.keep_worker || !kt__worker_bindable(&t->setup) || !kt__worker_park(t->worker)) kt__worker_stop(t->worker);
  kt__trace("teardown: worker stopped");
  kt__argset_free(t->args);
  kt__constants_free(t->constants);
  kt__check_free(&t->check);
  kt__trace("teardown: tensors freed");
  kt__records_free(t);
  free(t->sizes);
}
