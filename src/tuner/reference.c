/* The reference run: the default configuration (each name's first choice)
 * compiled and run first, its outputs the reference every other
 * configuration is verified against; or, with another reference (--expect,
 * @reference, a check), the @reference kernel run in a worker of its own and
 * the default measured as one configuration among others. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* What the default's measurement tells of the finalist samples' cost, and
 * whether it alone spent the time budget (it is always run, and said so). */
static void reference_timing(kt__tuning *t, const kt__trial *def) {
  const kt__stats *st = &def->stats;
  if (st->nsamples > 0) t->sample_overhead_s = fmax(def->measure_s / st->nsamples - st->reps * st->median, 0);
  if (!kt__budget_timed(t) || kt__now() < t->deadline) return;
  t->r->reference_over_budget = true;
  kt__budget_ran_out(t);
  if (!kt__tuning_quiet(t))
    fprintf(stderr,
            "ktune: note: the default configuration is always run in full, as the reference: it took %.2f s "
            "(%.2f s with the setup) of the %g s budget, and nothing else was tried\n",
            kt__now() - t->started - t->r->setup_s, kt__now() - t->started, t->o.budget_s);
}

/* Compile-time names for building another kernel of the file than the one
 * tuned (the @reference kernel, @check's function): its own configuration
 * FIRST (NULL: none), then every other tuned name of the file at its first
 * choice, since the file is compiled as a whole and the tuned kernel's code
 * uses its names too. Returns the count (at most KT__MAX_NAMES). */
int kt__reference_defines(const kt__tuning *t, const kt__config *first, const char **names, int64_t *values) {
  int n = 0;
  for (int i = 0; first && i < first->n && n < KT__MAX_NAMES; i++, n++)
    names[n] = first->names[i], values[n] = first->defaults[i];
  const kt__file *f = t->k->file;
  for (int k = -1; k < f->nkernels; k++) {
    const kt__kernel_decl *d = k < 0 ? t->d : &f->kernels[k];
    for (int i = 0; i < d->ntune + d->ncluster; i++) {
      const kt__tunedim *td = i < d->ntune ? &d->tune[i] : &d->cluster[i - d->ntune];
      bool seen = false;
      for (int j = 0; j < n && !seen; j++) seen = strcmp(names[j], td->name) == 0;
      if (!seen && n < KT__MAX_NAMES) names[n] = td->name, values[n++] = td->values[0];
    }
  }
  return n;
}

/* The @reference kernel, with its own first choices, run once in a worker
 * of its own on the same buffers: its outputs become the reference. */
static int run_reference_kernel(kt__tuning *t) {
  const kt__kernel_decl *rd = t->k->reference;
  const char *path = t->k->file->src.path;
  kt__config rc;
  kt__config_init(&rc, rd);
  const char *names[KT__MAX_NAMES];
  int64_t values[KT__MAX_NAMES];
  kt__build b = {.decl = rd,
                 .names = names,
                 .values = values,
                 .n = kt__reference_defines(t, &rc, names, values),
                 .device = &t->r->device,
                 .workdir = t->workdir,
                 .tag = "reference",
                 .timeout_s = kt__tuning_compile_timeout(t)};
  kt__pool_submit(t->pool, kt__compile_job_new(UINT64_MAX, t->k->file, &b));
  kt__compile_job *j = kt__pool_wait(t->pool);
  int result = KT_OK;
  if (j->status != KT__ST_OK) {
    result = kt__err(t->eb, KT_NOVALID, "%s: error: the reference kernel %s (@reference) does not compile:\n%s", path,
                     rd->name, j->artifact.log ? j->artifact.log : j->err.msg);
    kt__compile_job_free(j);
    kt__config_free(&rc);
    return result;
  }
  kt__worker_setup ws = t->setup;
  ws.decl = rd;
  ws.check = NULL;
  ws.extra_names = names + rc.n; /* for backends that build in the worker (OpenCL) */
  ws.extra_values = values + rc.n;
  ws.nextra = b.n - rc.n;
  kt__worker *w = NULL;
  kt__device_info info;
  result = kt__worker_start(&ws, &info, &w, t->eb);
  if (result == KT_OK) {
    kt__request req = {.kind = KT__REQ_REFERENCE, .id = 0, .nvalues = rc.n};
    memcpy(req.values, rc.defaults, (size_t)rc.n * sizeof *rc.defaults);
    if (j->artifact.path) snprintf(req.artifact, sizeof req.artifact, "%s", j->artifact.path);
    kt__reply *rep = kt__xcalloc(1, sizeof *rep);
    kt__worker_request(w, &req, rep, kt__tuning_run_timeout(t));
    if (rep->status != KT__ST_OK)
      result = kt__err(t->eb, KT_NOVALID,
                       "%s: error: the reference kernel %s (@reference) failed with status %s; its outputs are what "
                       "every configuration is verified against, so it must work:\n%s",
                       path, rd->name, kt__status_name(rep->status), rep->msg);
    free(rep);
  }
  kt__worker_stop(w);
  kt__trace("reference: @reference kernel run");
  kt__compile_job_free(j);
  kt__config_free(&rc);
  return result;
}

/* With a reference other than the default (--expect, @reference, a
 * check), the default is one configuration among others: it may fail. */
static int run_default(kt__tuning *t) {
  if (t->k->reference) KT__FORWARD(run_reference_kernel(t));
  kt__trial *tr = kt__result_add(t->r, t->cfg->defaults, 0);
  tr->is_default = true;
  tr->space_index = UINT64_MAX;
  t->r->default_trial = (int)tr->id;
  if (!t->default_valid) {
    tr->status = KT__ST_CONSTRAINT;
    kt__trial_set_message(tr,
                          "the default configuration violates @where; it is not the reference here, so it is not run");
    kt__progress_settled(t, tr);
    return KT_OK;
  }
  kt__tuner_submit(t, tr);
  kt__compile_job *j = kt__pool_wait(t->pool);
  tr = &t->r->trials[t->r->default_trial];
  if (kt__tuner_take_compiled(t, j, tr)) kt__tuner_evaluate(t, tr, KT__REQ_EVAL, 0);
  if (t->fault_rc) return t->fault_rc; /* the machine failed its build */
  kt__progress_settled(t, tr);
  kt__records_put(t, tr);
  if (tr->status == KT__ST_OK) reference_timing(t, tr);
  return KT_OK;
}

int kt__reference_run(kt__tuning *t) {
  if (!t->default_is_reference) return run_default(t);
  kt__trial *tr = kt__result_add(t->r, t->cfg->defaults, 0);
  tr->is_default = true;
  tr->space_index = UINT64_MAX;
  t->r->default_trial = (int)tr->id;
  if (!t->early_default) kt__tuner_submit(t, tr); /* else its job is the first the pool finishes */
  kt__compile_job *j = kt__pool_wait(t->pool);
  kt__trace("reference: compiled");
  tr = &t->r->trials[t->r->default_trial];
  if (kt__tuner_take_compiled(t, j, tr)) {
    kt__request req;
    kt__reply rep;
    kt__tuner_request_for(t, tr, KT__REQ_REFERENCE, &req);
    kt__tuner_ask_twice_on_failure(t, &req, &rep, false, 0);
    kt__trace("reference: run and kept");
    if (kt__tuner_machine_failed(t, tr, &rep)) return t->fault_rc;
    tr->status = rep.status;
    kt__trial_set_message(tr, rep.msg);
    kt__trial_set_output(tr, &rep.output);
    kt__tuner_note_load_build(tr, &rep);
    if (rep.status == KT__ST_OK) kt__tuner_evaluate(t, tr, KT__REQ_EVAL, 0);
    kt__trace("reference: verified and measured");
  }
  if (t->fault_rc) return t->fault_rc; /* the machine failed its build */
  kt__progress_settled(t, tr);
  kt__records_put(t, tr);
  if (tr->status != KT__ST_OK) {
    kt__sbuf cfg = {0};
    kt__result_config_string(t->r, tr, &cfg);
    kt__err(t->eb, KT_NOVALID,
            "%s: error: the default configuration (%s) failed with status %s; it is the reference every other "
            "configuration is verified against, so it must work:\n%s",
            t->k->file->src.path, cfg.s, kt__status_name(tr->status), tr->message ? tr->message : "");
    kt__sbuf_free(&cfg);
    return KT_NOVALID;
  }
  reference_timing(t, tr);
  return KT_OK;
}
