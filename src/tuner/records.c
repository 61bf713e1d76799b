/* A tuning's side of the results database: this key's stored results loaded
 * for resuming (a configuration measured before is reused, not run again),
 * every measurement recorded as soon as it is made, and the winner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const kt__stored_entry *find_stored(const kt__tuning *t, const char *config) {
  for (int i = 0; i < t->nstored; i++)
    if (strcmp(t->stored[i].config, config) == 0) return &t->stored[i];
  return NULL;
}

static void load_stored(void *ud, const kt__record *rec) {
  kt__tuning *t = ud;
  t->stored = kt__xreallocarray(t->stored, (size_t)t->nstored + 1, sizeof *t->stored);
  kt__stored_entry *e = &t->stored[t->nstored++];
  e->config = kt__xstrdup(rec->config);
  e->rec = *rec;
  e->rec.config = e->config;
  e->rec.message = rec->message ? kt__xstrdup(rec->message) : NULL;
}

/* A database that was asked for but cannot be opened (a directory, a
 * damaged file) is bad input: refusing before any measurement beats tuning
 * for minutes and keeping nothing. */
int kt__records_open(kt__tuning *t) {
  t->store = kt__context_store(t->k->ctx);
  if (!t->store) return t->k->ctx->opts.no_db ? KT_OK : KT_STORE;
  t->r->db_path = kt__xstrdup(kt__store_path(t->store));
  kt__kernel_key_sizes(t->k, t->sizes, &t->key_sizes);
  t->key = (kt__store_key){t->k->source_hash, t->d->name, &t->r->device, t->key_sizes.s, NULL};
  kt__errbuf eb;
  if (!t->o.no_cache) kt__store_each(t->store, &t->key, load_stored, t, &eb);
  return KT_OK;
}

/* A write that failed (disk full, the database's folder removed) loses
 * results silently unless said: the first reason is kept for the error at
 * the end of the tuning, which then exits as a store error. */
static void store_failed(kt__tuning *t, int rc) {
  if (rc == KT_OK) return;
  if (!t->store_failures++ && !kt__tuning_quiet(t))
    fprintf(stderr, "ktune: warning: could not store a result: %s\n", t->store_eb.msg);
}

/* Records TR as it stands now; a trial taken from the database is recorded
 * again only when UPDATED (the finalist rounds re-timed it or it failed). */
static void record_trial(kt__tuning *t, const kt__trial *tr, bool updated) {
  if (!t->store || (tr->reused && !updated) || tr->status == KT__ST_PENDING) return;
  if (t->h.verify_only && tr->status == KT__ST_OK) return; /* verified, not measured */
  /* After Ctrl-C a failure may be the interrupt's doing (a killed worker or
   * compiler): keep only what certainly stands, so a restart measures the
   * rest again. */
  if (kt__interrupted && tr->status != KT__ST_OK) return;
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  kt__record rec = {
      cfg.s, tr->status, tr->stats, tr->compile_s, tr->message, tr->outside, t->k->backend->timings[tr->stats.timing]};
  store_failed(t, kt__store_put(t->store, &t->key, &rec, t->store_failures ? &(kt__errbuf){{0}} : &t->store_eb));
  kt__sbuf_free(&cfg);
}

void kt__records_put(kt__tuning *t, const kt__trial *tr) { record_trial(t, tr, false); }

void kt__records_update(kt__tuning *t, const kt__trial *tr) { record_trial(t, tr, true); }

/* A stored failure is measured again when it was not the kernel's doing
 * (killed from outside), or when the caller asks (--retry-failed). A stored
 * measurement without energy (a time tuning's samples span too little of
 * the counter to tell it) is measured again under an energy objective: it
 * would rank last, unmeasured, whatever it costs. */
static bool worth_reusing(const kt__tuning *t, const kt__record *rec) {
  if (rec->status == KT__ST_OK)
    return t->o.objective == KT_OBJECTIVE_TIME || t->r->device.no_energy[0] || rec->stats.seen.energy_known;
  return !rec->outside && !t->o.retry_failed;
}

/* Fills TR from the database when this configuration was measured before. */
bool kt__records_reuse(kt__tuning *t, kt__trial *tr) {
  if (!t->nstored) return false;
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  const kt__stored_entry *e = find_stored(t, cfg.s);
  kt__sbuf_free(&cfg);
  if (!e || !worth_reusing(t, &e->rec)) return false;
  tr->status = e->rec.status;
  tr->stats = e->rec.stats;
  tr->compile_s = e->rec.compile_s;
  kt__trial_set_message(tr, e->rec.message);
  tr->reused = true;
  t->r->reused++;
  return true;
}

/* A kept stored winner stays as it was stored: the time it is stored with is
 * the deciding run's, which the next run's kt__rounds_keep_stored_winner
 * compares. */
void kt__records_put_winner(kt__tuning *t) {
  if (!t->store || t->r->winner < 0 || t->o.bench_only || t->r->interrupted || t->fault_rc || t->r->kept_stored) return;
  kt__sbuf cfg = {0};
  const kt__trial *w = &t->r->trials[t->r->winner];
  kt__result_config_string(t->r, w, &cfg);
  store_failed(t, kt__store_set_winner(t->store, &t->key, t->o.objective, cfg.s, kt__trial_seconds(w),
                                       t->store_failures ? &(kt__errbuf){{0}} : &t->store_eb));
  kt__sbuf_free(&cfg);
}

void kt__records_free(kt__tuning *t) {
  for (int i = 0; i < t->nstored; i++) {
    free(t->stored[i].config);
    free((char *)t->stored[i].rec.message);
  }
  free(t->stored);
  kt__sbuf_free(&t->key_sizes);
}
