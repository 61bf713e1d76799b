/* Whether a configuration is one of the kernel's current space: a stored
 * winner comes from a database that anyone may have imported into, and a
 * source edited since may have narrowed its choices, so kt_launch asks this
 * before it launches one (docs/FAULTS.md, "stored winners"). */
#include "context.h"

#include "../space/space.h"

/* The configuration's values from FIRST on, COUNT of them, among the
 * choices of DIMS and (WHERE, NWHERE) true over ENV: the space of one stage. */
static bool stage_member(const kt__tunedim *dims, int count, kt__expr *const *where, int nwhere, const kt__env *env,
                         const int64_t *values) {
  if (count == 0) return true;
  kt__space *s;
  kt__errbuf eb;
  if (kt__space_create(dims, count, where, nwhere, env, &s, &eb) != KT_OK) return false;
  uint64_t index = kt__space_index_of(s, values);
  bool member = index != UINT64_MAX && kt__space_valid_index(s, index) == 1;
  kt__space_free(s);
  return member;
}

bool kt__kernel_config_in_space(const kt_kernel *k, const int64_t *sizes, const int64_t *values) {
  const kt__kernel_decl *d = k->decl;
  const kt__config *cfg = &k->config;
  kt__env size_env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  int tune = kt__config_stage_first(cfg, 0), cluster = kt__config_stage_first(cfg, 1);
  /* @where sees the @cluster names as they are in this configuration. */
  kt__env with_cluster = {cfg->names + cluster, values + cluster, kt__config_stage_count(cfg, 1), &size_env};
  return stage_member(d->tune, d->ntune, d->where, d->nwhere, &with_cluster, values + tune) &&
         stage_member(d->cluster, d->ncluster, NULL, 0, &size_env, values + cluster);
}
