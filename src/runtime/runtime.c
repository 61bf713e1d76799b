/* kt_launch: launch the stored winner for a shape with next to no overhead.
 *
 * The hot path is one hash lookup of the sizes in an in-memory table, then
 * the backend's launch: no allocation, no parsing, no SQLite (the argument
 * array lives on the stack, the geometry was evaluated when the shape was
 * first seen). A miss (a shape not seen by this kernel handle) finds the
 * winner in the results database, or applies the context's miss policy
 * (tune now in the helper process, tune there in the background while the
 * fallback runs, nearest stored size, or the default), compiles and loads
 * that configuration in this process unless another shape already loaded
 * it, and adds the shape to the table. An entry whose tuning runs in the
 * background switches to the winner on the first call after it is stored
 * (rt_adopt): until then and afterwards, one atomic load per call. Under
 * KT_MISS_ONLINE the entry adopted is one whose calls time the helper's
 * verified configurations on the caller's data (rt_online, online.h) until
 * the winner's entry is adopted in turn.
 *
 * A kernel handle's table is not locked: concurrent kt_launch calls on one
 * handle are safe only when every shape involved was launched before
 * (misses write the table); threads that launch new shapes use their own
 * handles or serialise. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#include "../handles/context.h"
#include "../handles/runtime_table.h"
#include "../launch/constants.h"
#include "../launch/launch.h"
#include "../workdir.h"
#include "miss_job.h"
#include "online.h"
#include "runtime.h"
#include "tune_request.h"

/* ---- the hot path ----------------------------------------------------- */

/* The caller's ARGS as the backend takes them, into ARGV. */
static void fill_args(const kt__runtime_table *t, void *const *args, kt__arg *argv) {
  for (int i = 0; i < t->nparams; i++) {
    kt__arg *a = &argv[i];
    a->size = t->scalar_size[i];
    a->is_tensor = a->size == 0;
    a->buf = a->is_tensor ? args[i] : NULL;
    memset(a->scalar, 0, sizeof a->scalar);
    if (!a->is_tensor) memcpy(a->scalar, args[i], a->size);
  }
}

static int rt_run(kt_kernel *k, const kt__rt_entry *e, void *const *args, void *stream) {
  const kt__runtime_table *t = k->runtime;
  kt__arg argv[KT__RT_MAX_ARGS];
  fill_args(t, args, argv);
  kt__launch l = e->launch;
  l.args = argv;
  l.stream = stream;
  kt__status st = kt__be_run(t->be, t->state, e->fn, &l, &k->ctx->err);
  return st == KT__ST_OK ? KT_OK : KT_INTERNAL;
}

/* ---- stored configurations -------------------------------------------- */

/* The value of size WANT names in a "M=1 N=2" size string, or -1. */
static double size_value(const char *sizes, const kt__config_item *want) {
  kt__config_item it;
  int64_t v;
  for (const char *p = sizes; kt__config_next(&p, &it);)
    if (it.name_len == want->name_len && memcmp(it.text, want->text, it.name_len) == 0)
      return kt__config_item_int(&it, &v) ? (double)v : -1;
  return -1;
}

/* Distance between two "M=1 N=2" size strings: the sum over sizes of
 * |log2 ratio|, so that 1024 is as near to 512 as to 2048. */
static double size_distance(const char *a, const char *b) {
  double dist = 0;
  kt__config_item it;
  int64_t v;
  for (const char *p = a; kt__config_next(&p, &it);) {
    double va = kt__config_item_int(&it, &v) ? (double)v : -1, vb = size_value(b, &it);
    dist += va > 0 && vb > 0 ? fabs(log2(va / vb)) : 64;
  }
  return dist;
}

typedef struct nearest {
  const char *want;
  double best;
  char *sizes, *config;
} nearest;

static void consider_nearest(void *ud, const char *sizes, const char *config, double seconds) {
  nearest *n = ud;
  double dist = size_distance(n->want, sizes);
  if (dist < n->best) {
    n->best = dist;
    free(n->sizes);
    free(n->config);
    n->sizes = kt__xstrdup(sizes);
    n->config = kt__xstrdup(config);
  }
}

/* A stored configuration CONFIG into VALUES when it is one of the current
 * source's space at SIZES (a database can hold rows imported from anywhere,
 * and a winner of an older space); else VALUES keeps the defaults and HOW
 * says why it was passed over. */
static bool read_stored(const kt_kernel *k, const int64_t *sizes, const char *config, int64_t *values, kt__sbuf *how) {
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__config_read(&k->config, config, values);
  if (kt__kernel_config_in_space(k, sizes, values)) return true;
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__sbuf_printf(how, "stored [%s] passed over: not a configuration of the kernel's space; ", config);
  return false;
}

/* The nearest stored size's winner into VALUES; false when none, or when
 * it is no configuration of the current space. */
static bool use_nearest(kt__store *store, const kt__store_key *key, const kt_kernel *k, const int64_t *sizes,
                        int64_t *values, kt__sbuf *how) {
  nearest n = {key->sizes, INFINITY, NULL, NULL};
  kt__errbuf eb;
  if (store) kt__store_each_winner(store, key, consider_nearest, &n, &eb);
  bool used = n.config && read_stored(k, sizes, n.config, values, how);
  if (used) kt__sbuf_printf(how, "nearest stored size [%s]", n.sizes);
  free(n.sizes);
  free(n.config);
  return used;
}

/* The fallback of a miss that does not tune (now): the nearest stored
 * size's winner unless the policy is KT_MISS_DEFAULT, else the default. */
static void use_fallback(kt__store *store, const kt__store_key *key, kt_kernel *k, const int64_t *sizes,
                         int64_t *values, kt__sbuf *how) {
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  if (k->ctx->opts.miss_policy == KT_MISS_DEFAULT || !use_nearest(store, key, k, sizes, values, how))
    kt__sbuf_printf(how, "default configuration");
}

static void release_job(void *job) { kt__miss_job_release(job); }
static void release_online(void *online) { kt__online_free(online); }

/* What names a tuning across threads and processes: the database, the
 * kernel (its source's hash and name), the device and the key sizes. */
static void tuning_name(kt_kernel *k, kt__store *store, const kt__store_key *key, kt__sbuf *out) {
  kt__sbuf_printf(out, "%s|%s|%s|%s/%d/%s|%s", store ? kt__store_path(store) : "", key->source_hash, key->kernel,
                  key->device->backend, key->device->index, key->device->name, key->sizes);
}

/* The backend and device of K's tunings, for a warm helper (into OUT);
 * NULL when K's tunings do not go to one: a warm helper's later tunings
 * cannot start workers of their own, and a kernel whose tuning needs
 * another one (@reference) or a check does not go to one. */
static const char *warm_key(const kt_kernel *k, kt__sbuf *out) {
  if (k->decl->reference || k->decl->check) return NULL;
  const kt__device_info *d = &k->runtime->device;
  kt__sbuf_printf(out, "%s/%d/%s", d->backend, d->index, d->name);
  return out->s;
}

/* The job that tunes KEY: this process's running one, or a new one with
 * the helper started on a copy of the caller's data. */
static kt__miss_job *tuning_job(kt_kernel *k, kt__store *store, const kt__store_key *key, const int64_t *sizes,
                                void *const *args, void *stream, bool *created, kt__sbuf *note) {
  kt__runtime_table *t = k->runtime;
  kt__sbuf name = {0};
  tuning_name(k, store, key, &name);
  kt__miss_job *j = kt__miss_job_get(name.s, created);
  if (!*created) {
    kt__sbuf_free(&name);
    return j;
  }
  static kt__errbuf eb; /* large for a stack; misses on one handle are not concurrent */
  static pthread_mutex_t eb_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&eb_lock);
  int fd = -1;
  kt__tune_pending *pending = NULL;
  kt__trace("miss: tuning %s", name.s);
  if (kt__tune_request_create(k, t->be, t->state, &t->device, sizes, args, stream, store ? kt__store_path(store) : NULL,
                              name.s, kt__miss_request_spare(), &fd, &pending, note, &eb) != KT_OK)
    kt__miss_job_fail(j, eb.msg);
  else {
    kt__trace("miss: request written");
    /* In the background the fallback is loaded first (rt_miss unholds). */
    if (kt__online_policy(k) != KT_MISS_TUNE) kt__miss_job_hold(j);
    kt__sbuf device = {0};
    kt__miss_job_start(j, fd, pending, warm_key(k, &device), kt__miss_helper_idle_s(&k->ctx->env));
    kt__sbuf_free(&device);
  }
  pthread_mutex_unlock(&eb_lock);
  kt__sbuf_free(&name);
  return j;
}

/* A finished job's winner into VALUES, saying how in HOW (empty when the
 * helper printed its own line). False when it failed: the fallback then,
 * with the reason; a kernel that cannot be tuned at all (no valid
 * configuration, bad input) is an error, as a tuning in this process was. */
static int take_outcome(kt_kernel *k, kt__miss_job *j, bool created, kt__store *store, const kt__store_key *key,
                        const int64_t *sizes, int64_t *values, kt__sbuf *how) {
  const char *config, *why;
  kt__miss_outcome o = kt__miss_job_outcome(j, &config, &why);
  if (o == KT__MISS_FAILED) {
    int rc = kt__miss_job_rc(j);
    if (rc == KT_NOVALID || rc == KT_INVALID) return kt__err(&k->ctx->err, rc, "kt_launch: %s", why);
    use_fallback(store, key, k, sizes, values, how);
    kt__sbuf_printf(how, " (cannot tune: %s)", why);
    return KT_OK;
  }
  if (!read_stored(k, sizes, config, values, how)) {
    use_fallback(store, key, k, sizes, values, how);
    return KT_OK;
  }
  if (o == KT__MISS_STORED) kt__sbuf_printf(how, "stored winner (tuned meanwhile by another process)");
  else if (!created) kt__sbuf_printf(how, "winner of the tuning another thread started");
  return KT_OK;
}

/* Whether blocking job J failed because the helper's worker could not copy
 * the tensors this process shared with it (a system that forbids it): then
 * K's misses copy them through host memory from now on, this one too. */
static bool shared_copy_failed(kt_kernel *k, kt__miss_job *j) {
  const char *config, *why;
  if (kt__miss_job_outcome(j, &config, &why) != KT__MISS_FAILED || !strstr(why, KT__SHARED_COPY_FAILED)) return false;
  kt__trace("miss: %s; tuned again with the tensors copied through host memory", why);
  k->runtime->tensors_through_host = true;
  return true;
}

/* Which configuration this shape gets: the stored winner, else per policy.
 * HOW says which, for the KTUNE_PRINT_AUTOTUNING line (empty after a
 * tuning, which prints its own). A background tuning's job goes to *BG. */
static int choose_config(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream, int64_t *values,
                         kt__sbuf *how, kt__miss_job **bg) {
  kt__runtime_table *t = k->runtime;
  kt_miss_policy policy = kt__online_policy(k);
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__sbuf key_sizes = {0};
  kt__store_key key = kt__kernel_store_key(k, sizes, &t->device, &key_sizes);
  kt__store *store = kt__context_store(k->ctx);
  kt__trace("miss: results database open");
  char *config = NULL;
  double secs = 0;
  int rc = KT_OK;
  kt__errbuf eb;
  kt_objective objective = k->ctx->opts.objective;
  if (store && kt__store_winner(store, &key, objective, &config, &secs, &eb) == KT_OK &&
      read_stored(k, sizes, config, values, how)) {
    kt__sbuf_printf(how, "stored winner%s%s", objective == KT_OBJECTIVE_TIME ? "" : " for ",
                    objective == KT_OBJECTIVE_TIME ? "" : kt__objective_name(objective));
  } else if (policy == KT_MISS_TUNE || policy == KT_MISS_BACKGROUND || policy == KT_MISS_ONLINE) {
    bool created;
    kt__sbuf note = {0}; /* a snapshot refused: the copy was made before returning */
    kt__miss_job *j = tuning_job(k, store, &key, sizes, args, stream, &created, &note);
    kt__trace("miss: tuning job started");
    /* An online job that ended already is taken by the next call (rt_adopt),
     * which times the verified configurations it brought. */
    if (policy == KT_MISS_TUNE || (kt__miss_job_done(j) && policy != KT_MISS_ONLINE)) {
      kt__miss_job_wait(j);
      kt__trace("miss: tuning ended");
      if (created && shared_copy_failed(k, j)) {
        kt__miss_job_release(j);
        j = tuning_job(k, store, &key, sizes, args, stream, &created, &note);
        kt__miss_job_wait(j);
      }
      rc = take_outcome(k, j, created, store, &key, sizes, values, how);
      kt__miss_job_release(j);
    } else {
      use_fallback(store, &key, k, sizes, values, how);
      kt__trace("miss: fallback chosen");
      kt__sbuf_printf(how, policy == KT_MISS_ONLINE
                               ? " while the configurations are verified for online tuning (in ktune-tuner)"
                               : " while the tuning runs in the background (in ktune-tuner)");
      *bg = j;
    }
    if (note.len) kt__sbuf_printf(how, "%s%s", how->len ? "; " : "", note.s);
    kt__sbuf_free(&note);
  } else {
    use_fallback(store, &key, k, sizes, values, how);
  }
  free(config);
  kt__sbuf_free(&key_sizes);
  return rc;
}

/* The KTUNE_PRINT_AUTOTUNING line of a miss that did not tune; SECS covers
 * the lookup, compiling and loading. */
static void report_choice(const kt_kernel *k, const int64_t *sizes, const char *how, const int64_t *values,
                          double secs) {
  kt__sbuf key_sizes = {0}, shown = {0};
  kt__kernel_key_sizes(k, sizes, &key_sizes);
  kt__config_format(k->config.names, values, k->config.n, "", &shown);
  kt__print_autotuning(k->decl->name, key_sizes.s, how, secs, shown.s);
  kt__sbuf_free(&key_sizes);
  kt__sbuf_free(&shown);
}

/* ---- loading a configuration ------------------------------------------ */

/* @constant data as a tuning makes it (the default seed, 42): the winner
 * runs on the data it was tuned and verified with. Unloads FN on failure. */
static kt__status fill_constants(kt_kernel *k, void *fn, kt__errbuf *eb) {
  kt__constants *c = NULL;
  kt__status st = KT__ST_COMPILE;
  if (kt__constants_create(k->decl, k->file->src.path, 42, &c, eb) == KT_OK)
    st = kt__constants_set(k->runtime->be, k->runtime->state, fn, k->decl, c, eb);
  kt__constants_free(c);
  if (st != KT__ST_OK) kt__be_unload(k->runtime->be, k->runtime->state, fn);
  return st;
}

/* Compiles and loads VALUES in this process, or finds it loaded already. */
static int load_config(kt_kernel *k, const int64_t *values, void **fn) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  const kt__config *cfg = &k->config;
  for (int i = 0; i < t->nconfigs; i++)
    if (memcmp(t->configs[i].values, values, (size_t)cfg->n * sizeof *values) == 0) {
      *fn = t->configs[i].fn;
      return KT_OK;
    }
  kt__errbuf *eb = &k->ctx->err;
  const char *workdir = kt__workdir(eb);
  if (!workdir) return KT_INVALID;
  if (!t->state) KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, eb));
  char tag[64];
  snprintf(tag, sizeof tag, "rt%p-%d", (void *)k, t->nconfigs);
  kt__build b = {k->file, d,    cfg->names,        values, cfg->n, &t->device, workdir, tag,
                 60.0,    NULL, &k->ctx->bincache, NULL,   NULL};
  kt__artifact a = {0};
  kt__status st = kt__be_compile(t->be, &b, &a, eb);
  kt__trace("miss: configuration built (%s)", a.cache_use == KT__BIN_CACHED ? "from the binary cache" : "compiled");
  if (st == KT__ST_OK) st = kt__be_load(t->be, t->state, &b, &a, fn, eb);
  if (st == KT__ST_OK && d->nconstants) st = fill_constants(k, *fn, eb);
  if (st != KT__ST_OK) {
    kt__sbuf shown = {0}, why = {0};
    kt__config_format(cfg->names, values, cfg->n, "", &shown);
    kt__sbuf_printf(&why, "%s", a.log ? a.log : eb->msg); /* a copy: eb is rewritten below */
    kt__err(eb, KT_INTERNAL, "kt_launch: building %s (%s) failed:\n%s", d->name, shown.s, why.s);
    kt__sbuf_free(&shown);
    kt__sbuf_free(&why);
    kt__artifact_free(&a);
    return KT_INTERNAL;
  }
  kt__artifact_free(&a); /* loaded: the backend keeps what it needs */
  t->configs = kt__xreallocarray(t->configs, (size_t)t->nconfigs + 1, sizeof *t->configs);
  memcpy(t->configs[t->nconfigs].values, values, sizeof t->configs[0].values);
  t->configs[t->nconfigs++].fn = *fn;
  return KT_OK;
}

/* The launch description of VALUES at SIZES; the arguments come with each
 * call. */
static int entry_launch(kt_kernel *k, const int64_t *sizes, const int64_t *values, kt__rt_entry *e) {
  const kt__kernel_decl *d = k->decl;
  kt__env size_env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  return kt__launch_describe(d, &k->config, values, &size_env, NULL, &e->launch, &k->ctx->err);
}

/* ---- a miss ----------------------------------------------------------- */

static int rt_create(kt_kernel *k) {
  const kt__kernel_decl *d = k->decl;
  KT__RETURN_IF(d->nsizes > KT__RT_MAX_SIZES, &k->ctx->err, KT_INVALID,
                "kt_launch: kernel %s has %d runtime sizes; at most %d are supported", d->name, d->nsizes,
                KT__RT_MAX_SIZES);
  KT__RETURN_IF(d->nparams > KT__RT_MAX_ARGS, &k->ctx->err, KT_INVALID,
                "kt_launch: kernel %s has %d parameters; at most %d are supported", d->name, d->nparams,
                KT__RT_MAX_ARGS);
  KT__FORWARD(kt__config_check_size(&k->config, k->file->src.path, d->name, &k->ctx->err));
  kt__runtime_table *t = kt__xcalloc(1, sizeof *t);
  pthread_mutex_init(&t->lock, NULL);
  atomic_init(&t->slots, NULL);
  t->be = k->backend;
  t->nparams = d->nparams;
  for (int i = 0; i < d->nparams; i++)
    t->scalar_size[i] = d->params[i].is_tensor || d->params[i].is_tensormap /* built from its tensor: args[i] unused */
                            ? 0
                            : (unsigned char)kt__dtype_size(d->params[i].type);
  atomic_store_explicit(&k->runtime, t, memory_order_release);
  return KT_OK;
}

/* K's table, made on its first use by any thread (under one lock for the
 * process: it happens once per handle). */
static int rt_table(kt_kernel *k, kt__runtime_table **out) {
  static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
  int rc = KT_OK;
  if (!(*out = atomic_load_explicit(&k->runtime, memory_order_acquire))) {
    pthread_mutex_lock(&create_lock);
    if (!k->runtime) rc = rt_create(k);
    pthread_mutex_unlock(&create_lock);
    *out = k->runtime;
  }
  return rc;
}

static int check_sizes(kt_kernel *k, const int64_t *sizes) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nsizes; i++)
    KT__RETURN_IF(sizes[i] <= 0, &k->ctx->err, KT_INVALID, "kt_launch: size %s is %lld; sizes must be positive",
                  d->sizes[i], (long long)sizes[i]);
  return KT_OK;
}

/* Whether the kernel runs in the application's own device context
 * (kt_options.opencl_context, for backends that can share one). */
static bool in_app_context(const kt_kernel *k) {
  return k->ctx->opts.opencl_context && kt__be_can_adopt(k->runtime->be);
}

/* The device, opened in this process on the first miss (or adopted: the
 * application's own OpenCL context): its identity is part of the results
 * key, and the launches need it. A tuning never runs here (it runs in the
 * helper, a fresh process), so whatever driver state this process holds
 * does not matter. */
static int know_device(kt_kernel *k) {
  kt__runtime_table *t = k->runtime;
  if (t->device_known) return KT_OK;
  if (in_app_context(k)) {
    const kt_options *o = &k->ctx->opts;
    KT__FORWARD(kt__be_adopt(t->be, o->opencl_context, o->opencl_device, &t->state, &t->device, &k->ctx->err));
  } else if (!t->state) {
    KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, &k->ctx->err));
  }
  t->device_known = true;
  return KT_OK;
}

int kt__runtime_device(kt_kernel *k, void **state) {
  kt__runtime_table *t;
  KT__FORWARD(rt_table(k, &t));
  pthread_mutex_lock(&t->lock);
  int rc = know_device(k);
  *state = t->state;
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* The warm helper of K's device, started now so that the first miss finds
 * it with its device open (tune_helper.h, --prepare); a failure here only
 * leaves that miss to start one. */
static void start_helper_early(kt_kernel *k, kt__store *store) {
  kt__sbuf device = {0};
  int fd = -1;
  kt__errbuf eb;
  if (warm_key(k, &device) &&
      kt__tune_request_create_bare(k, &k->runtime->device, store ? kt__store_path(store) : NULL, &fd, &eb) == KT_OK)
    kt__miss_helper_prepare(fd, device.s, kt__miss_helper_idle_s(&k->ctx->env));
  kt__sbuf_free(&device);
}

/* kt_kernel_prepare under K's table's lock. */
static int prepare_locked(kt_kernel *k) {
  KT__FORWARD(know_device(k));
  kt__trace("prepare: device open");
  kt__store *store = kt__context_store(k->ctx); /* one that cannot open is the miss's concern */
  kt__trace("prepare: results database open");
  kt_miss_policy policy = k->ctx->opts.miss_policy;
  if (policy == KT_MISS_TUNE || policy == KT_MISS_BACKGROUND || policy == KT_MISS_ONLINE) {
    start_helper_early(k, store);
    kt__miss_thread_prepare();
  }
  if (policy == KT_MISS_TUNE) return KT_OK;
  int64_t values[KT__MAX_NAMES] = {0}; /* load_config keeps a whole array */
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  void *fn;
  KT__FORWARD(load_config(k, values, &fn));
  kt__trace("prepare: default configuration loaded");
  return KT_OK;
}

int kt_kernel_prepare(kt_kernel *k) {
  if (!k) return KT_INVALID;
  kt__runtime_table *t;
  KT__FORWARD(rt_table(k, &t));
  pthread_mutex_lock(&t->lock);
  int rc = prepare_locked(k);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* A new shape, under K's table's lock: the configuration it gets, loaded,
 * in a new entry (*OUT). A background tuning's job comes back held (*HELD),
 * for the caller to let go once the launch is enqueued. */
static int rt_miss(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream, kt__rt_entry **out,
                   kt__miss_job **held) {
  kt__trace("miss: a shape this handle has not launched");
  KT__FORWARD(know_device(k));
  kt__trace("miss: device known");
  kt__runtime_table *t = k->runtime;
  double t0 = kt__now();
  int64_t values[KT__MAX_NAMES];
  kt__sbuf how = {0};
  kt__rt_entry e = {0};
  kt__miss_job *bg = NULL;
  int rc = choose_config(k, sizes, args, stream, values, &how, &bg);
  double adopt_t0 = kt__now();
  if (rc == KT_OK) rc = load_config(k, values, &e.fn);
  kt__trace("miss: configuration loaded in the application");
  if (rc == KT_OK) rc = entry_launch(k, sizes, values, &e);
  /* After a tuning, whose own line gave its phases: the adoption's. */
  if (rc == KT_OK && !how.len)
    kt__sbuf_printf(&how, "the tuning's winner adopted (adopt %.6f s: loaded in the application)",
                    kt__now() - adopt_t0);
  if (rc == KT_OK) report_choice(k, sizes, how.s, values, kt__now() - t0);
  kt__sbuf_free(&how);
  if (rc != KT_OK && bg) {
    kt__miss_job_unhold(bg);
    kt__miss_job_release(bg);
  }
  KT__FORWARD(rc);
  if (bg) {
    t->jobs = kt__xreallocarray(t->jobs, (size_t)t->njobs + 1, sizeof *t->jobs);
    t->jobs[t->njobs++] = bg;
    t->release_job = release_job;
    e.job = bg;
  }
  memcpy(e.sizes, sizes, (size_t)k->decl->nsizes * sizeof *sizes);
  *out = kt__rt_add(t, &e, k->decl->nsizes);
  *held = bg;
  return KT_OK;
}

/* A shape no entry had when this thread looked: one thread at a time per
 * handle makes its entry, and a thread that waited for another's miss of
 * the same shape takes that one's entry. */
static int rt_miss_once(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream, kt__rt_entry **out,
                        kt__miss_job **held) {
  KT__FORWARD(check_sizes(k, sizes));
  kt__runtime_table *t;
  KT__FORWARD(rt_table(k, &t));
  pthread_mutex_lock(&t->lock);
  *out = kt__rt_find(t, sizes, k->decl->nsizes);
  int rc = *out ? KT_OK : rt_miss(k, sizes, args, stream, out, held);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* ---- a background tuning's winner ------------------------------------- */

/* The values of the configuration loaded as FN. */
static const int64_t *loaded_values(const kt__runtime_table *t, const void *fn) {
  for (int i = 0; i < t->nconfigs; i++)
    if (t->configs[i].fn == fn) return t->configs[i].values;
  return NULL;
}

/* The entry that replaces E once its tuning ended: the winner's, loaded
 * now, or E's own configuration when the tuning failed (said once). */
static kt__rt_entry *winner_entry(kt_kernel *k, const kt__rt_entry *e) {
  kt__runtime_table *t = k->runtime;
  double t0 = kt__now();
  kt__rt_entry *w = kt__xcalloc(1, sizeof *w);
  memcpy(w, e, sizeof *w);
  w->job = NULL;
  atomic_init(&w->adopted, NULL);
  const char *config, *why;
  kt__sbuf how = {0};
  int64_t values[KT__MAX_NAMES];
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__miss_outcome outcome = kt__miss_job_outcome(e->job, &config, &why);
  kt__online *online = outcome == KT__MISS_VERIFIED ? kt__online_create(&k->config, config) : NULL;
  if (online) {
    const int64_t *fallback = loaded_values(t, e->fn);
    if (fallback) memcpy(values, fallback, (size_t)k->config.n * sizeof *values);
    w->online = online;
    t->release_online = release_online;
    kt__sbuf_printf(&how,
                    "online tuning: %d verified configurations, each to be timed on %d of the application's calls",
                    online->ncands, (int)KT__ONLINE_SAMPLES);
  } else if (outcome == KT__MISS_FAILED || outcome == KT__MISS_VERIFIED) {
    const int64_t *fallback = loaded_values(t, e->fn);
    if (fallback) memcpy(values, fallback, (size_t)k->config.n * sizeof *values);
    kt__sbuf_printf(&how, "background tuning failed, kept the fallback (%s)", why);
  } else {
    kt__config_read(&k->config, config, values);
    kt__rt_entry next = *w;
    if (load_config(k, values, &next.fn) == KT_OK && entry_launch(k, e->sizes, values, &next) == KT_OK) {
      *w = next;
      kt__sbuf_printf(&how, "background tuning's winner");
    } else {
      const int64_t *fallback = loaded_values(t, e->fn);
      if (fallback) memcpy(values, fallback, (size_t)k->config.n * sizeof *values);
      kt__sbuf_printf(&how, "background tuning's winner failed to load, kept the fallback (%s)", k->ctx->err.msg);
    }
  }
  report_choice(k, e->sizes, how.s, values, kt__now() - t0);
  kt__sbuf_free(&how);
  t->adopted = kt__xreallocarray(t->adopted, (size_t)t->nadopted + 1, sizeof *t->adopted);
  t->adopted[t->nadopted++] = w;
  return w;
}

/* ---- tuning through the application's own launches (online.h) ------- */

/* Candidate C loaded in this process and its launch at E's sizes described,
 * once; false when either failed (the candidate is then dropped). */
static bool online_ready(kt_kernel *k, const kt__rt_entry *e, kt__online_cand *c) {
  if (c->loaded) return true;
  kt__runtime_table *t = k->runtime;
  kt__rt_entry ce = *e;
  pthread_mutex_lock(&t->lock);
  int rc = load_config(k, c->values, &ce.fn);
  if (rc == KT_OK) rc = entry_launch(k, e->sizes, c->values, &ce);
  pthread_mutex_unlock(&t->lock);
  if (rc != KT_OK) return false;
  c->fn = ce.fn;
  c->launch = ce.launch;
  c->loaded = true;
  return true;
}

/* Candidate C launched on the caller's ARGS and STREAM, timed. */
static kt__status online_run(kt_kernel *k, const kt__online_cand *c, void *const *args, void *stream, double *secs,
                             const char **method) {
  const kt__runtime_table *t = k->runtime;
  kt__arg argv[KT__RT_MAX_ARGS];
  fill_args(t, args, argv);
  kt__launch l = c->launch;
  l.args = argv;
  l.stream = stream;
  return kt__be_run_timed(t->be, t->state, c->fn, &l, secs, method, &k->ctx->err);
}

/* Every candidate's samples into the results database (their measurement
 * method "online ..."), and the winner BEST as the key's; a dropped one as
 * the failure it was. Said on stderr when a write fails, as a tuning's. */
static void store_online(kt_kernel *k, const int64_t *sizes, const kt__online *o, const kt__stats *stats, int best) {
  kt__store *store = kt__context_store(k->ctx);
  if (!store) return;
  kt__runtime_table *t = k->runtime;
  kt__sbuf key_sizes = {0}, method = {0};
  kt__store_key key = kt__kernel_store_key(k, sizes, &t->device, &key_sizes);
  kt__sbuf_printf(&method, "online %s", o->method);
  kt__errbuf eb;
  int rc = KT_OK;
  for (int i = 0; i < o->ncands && rc == KT_OK; i++) {
    kt__sbuf cfg = {0};
    kt__config_format(k->config.names, o->cands[i].values, k->config.n, "", &cfg);
    kt__record rec = {cfg.s, KT__ST_OK, stats[i], 0, NULL, false, method.s};
    if (o->cands[i].dropped) {
      rec.status = KT__ST_RUNTIME;
      rec.message = "its launch on the application's data failed (online tuning)";
    }
    rc = kt__store_put(store, &key, &rec, &eb);
    if (rc == KT_OK && i == best)
      rc = kt__store_set_winner(store, &key, KT_OBJECTIVE_TIME, cfg.s, stats[i].median, &eb);
    kt__sbuf_free(&cfg);
  }
  if (rc != KT_OK && !k->ctx->opts.quiet)
    fprintf(stderr, "ktune: warning: could not store the online tuning's results: %s\n", eb.msg);
  kt__sbuf_free(&key_sizes);
  kt__sbuf_free(&method);
}

/* The last sample is in: the fastest candidate's entry replaces E (E's own
 * configuration when every candidate was dropped), stored as the key's
 * winner; said once, with the measuring and the adoption's time. */
static void adopt_online(kt_kernel *k, kt__rt_entry *e) {
  kt__runtime_table *t = k->runtime;
  kt__online *o = e->online;
  double t0 = kt__now();
  kt__stats *stats = kt__xcalloc((size_t)o->ncands, sizeof *stats);
  int best = kt__online_winner(o, stats);
  kt__rt_entry *w = kt__xcalloc(1, sizeof *w);
  memcpy(w, e, sizeof *w);
  w->online = NULL;
  atomic_init(&w->adopted, NULL);
  int64_t values[KT__MAX_NAMES];
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__sbuf how = {0};
  if (best >= 0) {
    w->fn = o->cands[best].fn;
    w->launch = o->cands[best].launch;
    memcpy(values, o->cands[best].values, sizeof o->cands[best].values);
    store_online(k, e->sizes, o, stats, best);
    kt__sbuf_printf(&how,
                    "online tuning's winner (measure: %d configurations on %d of the application's calls, %.6f s of "
                    "their launches by %s, %.3f s since the verified ones came back; adopt",
                    o->ncands, o->calls, o->timed_s, o->method, t0 - o->started);
  } else {
    const int64_t *fallback = loaded_values(t, e->fn);
    if (fallback) memcpy(values, fallback, (size_t)k->config.n * sizeof *values);
    kt__sbuf_printf(&how, "online tuning: every configuration's launch failed, kept the fallback (adopt");
  }
  free(stats);
  pthread_mutex_lock(&t->lock);
  t->adopted = kt__xreallocarray(t->adopted, (size_t)t->nadopted + 1, sizeof *t->adopted);
  t->adopted[t->nadopted++] = w;
  atomic_store_explicit(&e->adopted, w, memory_order_release);
  pthread_mutex_unlock(&t->lock);
  kt__sbuf_printf(&how, " %.6f s)", kt__now() - t0);
  report_choice(k, e->sizes, how.s, values, kt__now() - t0);
  kt__sbuf_free(&how);
}

/* A call of a key whose verified configurations are being timed: the next
 * one that needs a sample, on the caller's data and stream, or E's own
 * (the fallback, untimed) while another thread's call times one. A
 * candidate whose load or launch fails is dropped and the fallback
 * launched instead, so that the call's outputs are still written. */
static int rt_online(kt_kernel *k, kt__rt_entry *e, void *const *args, void *stream) {
  kt__online *o = e->online;
  int c = kt__online_begin(o);
  if (c < 0) return rt_run(k, e, args, stream);
  kt__online_cand *cand = &o->cands[c];
  double secs = 0;
  const char *method = "";
  kt__status st = online_ready(k, e, cand) ? online_run(k, cand, args, stream, &secs, &method) : KT__ST_RUNTIME;
  if (kt__tracing()) { /* the trace, which tests count launches by; not formatted on every call otherwise */
    kt__sbuf shown = {0};
    kt__config_format(k->config.names, cand->values, k->config.n, "", &shown);
    if (st == KT__ST_OK) kt__trace("online: timed [%s] on the application's call: %.9f s", shown.s, secs);
    else kt__trace("online: [%s] failed on the application's call, dropped: %s", shown.s, k->ctx->err.msg);
    kt__sbuf_free(&shown);
  }
  if (st == KT__ST_OK) o->method = method;
  bool last = kt__online_end(o, c, secs, st != KT__ST_OK);
  int rc = st == KT__ST_OK ? KT_OK : rt_run(k, e, args, stream);
  if (last) adopt_online(k, e);
  return rc;
}

/* E while its background tuning runs, then the entry adopted once it
 * ended: an atomic load per call, the switch itself once. */
static kt__rt_entry *rt_adopt(kt_kernel *k, kt__rt_entry *e) {
  kt__rt_entry *w = atomic_load_explicit(&e->adopted, memory_order_acquire);
  if (w) return w;
  if (!kt__miss_job_done(e->job)) return e;
  kt__runtime_table *t = k->runtime;
  pthread_mutex_lock(&t->lock);
  w = atomic_load_explicit(&e->adopted, memory_order_relaxed);
  if (!w) {
    w = winner_entry(k, e);
    atomic_store_explicit(&e->adopted, w, memory_order_release);
  }
  pthread_mutex_unlock(&t->lock);
  return w;
}

int kt_launch(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream) {
  if (!k || (!sizes && k->decl->nsizes) || (!args && k->decl->nparams)) return KT_INVALID;
  kt__rt_entry *e = kt__rt_find(atomic_load_explicit(&k->runtime, memory_order_acquire), sizes, k->decl->nsizes);
  kt__miss_job *held = NULL;
  if (!e) KT__FORWARD(rt_miss_once(k, sizes, args, stream, &e, &held));
  else if (e->job) e = rt_adopt(k, e);
  kt__rt_entry *measured = e->online ? atomic_load_explicit(&e->adopted, memory_order_acquire) : e;
  int rc = measured ? rt_run(k, measured, args, stream) : rt_online(k, e, args, stream);
  /* A background miss's download may use the driver now that the fallback's
   * launch is enqueued: it page-locks the request (cuMemHostRegister, tens
   * of ms for 192 MB), and a launch behind it could wait for that
   * (suspected of the 40-44 ms background first calls on the H200, about
   * one untraced run in three, never a traced one). */
  if (held) kt__miss_job_unhold(held);
  return rc;
}
