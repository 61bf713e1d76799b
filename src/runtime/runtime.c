/* kt_launch: launch the stored winner for a shape with next to no overhead.
 *
 * The hot path is one hash lookup of the sizes in an in-memory table, then
 * the backend's launch: no allocation, no parsing, no SQLite (the argument
 * array lives on the stack, the geometry was evaluated when the shape was
 * first seen). A miss (a shape not seen by this kernel handle) finds the
 * winner in the results database, or applies the context's miss policy
 * (tune now, nearest stored size, or the default), compiles and loads that
 * configuration in this process unless another shape already loaded it, and
 * adds the shape to the table.
 *
 * A kernel handle's table is not locked: concurrent kt_launch calls on one
 * handle are safe only when every shape involved was launched before
 * (misses write the table); threads that launch new shapes use their own
 * handles or serialise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"

#include "../launch/launch.h"
#include "../tuner/result.h"
#include "../workdir.h"

/* ---- the hot path ----------------------------------------------------- */

int kt__rt_run(kt_kernel *k, const kt__rt_entry *e, void *const *args, void *stream) {
  const kt__runtime_table *t = k->runtime;
  kt__arg argv[KT__RT_MAX_ARGS];
  for (int i = 0; i < t->nparams; i++) {
    kt__arg *a = &argv[i];
    a->size = t->scalar_size[i];
    a->is_tensor = a->size == 0;
    a->buf = a->is_tensor ? args[i] : NULL;
    memset(a->scalar, 0, sizeof a->scalar);
    if (!a->is_tensor) memcpy(a->scalar, args[i], a->size);
  }
  kt__launch l = e->launch;
  l.args = argv;
  l.stream = stream;
  kt__status st = kt__be_run(t->be, t->state, e->fn, &l, &k->ctx->err);
  return st == KT__ST_OK ? KT_OK : KT_INTERNAL;
}

/* ---- the device ------------------------------------------------------- */

typedef struct probe_reply {
  int rc;
  kt__device_info info;
  kt__errbuf eb;
} probe_reply;

/* The device's identity as the tuner sees it (part of the results key), read
 * in a short-lived child so that no GPU driver is initialised in this
 * process before any tuning: a forked tuning worker could not use it
 * afterwards. */
static int probe_device(const kt__backend *be, int index, kt__device_info *info, kt__errbuf *eb) {
  int fds[2];
  if (pipe(fds) != 0) return kt__err(eb, KT_IO, "pipe: cannot probe the device");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    static probe_reply reply; /* static: the errbuf is large for a stack */
    void *state = NULL;
    reply.rc = kt__be_open(be, index, &state, &reply.info, &reply.eb);
    if (write(fds[1], &reply, sizeof reply) != (ssize_t)sizeof reply) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  probe_reply *reply = kt__xcalloc(1, sizeof *reply);
  size_t got = 0;
  while (pid > 0 && got < sizeof *reply) {
    ssize_t r = read(fds[0], (char *)reply + got, sizeof *reply - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fds[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  int rc = KT_OK;
  if (got != sizeof *reply) rc = kt__err(eb, KT_NOBACKEND, "%s: the device probe failed", be->name);
  else if (reply->rc != KT_OK) rc = kt__err(eb, reply->rc, "%s", reply->eb.msg);
  else *info = reply->info;
  free(reply);
  return rc;
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

/* ---- tuning on a miss ------------------------------------------------- */

/* Tunes now for these sizes. On the CPU backend the tuner starts from the
 * caller's own buffers (inputs and inout contents; the caller's memory is
 * only read, the trials run on copies, so in-place outputs need no restoring
 * and the real launch that follows sees them untouched). On GPU backends
 * ARGS are device pointers this process must not touch before the tuning
 * worker forks, so the tuner uses generated data of the caller's shape. The
 * kernel's own sizes are put back afterwards. */
static int tune_now(kt_kernel *k, const int64_t *sizes, void *const *args, int64_t *values) {
  const kt__kernel_decl *d = k->decl;
  int64_t saved[KT__RT_MAX_SIZES];
  bool saved_given[KT__RT_MAX_SIZES];
  for (int i = 0; i < d->nsizes; i++) {
    saved[i] = k->sizes[i], saved_given[i] = k->size_given[i];
    k->sizes[i] = sizes[i];
    k->size_given[i] = true;
  }
  k->tune_args = k->backend->runs_host_code ? args : NULL;
  kt_result *r = NULL;
  kt_tune_options o = {0};
  if (k->ctx->opts.miss_tune) o = *k->ctx->opts.miss_tune;
  int rc = kt_tune(k, &o, &r);
  k->tune_args = NULL;
  for (int i = 0; i < d->nsizes; i++) k->sizes[i] = saved[i], k->size_given[i] = saved_given[i];
  if (r && r->winner >= 0) {
    memcpy(values, r->trials[r->winner].values, (size_t)r->nnames * sizeof *values);
    rc = KT_OK; /* an interrupted tuning still has a verified winner */
  }
  kt_result_destroy(r);
  return rc;
}

/* Whether a miss may tune now: a GPU backend opened in this process rules
 * it out (see probe_device). */
static bool can_tune(const kt_kernel *k) {
  const kt__runtime_table *t = k->runtime;
  return k->ctx->opts.miss_policy == KT_MISS_TUNE && !(t->state && !t->be->runs_host_code);
}

/* The nearest stored size's winner into VALUES; false when none. */
static bool use_nearest(kt__store *store, const kt__store_key *key, const kt_kernel *k, int64_t *values,
                        kt__sbuf *how) {
  nearest n = {key->sizes, INFINITY, NULL, NULL};
  kt__errbuf eb;
  if (store) kt__store_each_winner(store, key, consider_nearest, &n, &eb);
  if (n.config) {
    kt__config_read(&k->config, n.config, values);
    kt__sbuf_printf(how, "nearest stored size [%s]", n.sizes);
  }
  free(n.sizes);
  free(n.config);
  return n.best < INFINITY;
}

/* Which configuration this shape gets: the stored winner, else per policy.
 * HOW says which, for the KTUNE_PRINT_AUTOTUNING line (empty after a
 * tuning, which prints its own). */
static int choose_config(kt_kernel *k, const int64_t *sizes, void *const *args, int64_t *values, kt__sbuf *how) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  memcpy(values, k->config.defaults, (size_t)k->config.n * sizeof *values);
  kt__sbuf key_sizes = {0};
  kt__kernel_key_sizes(k, sizes, &key_sizes);
  kt__store *store = kt__context_store(k->ctx);
  kt__store_key key = {k->source_hash, d->name, &t->device, key_sizes.s, NULL};
  char *config = NULL;
  double secs = 0;
  int rc = KT_OK;
  kt__errbuf eb;
  if (store && kt__store_winner(store, &key, &config, &secs, &eb) == KT_OK) {
    kt__config_read(&k->config, config, values);
    kt__sbuf_printf(how, "stored winner");
  } else if (can_tune(k)) {
    rc = tune_now(k, sizes, args, values);
  } else if (k->ctx->opts.miss_policy == KT_MISS_DEFAULT || !use_nearest(store, &key, k, values, how)) {
    kt__sbuf_printf(how, "default configuration");
  }
  if (how->len && k->ctx->opts.miss_policy == KT_MISS_TUNE && strcmp(how->s, "stored winner") != 0)
    kt__sbuf_printf(how, " (cannot tune: the %s device is already in use by this process)", t->be->name);
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
  kt__build b = {k->file, d, cfg->names, values, cfg->n, &t->device, workdir, tag, 60.0, NULL};
  kt__artifact a = {0};
  kt__status st = kt__be_compile(t->be, &b, &a, eb);
  if (st == KT__ST_OK) st = kt__be_load(t->be, t->state, &b, &a, fn, eb);
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
  t->be = k->backend;
  t->nparams = d->nparams;
  for (int i = 0; i < d->nparams; i++)
    t->scalar_size[i] = d->params[i].is_tensor ? 0 : (unsigned char)kt__dtype_size(d->params[i].type);
  k->runtime = t;
  return KT_OK;
}

static int check_sizes(kt_kernel *k, const int64_t *sizes) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nsizes; i++)
    KT__RETURN_IF(sizes[i] <= 0, &k->ctx->err, KT_INVALID, "kt_launch: size %s is %lld; sizes must be positive",
                  d->sizes[i], (long long)sizes[i]);
  return KT_OK;
}

/* The device identity, part of the results key: read once per handle. */
static int know_device(kt_kernel *k) {
  kt__runtime_table *t = k->runtime;
  if (t->device_known) return KT_OK;
  if (t->be->runs_host_code) { /* no driver to keep out of this process */
    KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, &k->ctx->err));
  } else if (probe_device(t->be, k->ctx->opts.device, &t->device, &k->ctx->err) != KT_OK) {
    /* The usual reason: the application initialised the driver already, so
     * no child of it can (and no tuning could run here either). Opening the
     * device in this process costs nothing more then. */
    KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, &k->ctx->err));
  }
  t->device_known = true;
  return KT_OK;
}

static int rt_miss(kt_kernel *k, const int64_t *sizes, void *const *args, kt__rt_entry **out) {
  KT__FORWARD(check_sizes(k, sizes));
  if (!k->runtime) KT__FORWARD(rt_create(k));
  KT__FORWARD(know_device(k));
  kt__runtime_table *t = k->runtime;
  double t0 = kt__now();
  int64_t values[KT__MAX_NAMES];
  kt__sbuf how = {0};
  kt__rt_entry e = {0};
  int rc = choose_config(k, sizes, args, values, &how);
  if (rc == KT_OK) rc = load_config(k, values, &e.fn);
  if (rc == KT_OK) rc = entry_launch(k, sizes, values, &e);
  if (rc == KT_OK && how.len) report_choice(k, sizes, how.s, values, kt__now() - t0);
  kt__sbuf_free(&how);
  KT__FORWARD(rc);
  e.used = true;
  memcpy(e.sizes, sizes, (size_t)k->decl->nsizes * sizeof *sizes);
  kt__rt_entry *slot = kt__rt_slot(t, sizes, k->decl->nsizes);
  *slot = e;
  *out = slot;
  return KT_OK;
}

int kt__rt_entry_for(kt_kernel *k, const int64_t *sizes, void *const *args, kt__rt_entry **out) {
  *out = kt__rt_find(k->runtime, sizes, k->decl->nsizes);
  return *out ? KT_OK : rt_miss(k, sizes, args, out);
}

int kt_launch(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream) {
  if (!k || (!sizes && k->decl->nsizes) || (!args && k->decl->nparams)) return KT_INVALID;
  kt__rt_entry *e = kt__rt_find(k->runtime, sizes, k->decl->nsizes);
  if (!e) KT__FORWARD(rt_miss(k, sizes, args, &e));
  return kt__rt_run(k, e, args, stream);
}
