/* Freeing and looking up the declarations the parser builds. */
#include "parser.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

void kt__param_free(kt__param *q) {
  free(q->name);
  for (int i = 0; i < q->ndims; i++) kt__expr_free(q->dims[i]);
  free(q->dims);
  kt__expr_free(q->value);
  kt__expr_free(q->random_lo);
  kt__expr_free(q->random_hi);
  free(q->file);
  free(q->map_of);
  for (int i = 0; i < q->nbox; i++) kt__expr_free(q->box[i]);
  free(q->box);
  kt__expr_free(q->swizzle);
}

static void tunedims_free(kt__tunedim *t, int n) {
  for (int i = 0; i < n; i++) {
    free(t[i].name);
    free(t[i].values);
  }
  free(t);
}

static void bindings_free(kt__binding *b, int n) {
  for (int i = 0; i < n; i++) {
    free(b[i].name);
    free(b[i].bucket);
    kt__expr_free(b[i].value);
  }
  free(b);
}

static void decl_free(kt__kernel_decl *k) {
  free(k->name);
  for (int i = 0; i < k->nparams; i++) kt__param_free(&k->params[i]);
  free(k->params);
  for (int i = 0; i < k->nconstants; i++) kt__param_free(&k->constants[i]);
  free(k->constants);
  tunedims_free(k->tune, k->ntune);
  tunedims_free(k->cluster, k->ncluster);
  for (int i = 0; i < k->nwhere; i++) kt__expr_free(k->where[i]);
  free(k->where);
  for (int i = 0; i < 3; i++) {
    kt__expr_free(k->grid[i]);
    kt__expr_free(k->block[i]);
  }
  bindings_free(k->dims, k->ndims);
  bindings_free(k->key, k->nkey);
  free(k->reference);
  free(k->check);
  kt__expr_free(k->shared);
  kt__expr_free(k->flops);
  kt__expr_free(k->bytes);
  for (int i = 0; i < k->nunknown; i++) free(k->unknown[i].name);
  free(k->unknown);
  for (int i = 0; i < k->nsizes; i++) free(k->sizes[i]);
  free(k->sizes);
  for (int i = 0; i < k->sig_nparams; i++) free(k->sig_names[i]);
  free(k->sig_names);
  free(k->sig_is_pointer);
  free(k->sig_is_const);
}

kt__file *kt__file_retain(kt__file *f) {
  if (f) atomic_fetch_add(&f->extra_holders, 1);
  return f;
}

void kt__file_free(kt__file *f) {
  if (!f || atomic_fetch_sub(&f->extra_holders, 1) > 0) return;
  for (int i = 0; i < f->nkernels; i++) decl_free(&f->kernels[i]);
  free(f->kernels);
  kt__source_free(&f->src);
  free(f);
}

static void list_kernels(const kt__file *f, kt__sbuf *b) {
  for (int i = 0; i < f->nkernels; i++) kt__sbuf_printf(b, "%s%s", i ? ", " : "", f->kernels[i].name);
}

const kt__kernel_decl *kt__file_kernel(const kt__file *f, const char *name, const char *label, kt__errbuf *eb) {
  if (f->nkernels == 0) {
    kt__err(eb, KT_INVALID,
            "%s: error: no annotated kernel in %s; add `// @kernel NAME(params)` and "
            "`// @autotune(...)` above the kernel function",
            f->src.path, f->src.path);
    return NULL;
  }
  if (!name && f->nkernels == 1) return &f->kernels[0];
  for (int i = 0; name && i < f->nkernels; i++)
    if (strcmp(f->kernels[i].name, name) == 0) return &f->kernels[i];
  kt__sbuf b = {0};
  list_kernels(f, &b);
  if (!name)
    kt__err(eb, KT_INVALID, "%s: error: several kernels in %s: %s; choose one with %s NAME", f->src.path, f->src.path,
            b.s, label);
  else
    kt__err(eb, KT_NOTFOUND, "%s: error: no kernel named '%s' in %s; its kernels: %s", f->src.path, name, f->src.path,
            b.s);
  kt__sbuf_free(&b);
  return NULL;
}

int kt__decl_size_index(const kt__kernel_decl *k, const char *name) {
  for (int i = 0; i < k->nsizes; i++)
    if (strcmp(k->sizes[i], name) == 0) return i;
  return -1;
}

/* Evaluates E unless it is absent; -1 with ERR and *WHAT = LABEL on failure. */
static int eval_part(const kt__expr *e, const kt__env *env, const char *label, kt__eval_error *err, const char **what) {
  int64_t v;
  if (!e || kt__expr_eval(e, env, &v, err) == 0) return 0;
  *what = label;
  return -1;
}

int kt__decl_check_config(const kt__kernel_decl *k, const kt__env *env, kt__eval_error *err, const char **what) {
  for (int i = 0; i < 3; i++)
    if (eval_part(k->grid[i], env, "@grid", err, what) || eval_part(k->block[i], env, "@block", err, what)) return -1;
  if (eval_part(k->shared, env, "@shared", err, what) || eval_part(k->flops, env, "@flops", err, what) ||
      eval_part(k->bytes, env, "@bytes", err, what))
    return -1;
  for (int i = 0; i < k->nparams; i++)
    if (eval_part(k->params[i].value, env, "@kernel", err, what)) return -1;
  return 0;
}
