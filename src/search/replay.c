/* Replay over T4 results files (the FAIR benchmark hub's format): a
 * "results" array whose entries hold a "configuration" object (parameter ->
 * value), an "invalidity" string ("correct", "compile", "runtime", ...) and
 * "measurements" (objective name -> value; the objective is the first of
 * "objectives", "time" by default). */
#include "replay.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "../config.h"
#include "rng.h"
#include "u64map.h"

/* Spaces bigger than this are not replayed: the table is dense. */
#define KT__REPLAY_MAX_POINTS ((uint64_t)1 << 26)
enum { MAX_VALUES = 4096 };

/* One parameter of the file with its distinct values. */
typedef struct rparam {
  char *name;
  char **keys;     /* distinct values as JSON text, in order of appearance */
  int64_t *values; /* the integer each key stands for */
  int n;
  bool numeric; /* every value an integer: VALUES are those integers */
} rparam;

struct kt__recorded {
  rparam *params;
  int nparams;
  kt__tunedim *dims; /* sorted values of each parameter, for the space */
  kt__space *space;
  unsigned char *state;    /* per index: KT__ST_* of the record, CONSTRAINT when absent */
  float *time;             /* per index, when OK */
  float *cost;             /* per index: seconds the recorded evaluation took (NAN when it holds no time) */
  double seconds_per_unit; /* of the file's "times" (its metadata's "timeunit") */
  uint64_t count, ok;
  double optimum;
  double mean_cost; /* over the records with times (NAN: none has) */
};

/* ---- reading ---- */

/* The whole file, inflated when gzip'ed (gzread passes plain files through). */
static int read_file(const char *path, char **out, size_t *len, kt__errbuf *eb) {
  gzFile f = gzopen(path, "rb");
  KT__RETURN_IF(!f, eb, KT_IO, "%s: cannot open", path);
  size_t cap = 1 << 20, n = 0;
  char *buf = kt__xmalloc(cap);
  for (;;) {
    if (cap - n < (1 << 16)) buf = kt__xrealloc(buf, cap *= 2);
    int got = gzread(f, buf + n, (unsigned)(cap - n - 1));
    if (got < 0) {
      int zerr = 0;
      const char *msg = gzerror(f, &zerr);
      int rc = kt__err(eb, KT_IO, "%s: %s", path, msg);
      gzclose(f);
      free(buf);
      return rc;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  gzclose(f);
  buf[n] = 0;
  *out = buf;
  *len = n;
  return KT_OK;
}

static json_object *member(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool json_integer(json_object *v, int64_t *out) {
  if (json_object_is_type(v, json_type_int)) {
    *out = json_object_get_int64(v);
    return true;
  }
  if (json_object_is_type(v, json_type_double)) {
    double d = json_object_get_double(v);
    if (d == floor(d) && fabs(d) < 9e15) {
      *out = (int64_t)d;
      return true;
    }
  }
  return false;
}

/* The position of V among P's distinct values, adding it when new. */
static int param_key(rparam *p, json_object *v, bool add) {
  const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
  for (int k = 0; k < p->n; k++)
    if (strcmp(p->keys[k], text) == 0) return k;
  if (!add || p->n == MAX_VALUES) return -1;
  p->keys = kt__xreallocarray(p->keys, (size_t)p->n + 1, sizeof *p->keys);
  p->values = kt__xreallocarray(p->values, (size_t)p->n + 1, sizeof *p->values);
  p->keys[p->n] = kt__xstrdup(text);
  int64_t iv = 0;
  if (!json_integer(v, &iv)) p->numeric = false;
  p->values[p->n] = iv;
  return p->n++;
}

/* The parameters are those of the first configuration, in its order. */
static int collect_params(kt__recorded *r, json_object *results, const char *path, kt__errbuf *eb) {
  json_object *cfg0 = member(json_object_array_get_idx(results, 0), "configuration");
  KT__RETURN_IF(!cfg0 || !json_object_is_type(cfg0, json_type_object), eb, KT_INVALID,
                "%s: results[0] has no \"configuration\" object", path);
  int n = json_object_object_length(cfg0);
  KT__RETURN_IF(n < 1 || n > KT__MAX_NAMES, eb, KT_INVALID, "%s: %d parameters (1 to %d expected)", path, n,
                KT__MAX_NAMES);
  r->params = kt__xcalloc((size_t)n, sizeof *r->params);
  json_object_object_foreach(cfg0, key, val) {
    (void)val;
    r->params[r->nparams].name = kt__xstrdup(key);
    r->params[r->nparams].numeric = true;
    r->nparams++;
  }
  size_t len = json_object_array_length(results);
  for (size_t i = 0; i < len; i++) {
    json_object *cfg = member(json_object_array_get_idx(results, i), "configuration");
    KT__RETURN_IF(!cfg || !json_object_is_type(cfg, json_type_object) || json_object_object_length(cfg) != r->nparams,
                  eb, KT_INVALID, "%s: results[%zu] does not set the %d parameters of results[0]", path, i, r->nparams);
    for (int p = 0; p < r->nparams; p++) {
      json_object *v = member(cfg, r->params[p].name);
      KT__RETURN_IF(!v, eb, KT_INVALID, "%s: results[%zu] has no %s", path, i, r->params[p].name);
      KT__RETURN_IF(param_key(&r->params[p], v, true) < 0, eb, KT_INVALID, "%s: %s takes more than %d values", path,
                    r->params[p].name, MAX_VALUES);
    }
  }
  return KT_OK;
}

/* A non-integer parameter (a string, a fraction) becomes its rank among
 * the values in order of appearance. */
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void build_dims(kt__recorded *r) {
  r->dims = kt__xcalloc((size_t)r->nparams, sizeof *r->dims);
  for (int p = 0; p < r->nparams; p++) {
    rparam *rp = &r->params[p];
    if (!rp->numeric)
      for (int k = 0; k < rp->n; k++) rp->values[k] = k;
    kt__tunedim *d = &r->dims[p];
    d->name = rp->name;
    d->count = rp->n;
    d->values = kt__xmalloc((size_t)rp->n * sizeof *d->values);
    memcpy(d->values, rp->values, (size_t)rp->n * sizeof *d->values);
    qsort(d->values, (size_t)rp->n, sizeof *d->values, cmp_i64);
  }
}

static kt__status status_of(const char *invalidity) {
  if (!invalidity || strcmp(invalidity, "correct") == 0) return KT__ST_OK;
  if (strcmp(invalidity, "compile") == 0) return KT__ST_COMPILE;
  if (strcmp(invalidity, "timeout") == 0) return KT__ST_TIMEOUT;
  if (strcmp(invalidity, "correctness") == 0) return KT__ST_CORRECTNESS;
  if (strncmp(invalidity, "constraint", 10) == 0) return KT__ST_CONSTRAINT;
  return KT__ST_RUNTIME;
}

static double objective_value(json_object *res) {
  const char *objective = "time";
  /* Types checked: json-c asserts on array calls with anything else. */
  json_object *objs = member(res, "objectives");
  json_object *first = json_object_is_type(objs, json_type_array) ? json_object_array_get_idx(objs, 0) : NULL;
  if (json_object_is_type(first, json_type_string)) objective = json_object_get_string(first);
  json_object *ms = member(res, "measurements");
  size_t n = json_object_is_type(ms, json_type_array) ? json_object_array_length(ms) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *m = json_object_array_get_idx(ms, i);
    json_object *name = member(m, "name"), *value = member(m, "value");
    if (!name || !value || strcmp(json_object_get_string(name), objective) != 0) continue;
    if (json_object_is_type(value, json_type_double) || json_object_is_type(value, json_type_int))
      return json_object_get_double(value);
  }
  return NAN;
}

/* A "times" entry in seconds: a number, or the sum of a list of numbers
 * ("runtimes"); NAN for anything else (a string marks a failure). */
static double time_entry(json_object *v, double seconds_per_unit) {
  if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
    return json_object_get_double(v) * seconds_per_unit;
  if (!json_object_is_type(v, json_type_array)) return NAN;
  double sum = NAN;
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    json_object *x = json_object_array_get_idx(v, i);
    if (!json_object_is_type(x, json_type_double) && !json_object_is_type(x, json_type_int)) continue;
    sum = (isnan(sum) ? 0 : sum) + json_object_get_double(x);
  }
  return sum * seconds_per_unit;
}

/* What the evaluation cost when it was recorded: the sum of its "times"
 * (compilation, runtimes, framework, search_algorithm, validation: the
 * time keys of T4), NAN when none is a number. */
static double recorded_cost(json_object *res, double seconds_per_unit) {
  static const char *const keys[] = {"compilation", "runtimes", "framework", "search_algorithm", "validation"};
  json_object *times = member(res, "times");
  double sum = NAN;
  for (size_t k = 0; times && k < sizeof keys / sizeof *keys; k++) {
    double t = time_entry(member(times, keys[k]), seconds_per_unit);
    if (!isnan(t)) sum = (isnan(sum) ? 0 : sum) + t;
  }
  return sum;
}

/* Seconds per unit of a T4 file's "timeunit" (seconds when absent). */
static int time_unit(json_object *doc, const char *path, double *out, kt__errbuf *eb) {
  static const struct {
    const char *name;
    double seconds;
  } units[] = {{"seconds", 1},         {"s", 1},     {"milliseconds", 1e-3}, {"miliseconds", 1e-3}, {"ms", 1e-3},
               {"microseconds", 1e-6}, {"us", 1e-6}, {"nanoseconds", 1e-9},  {"ns", 1e-9}};
  json_object *unit = member(member(doc, "metadata"), "timeunit");
  *out = 1;
  if (!unit) return KT_OK;
  const char *name = json_object_get_string(unit);
  for (size_t i = 0; name && i < sizeof units / sizeof *units; i++)
    if (strcasecmp(name, units[i].name) == 0) {
      *out = units[i].seconds;
      return KT_OK;
    }
  return kt__err(eb, KT_INVALID, "%s: unknown metadata.timeunit \"%s\"", path, name ? name : "");
}

/* Values of one result's configuration, in parameter order. */
static void result_values(kt__recorded *r, json_object *cfg, int64_t *values) {
  for (int p = 0; p < r->nparams; p++) {
    int k = param_key(&r->params[p], member(cfg, r->params[p].name), false);
    values[p] = r->params[p].values[k];
  }
}

static void record_one(kt__recorded *r, json_object *res) {
  int64_t values[KT__MAX_NAMES];
  result_values(r, member(res, "configuration"), values);
  uint64_t index = kt__space_index_of(r->space, values);
  if (r->state[index] != KT__ST_CONSTRAINT) return; /* a duplicate: the first stands */
  json_object *inv = member(res, "invalidity");
  kt__status st = status_of(inv ? json_object_get_string(inv) : NULL);
  double t = objective_value(res);
  if (st == KT__ST_OK && !(t > 0 && isfinite(t))) st = KT__ST_RUNTIME;
  r->state[index] = (unsigned char)st;
  if (st == KT__ST_CONSTRAINT) return;
  r->count++;
  r->cost[index] = (float)recorded_cost(res, r->seconds_per_unit);
  if (st != KT__ST_OK) return;
  r->time[index] = (float)t;
  r->ok++;
  if (t < r->optimum) r->optimum = t;
}

static int recorded_filter(void *ud, const int64_t *values) {
  const kt__recorded *r = ud;
  uint64_t index = kt__space_index_of(r->space, values);
  return index != UINT64_MAX && r->state[index] != KT__ST_CONSTRAINT;
}

static double mean_cost(const float *cost, uint64_t size) {
  double sum = 0;
  uint64_t n = 0;
  for (uint64_t i = 0; i < size; i++)
    if (!isnan(cost[i])) {
      sum += cost[i];
      n++;
    }
  return n ? sum / (double)n : NAN;
}

static int build_table(kt__recorded *r, json_object *results, const char *path, kt__errbuf *eb) {
  build_dims(r);
  KT__FORWARD(kt__space_create(r->dims, r->nparams, NULL, 0, NULL, &r->space, eb));
  uint64_t size = kt__space_size(r->space);
  KT__RETURN_IF(size > KT__REPLAY_MAX_POINTS, eb, KT_INVALID, "%s: the space of %llu points is too large to replay",
                path, (unsigned long long)size);
  r->state = kt__xmalloc(size);
  memset(r->state, KT__ST_CONSTRAINT, size);
  r->time = kt__xcalloc(size, sizeof *r->time);
  r->cost = kt__xmalloc(size * sizeof *r->cost);
  for (uint64_t i = 0; i < size; i++) r->cost[i] = NAN;
  r->optimum = INFINITY;
  size_t len = json_object_array_length(results);
  for (size_t i = 0; i < len; i++) record_one(r, json_object_array_get_idx(results, i));
  KT__RETURN_IF(r->ok == 0, eb, KT_INVALID, "%s: no configuration ran correctly", path);
  r->mean_cost = mean_cost(r->cost, size);
  kt__space_set_filter(r->space, recorded_filter, r);
  return KT_OK;
}

static int parse_doc(kt__recorded *r, const char *text, size_t len, const char *path, kt__errbuf *eb) {
  json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  json_object *doc = json_tokener_parse_ex(tok, text, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  json_tokener_free(tok);
  if (!doc || jerr != json_tokener_success) {
    json_object_put(doc);
    return kt__err(eb, KT_INVALID, "%s: not JSON (%s)", path, json_tokener_error_desc(jerr));
  }
  json_object *results = member(doc, "results");
  int rc = KT_OK;
  if (!results || !json_object_is_type(results, json_type_array) || json_object_array_length(results) == 0)
    rc = kt__err(eb, KT_INVALID, "%s: no \"results\" array: not a T4 results file", path);
  if (rc == KT_OK) rc = time_unit(doc, path, &r->seconds_per_unit, eb);
  if (rc == KT_OK) rc = collect_params(r, results, path, eb);
  if (rc == KT_OK) rc = build_table(r, results, path, eb);
  json_object_put(doc);
  return rc;
}

int kt__recorded_load(const char *path, kt__recorded **out, kt__errbuf *eb) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  KT__FORWARD(read_file(path, &text, &len, eb));
  KT__RETURN_IF(len > INT32_MAX, eb, KT_INVALID, "%s: too large", path);
  kt__recorded *r = kt__xcalloc(1, sizeof *r);
  int rc = parse_doc(r, text, len, path, eb);
  free(text);
  if (rc != KT_OK) {
    kt__recorded_free(r);
    return rc;
  }
  *out = r;
  return KT_OK;
}

void kt__recorded_free(kt__recorded *r) {
  if (!r) return;
  kt__space_free(r->space);
  for (int p = 0; p < r->nparams; p++) {
    for (int k = 0; k < r->params[p].n; k++) free(r->params[p].keys[k]);
    free(r->params[p].keys);
    free(r->params[p].values);
    free(r->params[p].name);
    if (r->dims) free(r->dims[p].values);
  }
  free(r->params);
  free(r->dims);
  free(r->state);
  free(r->time);
  free(r->cost);
  free(r);
}

const kt__space *kt__recorded_space(const kt__recorded *r) { return r->space; }
uint64_t kt__recorded_count(const kt__recorded *r) { return r->count; }
uint64_t kt__recorded_ok(const kt__recorded *r) { return r->ok; }
double kt__recorded_optimum(const kt__recorded *r) { return r->optimum; }

kt__status kt__recorded_lookup(const kt__recorded *r, uint64_t index, double *time) {
  *time = INFINITY;
  if (index >= kt__space_size(r->space)) return KT__ST_CONSTRAINT;
  kt__status st = (kt__status)r->state[index];
  if (st == KT__ST_OK) *time = r->time[index];
  return st;
}

double kt__recorded_cost(const kt__recorded *r, uint64_t index) {
  return index < kt__space_size(r->space) ? r->cost[index] : NAN;
}

double kt__recorded_mean_cost(const kt__recorded *r) { return r->mean_cost; }

/* The fastest recorded configuration of FROM, as an index of R's space:
 * the same parameter names with the same (numeric) values. What a tuning on
 * R's device would find stored by a tuning on FROM's (a warm start). */
bool kt__recorded_best_in(const kt__recorded *r, const kt__recorded *from, uint64_t *index) {
  uint64_t n = kt__space_size(from->space), best = UINT64_MAX;
  for (uint64_t i = 0; i < n; i++)
    if (from->state[i] == KT__ST_OK && (best == UINT64_MAX || from->time[i] < from->time[best])) best = i;
  if (best == UINT64_MAX) return false;
  int64_t fv[KT__MAX_NAMES], v[KT__MAX_NAMES];
  kt__space_values(from->space, best, fv);
  for (int p = 0; p < r->nparams; p++) {
    int q = 0;
    while (q < from->nparams && strcmp(from->params[q].name, r->params[p].name) != 0) q++;
    if (q == from->nparams || !r->params[p].numeric || !from->params[q].numeric) return false;
    v[p] = fv[q];
  }
  uint64_t idx = kt__space_index_of(r->space, v);
  if (idx == UINT64_MAX || r->state[idx] == KT__ST_CONSTRAINT) return false;
  *index = idx;
  return true;
}

/* ---- simulation ---- */

uint64_t kt__replay_seed(uint64_t seed, int i) {
  uint64_t x = seed ^ ((uint64_t)(unsigned)i * 0xd1b54a32d192ed03u);
  return kt__splitmix64(&x);
}

typedef struct one_run {
  double best;
  long evals, failed;
  double spent;  /* recorded seconds of the evaluations made */
  double *curve; /* NULL, or curve[i] += t_opt / best after i+1 evaluations, for i < len */
  long len;
  int repeat; /* from 0, for the trace */
} one_run;

/* What a repeat may spend: BUDGET evaluations (0: no limit), SECONDS of
 * recorded evaluation time (INFINITY: no limit); and who is told each
 * evaluation (kt__replay_run_traced). */
typedef struct limits {
  long budget;
  double seconds;
  kt__replay_trace_fn *trace;
  void *trace_ud;
} limits;

/* The run's score so far: t_opt / best found, 0 before anything ran. */
static double fraction(const kt__recorded *r, const one_run *run) {
  return isfinite(run->best) ? r->optimum / run->best : 0.0;
}

/* "Runs" INDEX: counts it, keeps the best time, tells the trace and the
 * strategy. */
static void evaluate(const kt__recorded *r, kt__strategy *st, const limits *lim, uint64_t index, one_run *run) {
  double t;
  kt__status status = kt__recorded_lookup(r, index, &t);
  run->evals++;
  run->failed += status != KT__ST_OK;
  if (t < run->best) run->best = t;
  if (run->curve && run->evals <= run->len) run->curve[run->evals - 1] += fraction(r, run);
  if (lim->trace) lim->trace(lim->trace_ud, run->repeat, run->evals, index, status, t);
  kt__strategy_tell(st, index, status, t);
}

/* A repeat that stopped before LEN evaluations keeps its last score. */
static void finish_curve(const kt__recorded *r, one_run *run) {
  for (long i = run->evals; run->curve && i < run->len; i++) run->curve[i] += fraction(r, run);
}

static double cost_of(const kt__recorded *r, uint64_t index) {
  double c = kt__recorded_cost(r, index);
  return isnan(c) ? 0 : c; /* a record without times costs nothing, as in the methodology's replay */
}

/* Whether evaluating INDEX fits what is left. Under a time budget an
 * evaluation that would end past it is not made, and the repeat ends there,
 * as a tuning's does at its deadline: the tuner cannot know a compile's
 * length before it ends, so it cannot pick a shorter one instead. */
static bool fits(const kt__recorded *r, const limits *lim, const one_run *run, uint64_t index) {
  if (lim->budget > 0 && run->evals >= lim->budget) return false;
  return !isfinite(lim->seconds) || run->spent + cost_of(r, index) <= lim->seconds;
}

/* Evaluates INDEX and, under a time budget, tells the strategy what it cost
 * and what is left (the spent op), as the tuner does. */
static void evaluate_timed(const kt__recorded *r, kt__strategy *st, const limits *lim, uint64_t index, one_run *run) {
  double cost = cost_of(r, index);
  run->spent += cost;
  evaluate(r, st, lim, index, run);
  if (isfinite(lim->seconds)) kt__strategy_spent(st, index, cost, lim->seconds - run->spent);
}

/* The number of evaluations a strategy plans for (annealing cools over it):
 * the budget, or under a time budget as many mean-cost evaluations as fit. */
static long planned(const kt__recorded *r, const limits *lim) {
  if (!isfinite(lim->seconds)) return lim->budget;
  double mean = kt__recorded_mean_cost(r);
  return mean > 0 ? (long)ceil(lim->seconds / mean) : 0;
}

/* Evaluates the WARM configurations first (as kt_tune does with stored
 * winners), then asks one configuration at a time, as a tuner with one
 * device would. */
static int replay_once(const kt__recorded *r, const kt__strategy_ops *ops, const limits *lim, uint64_t seed,
                       const uint64_t *warm, int nwarm, one_run *run, kt__errbuf *eb) {
  *run = (one_run){.best = INFINITY, .curve = run->curve, .len = run->len, .repeat = run->repeat};
  kt__strategy *st = kt__strategy_create(ops, r->space, seed, planned(r, lim));
  KT__RETURN_IF(!st, eb, KT_INTERNAL, "strategy %s could not start", ops->name);
  kt__u64map seen = {0};
  int rc = KT_OK;
  for (int w = 0; w < nwarm && fits(r, lim, run, warm[w]); w++)
    if (kt__u64map_put(&seen, warm[w], 0)) evaluate_timed(r, st, lim, warm[w], run);
  uint64_t index;
  while ((lim->budget == 0 || run->evals < lim->budget) && kt__strategy_ask(st, &index, 1) == 1) {
    bool fresh = kt__u64map_put(&seen, index, 0);
    if (!fresh || !kt__space_valid_index(r->space, index)) {
      rc = kt__err(eb, KT_INTERNAL, "strategy %s proposed %s configuration %llu", ops->name,
                   fresh ? "an invalid" : "an already evaluated", (unsigned long long)index);
      break;
    }
    if (!fits(r, lim, run, index)) break;
    evaluate_timed(r, st, lim, index, run);
  }
  finish_curve(r, run);
  kt__u64map_free(&seen);
  kt__strategy_free(st);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void summarise(double *frac, int n, kt__replay_stats *st) {
  double sum = 0, sq = 0;
  for (int i = 0; i < n; i++) sum += frac[i];
  st->mean = sum / n;
  for (int i = 0; i < n; i++) sq += (frac[i] - st->mean) * (frac[i] - st->mean);
  st->std = sqrt(sq / n);
  qsort(frac, (size_t)n, sizeof *frac, cmp_double);
  st->min = frac[0];
  st->max = frac[n - 1];
  st->median = n % 2 ? frac[n / 2] : 0.5 * (frac[n / 2 - 1] + frac[n / 2]);
  st->below_080 = 0;
  while (st->below_080 < n && frac[st->below_080] < 0.80) st->below_080++;
}

int kt__replay_run(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                   const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__errbuf *eb) {
  return kt__replay_run_curve(r, ops, budget, repeats, seed, warm, nwarm, st, NULL, 0, eb);
}

static int replay_repeats(const kt__recorded *r, const kt__strategy_ops *ops, const limits *lim, int repeats,
                          uint64_t seed, const uint64_t *warm, int nwarm, kt__replay_stats *st, double *curve, long len,
                          kt__errbuf *eb) {
  KT__RETURN_IF(repeats < 1, eb, KT_INVALID, "repeats must be at least 1");
  *st = (kt__replay_stats){.repeats = repeats};
  double *frac = kt__xmalloc((size_t)repeats * sizeof *frac);
  if (curve) memset(curve, 0, (size_t)len * sizeof *curve);
  int rc = KT_OK;
  for (int i = 0; i < repeats && rc == KT_OK; i++) {
    one_run run = {.curve = curve, .len = curve ? len : 0, .repeat = i};
    rc = replay_once(r, ops, lim, kt__replay_seed(seed, i), warm, nwarm, &run, eb);
    frac[i] = fraction(r, &run);
    st->evals_mean += (double)run.evals / repeats;
    st->seconds_mean += run.spent / repeats;
    st->failed_mean += (double)run.failed / repeats;
  }
  for (long i = 0; curve && i < len; i++) curve[i] /= repeats;
  if (rc == KT_OK) summarise(frac, repeats, st);
  free(frac);
  return rc;
}

/* A budget of BUDGET evaluations, with or without a curve and a trace. */
static int replay_counted(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                          const uint64_t *warm, int nwarm, kt__replay_stats *st, double *curve, long len,
                          kt__replay_trace_fn *trace, void *ud, kt__errbuf *eb) {
  KT__RETURN_IF(budget < 0, eb, KT_INVALID, "the budget must not be negative");
  limits lim = {budget, INFINITY, trace, ud};
  return replay_repeats(r, ops, &lim, repeats, seed, warm, nwarm, st, curve, len, eb);
}

int kt__replay_run_curve(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                         const uint64_t *warm, int nwarm, kt__replay_stats *st, double *curve, long len,
                         kt__errbuf *eb) {
  return replay_counted(r, ops, budget, repeats, seed, warm, nwarm, st, curve, len, NULL, NULL, eb);
}

int kt__replay_run_traced(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                          const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__replay_trace_fn *trace, void *ud,
                          kt__errbuf *eb) {
  return replay_counted(r, ops, budget, repeats, seed, warm, nwarm, st, NULL, 0, trace, ud, eb);
}

int kt__replay_run_timed(const kt__recorded *r, const kt__strategy_ops *ops, double seconds, int repeats, uint64_t seed,
                         const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__errbuf *eb) {
  KT__RETURN_IF(!(seconds > 0 && isfinite(seconds)), eb, KT_INVALID,
                "the time budget must be a positive number of seconds");
  limits lim = {0, seconds, NULL, NULL};
  return replay_repeats(r, ops, &lim, repeats, seed, warm, nwarm, st, NULL, 0, eb);
}
