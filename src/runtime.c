/* kt_launch: launch the stored winner for a shape with next to no overhead.
 *
 * The hot path is one hash lookup of the sizes in an in-memory table, then
 * the backend's launch: no allocation, no parsing, no SQLite. A miss (a shape
 * not seen in this process) finds the winner in the results database, or
 * applies the context's miss policy (tune now, nearest stored size, or the
 * default), compiles and loads that configuration in this process, and adds
 * it to the table. */
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

enum { RT_MAX_SIZES = 16 };

typedef struct rt_entry {
  bool used;
  int64_t sizes[RT_MAX_SIZES];
  void *fn;
  char *artifact_path;
  kt__launch launch; /* geometry; args are filled per call */
} rt_entry;

struct kt__runtime_table {
  const kt__backend *be;
  void *state;              /* the backend opened in this process */
  bool device_known;
  kt__device_info device;
  rt_entry *entries;
  int cap, n;               /* cap is a power of two */
  kt__arg *argv;            /* per-call scratch, one per @kernel parameter */
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
  for (uint64_t i = hash_sizes(sizes, n) & (uint64_t)(t->cap - 1);; i = (i + 1) & (uint64_t)(t->cap - 1)) {
    rt_entry *e = &t->entries[i];
    if (!e->used) return NULL;
    if (memcmp(e->sizes, sizes, (size_t)n * sizeof *sizes) == 0) return e;
  }
}

static rt_entry *rt_insert(kt__runtime_table *t, const int64_t *sizes, int n);

static void rt_grow(kt__runtime_table *t, int nsizes) {
  rt_entry *old = t->entries;
  int oldcap = t->cap;
  t->cap = t->cap ? 2 * t->cap : 16;
  t->entries = kt__xcalloc((size_t)t->cap, sizeof *t->entries);
  t->n = 0;
  for (int i = 0; i < oldcap; i++)
    if (old[i].used) *rt_insert(t, old[i].sizes, nsizes) = old[i];
  free(old);
}

static rt_entry *rt_insert(kt__runtime_table *t, const int64_t *sizes, int n) {
  if (2 * (t->n + 1) > t->cap) rt_grow(t, n);
  uint64_t i = hash_sizes(sizes, n) & (uint64_t)(t->cap - 1);
  while (t->entries[i].used) i = (i + 1) & (uint64_t)(t->cap - 1);
  rt_entry *e = &t->entries[i];
  e->used = true;
  memcpy(e->sizes, sizes, (size_t)n * sizeof *sizes);
  t->n++;
  return e;
}

void kt__runtime_free(kt__runtime_table *t) {
  if (!t) return;
  for (int i = 0; i < t->cap; i++)
    if (t->entries[i].used) {
      kt__be_unload(t->be, t->state, t->entries[i].fn);
      free(t->entries[i].artifact_path);
    }
  kt__be_close(t->be, t->state);
  free(t->entries);
  free(t->argv);
  free(t);
}

/* ---- the hot path ----------------------------------------------------- */

static int rt_run(kt_kernel *k, rt_entry *e, void *const *args, void *stream) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nparams; i++) {
    kt__arg *a = &t->argv[i];
    if (d->params[i].is_tensor) {
      a->buf = args[i];
    } else {
      memcpy(a->scalar, args[i], a->size);
    }
  }
  kt__launch l = e->launch;
  l.args = t->argv;
  l.stream = stream;
  kt__status st = kt__be_run(t->be, t->state, e->fn, &l, &k->ctx->err);
  return st == KT__ST_OK ? KT_OK : KT_INTERNAL;
}

/* ---- a miss: choose, compile and load a configuration ----------------- */

static void print_choice(const kt_kernel *k, const char *key, const char *how, const char *config, double secs) {
  const char *env = getenv("KTUNE_PRINT_AUTOTUNING");
  if (!env || !*env || strcmp(env, "0") == 0) return;
  fprintf(stderr, "ktune: kernel %s, key [%s]: %s in %.3f s: %s\n", k->decl->name, key, how, secs,
          config && *config ? config : "(default)");
}

/* The device's identity as the tuner sees it, read in a short-lived child
 * so that no GPU driver is initialised in this process before any tuning
 * (a forked worker could not use it afterwards). */
static int probe_device(const kt__backend *be, int index, kt__device_info *info, kt__errbuf *eb) {
  int fds[2];
  if (pipe(fds) != 0) return kt__err(eb, KT_IO, "pipe: cannot probe the device");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    void *state = NULL;
    kt__device_info di;
    struct {
      int rc;
      kt__device_info info;
      kt__errbuf eb;
    } reply = {0};
    reply.rc = kt__be_open(be, index, &state, &di, &reply.eb);
    reply.info = di;
    if (write(fds[1], &reply, sizeof reply) != (ssize_t)sizeof reply) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  struct {
    int rc;
    kt__device_info info;
    kt__errbuf eb;
  } reply = {0};
  ssize_t got = pid > 0 ? read(fds[0], &reply, sizeof reply) : -1;
  close(fds[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  if (got != (ssize_t)sizeof reply) return kt__err(eb, KT_NOBACKEND, "%s: the device probe failed", be->name);
  if (reply.rc != KT_OK) return kt__err(eb, reply.rc, "%s", reply.eb.msg);
  *info = reply.info;
  return KT_OK;
}

static int parse_config(const kt__kernel_decl *d, const char *config, int64_t *values) {
  const char *p = config;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    size_t n = strcspn(p, "=");
    if (!p[n]) return KT_INVALID;
    int64_t v = strtoll(p + n + 1, NULL, 10);
    for (int i = 0; i < d->ntune; i++)
      if (strlen(d->tune[i].name) == n && strncmp(d->tune[i].name, p, n) == 0) values[i] = v;
    for (int i = 0; i < d->ncluster; i++)
      if (strlen(d->cluster[i].name) == n && strncmp(d->cluster[i].name, p, n) == 0) values[d->ntune + i] = v;
    p += n + 1 + strcspn(p + n + 1, " ");
  }
  return KT_OK;
}

static void default_values(const kt__kernel_decl *d, int64_t *values) {
  for (int i = 0; i < d->ntune; i++) values[i] = d->tune[i].values[0];
  for (int i = 0; i < d->ncluster; i++) values[d->ntune + i] = d->cluster[i].values[0];
}

/* Distance between two "M=1 N=2" size strings: sum of |log2 ratio|. */
static double size_distance(const char *a, const char *b) {
  double dist = 0;
  for (const char *p = a; *p;) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, "=");
    if (!p[n]) break;
    double va = strtod(p + n + 1, NULL), vb = -1;
    for (const char *q = b; *q;) {
      while (*q == ' ') q++;
      size_t m = strcspn(q, "=");
      if (!q[m]) break;
      if (m == n && strncmp(p, q, n) == 0) vb = strtod(q + m + 1, NULL);
      q += m + 1 + strcspn(q + m + 1, " ");
    }
    dist += va > 0 && vb > 0 ? fabs(log2(va / vb)) : 64;
    p += n + 1 + strcspn(p + n + 1, " ");
  }
  return dist;
}

typedef struct nearest {
  const char *want;
  double best;
  char *config;
} nearest;

static void consider_nearest(void *ud, const char *sizes, const char *config, double seconds) {
  nearest *n = ud;
  double dist = size_distance(n->want, sizes);
  if (dist < n->best) {
    n->best = dist;
    free(n->config);
    n->config = kt__xstrdup(config);
  }
}

/* Tunes now, for these sizes, with the kernel's own generated data. */
static int tune_now(kt_kernel *k, const int64_t *sizes, int64_t *values) {
  for (int i = 0; i < k->decl->nsizes; i++) {
    k->sizes[i] = sizes[i];
    k->size_given[i] = true;
  }
  kt_result *r = NULL;
  kt_tune_options o = {0};
  int rc = kt_tune(k, &o, &r);
  if (rc == KT_OK) memcpy(values, r->trials[r->winner].values, (size_t)r->nnames * sizeof *values);
  kt_result_destroy(r);
  return rc;
}

/* Which configuration this shape gets: stored winner, else per policy. */
static int choose_config(kt_kernel *k, const int64_t *sizes, int64_t *values) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  double t0 = kt__now();
  default_values(d, values);
  kt__sbuf key_sizes = {0};
  kt__kernel_key_sizes(k, sizes, &key_sizes);
  kt__store *store = kt__context_store(k->ctx);
  kt__store_key key = {k->source_hash, d->name, &t->device, key_sizes.s, NULL};
  char *config = NULL;
  double secs = 0;
  const char *how = "default configuration";
  int rc = KT_OK;
  kt__errbuf eb;
  if (store && kt__store_winner(store, &key, &config, &secs, &eb) == KT_OK) {
    how = "stored winner";
  } else if (k->ctx->opts.miss_policy == KT_MISS_TUNE && !(t->state && t->be != &kt__backend_cpu)) {
    how = "tuned";
    rc = tune_now(k, sizes, values);
  } else if (store && k->ctx->opts.miss_policy != KT_MISS_DEFAULT) {
    nearest n = {key_sizes.s, INFINITY, NULL};
    kt__store_each_winner(store, &key, consider_nearest, &n, &eb);
    if (n.config) how = "nearest stored size";
    config = n.config;
  }
  if (config) parse_config(d, config, values);
  kt__sbuf shown = {0};
  for (int i = 0; i < d->ntune + d->ncluster; i++)
    kt__sbuf_printf(&shown, "%s%s=%lld", i ? " " : "", i < d->ntune ? d->tune[i].name : d->cluster[i - d->ntune].name,
                    (long long)values[i]);
  print_choice(k, key_sizes.s, how, shown.s, kt__now() - t0);
  kt__sbuf_free(&shown);
  free(config);
  kt__sbuf_free(&key_sizes);
  return rc;
}

static int load_entry(kt_kernel *k, const int64_t *sizes, const int64_t *values, rt_entry *e) {
  kt__runtime_table *t = k->runtime;
  const kt__kernel_decl *d = k->decl;
  kt__errbuf *eb = &k->ctx->err;
  const char *names[KT__MAX_NAMES + RT_MAX_SIZES];
  int64_t env_values[KT__MAX_NAMES + RT_MAX_SIZES];
  int n = 0;
  for (int i = 0; i < d->ntune; i++) names[n] = d->tune[i].name, env_values[n++] = values[i];
  for (int i = 0; i < d->ncluster; i++) names[n] = d->cluster[i].name, env_values[n++] = values[d->ntune + i];
  const char *workdir = kt__workdir(eb);
  if (!workdir) return KT_IO;
  if (!t->state) KT__FORWARD(kt__be_open(t->be, k->ctx->opts.device, &t->state, &t->device, eb));
  char tag[64];
  snprintf(tag, sizeof tag, "rt%p-%d", (void *)k, t->n);
  kt__build b = {k->file, d, names, env_values, n, &t->device, workdir, tag, 60.0};
  kt__artifact a;
  kt__status st = kt__be_compile(t->be, &b, &a, eb);
  if (st == KT__ST_OK) st = kt__be_load(t->be, t->state, &b, &a, &e->fn, eb);
  if (st != KT__ST_OK) {
    if (a.log) kt__err(eb, KT_INTERNAL, "kt_launch: building %s failed:\n%s", d->name, a.log);
    kt__artifact_free(&a);
    return KT_INTERNAL;
  }
  e->artifact_path = a.path ? kt__xstrdup(a.path) : NULL;
  kt__artifact_free(&a);
  kt__env size_env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  kt__env env = {names, env_values, n, &size_env};
  KT__FORWARD(kt__launch_geometry(d, &env, e->launch.grid, e->launch.block, &e->launch.shared_bytes, eb));
  kt__cluster_dims(&env, e->launch.cluster);
  e->launch.nargs = d->nparams;
  return KT_OK;
}

static int rt_create(kt_kernel *k) {
  const kt__kernel_decl *d = k->decl;
  if (d->nsizes > RT_MAX_SIZES)
    return kt__err(&k->ctx->err, KT_INVALID, "kt_launch: kernel %s has %d runtime sizes; at most %d are supported",
                   d->name, d->nsizes, RT_MAX_SIZES);
  kt__runtime_table *t = kt__xcalloc(1, sizeof *t);
  t->be = k->backend;
  t->argv = kt__xcalloc((size_t)d->nparams + 1, sizeof *t->argv);
  for (int i = 0; i < d->nparams; i++) {
    t->argv[i].is_tensor = d->params[i].is_tensor;
    t->argv[i].size = d->params[i].is_tensor ? 0 : kt__dtype_size(d->params[i].type);
  }
  k->runtime = t;
  return KT_OK;
}

static int rt_miss(kt_kernel *k, const int64_t *sizes, rt_entry **out) {
  const kt__kernel_decl *d = k->decl;
  for (int i = 0; i < d->nsizes; i++)
    if (sizes[i] <= 0)
      return kt__err(&k->ctx->err, KT_INVALID, "kt_launch: size %s is %lld; sizes must be positive", d->sizes[i],
                     (long long)sizes[i]);
  if (!k->runtime) KT__FORWARD(rt_create(k));
  kt__runtime_table *t = k->runtime;
  if (!t->device_known) {
    KT__FORWARD(probe_device(t->be, k->ctx->opts.device, &t->device, &k->ctx->err));
    t->device_known = true;
  }
  int64_t values[KT__MAX_NAMES];
  KT__FORWARD(choose_config(k, sizes, values));
  rt_entry e = {0};
  KT__FORWARD(load_entry(k, sizes, values, &e));
  rt_entry *slot = rt_insert(t, sizes, d->nsizes);
  memcpy(e.sizes, slot->sizes, sizeof e.sizes);
  e.used = true;
  *slot = e;
  *out = slot;
  return KT_OK;
}

int kt_launch(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream) {
  rt_entry *e = rt_find(k->runtime, sizes, k->decl->nsizes);
  if (!e) KT__FORWARD(rt_miss(k, sizes, &e));
  return rt_run(k, e, args, stream);
}
