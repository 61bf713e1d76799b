/* The public handles (kt_context, kt_kernel) as the library sees them. */
#ifndef KT_CONTEXT_H
#define KT_CONTEXT_H

#include "../backend/backend.h"
#include "../config.h"
#include "../data/datafile.h"
#include "../envvars.h"
#include "../lang/parser.h"
#include "../store/store.h"

struct kt_context {
  kt_options opts;
  kt__errbuf err;
  kt__store *store; /* opened on first use; NULL with opts.no_db */
  bool store_failed;
  kt__bincache bincache; /* resolved once, at create; off: dir "" */
  kt__envvars env;       /* the environment, resolved once, at create (envvars.h) */
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
  /* kt_launch's in-memory winners: made once (runtime.c, rt_table) and read
   * by launches in any thread. */
  _Atomic(kt__runtime_table *) runtime;
  /* Real data (kernel_data.c), per decl->params: where a tensor's initial
   * content comes from (file("...") in @kernel, else kt_kernel_set_input)
   * and its expected content (kt_kernel_set_expect); path NULL: none. */
  kt__data_source *inputs, *expects;
  char *check_path, *check_fn;      /* kt_kernel_set_check; NULL: none */
  const kt__kernel_decl *reference; /* @reference's kernel, checked to match; NULL: none */
};

/* kernel_data.c: the kernel's data files and references. */
int kt__kernel_data_init(kt_kernel *k);
void kt__kernel_data_free(kt_kernel *k);
bool kt__kernel_has_files(const kt_kernel *k);
/* Binds the sizes not BOUND yet from the shapes of the data files (inputs,
 * then expected outputs); every file agreeing. Sets BOUND for those. */
int kt__kernel_bind_file_sizes(kt_kernel *k, int64_t *values, bool *bound, kt__errbuf *eb);
/* Checks that the data file of tensor parameter P (SRC) holds the
 * declared type and the shape SHAPE (the evaluated dims), naming both. */
int kt__kernel_check_file(const kt_kernel *k, int p, const kt__data_source *src, const uint64_t *shape, int ndims,
                          const char *label, kt__errbuf *eb);

/* Fills VALUES (decl->nsizes) from given sizes, else @dims, in order; an
 * unset size without a default is KT_INVALID naming it. */
int kt__kernel_resolve_sizes(kt_kernel *k, int64_t *values, kt__errbuf *eb);
/* The results database of the context (opened lazily); NULL when disabled
 * or when it cannot be opened (the reason is then in ctx->err). */
kt__store *kt__context_store(kt_context *ctx);
/* space_member.c: whether VALUES (every stage's names, as k->config) is a
 * configuration of the kernel's current space at SIZES (per decl->sizes):
 * each value among its name's choices and every @where true. */
bool kt__kernel_config_in_space(const kt_kernel *k, const int64_t *sizes, const int64_t *values);
/* Canonical "M=1 N=2" of the key sizes. */
void kt__kernel_key_sizes(const kt_kernel *k, const int64_t *sizes, kt__sbuf *out);
/* K's results key at SIZES on DEVICE; its sizes text is built in KEY_SIZES
 * (the caller frees it, and keeps it while the key is used). */
kt__store_key kt__kernel_store_key(const kt_kernel *k, const int64_t *sizes, const kt__device_info *device,
                                   kt__sbuf *key_sizes);

#endif
