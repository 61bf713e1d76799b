/* A stage's space (the other stage's names bound, --autotune pins applied),
 * the checks made on it before anything runs, and the strategy that
 * searches it (kt__strategy_choose, with its budget). */
#include <stdio.h>
#include <string.h>

#include "../search/policy.h"
#include "internal.h"

/* Counts the valid configurations of stage WHICH's SPACE (the other
 * stage's names at BASE) when it is small enough to visit, and checks that
 * each one's expressions evaluate. */
static int sweep(kt__tuning *t, const kt__space *space, int which, const int64_t *base, uint64_t *valid) {
  kt__space_fault f;
  *valid = kt__space_sweep(space, t->d, KT__VALID_COUNT_MAX, &f);
  if (!f.found) return KT_OK;
  int64_t values[KT__MAX_NAMES];
  memcpy(values, base, (size_t)t->cfg->n * sizeof *values);
  kt__space_values(space, f.index, values + kt__config_stage_first(t->cfg, which));
  return kt__tuner_report_fault(t, values, &f);
}

int kt__choice_unknown_strategy(kt__tuning *t) {
  kt__sbuf names = {0};
  for (const char *const *n = kt__strategy_names(); *n; n++) kt__sbuf_printf(&names, "%s%s", names.len ? ", " : "", *n);
  kt__err(t->eb, KT_INVALID, "strategy %s: no such strategy; choose one of: %s", t->o.strategy, names.s);
  kt__sbuf_free(&names);
  return KT_INVALID;
}

int kt__choice_strategy(kt__tuning *t, kt__stage *s, const kt__strategy_ops **ops) {
  /* kt__choice_check_space counted the first stage's valid configurations. */
  uint64_t valid = s->stage == 0 ? t->r->valid_size : 0;
  if (s->stage != 0) KT__FORWARD(sweep(t, s->space, s->stage, s->base, &valid));
  kt__strategy_choice c = kt__strategy_choose(t->o.strategy, valid, t->o.budget_configs, t->o.budget_s, s->stage);
  if (!(*ops = c.ops)) return kt__choice_unknown_strategy(t);
  s->budget = c.budget;
  if (s->stage == 0) {
    t->r->strategy = kt__xstrdup((*ops)->name);
    t->r->strategy_reason = kt__xstrdup(c.reason);
    t->r->budget = s->budget;
    t->planned += (int)(s->budget > 0 && (uint64_t)s->budget < valid ? (uint64_t)s->budget : valid);
  } else {
    t->planned += (int)valid;
  }
  return KT_OK;
}

static void bind_other(const kt__tuning *t, int which, const int64_t *values, kt__other_names *o) {
  int from = kt__config_stage_first(t->cfg, which), count = kt__config_stage_count(t->cfg, which);
  memcpy(o->values, values + from, (size_t)count * sizeof *values);
  o->env = (kt__env){t->cfg->names + from, o->values, count, &t->size_env};
}

/* The space of stage WHICH, with the other stage's names bound to BASE (in
 * OTHER, which must outlive it) and this stage's --autotune pins applied
 * (parsed once, by kt_kernel_pin); warnings about pinned values go to WARN
 * (may be NULL). */
int kt__choice_stage_space(kt__tuning *t, int which, const int64_t *base, kt__other_names *other, kt__sbuf *warn,
                           kt__space **out) {
  const kt__kernel_decl *d = t->d;
  bind_other(t, !which, base, other);
  const kt__tunedim *dims = which ? d->cluster : d->tune;
  int ndims = which ? d->ncluster : d->ntune;
  KT__FORWARD(kt__space_create(dims, ndims, d->where, d->nwhere, &other->env, out, t->eb));
  kt__config_pins pins = kt__config_pins_stage(t->cfg, &t->k->pins, which);
  kt__space_pin_values(*out, &pins, warn);
  return KT_OK;
}

/* Whether the default configuration's outputs are the reference: no
 * --expect file, @reference or check gives another. */
static bool reference_is_default(const kt__tuning *t) {
  for (int i = 0; i < t->d->nparams; i++)
    if (t->k->expects[i].path) return false;
  return !t->k->reference && !t->o.check && !t->k->check_path && !t->d->check;
}

/* Before anything runs: the default must satisfy @where when it is the
 * reference (bad input otherwise), and the pinned space must hold a valid
 * configuration; otherwise no result is made, so that no winner is ever
 * picked from outside the space. Gives the space's size and valid count. */
int kt__choice_check_space(kt__tuning *t, uint64_t *size, uint64_t *valid) {
  kt__other_names other;
  kt__space *space;
  KT__FORWARD(kt__choice_stage_space(t, 0, t->cfg->defaults, &other, NULL, &space));
  /* The default must satisfy @where when it is the reference; otherwise it
   * is one configuration among others, and one @where leaves out. */
  kt__errbuf scratch;
  int rc = kt__space_check_default(space, t->k->file->src.path, reference_is_default(t) ? t->eb : &scratch);
  t->default_valid = rc == KT_OK;
  if (!reference_is_default(t)) rc = KT_OK;
  *size = kt__space_size(space);
  *valid = 0;
  if (rc == KT_OK && kt__tuner_config_faulted(t, t->cfg->defaults))
    rc = t->fault_rc; /* the reference, however large the space */
  if (rc == KT_OK) rc = sweep(t, space, 0, t->cfg->defaults, valid);
  if (rc == KT_OK && *valid == 0)
    rc = kt__space_none_valid(space, t->k->file->src.path, t->d->name, t->k->ctx->opts.labels.pin, t->eb);
  kt__space_free(space);
  return rc;
}

/* --autotune pins the space; the default still runs as the reference, but
 * outside the pinned space it must not win (the caller asked for B=8). */
void kt__choice_exclude_default_outside_pins(kt__tuning *t, const kt__space *space) {
  if (t->r->default_trial < 0) return;
  uint64_t index = kt__space_index_of(space, t->cfg->defaults);
  t->r->trials[t->r->default_trial].reference_only = index == UINT64_MAX || kt__space_valid_index(space, index) != 1;
}
