/* The measuring state of a key tuned through the application's own
 * launches (online.h). */
#include "online.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool has_inout(const kt_kernel *k) {
  for (int i = 0; i < k->decl->nparams; i++)
    if (k->decl->params[i].is_tensor && k->decl->params[i].mode == KT__MODE_INOUT) return true;
  return false;
}

/* The application's calls time the candidates by the clock alone: a
 * context that asks for the energy (or edp) winner gets a whole tuning in the
 * helper, which measures energy, as does a kernel with an inout tensor. */
kt_miss_policy kt__online_policy(const kt_kernel *k) {
  kt_miss_policy p = k->ctx->opts.miss_policy;
  if (p != KT_MISS_ONLINE) return p;
  return has_inout(k) || k->ctx->opts.objective != KT_OBJECTIVE_TIME ? KT_MISS_BACKGROUND : p;
}

kt__online *kt__online_create(const kt__config *cfg, const char *list) {
  kt__online *o = kt__xcalloc(1, sizeof *o);
  pthread_mutex_init(&o->lock, NULL);
  o->started = kt__now();
  o->method = "";
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ";");
    char *one = kt__xstrndup(p, len);
    o->cands = kt__xreallocarray(o->cands, (size_t)o->ncands + 1, sizeof *o->cands);
    kt__online_cand *c = &o->cands[o->ncands++];
    memset(c, 0, sizeof *c);
    memcpy(c->values, cfg->defaults, (size_t)cfg->n * sizeof *c->values);
    kt__config_read(cfg, one, c->values);
    free(one);
    p += len;
    if (*p == ';') p++;
  }
  if (o->ncands) return o;
  kt__online_free(o);
  return NULL;
}

void kt__online_free(kt__online *o) {
  if (!o) return;
  pthread_mutex_destroy(&o->lock);
  free(o->cands);
  free(o);
}

static bool needs_samples(const kt__online_cand *c) { return !c->dropped && c->nsamples < KT__ONLINE_SAMPLES; }

int kt__online_begin(kt__online *o) {
  if (pthread_mutex_trylock(&o->lock) != 0) return -1;
  for (int i = 0; i < o->ncands; i++) {
    int c = (o->next + i) % o->ncands;
    if (needs_samples(&o->cands[c])) {
      o->next = (c + 1) % o->ncands; /* one candidate a call, in turn: drift in the
                                        application's load spreads over all of them */
      return c;
    }
  }
  pthread_mutex_unlock(&o->lock);
  return -1;
}

bool kt__online_end(kt__online *o, int c, double seconds, bool failed) {
  kt__online_cand *cand = &o->cands[c];
  if (failed) cand->dropped = true;
  else {
    cand->samples[cand->nsamples++] = seconds;
    o->calls++;
    o->timed_s += seconds;
  }
  bool last = true;
  for (int i = 0; i < o->ncands && last; i++) last = !needs_samples(&o->cands[i]);
  pthread_mutex_unlock(&o->lock);
  return last;
}

int kt__online_winner(kt__online *o, kt__stats *stats) {
  int best = -1;
  for (int i = 0; i < o->ncands; i++) {
    kt__online_cand *c = &o->cands[i];
    memset(&stats[i], 0, sizeof stats[i]);
    if (c->dropped) continue;
    double sorted[KT__ONLINE_SAMPLES];
    memcpy(sorted, c->samples, sizeof sorted);
    stats[i].timing = KT_TIMING_EVENTS; /* one launch a sample, as events time them */
    kt__stats_compute(sorted, c->nsamples, 1, &stats[i]);
    if (best < 0 || stats[i].median < stats[best].median) best = i;
  }
  return best;
}
