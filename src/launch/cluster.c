#include "cluster.h"

#include <string.h>

static bool env_get(const kt__env *env, const char *name, int64_t *out) {
  for (; env; env = env->parent)
    for (int i = 0; i < env->n; i++)
      if (strcmp(env->names[i], name) == 0) {
        *out = env->values[i];
        return true;
      }
  return false;
}

void kt__cluster_dims(const kt__env *env, uint64_t cluster[3]) {
  static const char *const names[3] = {"CLUSTER_X", "CLUSTER_Y", "CLUSTER_Z"};
  bool any = false;
  for (int i = 0; i < 3; i++) {
    int64_t v = 1;
    if (env_get(env, names[i], &v)) any = true;
    cluster[i] = v > 0 ? (uint64_t)v : 1;
  }
  if (!any) cluster[0] = cluster[1] = cluster[2] = 0;
}
