/* Real data and how outputs are judged: the --input and --expect files
 * checked against their tensors, the check that judges outputs (a callback,
 * --check's file or @check), and which outputs are compared with what. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Every data file against its tensor's evaluated shape and type, before
 * anything is written or run. */
int kt__judging_check_files(kt__tuning *t) {
  kt_kernel *k = t->k;
  const kt_labels *l = &k->ctx->opts.labels;
  for (int i = 0; i < t->args->ntensors; i++) {
    const kt__host_tensor *ht = &t->args->tensors[i];
    if (k->inputs[ht->param].path)
      KT__FORWARD(kt__kernel_check_file(k, ht->param, &k->inputs[ht->param], ht->shape, ht->ndims, l->input, t->eb));
    if (k->expects[ht->param].path)
      KT__FORWARD(kt__kernel_check_file(k, ht->param, &k->expects[ht->param], ht->shape, ht->ndims, l->expect, t->eb));
  }
  return KT_OK;
}

/* -D flags for compiling a check: every tuned name of the kernel's file at
 * its first choice (kt__reference_defines). */
static int default_defines(const kt__tuning *t, char (*defs)[96], const char **words) {
  const char *names[KT__MAX_NAMES];
  int64_t values[KT__MAX_NAMES];
  int n = kt__reference_defines(t, NULL, names, values);
  for (int i = 0; i < n; i++) {
    snprintf(defs[i], sizeof defs[i], "-D%s=%lld", names[i], (long long)values[i]);
    words[i] = defs[i];
  }
  return n;
}

/* The check that judges outputs: the caller's callback, else --check's
 * file, else @check's function in the kernel's own file (cpu backend). */
static int build_check(kt__tuning *t) {
  kt_kernel *k = t->k;
  if (t->o.check) {
    t->check = (kt__check){.fn = t->o.check, .user = t->o.check_data, .source = kt__xstrdup("kt_tune_options.check")};
  } else if (k->check_path || t->d->check) {
    /* The check's file may be the kernel's own (or include it): the tuned
     * names are defined at their first choices. */
    char defs[KT__MAX_NAMES][96];
    const char *words[KT__MAX_NAMES];
    int n = default_defines(t, defs, words);
    const char *path = k->check_path ? k->check_path : k->file->src.path;
    KT__FORWARD(kt__check_build(path, k->check_path ? k->check_fn : t->d->check, words, n, t->workdir,
                                kt__tuning_compile_timeout(t), &t->check, t->eb));
  } else {
    return KT_OK;
  }
  t->has_check = true;
  return KT_OK;
}

/* Which outputs are compared with what. The reference is, in order: the
 * --expect files (only the outputs they name are compared), the @reference
 * kernel's outputs, else the default configuration's. A check decides
 * alone, shown the reference where there is one other than the default. */
int kt__judging_plan(kt__tuning *t) {
  kt_kernel *k = t->k;
  bool expect = false;
  for (int i = 0; i < t->d->nparams; i++) expect |= k->expects[i].path != NULL;
  if (expect && k->reference)
    return kt__err(t->eb, KT_INVALID,
                   "%s:%d:%d: error: both %s files and @reference(%s) give the expected outputs; keep one of them",
                   k->file->src.path, t->d->reference_loc.line, t->d->reference_loc.col, k->ctx->opts.labels.expect,
                   t->d->reference);
  KT__FORWARD(build_check(t));
  for (int i = 0; i < t->args->ntensors; i++) {
    kt__host_tensor *ht = &t->args->tensors[i];
    if (ht->mode == KT__MODE_IN) continue;
    const kt__param *p = &t->d->params[ht->param];
    if (ht->shape_tuned && !t->has_check)
      return kt__err(t->eb, KT_INVALID,
                     "%s:%d:%d: error: the shape of %s uses tuned names, so its content depends on the configuration "
                     "and no reference compares like with like: give a check that judges it (%s FILE.c:FN, "
                     "@check(FN) in a cpu kernel's file, or kt_tune_options.check)",
                     k->file->src.path, p->loc.line, p->loc.col, p->name, k->ctx->opts.labels.check);
    ht->reference_set = expect ? k->expects[ht->param].path != NULL : k->reference ? true : !t->has_check;
    ht->compared = ht->reference_set && !t->has_check;
  }
  t->default_is_reference = !expect && !k->reference && !t->has_check;
  return KT_OK;
}
