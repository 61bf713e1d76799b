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

#include "args.h"
#include "cluster.h"
#include "context.h"
#include "result.h"

enum { RT_MAX_SIZES = 16, RT_MAX_ARGS = 64 };

/* One configuration compiled and loaded in this process; shapes that get
 * the same configuration share it (bucketed keys make that common). */
typedef struct rt_config {
  int64_t values[KT__MAX_NAMES];
  void *fn;
} rt_config;

typedef struct rt_entry {
  bool used;
  int64_t sizes[RT_MAX_SIZES];
  void *fn;
  kt__launch launch; /* geometry; args and stream are filled per call */
} rt_entry;

struct kt__runtime_table {
  const kt__backend *be;
  void *state;       /* the backend opened in this process (on the first load) */
  bool device_known; /* DEVICE probed (before STATE exists) */
  kt__device_info device;
  rt_entry *entries;
  int cap, n;        /* cap is a power of two, at least twice n */
  rt_config *configs;
  int nconfigs;
  int nparams;
  unsigned char scalar_size[RT_MAX_ARGS]; /* 0 for tensors */
};

/* ---- the table -------------------------------------------------------- */

static uint64_t hash_sizes(const int64_t *sizes, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; i++) {
    h ^= (uint64_t)sizes[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

static rt_entry *rt_find(const kt__runtime_table *t, const int64_t *sizes, int n) {
  if (!t || !t->cap) return NULL;
  uint64_t mask = (uint64_t)(t->cap - 1);
  for (uint64_t i = hash_sizes(sizes, n) & mask;; i = (i + 1) & mask) {
    rt_entry *e = &t->entries[i];
    if (!e->used) return NULL;
    if (memcmp(e->sizes, sizes, (size_t)n * sizeof *sizes) == 0) return e;
  }
}

/* The free slot for SIZES (not in the table), growing it first if needed. */
static rt_entry *rt_slot(kt__runtime_table *t, const int64_t *sizes, int n);

static void rt_grow(kt__runtime_table *t, int nsizes) {
  rt_entry *old = t->entries;
  int oldcap = t->cap;
  t->cap = t->cap ? 2 * t->cap : 16;
  t->entries = kt__xcalloc((size_t)t->cap, sizeof *t->entries);
  t->n = 0;
  for (int i = 0; i < oldcap; i++)
    if (old[i].used) *rt_slot(t, old[i].sizes, nsizes) = old[i];
  free(old);
}

static rt_entry *rt_slot(kt__runtime_table *t, const int64_t *sizes, int n) {
  if (2 * (t->n + 1) > t->cap) rt_grow(t, n);
  uint64_t mask = (uint64_t)(t->cap - 1);
  uint64_t i = hash_sizes(sizes, n) & mask;
  while (t->entries[i].used) i = (i + 1) & mask;
  t->n++;
  return &t->entries[i];
}

void kt__runtime_free(kt__runtime_table *t) {
  if (!t) return;
  for (int i = 0; i < t->nconfigs; i++) kt__be_unload(t->be, t->state, t->configs[i].fn);
  if (t->state) kt__be_close(t->be, t->state);
  free(t->configs);
  free(t->entries);
  free(t);
}

/* ---- the hot path ----------------------------------------------------- */

static int rt_run(kt_kernel *k, const rt_entry *e, void *const *args, void *stream) {
  const kt__runtime_table *t = k->runtime;
  kt__arg argv[RT_MAX_ARGS];
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

/* ---- what a miss prints ------------------------------------------------ */

void kt__print_autotuning(const char *kernel, const char *key, const char *how, double secs, const char *config) {
  const char *env = getenv("KTUNE_PRINT_AUTOTUNING");
  if (!env || !*env || strcmp(env, "0") == 0) return;
  fprintf(stderr, "ktune: kernel %s, key [%s]: %s in %.3f s: %s\n", kernel, key, how, secs,
          config && *config ? config : "(no tuned names)");
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

void kt__config_values(const char *const *names, int n, const char *config, int64_t *values) {
  const char *p = config;
  while (*p) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, "= ");
    if (p[len] != '=') break;
    int64_t v = strtoll(p + len + 1, NULL, 10);
    for (int i = 0; i < n; i++)
      if (strlen(names[i]) == len && strncmp(names[i], p, len) == 0) values[i] = v;
    p += len + 1 + strcspn(p + len + 1, " ");
  }
}

/* Tuned names, then cluster names: the order of every values array. */
static int all_names(const kt__kernel_decl *d, const char **names) {
  for (int i = 0; i < d->ntune; i++) names[i] = d->tune[i].name;
  for (int i = 0; i < d->ncluster; i++) names[d->ntune + i] = d->cluster[i].name;
  return d->ntune + d->ncluster;
}

static void parse_config(const kt__kernel_decl *d, const char *config, int64_t *values) {
  const char *names[KT__MAX_NAMES];
  int n = all_names(d, names);
  kt__config_values(names, n, config, values);
}

static void default_values(const kt__kernel_decl *d, int64_t *values) {
  for (int i = 0; i < d->ntune; i++) values[i] = d->tune[i].values[0];
  for (int i = 0; i < d->ncluster; i++) values[d->ntune + i] = d->cluster[i].values[0];
}

static void format_values(const kt__kernel_decl *d, const int64_t *values, kt__sbuf *out) {
  const char *names[KT__MAX_NAMES];
  int n = all_names(d, names);
  for (int i = 0; i < n; i++) kt__sbuf_printf(out, "%s%s=%lld", i ? " " : "", names[i], (long long)values[i]);
}

/* The value of NAME in a "M=1 N=2" size string, or -1. */
static double size_value(const char *sizes, const char *name, size_t len) {
  for (const char *q = sizes; *q;) {
    while (*q == ' ') q++;
    size_t m = strcspn(q, "= ");
    if (q[m] != '=') break;
    if (m == len && strncmp(q, name, len) == 0) return strtod(q + m + 1, NULL);
    q += m + 1 + strcspn(q + m + 1, " ");
  }
  return -1;
}

/* Distance between two "M=1 N=2" size strings: the sum over sizes of
 * |log2 ratio|, so that 1024 is as near to 512 as to 2048. */
static double size_distance(const char *a, const char *b) {
  double dist = 0;
  for (const char *p = a; *p;) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, "= ");
    if (p[n] != '=') break;
    double va = strtod(p + n + 1, NULL), vb = size_value(b, p, n);
    dist += va > 0 && vb > 0 ? fabs(log2(va / vb)) : 64;
    p += n + 1 + strcspn(p + n + 1, " ");
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
  int64_t saved[RT_MAX_SIZES];
  bool saved_given[RT_MAX_SIZES];
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
static bool use_nearest(kt__store *store, const kt__store_key *key, const kt__kernel_decl *d, int64_t *values,
                        kt__sbuf *how) {
  nearest n = {key->sizes, INFINITY, NULL, NULL};
  kt__errbuf eb;
  if (store) kt__store_each_winner(store, key, consider_nearest, &n, &eb);
  if (n.config) {
    parse_config(d, n.config, values);
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
  default_values(d, values);
  kt__sbuf key_sizes = {0};
  kt__kernel_key_sizes(k, sizes, &key_sizes);
  kt__store *store = kt__context_store(k->ctx);
  kt__store_key key = {k->source_hash, d->name, &t->device, key_sizes.s, NULL};
  char *config = NULL;
  double secs = 0;
  int rc = KT_OK;
  kt__errbuf eb;
  if (store && kt__store_winner(store, &key, &config, &secs, &eb) == KT_OK) {
    parse_config(d, config, values);
    kt__sbuf_printf(how, "stored winner");
  } else if (can_tune(k)) {
    rc = tune_now(k, sizes, args, values);
  } else if (k->ctx->opts.miss_policy == KT_MISS_DEFAULT || !use_nearest(store, &key, d, values, how)) {
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
  format_values(k->decl, values, &shown);
  kt__print_autotuning(k->decl->name, key_sizes.s, how, secs, shown.s);
  kt__sbuf_free(&key_sizes);
  kt__sbuf_free(&shown);
}

/* ---- loading a configuration ------------------------------------------ */

/* Compiles and loads VALUES in this process, or finds it loaded already. */
static int load_config(kt_kernel *k, const int64_t *values, void **fn) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  int nnames = d->ntune + d->ncluster;
  for (int i = 0; i < t->nconfigs; i++)
    if (memcmp(t->configs[i].values, values, (size_t)nnames * sizeof *values) == 0) {
      *fn = t->configs[i].fn;
      return KT_OK;
    }
  kt__errbuf *eb = &k->ctx->err;
  const char *names[KT__MAX_NAMES];
  all_names(d, names);
  const char *workdir = kt__workdir(eb);
  if (!workdir) return KT_INVALID;
  if (!t->state) KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, eb));
  char tag[64];
  snprintf(tag, sizeof tag, "rt%p-%d", (void *)k, t->nconfigs);
  kt__build b = {k->file, d, names, values, nnames, &t->device, workdir, tag, 60.0};
  kt__artifact a = {0};
  kt__status st = kt__be_compile(t->be, &b, &a, eb);
  if (st == KT__ST_OK) st = kt__be_load(t->be, t->state, &b, &a, fn, eb);
  if (st != KT__ST_OK) {
    kt__sbuf cfg = {0}, why = {0};
    format_values(d, values, &cfg);
    kt__sbuf_printf(&why, "%s", a.log ? a.log : eb->msg); /* a copy: eb is rewritten below */
    kt__err(eb, KT_INTERNAL, "kt_launch: building %s (%s) failed:\n%s", d->name, cfg.s ? cfg.s : "", why.s);
    kt__sbuf_free(&cfg);
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

/* The launch geometry of VALUES at SIZES, and a check against the device's
 * limits where the backend has one. */
static int entry_geometry(kt_kernel *k, const int64_t *sizes, const int64_t *values, rt_entry *e) {
  const kt__kernel_decl *d = k->decl;
  kt__errbuf *eb = &k->ctx->err;
  const char *names[KT__MAX_NAMES];
  int nnames = all_names(d, names);
  kt__env size_env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  kt__env env = {names, values, nnames, &size_env};
  KT__FORWARD(kt__launch_geometry(d, &env, e->launch.grid, e->launch.block, &e->launch.shared_bytes, eb));
  kt__cluster_dims(&env, e->launch.cluster);
  e->launch.nargs = d->nparams;
  return KT_OK;
}

/* ---- a miss ----------------------------------------------------------- */

static int rt_create(kt_kernel *k) {
  const kt__kernel_decl *d = k->decl;
  KT__RETURN_IF(d->nsizes > RT_MAX_SIZES, &k->ctx->err, KT_INVALID,
                "kt_launch: kernel %s has %d runtime sizes; at most %d are supported", d->name, d->nsizes,
                RT_MAX_SIZES);
  KT__RETURN_IF(d->nparams > RT_MAX_ARGS, &k->ctx->err, KT_INVALID,
                "kt_launch: kernel %s has %d parameters; at most %d are supported", d->name, d->nparams, RT_MAX_ARGS);
  KT__RETURN_IF(d->ntune + d->ncluster > KT__MAX_NAMES, &k->ctx->err, KT_INVALID,
                "kt_launch: kernel %s has %d tuned names; at most %d are supported", d->name, d->ntune + d->ncluster,
                KT__MAX_NAMES);
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

static int rt_miss(kt_kernel *k, const int64_t *sizes, void *const *args, rt_entry **out) {
  KT__FORWARD(check_sizes(k, sizes));
  if (!k->runtime) KT__FORWARD(rt_create(k));
  KT__FORWARD(know_device(k));
  kt__runtime_table *t = k->runtime;
  double t0 = kt__now();
  int64_t values[KT__MAX_NAMES];
  kt__sbuf how = {0};
  rt_entry e = {0};
  int rc = choose_config(k, sizes, args, values, &how);
  if (rc == KT_OK) rc = load_config(k, values, &e.fn);
  if (rc == KT_OK) rc = entry_geometry(k, sizes, values, &e);
  if (rc == KT_OK && how.len) report_choice(k, sizes, how.s, values, kt__now() - t0);
  kt__sbuf_free(&how);
  KT__FORWARD(rc);
  e.used = true;
  memcpy(e.sizes, sizes, (size_t)k->decl->nsizes * sizeof *sizes);
  rt_entry *slot = rt_slot(t, sizes, k->decl->nsizes);
  *slot = e;
  *out = slot;
  return KT_OK;
}

int kt_launch(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream) {
  if (!k || (!sizes && k->decl->nsizes) || (!args && k->decl->nparams)) return KT_INVALID;
  rt_entry *e = rt_find(k->runtime, sizes, k->decl->nsizes);
  if (!e) KT__FORWARD(rt_miss(k, sizes, args, &e));
  return rt_run(k, e, args, stream);
}
