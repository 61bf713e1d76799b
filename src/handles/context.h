/* The public handles (kt_context, kt_kernel) as the library sees them. */
#ifndef KT_CONTEXT_H
#define KT_CONTEXT_H

#include "../backend/backend.h"
#include "../config.h"
#include "../lang/parser.h"
#include "../store/store.h"

struct kt_context {
  kt_options opts;
  kt__errbuf err;
  kt__store *store; /* opened on first use; NULL with opts.no_db */
  bool store_failed;
  kt__bincache bincache; /* resolved once, at create; off: dir "" */
};

typedef struct kt__runtime_table kt__runtime_table;

struct kt_kernel {
  kt_context *ctx;
  kt__file *file;
  const kt__kernel_decl *decl;
  const kt__backend *backend;
  int64_t *sizes;       /* per decl->sizes */
  bool *size_given;     /* set through kt_kernel_set_size */
  kt__config config;    /* the names of its configurations, built once from decl */
  kt__config_pins pins; /* --autotune (kt_kernel_pin), over config's names */
  char source_hash[65];
  kt__runtime_table *runtime; /* kt_launch's in-memory winners */
  void *const *tune_args;     /* kt_launch tuning on a miss (CPU backend): the caller's
                                 host buffers, whose contents the tuner starts from; NULL
                                 otherwise */
};

/* Fills VALUES (decl->nsizes) from given sizes, else @dims, in order; an
 * unset size without a default is KT_INVALID naming it. */
int kt__kernel_resolve_sizes(kt_kernel *k, int64_t *values, kt__errbuf *eb);
/* The results database of the context (opened lazily); NULL when disabled
 * or when it cannot be opened (the reason is then in ctx->err). */
kt__store *kt__context_store(kt_context *ctx);
/* Canonical "M=1 N=2" of the key sizes. */
void kt__kernel_key_sizes(const kt_kernel *k, const int64_t *sizes, kt__sbuf *out);

#endif
