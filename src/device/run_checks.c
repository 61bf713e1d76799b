/* A verified run in the device worker: what it starts from (inputs uploaded,
 * outputs poisoned) and the checks after it, in the order docs/FAULTS.md
 * lists them under "Buggy and hostile kernels": the process state, the guard
 * zones, the inputs, a reference that leaves outputs unwritten, then the
 * outputs compared with the reference (on the device where the backend can,
 * else on the host) or judged by the author's check. */
#include "run_checks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../parallel.h"
#include "../verify/verify.h"
#include "check_child.h"

/* --- what a verified run starts from -------------------------------------- */

static bool poisoned_output(const kt__worker_state *c, const kt__host_tensor *t) {
  return kt__output_poisoned(c->s->decl, t);
}

/* The poison value of one element (ALT: the second poison), written over
 * the whole buffer on the device when the backend can, else uploaded. */
static int poison(kt__worker_state *c, int k, bool alt, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  unsigned char pattern[8];
  (alt ? kt__poison_alt : kt__poison)(t->type, pattern, 1);
  if (kt__be_fill(c->s->backend, c->state, c->bufs[k], t->bytes, pattern, alt ? 1 : kt__dtype_size(t->type), eb) ==
      KT_OK)
    return KT_OK;
  (alt ? kt__poison_alt : kt__poison)(t->type, c->scratch, t->count);
  return kt__be_upload(c->s->backend, c->state, c->bufs[k], c->scratch, t->bytes, eb);
}

/* Tensor K's initial content into its device buffer: copied on the device
 * where the application shared it, else uploaded. */
static int load_initial(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (c->initdev[k]) return kt__be_copy(c->s->backend, c->state, c->bufs[k], c->initdev[k], t->bytes, eb);
  return kt__be_upload(c->s->backend, c->state, c->bufs[k], t->initial, t->bytes, eb);
}

/* Tensor K's initial content on the host: INITIAL, or, where the worker
 * copied it from the application's device memory, a download of that
 * (made on first need: a changed input's message, an author's check).
 * NULL when the download failed (EB says why). */
static const void *initial_on_host(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (!c->initdev[k]) return t->initial;
  if (c->initial_host[k]) return c->initial_host[k];
  /* Page-aligned, as INITIAL is, for an author's check's child to protect. */
  size_t len = t->bytes ? t->bytes : 1;
  void *host = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) {
    kt__err(eb, KT_NOMEM, "no memory for a host copy of input %s", c->s->decl->params[t->param].name);
    return NULL;
  }
  if (kt__be_download(c->s->backend, c->state, host, c->initdev[k], t->bytes, eb) != KT_OK) {
    munmap(host, len);
    return NULL;
  }
  return c->initial_host[k] = host;
}

/* The `in` tensors from their initial content (and their device copies to
 * compare with), unless they still hold it. */
static kt__status restore_inputs(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors && !c->inputs_fresh; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode != KT__MODE_IN) continue;
    if (!c->initdev[k]) kt__populate(t->initial, t->bytes); /* mapped at once, not a fault per page of the copy */
    if (load_initial(c, k, eb) != KT_OK) return KT__ST_RUNTIME;
    if (c->pristine[k] && kt__be_copy(c->s->backend, c->state, c->pristine[k], c->bufs[k], t->bytes, eb) != KT_OK)
      return KT__ST_RUNTIME;
  }
  c->inputs_fresh = true;
  return KT__ST_OK;
}

/* Before a verified run: every tensor from its initial content, except
 * outputs without an initial value, which are poisoned (ALT_POISON: with
 * the second poison) so that an element the kernel forgets to write fails
 * the comparison. */
static kt__status restore_all(kt__worker_state *c, bool alt_poison, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_IN) continue;
    int rc = poisoned_output(c, t) ? poison(c, k, alt_poison, eb) : load_initial(c, k, eb);
    if (rc != KT_OK) return KT__ST_RUNTIME;
  }
  return restore_inputs(c, eb);
}

/* Before a timed sample: the inputs where a fresh worker has not uploaded
 * them yet (its first request may be a finalist's sample), and what the
 * kernel reads after writing it (inout, outputs with an initial value), so
 * that an accumulating kernel does not drift towards infinities or
 * denormals over thousands of runs. */
kt__status kt__run_restore_state(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_INOUT || (t->mode == KT__MODE_OUT && !poisoned_output(c, t)))
      if (load_initial(c, k, eb) != KT_OK) return KT__ST_RUNTIME;
  }
  return restore_inputs(c, eb);
}

static kt__status run_once(kt__worker_state *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  kt__status st = restore_all(c, false, eb);
  return st == KT__ST_OK ? kt__be_run(c->s->backend, c->state, fn, l, eb) : st;
}

static void tolerance(const kt__worker_state *c, kt__dtype t, double *atol, double *rtol) {
  kt__default_tolerance(t, atol, rtol);
  const kt__kernel_decl *d = c->s->decl;
  /* @verify(rtol = ...) alone keeps the type's default atol, and the reverse. */
  if (d->has_atol) *atol = d->atol;
  if (d->has_rtol) *rtol = d->rtol;
  if (c->s->atol >= 0) *atol = c->s->atol;
  if (c->s->rtol >= 0) *rtol = c->s->rtol;
}

/* The shared inputs and reference are read-only in the worker except while
 * the reference is written: a kernel's wild store then faults here instead
 * of silently corrupting what every later configuration is checked with. */
void kt__run_protect_shared(const kt__argset *a, bool writable_reference) {
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    size_t len = t->bytes ? t->bytes : 1;
    mprotect(t->initial, len, PROT_READ);
    if (t->reference) mprotect(t->reference, len, writable_reference ? PROT_READ | PROT_WRITE : PROT_READ);
  }
}

/* --- what a run may not do ----------------------------------------------- */

/* Nothing written outside a tensor: the guard zones still hold their
 * pattern (re-armed after damage, for the next configuration). */
static kt__status check_guards(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    kt__guard_damage d;
    if (kt__guarded_check(c->s->backend, c->state, &c->guards[k], &d, eb) != KT_OK) return KT__ST_RUNTIME;
    if (!d.count) continue;
    if (kt__guarded_arm(c->s->backend, c->state, &c->guards[k], eb) != KT_OK) return KT__ST_RUNTIME;
    const kt__host_tensor *t = &a->tensors[k];
    size_t esize = kt__dtype_size(t->type);
    long long index =
        d.before ? -(long long)((d.distance + esize - 1) / esize) : (long long)(t->count + d.distance / esize);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_BOUNDS,
                    "wrote outside %s: it changed %zu bytes of the %zu-byte guard zone %s, the nearest at "
                    "%s[%lld]",
                    name, d.count, c->guards[k].zone, d.before ? "before its start" : "past its end", name, index);
  }
  return KT__ST_OK;
}

/* The elements of tensor T (as SCRATCH holds it) that differ from its
 * initial content INITIAL, and the first of them. */
static uint64_t changed_elements(const kt__host_tensor *t, const void *initial, const void *scratch, uint64_t *first) {
  size_t esize = kt__dtype_size(t->type);
  uint64_t n = 0;
  for (uint64_t i = 0; i < t->count; i++)
    if (memcmp((const char *)scratch + i * esize, (const char *)initial + i * esize, esize) != 0 && n++ == 0)
      *first = i;
  return n;
}

/* Inputs stay inputs: a configuration that writes a tensor declared `in`
 * would hand every later configuration in this worker other data (and other
 * timings). Each input is compared with its initial content after the run;
 * a changed one is uploaded again before the next run. */
static kt__status check_inputs(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode != KT__MODE_IN) continue;
    bool same = false;
    if (c->pristine[k]) {
      if (kt__be_equal(c->s->backend, c->state, c->bufs[k], c->pristine[k], t->bytes, &same, eb) != KT_OK)
        return KT__ST_RUNTIME;
      if (same) continue;
    }
    const void *initial = initial_on_host(c, k, eb);
    if (!initial) return KT__ST_RUNTIME;
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
    if (kt__equal_parallel(c->scratch, initial, t->bytes, c->cores)) continue;
    c->inputs_fresh = false;
    uint64_t first = 0, n = changed_elements(t, initial, c->scratch, &first);
    char where[512];
    kt__tensor_index_text(c->s->decl, t, first, where, sizeof where);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_INPUT,
                    "wrote its input %s: %" PRIu64 " of %" PRIu64 " elements changed (the first: %s); a "
                    "kernel that updates %s declares it `inout`",
                    name, n, t->count, where, name);
  }
  return KT__ST_OK;
}

/* Host-code kernels leave the process as they found it. A difference
 * retires the worker (the state cannot be trusted to be put back). */
kt__status kt__run_check_state(kt__worker_state *c, kt__errbuf *eb) {
  char why[256];
  if (!c->watch_state || kt__procstate_same(&c->initial, why, sizeof why)) return KT__ST_OK;
  return kt__fail(eb, KT__ST_STATE, "%s; a kernel must leave the process as it found it", why);
}

/* After a run, before its outputs are looked at: a thread still writing an
 * output, or a stray write, explains a wrong output better than the output
 * does. */
static kt__status check_run(kt__worker_state *c, kt__errbuf *eb) {
  kt__status st = kt__run_check_state(c, eb);
  if (st == KT__ST_OK) st = check_guards(c, eb);
  return st == KT__ST_OK ? check_inputs(c, eb) : st;
}

/* Whether output K's reference holds the first poison somewhere, counted
 * once per reference in a worker (a scan of the whole reference on the
 * host: 0.01-0.02 s per 256 MB), for the reference's own check and for every
 * configuration's (check_outputs_written). */
static bool reference_holds_poison(kt__worker_state *c, int k) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (!c->ref_poisoned[k])
    c->ref_poisoned[k] = kt__count_poison(t->type, t->reference, t->count, false, c->cores) ? 2 : 1;
  return c->ref_poisoned[k] == 2;
}

/* Outputs that the reference run may have left unwritten: no initial value
 * (so poisoned before the run) and poison still in the reference. */
static bool maybe_unwritten(kt__worker_state *c, int k) {
  return poisoned_output(c, &c->s->args->tensors[k]) && reference_holds_poison(c, k);
}

/* A reference that leaves elements unwritten is no reference: every correct
 * configuration would differ from it there, and poison would match poison
 * (NaN is NaN, a byte pattern equals itself). Poison left in the reference
 * may also be a value the kernel computed, so the reference runs again from
 * the second poison: what holds the first poison then and the second now
 * was written by neither run. */
static kt__status check_reference_written(kt__worker_state *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  bool suspect = false;
  for (int k = 0; k < a->ntensors; k++) suspect |= maybe_unwritten(c, k);
  if (!suspect) return KT__ST_OK;
  kt__status st = restore_all(c, true, eb);
  if (st == KT__ST_OK) st = kt__be_run(c->s->backend, c->state, fn, l, eb);
  for (int k = 0; k < a->ntensors && st == KT__ST_OK; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (!poisoned_output(c, t)) continue; /* count_unwritten finds none where no poison was */
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
    uint64_t first = 0, n = kt__count_unwritten(t->type, t->reference, c->scratch, t->count, &first);
    if (!n) continue;
    char where[512];
    kt__tensor_index_text(c->s->decl, t, first, where, sizeof where);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_CORRECTNESS,
                    "it leaves %" PRIu64 " of %" PRIu64 " elements of %s unwritten (the first: %s), so it "
                    "cannot be the reference. If the kernel leaves them alone on purpose, give %s an "
                    "initial value (`%s: out tensor<...>[...] = zeros`): every configuration is then "
                    "compared on them alike",
                    n, t->count, name, where, name, name);
  }
  return st;
}

/* The device's copy of each output's reference (compare_on_device), copied
 * on the device from the reference run's output, which is what the shared
 * reference is downloaded from: uploading that back on first use cost 0.055 s
 * per 256 MB on the H100 (bench/miss_sizes_h200.sh's second-key trace at
 * 8e9242d). A backend that cannot copy uploads it then. */
static void keep_reference_on_device(kt__worker_state *c) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    kt__errbuf ignored;
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode != KT__MODE_IN && c->refdev[k] &&
        kt__be_copy(c->s->backend, c->state, c->refdev[k], c->bufs[k], t->bytes, &ignored) == KT_OK)
      c->refdev_ready[k] = true;
  }
}

/* Runs the reference and downloads its outputs into the shared reference
 * buffers, after checking that it wrote them. */
kt__status kt__run_reference(kt__worker_state *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) c->refdev_ready[k] = false, c->ref_poisoned[k] = 0; /* a new reference */
  kt__status st = run_once(c, fn, l, eb);
  kt__trace("worker: reference uploaded and run");
  if (st == KT__ST_OK) st = check_run(c, eb);
  if (st != KT__ST_OK) return st;
  keep_reference_on_device(c);
  kt__run_protect_shared(a, true);
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_IN) continue;
    /* Through the page-locked scratch: a DMA, then a copy on every core
     * (0.095 s straight into the shared pages for 256 MB on the H200). */
    double t0 = kt__now();
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) {
      st = KT__ST_RUNTIME;
      break;
    }
    double t1 = kt__now();
    /* The pages are faulted in by the copy's threads: the tuner allocated
     * them (start_reference_pages), so this process only maps them, and on
     * the GPU machine's 16 cores that took 0.013-0.019 s against 0.035-0.073 s
     * for one populate call and then the copy (bench/shm_pages.c, existing
     * pages, 256 MB). */
    kt__copy_parallel(t->reference, c->scratch, t->bytes, c->cores);
    kt__trace("worker: reference downloaded (%zu bytes: the DMA %.4f s, the copy and its pages %.4f s)",
              (size_t)t->bytes, t1 - t0, kt__now() - t1);
  }
  kt__run_protect_shared(a, false);
  return st == KT__ST_OK ? check_reference_written(c, fn, l, eb) : st;
}

/* --- the outputs, compared with the reference ----------------------------- */

/* Comparison on the host: the output downloaded into the scratch. */
static kt__status compare_on_host(kt__worker_state *c, int k, double atol, double rtol, kt__mismatch *m,
                                  kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
  kt__compare_parallel(t->type, c->scratch, t->reference, t->count, atol, rtol, c->cores, m);
  return KT__ST_OK;
}

/* The device's copy of output K's reference, uploaded on first use (a
 * replacement worker finds the reference in shared memory). */
static int reference_on_device(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (c->refdev_ready[k]) return KT_OK;
  KT__FORWARD(kt__be_upload(c->s->backend, c->state, c->refdev[k], t->reference, t->bytes, eb));
  c->refdev_ready[k] = true;
  return KT_OK;
}

/* No comparison on the device in this worker from now on. */
static void drop_device_references(kt__worker_state *c, const char *why) {
  kt__trace("worker: outputs compared on the host: %s", why);
  for (int k = 0; k < c->s->args->ntensors; k++) {
    kt__devpool_give(&c->pool, c->s->backend, c->state, c->refdev[k]);
    c->refdev[k] = NULL;
  }
}

/* Comparison on the device, the same rule and the same result as on the
 * host: only the counts and the first mismatching element are copied back.
 * *DONE false: the backend cannot, compare on the host. */
static kt__status compare_on_device(kt__worker_state *c, int k, double atol, double rtol, kt__mismatch *m, bool *done,
                                    kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  *done = false;
  if (!c->refdev[k]) return KT__ST_OK;
  if (reference_on_device(c, k, eb) != KT_OK) return KT__ST_RUNTIME;
  kt__device_mismatch dm;
  int rc = kt__be_compare(c->s->backend, c->state, t->type, c->bufs[k], c->refdev[k], t->count, atol, rtol, &dm, eb);
  if (rc == KT_NOTFOUND) {
    drop_device_references(c, eb->msg);
    eb->msg[0] = 0;
    return KT__ST_OK;
  }
  if (rc != KT_OK) return KT__ST_RUNTIME;
  *m = (kt__mismatch){.count = dm.count, .first = dm.first};
  if (dm.count) {
    m->got = kt__element(t->type, dm.got, 0);
    m->want = kt__element(t->type, t->reference, dm.first);
  }
  if (!c->compared_on_device) kt__trace("worker: outputs compared on the device");
  c->compared_on_device = *done = true;
  return KT__ST_OK;
}

static kt__status check_tensor(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  double atol, rtol;
  tolerance(c, t->type, &atol, &rtol);
  kt__mismatch m = {0};
  bool done = false;
  kt__status st = compare_on_device(c, k, atol, rtol, &m, &done, eb);
  if (st == KT__ST_OK && !done) st = compare_on_host(c, k, atol, rtol, &m, eb);
  if (st != KT__ST_OK || m.count == 0) return st;
  char where[512];
  kt__tensor_index_text(c->s->decl, t, m.first, where, sizeof where);
  return kt__fail(eb, KT__ST_CORRECTNESS,
                  "%s: got %.9g, want %.9g (%" PRIu64 " of %" PRIu64 " elements differ; atol %g, rtol %g)", where,
                  m.got, m.want, m.count, t->count, atol, rtol);
}

static kt__status verify_outputs(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    if (!a->tensors[k].compared) continue;
    kt__status st = check_tensor(c, k, eb);
    if (st != KT__ST_OK) return st;
  }
  return KT__ST_OK;
}

/* Says where the failure in EB was found: PREFIX before its message. */
static kt__status found_when(kt__status st, const char *prefix, kt__errbuf *eb) {
  if (st == KT__ST_OK) return st;
  size_t n = strlen(prefix), keep = strnlen(eb->msg, sizeof eb->msg - n - 1);
  memmove(eb->msg + n, eb->msg, keep);
  memcpy(eb->msg, prefix, n);
  eb->msg[n + keep] = 0;
  return st;
}

/* Whether output K's reference holds the first poison where a
 * configuration that leaves the element unwritten would match it. */
static bool reference_poisoned(kt__worker_state *c, int k) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  return poisoned_output(c, t) && t->compared && reference_holds_poison(c, k);
}

/* Unwritten is poison, whatever the reference holds: where the reference
 * holds a NaN (or an integer with the poison's bytes) that it computed, an
 * element the configuration leaves unwritten matches it. The configuration
 * then runs again from the second poison, which no reference element
 * equals there, and is compared again. */
static kt__status check_outputs_written(kt__worker_state *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  bool suspect = false;
  for (int k = 0; k < a->ntensors; k++) suspect |= reference_poisoned(c, k);
  if (!suspect) return KT__ST_OK;
  kt__status st = restore_all(c, true, eb);
  if (st == KT__ST_OK) st = kt__be_run(c->s->backend, c->state, fn, l, eb);
  if (st == KT__ST_OK) st = check_run(c, eb);
  for (int k = 0; k < a->ntensors && st == KT__ST_OK; k++)
    if (reference_poisoned(c, k)) st = check_tensor(c, k, eb);
  return found_when(st,
                    "it leaves elements unwritten where its reference holds NaN or the poison's bytes (run again "
                    "from a second poison, they keep it): ",
                    eb);
}

/* --- the author's check, and the verified run ----------------------------- */

/* The shape tensor T has in the configuration VALUES (its largest, T's own,
 * unless the shape uses tuned names), its first KT__DATA_MAX_DIMS dimensions. */
static void shape_in(const kt__worker_state *c, const kt__host_tensor *t, const int64_t *values, uint64_t *shape,
                     uint64_t *count) {
  const kt__param *p = &c->s->decl->params[t->param];
  kt__env env = {(const char *const *)c->config.names, values, c->config.n, c->s->sizes};
  *count = 1;
  for (int d = 0; d < t->ndims && d < KT__DATA_MAX_DIMS; d++) {
    int64_t v = (int64_t)t->shape[d];
    kt__eval_error ee;
    if (t->shape_tuned && (kt__expr_eval(p->dims[d], &env, &v, &ee) != 0 || v < 0 || (uint64_t)v > t->shape[d]))
      v = (int64_t)t->shape[d];
    shape[d] = (uint64_t)v;
    *count *= shape[d];
  }
}

/* The check's verdict on ARGS, given in a child (check_child.h): a fault of
 * the check's own is marked as such (c->check_faulted), never the
 * configuration's. */
static kt__status judged(kt__worker_state *c, kt_check_args *args, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  size_t *bytes = kt__xcalloc((size_t)a->ntensors + 1, sizeof *bytes);
  for (int k = 0; k < a->ntensors; k++) bytes[k] = a->tensors[k].bytes;
  char why[1024];
  kt__check_verdict v = kt__check_in_child(c->s->check, args, bytes, why, sizeof why);
  free(bytes);
  if (v == KT__CHECK_PASSED) return KT__ST_OK;
  if (v == KT__CHECK_REJECTED)
    return kt__fail(eb, KT__ST_CORRECTNESS, "the check %s rejected it: %s", c->s->check->source,
                    args->message[0] ? args->message : "(it gave no reason)");
  c->check_faulted = true;
  return kt__fail(eb, KT__ST_CORRECTNESS, "the check %s %s", c->s->check->source, why);
}

/* What the check is shown: every tensor (inputs as uploaded, outputs as
 * this configuration left them), and the configuration's values, then the
 * runtime sizes. */
static kt__status run_check(kt__worker_state *c, const int64_t *values, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  const kt__env *sizes = c->s->sizes;
  kt_check_tensor *ts = kt__xcalloc((size_t)a->ntensors + 1, sizeof *ts);
  uint64_t *shapes = kt__xcalloc((size_t)a->ntensors * KT__DATA_MAX_DIMS + 1, sizeof *shapes);
  int nvalues = c->config.n + sizes->n;
  const char **names = kt__xcalloc((size_t)nvalues + 1, sizeof *names);
  int64_t *all = kt__xcalloc((size_t)nvalues + 1, sizeof *all);
  for (int i = 0; i < c->config.n; i++) names[i] = c->config.names[i], all[i] = values[i];
  for (int i = 0; i < sizes->n; i++) names[c->config.n + i] = sizes->names[i], all[c->config.n + i] = sizes->values[i];
  kt__status st = KT__ST_OK;
  for (int k = 0; k < a->ntensors && st == KT__ST_OK; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    bool out = t->mode != KT__MODE_IN;
    if (out && kt__be_download(c->s->backend, c->state, c->outputs[k], c->bufs[k], t->bytes, eb) != KT_OK)
      st = KT__ST_RUNTIME;
    const void *initial = out ? NULL : initial_on_host(c, k, eb);
    if (!out && !initial) st = KT__ST_RUNTIME;
    uint64_t *shape = &shapes[(size_t)k * KT__DATA_MAX_DIMS];
    ts[k] = (kt_check_tensor){.name = c->s->decl->params[t->param].name,
                              .type = kt__dtype_name(t->type),
                              .is_output = out,
                              .data = out ? c->outputs[k] : initial,
                              .reference = out && t->reference_set ? t->reference : NULL,
                              .ndims = t->ndims < KT__DATA_MAX_DIMS ? t->ndims : KT__DATA_MAX_DIMS,
                              .shape = shape};
    shape_in(c, t, values, shape, &ts[k].count);
  }
  char msg[1024] = "";
  kt_check_args args = {a->ntensors, ts, nvalues, names, all, c->s->check->user, msg, sizeof msg};
  if (st == KT__ST_OK) st = judged(c, &args, eb);
  free(ts);
  free(shapes);
  free(names);
  free(all);
  return st;
}

/* --- after the timed runs -------------------------------------------------- */

typedef struct decoy_job {
  kt__dtype type;
  size_t size;
  unsigned char *buf;
  const unsigned char *ref;
} decoy_job;

static void decoy_part(void *arg, int part, uint64_t begin, uint64_t len) {
  (void)part;
  const decoy_job *j = arg;
  kt__decoy(j->type, j->buf + begin * j->size, j->ref + begin * j->size, len);
}

/* kt__decoy over the worker's cores: element by element it is the one
 * pass over a whole output that the worker makes on the host per tuning
 * (1.0 s on one core for 1 GB on the H200 machine). */
static void decoys_parallel(kt__worker_state *c, const kt__host_tensor *t) {
  decoy_job j = {t->type, kt__dtype_size(t->type), c->scratch, t->reference};
  kt__split_run(t->count, 1u << 20, c->cores, decoy_part, &j);
}

/* Output K's decoys, just uploaded into its buffer, kept in a device buffer
 * of their own for the next runs of this tuning: the reference they are
 * made from no longer changes (it is read-only once written). Without the
 * memory or a device copy, each run makes them again. */
static void keep_decoys(kt__worker_state *c, int k) {
  const kt__backend *be = c->s->backend;
  size_t bytes = c->s->args->tensors[k].bytes;
  kt__errbuf ignored;
  if (!be->copy || kt__devpool_take(&c->pool, be, c->state, bytes, &c->decoydev[k], &ignored) != KT_OK) {
    c->decoydev[k] = NULL;
    return;
  }
  if (kt__be_copy(be, c->state, c->decoydev[k], c->bufs[k], bytes, &ignored) != KT_OK) {
    kt__devpool_give(&c->pool, be, c->state, c->decoydev[k]);
    c->decoydev[k] = NULL;
  }
}

/* Output K's decoys made on the device from its device reference (the
 * backend's decoy kernel): true when made, false when the host must make
 * them (no device reference, or the backend cannot). Made decoys are
 * compared with the reference as an output is, and every element must
 * fail: a decoy kernel that wrote nothing would leave the configuration's
 * own results in place, which is no test. */
static bool decoys_on_device(kt__worker_state *c, int k) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  kt__errbuf ignored;
  if (!c->refdev[k] || reference_on_device(c, k, &ignored) != KT_OK ||
      kt__be_decoy(c->s->backend, c->state, t->type, c->bufs[k], c->refdev[k], t->count, &ignored) != KT_OK)
    return false;
  double atol, rtol;
  tolerance(c, t->type, &atol, &rtol);
  kt__device_mismatch m;
  if (kt__be_compare(c->s->backend, c->state, t->type, c->bufs[k], c->refdev[k], t->count, atol, rtol, &m, &ignored) !=
          KT_OK ||
      m.count != t->count) {
    kt__trace("worker: decoys of output %s made on the device do not all differ from the reference: made on the host",
              c->s->decl->params[t->param].name);
    return false;
  }
  kt__trace("worker: decoys of output %s made on the device", c->s->decl->params[t->param].name);
  return true;
}

/* Output K's decoys (kt__decoy: far from its reference, not poison), so
 * that a kernel that skips its work where its output already looks
 * computed leaves it wrong. Without a reference, the poison. Made once per
 * tuning: on the device where the backend can (at 256 MB the host's took
 * 0.026-0.05 s on the H100: docs/BENCHMARKS.md's traces), and kept there. */
static int decoy(kt__worker_state *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (!t->reference_set) return poison(c, k, false, eb);
  if (c->decoydev[k]) return kt__be_copy(c->s->backend, c->state, c->bufs[k], c->decoydev[k], t->bytes, eb);
  if (decoys_on_device(c, k)) {
    keep_decoys(c, k);
    return KT_OK;
  }
  decoys_parallel(c, t);
  kt__trace("worker: decoys of output %s made on the host", c->s->decl->params[t->param].name);
  int rc = kt__be_upload(c->s->backend, c->state, c->bufs[k], c->scratch, t->bytes, eb);
  if (rc == KT_OK) keep_decoys(c, k);
  return rc;
}

/* Before the run after the timed runs: what a verified run starts from
 * (inputs, inout and initialised outputs from their initial content: like
 * with like for kernels that accumulate), except that outputs without an
 * initial value hold decoys, as a timed run's outputs hold results. */
static kt__status restore_with_decoys(kt__worker_state *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_IN) continue;
    int rc = poisoned_output(c, t) ? decoy(c, k, eb) : load_initial(c, k, eb);
    if (rc != KT_OK) return KT__ST_RUNTIME;
  }
  return restore_inputs(c, eb);
}

kt__status kt__run_after_timed(kt__worker_state *c, void *fn, const kt__launch *l, const int64_t *values,
                               kt__errbuf *eb) {
  /* What the timed runs did, charged to this configuration before anything
   * is restored for the next. */
  kt__status st = check_run(c, eb);
  if (st != KT__ST_OK) return found_when(st, "in its timed runs, it ", eb);
  st = restore_with_decoys(c, eb);
  if (st == KT__ST_OK) st = kt__be_run(c->s->backend, c->state, fn, l, eb);
  if (st == KT__ST_OK) st = check_run(c, eb);
  if (st == KT__ST_OK) st = verify_outputs(c, eb);
  if (st == KT__ST_OK && c->s->check) st = run_check(c, values, eb);
  return found_when(st, "in a run from restored contents after its timed runs: ", eb);
}

/* run_once, then the outputs checked. With SECONDS the run is timed as a
 * sample is (cache flushed first), so that the verified run is also the
 * measurement's first launch: one launch fewer per configuration (the
 * throughput runs in docs/BENCHMARKS.md, sgemm's measuring time). VALUES:
 * the configuration's, for an author's check. */
kt__status kt__run_verified(kt__worker_state *c, void *fn, const kt__launch *l, const int64_t *values, double *seconds,
                            kt__errbuf *eb) {
  kt__status st = seconds ? restore_all(c, false, eb) : run_once(c, fn, l, eb);
  if (st == KT__ST_OK && seconds) {
    kt__be_flush_cache(c->s->backend, c->state);
    st = kt__be_time(c->s->backend, c->state, fn, l, 1, KT_TIMING_EVENTS, false, seconds, NULL, eb);
  }
  if (st == KT__ST_OK) st = check_run(c, eb);
  if (st == KT__ST_OK) st = verify_outputs(c, eb);
  if (st == KT__ST_OK) st = check_outputs_written(c, fn, l, eb);
  return st == KT__ST_OK && c->s->check ? run_check(c, values, eb) : st;
}
