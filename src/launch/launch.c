#include "launch.h"

#include "args.h"
#include "cluster.h"
#include "tensormap.h"

int kt__launch_describe(const kt__kernel_decl *decl, const kt__config *config, const int64_t *values,
                        const kt__env *sizes, kt__arg *args, kt__launch *l, kt__errbuf *eb) {
  kt__env env = {.names = config->names, .values = values, .n = config->n, .parent = sizes};
  *l = (kt__launch){.args = args, .nargs = decl->nparams};
  KT__FORWARD(kt__launch_geometry(decl, &env, l->grid, l->block, &l->shared_bytes, eb));
  kt__cluster_dims(&env, l->cluster);
  for (int i = 0; i < decl->nparams; i++)
    if (decl->params[i].is_tensormap)
      KT__FORWARD(kt__tensormap_describe(decl, i, &env, &l->tensormaps[l->ntensormaps++], eb));
  for (int i = 0; args && i < decl->nparams; i++) {
    args[i] = (kt__arg){0};
    if (!decl->params[i].is_tensor && !decl->params[i].is_tensormap)
      KT__FORWARD(kt__scalar_value(decl, i, &env, args[i].scalar, &args[i].size, eb));
  }
  return KT_OK;
}
