/* kt_context and kt_kernel: loading kernels, sizes, pins, errors. */
#include "context.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bincache/bincache.h"
#include "../hash.h"
#include "../lang/expr.h"
#include "../search/replay.h"
#include "../space/space.h"
#include "../store/cache.h"
#include "../t1/t1.h"
#include "runtime_table.h"

int kt_version_number(void) { return KTUNE_VERSION_NUMBER; }

size_t kt_struct_size(const char *name) {
  static const struct {
    const char *name;
    size_t size;
  } sizes[] = {{"kt_options", sizeof(kt_options)},
               {"kt_tune_options", sizeof(kt_tune_options)},
               {"kt_labels", sizeof(kt_labels)},
               {"kt_cache_filter", sizeof(kt_cache_filter)},
               {"kt_param_info", sizeof(kt_param_info)}};
  for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
    if (strcmp(sizes[i].name, name) == 0) return sizes[i].size;
  return 0;
}
const char *kt_version(void) { return KTUNE_VERSION_STRING; }

static const struct {
  int code;
  const char *name, *text;
} errors[] = {{KT_OK, "KT_OK", "success"},
#define KT_ERR_INFO_(name, code, text) {code, "KT_" #name, text},
              KT_ERRNO_MAP(KT_ERR_INFO_)
#undef KT_ERR_INFO_
};

const char *kt_err_name(int err) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == err) return errors[i].name;
  return "KT_UNKNOWN";
}

const char *kt_strerror(int err) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == err) return errors[i].text;
  return "unknown error";
}

int kt_exit_status(int err) {
  switch (err) {
  case KT_OK: return 0;
  case KT_INVALID:
  case KT_NOTFOUND:
  case KT_NOBACKEND:
  case KT_STORE: return 2;
  case KT_INTERRUPTED: return 130;
  default: return 1;
  }
}

/* The environment, read once (envvars.h): a bad value of any variable is
 * refused here, where it can still be reported; limits the caller left at 0
 * come from it when set there. */
static int limits_from_env(kt_context *ctx) {
  char msg[1024];
  if (!kt__envvars_resolve(&ctx->env, msg, sizeof msg)) return kt__err(&ctx->err, KT_INVALID, "%s", msg);
  const kt__envvar *v = ctx->env.v;
  kt_options *o = &ctx->opts;
  if (o->compile_timeout_s <= 0 && v[KT__ENV_COMPILE_TIMEOUT].set)
    o->compile_timeout_s = v[KT__ENV_COMPILE_TIMEOUT].seconds;
  if (o->run_timeout_s <= 0 && v[KT__ENV_RUN_TIMEOUT].set) o->run_timeout_s = v[KT__ENV_RUN_TIMEOUT].seconds;
  if (o->binary_cache_max_bytes == 0 && v[KT__ENV_BINARY_CACHE_MAX].set)
    o->binary_cache_max_bytes = v[KT__ENV_BINARY_CACHE_MAX].bytes;
  if (o->max_tensor_bytes == 0 && v[KT__ENV_MAX_TENSOR_MEMORY].set)
    o->max_tensor_bytes = v[KT__ENV_MAX_TENSOR_MEMORY].bytes;
  return KT_OK;
}

/* The library's own words for the inputs the caller left unlabelled. */
static void default_labels(kt_labels *l) {
  if (!l->kernel) l->kernel = "the name";
  if (!l->size) l->size = "size";
  if (!l->pin) l->pin = "pins";
  if (!l->db) l->db = "kt_options.db_path";
  if (!l->input) l->input = "input";
  if (!l->expect) l->expect = "expected output";
  if (!l->check) l->check = "check";
}

int kt_context_create(const kt_options *opts, kt_context **out) {
  kt_context *ctx = kt__xcalloc(1, sizeof *ctx);
  if (opts) ctx->opts = *opts;
  default_labels(&ctx->opts.labels);
  *out = ctx;
  KT__FORWARD(limits_from_env(ctx));
  const kt_options *o = &ctx->opts;
  return kt__bincache_resolve(o->binary_cache, o->no_binary_cache, o->binary_cache_max_bytes, &ctx->bincache,
                              &ctx->err);
}

int kt_binary_cache_path(kt_context *ctx, char *buf, size_t len) {
  KT__RETURN_IF(!kt__bincache_on(&ctx->bincache), &ctx->err, KT_NOTFOUND, "the binary cache is %s",
                ctx->bincache.off_reason ? ctx->bincache.off_reason : "off");
  KT__RETURN_IF(strlen(ctx->bincache.dir) >= len, &ctx->err, KT_INVALID, "the binary cache's path is too long");
  snprintf(buf, len, "%s", ctx->bincache.dir);
  return KT_OK;
}

int kt_binary_cache_clear(kt_context *ctx, FILE *out) {
  char dir[sizeof ctx->bincache.dir];
  KT__FORWARD(kt_binary_cache_path(ctx, dir, sizeof dir));
  uint64_t files, bytes;
  KT__FORWARD(kt__bincache_clear(dir, &files, &bytes, &ctx->err));
  if (out)
    fprintf(out, "removed %llu compiled binaries (%.1f MiB) from %s\n", (unsigned long long)files,
            (double)bytes / (1 << 20), dir);
  return KT_OK;
}

void kt_context_destroy(kt_context *ctx) {
  if (!ctx) return;
  kt__store_close(ctx->store);
  kt__envvars_free(&ctx->env);
  free(ctx);
}

const char *kt_errmsg(const kt_context *ctx) { return ctx ? ctx->err.msg : ""; }

kt__store *kt__context_store(kt_context *ctx) {
  if (ctx->opts.no_db || ctx->store_failed) return NULL;
  if (!ctx->store && kt__store_open(ctx->opts.db_path, ctx->opts.labels.db, &ctx->store, &ctx->err) != KT_OK) {
    ctx->store_failed = true;
    return NULL;
  }
  return ctx->store;
}

/* ---- the results database's commands and replay, on a context ---- */

int kt_cache_path(kt_context *ctx, char *buf, size_t len) { return kt__cache_path(&ctx->opts, buf, len, &ctx->err); }

int kt_cache_list(kt_context *ctx, const kt_cache_filter *f, int json, FILE *out) {
  return kt__cache_list(&ctx->opts, f, json, out, &ctx->err);
}

int kt_cache_show(kt_context *ctx, const kt_cache_filter *f, const char *format, FILE *out) {
  return kt__cache_show(&ctx->opts, f, format, out, &ctx->err);
}

int kt_cache_export(kt_context *ctx, const kt_cache_filter *f, const char *format, FILE *out) {
  return kt__cache_export(&ctx->opts, f, format, out, &ctx->err);
}

int kt_cache_import(kt_context *ctx, const char *path, FILE *out) {
  return kt__cache_import(&ctx->opts, path, out, &ctx->err);
}

int kt_cache_clear(kt_context *ctx, const kt_cache_filter *f, FILE *out) {
  return kt__cache_clear(&ctx->opts, f, out, &ctx->err);
}

int kt_replay(kt_context *ctx, const char *path, const char *strategy, long budget, int repeats, uint64_t seed,
              const char *const *warm, int nwarm, int json, FILE *out) {
  return kt__replay_report(path, strategy, budget, INFINITY, repeats, seed, warm, nwarm, json, out, &ctx->err);
}

int kt_replay_seconds(kt_context *ctx, const char *path, const char *strategy, double seconds, int repeats,
                      uint64_t seed, const char *const *warm, int nwarm, int json, FILE *out) {
  if (!(seconds > 0 && isfinite(seconds)))
    return kt__err(&ctx->err, KT_INVALID, "kt_replay_seconds: the budget must be a positive number of seconds");
  return kt__replay_report(path, strategy, 0, seconds, repeats, seed, warm, nwarm, json, out, &ctx->err);
}

const char *kt_backend_name(int kind) {
  const kt__backend *be = kt__backend_of(kind);
  return be ? be->name : NULL;
}

/* The backend: the one IMPLIED by the file's extension unless the user named
 * one, which must then read the file's language (a .c file cannot run on
 * CUDA). */
static int backend_for(kt_context *ctx, const kt__file *f, const kt__backend *implied, const kt__backend **out) {
  *out = ctx->opts.backend == KT_BACKEND_AUTO ? implied : kt__backend_of(ctx->opts.backend);
  if ((*out)->lang != f->lang)
    return kt__err(&ctx->err, KT_INVALID,
                   "%s: error: the %s backend cannot run this file's language (it needs the %s backend); "
                   "choose the %s backend or a %s file",
                   f->src.path, (*out)->name, implied->name, implied->name, (*out)->extensions[0]);
  return KT_OK;
}

static int kernel_from_file(kt_context *ctx, kt__file *f, const kt__backend *implied, const char *name,
                            kt_kernel **out) {
  const kt__kernel_decl *decl = kt__file_kernel(f, name, ctx->opts.labels.kernel, &ctx->err);
  const kt__backend *be = NULL;
  if (!decl || backend_for(ctx, f, implied, &be) != KT_OK) {
    kt__file_free(f);
    return decl ? KT_INVALID : KT_NOTFOUND;
  }
  kt_kernel *k = kt__xcalloc(1, sizeof *k);
  k->ctx = ctx;
  k->file = f;
  k->decl = decl;
  k->backend = be;
  k->sizes = kt__xcalloc((size_t)decl->nsizes + 1, sizeof *k->sizes);
  k->size_given = kt__xcalloc((size_t)decl->nsizes + 1, sizeof *k->size_given);
  kt__hash_text(f->src.text, f->src.len, k->source_hash);
  kt__config_init(&k->config, decl);
  kt__config_pins_init(&k->pins, k->config.n);
  int rc = kt__kernel_data_init(k);
  if (rc != KT_OK) {
    kt_kernel_destroy(k);
    return rc;
  }
  *out = k;
  return KT_OK;
}

/* Notes (unknown attributes) and warnings go to stderr unless quiet. */
static void report_diag(kt_context *ctx, kt__diag *d) {
  if (d->notes.len && !ctx->opts.quiet) fputs(d->notes.s, stderr);
}

int kt_kernel_load_file(kt_context *ctx, const char *path, const char *name, kt_kernel **out) {
  *out = NULL;
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_file(path, -1, &d, &ctx->err);
  report_diag(ctx, &d);
  if (!f) {
    if (d.nerrors) kt__err(&ctx->err, KT_INVALID, "%s", d.errors.s);
    kt__diag_free(&d);
    return KT_INVALID;
  }
  kt__diag_free(&d);
  const kt__backend *implied = kt__backend_for_path(path);
  return kernel_from_file(ctx, f, implied ? implied : kt__backend_for_lang(f->lang), name, out);
}

/* The backend whose first extension, without its dot, is LANG ("cu"). */
static const kt__backend *backend_named_by_extension(const char *lang) {
  const kt__backend *be;
  for (int k = KT_BACKEND_AUTO + 1; (be = kt__backend_of(k)); k++)
    if (strcmp(be->extensions[0] + 1, lang) == 0) return be;
  return NULL;
}

/* "\"c\", \"cl\" or \"cu\"": the LANG values kt_kernel_load_string takes. */
static void languages_taken(kt__sbuf *b) {
  const kt__backend *be;
  for (int k = KT_BACKEND_AUTO + 1; (be = kt__backend_of(k)); k++)
    kt__sbuf_printf(b, "%s\"%s\"",
                    k == KT_BACKEND_AUTO + 1 ? ""
                    : kt__backend_of(k + 1)  ? ", "
                                             : " or ",
                    be->extensions[0] + 1);
}

int kt_kernel_load_string(kt_context *ctx, const char *label, const char *source, const char *lang, const char *name,
                          kt_kernel **out) {
  *out = NULL;
  const kt__backend *implied = lang ? backend_named_by_extension(lang) : kt__backend_for_lang(KT__LANG_C);
  if (!implied) {
    kt__sbuf taken = {0};
    languages_taken(&taken);
    kt__err(&ctx->err, KT_INVALID, "unknown kernel language \"%s\": use %s", lang, taken.s);
    kt__sbuf_free(&taken);
    return KT_INVALID;
  }
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string(label ? label : "<string>", source, implied->lang, &d);
  report_diag(ctx, &d);
  if (!f) {
    kt__err(&ctx->err, KT_INVALID, "%s", d.errors.s ? d.errors.s : "parse error");
    kt__diag_free(&d);
    return KT_INVALID;
  }
  kt__diag_free(&d);
  return kernel_from_file(ctx, f, implied, name, out);
}

int kt_kernel_load_t1(kt_context *ctx, const char *t1_path, kt_kernel **out) {
  *out = NULL;
  kt__t1 t;
  int rc = kt__t1_translate(t1_path, &t, &ctx->err);
  if (!ctx->opts.quiet && t.notes) fputs(t.notes, stderr);
  if (rc == KT_OK && !ctx->opts.quiet)
    fprintf(stderr, "%s: note: %s as annotations:\n%s", t1_path, t.kernel_name, t.annotations);
  if (rc == KT_OK) rc = kt_kernel_load_string(ctx, t.kernel_path, t.source, t.lang, t.kernel_name, out);
  kt__t1_free(&t);
  return rc;
}

void kt_kernel_destroy(kt_kernel *k) {
  if (!k) return;
  kt__runtime_free(k->runtime);
  kt__kernel_data_free(k); /* reads the declaration: before the file that holds it */
  kt__file_free(k->file);
  free(k->sizes);
  free(k->size_given);
  kt__config_free(&k->config);
  kt__config_pins_free(&k->pins);
  free(k);
}

const char *kt_kernel_name(const kt_kernel *k) { return k->decl->name; }
const char *kt_kernel_backend(const kt_kernel *k) { return k->backend->name; }
kt_memory_kind kt_kernel_memory(const kt_kernel *k) { return k->backend->memory; }
int kt_kernel_num_sizes(const kt_kernel *k) { return k->decl->nsizes; }
const char *kt_kernel_size_name(const kt_kernel *k, int i) {
  return i >= 0 && i < k->decl->nsizes ? k->decl->sizes[i] : NULL;
}

static void list_sizes(const kt__kernel_decl *d, kt__sbuf *b) {
  for (int i = 0; i < d->nsizes; i++) kt__sbuf_printf(b, "%s%s", i ? ", " : "", d->sizes[i]);
  if (d->nsizes == 0) kt__sbuf_printf(b, "(none)");
}

int kt_kernel_set_size(kt_kernel *k, const char *name, int64_t value) {
  const char *label = k->ctx->opts.labels.size;
  int i = kt__decl_size_index(k->decl, name);
  if (i < 0) {
    kt__sbuf b = {0};
    list_sizes(k->decl, &b);
    kt__err(&k->ctx->err, KT_INVALID, "%s %s: kernel %s has no runtime size %s; its sizes are: %s", label, name,
            k->decl->name, name, b.s);
    kt__sbuf_free(&b);
    return KT_INVALID;
  }
  if (value <= 0)
    return kt__err(&k->ctx->err, KT_INVALID, "%s %s=%lld: sizes must be positive", label, name, (long long)value);
  k->sizes[i] = value;
  k->size_given[i] = true;
  return KT_OK;
}

int kt_kernel_set_size_arg(kt_kernel *k, const char *arg) {
  const char *label = k->ctx->opts.labels.size;
  kt__config_item it;
  if (!kt__config_split(arg, &it))
    return kt__err(&k->ctx->err, KT_INVALID, "%s \"%s\": expected NAME=VALUE, e.g. %s N=4096", label, arg, label);
  char *name = kt__xstrndup(it.text, it.name_len);
  kt__diag d;
  kt__source src;
  kt__source_from_string(label, it.value, &src);
  kt__diag_init(&d, &src);
  kt__expr *e = kt__expr_parse_text(it.value, (kt__loc){1, 1}, &d);
  int64_t v = 0;
  kt__eval_error ee;
  int rc = KT_OK;
  if (!e) rc = kt__err(&k->ctx->err, KT_INVALID, "%s %s: bad value\n%s", label, arg, d.errors.s ? d.errors.s : "");
  else if (kt__expr_eval(e, &(kt__env){0}, &v, &ee) != 0)
    rc = kt__err(&k->ctx->err, KT_INVALID, "%s %s: %s", label, arg, ee.msg);
  else rc = kt_kernel_set_size(k, name, v);
  kt__expr_free(e);
  kt__diag_free(&d);
  kt__source_free(&src);
  free(name);
  return rc;
}

/* The spec is parsed once, here, against every tuned name of both stages,
 * before anything runs; each stage's space takes its part (kt__config_pins_stage). */
int kt_kernel_pin(kt_kernel *k, const char *spec) {
  if (!spec || !*spec) {
    memset(k->pins.set, 0, (size_t)k->config.n * sizeof *k->pins.set);
    return KT_OK;
  }
  int rc = kt__config_parse_pins(k->config.names, k->config.n, spec, k->ctx->opts.labels.pin, &k->pins, &k->ctx->err);
  if (rc != KT_OK) {
    char msg[sizeof k->ctx->err.msg];
    snprintf(msg, sizeof msg, "%s", k->ctx->err.msg);
    kt__err(&k->ctx->err, rc, "%s: error: kernel %s: %s", k->file->src.path, k->decl->name, msg);
  }
  return rc;
}

static int sizes_from_dims(kt_kernel *k, int64_t *values, const bool *bound, kt__errbuf *eb);

int kt__kernel_resolve_sizes(kt_kernel *k, int64_t *values, kt__errbuf *eb) {
  const kt__kernel_decl *d = k->decl;
  bool *bound = kt__xcalloc((size_t)d->nsizes + 1, sizeof *bound);
  for (int i = 0; i < d->nsizes; i++)
    if ((bound[i] = k->size_given[i])) values[i] = k->sizes[i];
  int rc = kt__kernel_bind_file_sizes(k, values, bound, eb);
  if (rc == KT_OK) rc = sizes_from_dims(k, values, bound, eb);
  free(bound);
  return rc;
}

/* The sizes still unbound take their @dims value, in order (a @dims value
 * may use the sizes before it). */
static int sizes_from_dims(kt_kernel *k, int64_t *values, const bool *bound, kt__errbuf *eb) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nsizes; i++) {
    if (bound[i]) continue;
    const kt__binding *def = NULL;
    for (int j = 0; j < d->ndims; j++)
      if (strcmp(d->dims[j].name, d->sizes[i]) == 0) def = &d->dims[j];
    if (!def)
      return kt__err(eb, KT_INVALID,
                     "%s: error: runtime size %s of kernel %s has no value: pass %s %s=VALUE "
                     "or declare @dims(%s = ...)%s",
                     k->file->src.path, d->sizes[i], d->name, k->ctx->opts.labels.size, d->sizes[i], d->sizes[i],
                     kt__kernel_has_files(k) ? " (no data file's shape gives it)" : "");
    kt__env env = {(const char *const *)d->sizes, values, i, NULL};
    kt__eval_error ee;
    if (kt__expr_eval(def->value, &env, &values[i], &ee) != 0)
      return kt__err(eb, KT_INVALID, "%s:%d:%d: error: @dims(%s): %s", k->file->src.path, ee.loc.line, ee.loc.col,
                     def->name, ee.msg);
    if (values[i] <= 0)
      return kt__err(eb, KT_INVALID, "%s:%d:%d: error: @dims(%s) is %lld; sizes must be positive", k->file->src.path,
                     def->loc.line, def->loc.col, def->name, (long long)values[i]);
  }
  return KT_OK;
}

/* @key(N = pow2) buckets a size: the key holds the next power of two, so
 * that every new length does not force a new tuning. A bucket covers its
 * sizes: past 2^62 no power of two fits in the type, and the size keys
 * itself. */
static int64_t bucket(const char *how, int64_t v) {
  if (!how || strcmp(how, "pow2") != 0 || v > (INT64_C(1) << 62)) return v;
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

void kt__kernel_key_sizes(const kt_kernel *k, const int64_t *sizes, kt__sbuf *out) {
  const kt__kernel_decl *d = k->decl;
  const char **names = kt__xcalloc((size_t)d->nsizes + 1, sizeof *names);
  int64_t *values = kt__xcalloc((size_t)d->nsizes + 1, sizeof *values);
  int n = 0;
  for (int i = 0; i < d->nsizes; i++) {
    const kt__binding *b = NULL;
    for (int j = 0; j < d->nkey; j++)
      if (strcmp(d->key[j].name, d->sizes[i]) == 0) b = &d->key[j];
    if (d->has_key && !b) continue;
    names[n] = d->sizes[i];
    values[n++] = bucket(b ? b->bucket : NULL, sizes[i]);
  }
  kt__config_format(names, values, n, "", out);
  free(names);
  free(values);
}

kt__store_key kt__kernel_store_key(const kt_kernel *k, const int64_t *sizes, const kt__device_info *device,
                                   kt__sbuf *key_sizes) {
  kt__kernel_key_sizes(k, sizes, key_sizes);
  return (kt__store_key){k->source_hash, k->decl->name, device, key_sizes->s, NULL};
}

int kt_kernel_key_sizes(kt_kernel *k, char *buf, size_t len) {
  int64_t *values = kt__xcalloc((size_t)k->decl->nsizes + 1, sizeof *values);
  int rc = kt__kernel_resolve_sizes(k, values, &k->ctx->err);
  kt__sbuf key = {0};
  if (rc == KT_OK) kt__kernel_key_sizes(k, values, &key);
  const char *text = key.s ? key.s : "";
  if (rc == KT_OK && strlen(text) >= len)
    rc =
        kt__err(&k->ctx->err, KT_INVALID, "the key sizes of %s (%s) do not fit in %zu bytes", k->decl->name, text, len);
  if (rc == KT_OK) memcpy(buf, text, strlen(text) + 1);
  kt__sbuf_free(&key);
  free(values);
  return rc;
}
