/* The autotuning_methodology score (src/search/methodology.h) of search
 * strategies on recorded spaces:
 *   methodology [-r REPEATS] [-s SEED] [-S name,name] [-t DIR] [-x DIR] FILE...
 * prints a Markdown table: each strategy's score per file and their mean
 * (the package's aggregate), after a table of each file's time window.
 * "default" is the strategy a tuning with only a time budget picks (the
 * window's end plus 10%). With -t, each file's repeats are written
 * to DIR/STRATEGY_FILE.tsv (repeat, cumulative seconds, best so far) for
 * bench/methodology_check.py, which scores them with the package itself.
 * With -x, nothing is replayed: each strategy's repeats are read from
 * DIR/STRATEGY_FILE.tsv in that format (another tool's runs, such as Kernel
 * Tuner's strategies from bench/peers/kernel_tuner_replay.py) and scored.
 * Built and run by methodology.sh. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/methodology.h"
#include "search/policy.h"

enum { MAX_FILES = 64, MAX_STRATS = 32 };

typedef struct bench {
  int repeats, nfiles, nstrats;
  uint64_t seed;
  const char *traces; /* -t DIR */
  const char *given;  /* -x DIR */
  const char *strats[MAX_STRATS];
  const char *files[MAX_FILES];
  kt__recorded *rec[MAX_FILES];
} bench;

static int parse_args(bench *b, int argc, char **argv) {
  *b = (bench){.repeats = 100, .seed = 1};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-r") && i + 1 < argc) b->repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc) b->seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) b->traces = argv[++i];
    else if (!strcmp(argv[i], "-x") && i + 1 < argc) b->given = argv[++i];
    else if (!strcmp(argv[i], "-S") && i + 1 < argc)
      for (char *tok = strtok(argv[++i], ","); tok && b->nstrats < MAX_STRATS; tok = strtok(NULL, ","))
        b->strats[b->nstrats++] = tok;
    else if (argv[i][0] == '-') return -1;
    else if (b->nfiles < MAX_FILES) b->files[b->nfiles++] = argv[i];
  }
  if (!b->nstrats) {
    b->strats[b->nstrats++] = "default";
    for (const char *const *n = kt__strategy_names(); *n && b->nstrats < MAX_STRATS; n++)
      if (strcmp(*n, "exhaustive") != 0) b->strats[b->nstrats++] = *n;
  }
  return b->nfiles && b->repeats > 0 ? 0 : -1;
}

static void file_name(const char *path, char *name, size_t len) {
  const char *s = strrchr(path, '/');
  snprintf(name, len, "%s", s ? s + 1 : path);
  char *dot = strstr(name, ".json");
  if (dot) *dot = 0;
}

static int print_windows(const bench *b) {
  printf("| file | valid | optimum | median | evaluations to 1%% .. 95%% | window (s) | s per evaluation "
         "(median; baseline's) |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (int f = 0; f < b->nfiles; f++) {
    kt__method_window w;
    kt__errbuf eb = {{0}};
    if (kt__method_window_of(b->rec[f], KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, &eb) != KT_OK) {
      fprintf(stderr, "%s: %s\n", b->files[f], eb.msg);
      return 1;
    }
    char name[128];
    file_name(b->files[f], name, sizeof name);
    printf("| %s | %" PRIu64 " | %.4g | %.4g | %ld .. %ld | %.2f .. %.2f | %.3f; %.3f |\n", name,
           kt__recorded_ok(b->rec[f]), w.optimum, w.median, w.fevals_start, w.fevals_end, w.t_start, w.t_end,
           w.median_cost, w.cost_per_feval);
  }
  printf("\n");
  return 0;
}

/* The strategy that "default" stands for on R: what a tuning with only a
 * time budget (the window's end plus 10%) picks, since the score's axis is
 * seconds (kt__strategy_choose; before, the count default for the
 * evaluations that time holds, which made it ils on dedispersion_W6600). */
static const kt__strategy_ops *ops_for(const char *strat, const kt__recorded *r) {
  if (strcmp(strat, "default") != 0) return kt__strategy_find(strat);
  kt__method_window w;
  kt__errbuf eb = {{0}};
  if (kt__method_window_of(r, KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, &eb) != KT_OK) return NULL;
  return kt__strategy_choose(NULL, kt__recorded_ok(r), 0, w.t_end * 1.1, 0).ops;
}

/* With -t: the repeats' traces of STRAT on file F, replayed again. */
static int write_traces(const bench *b, const char *strat, int f, const kt__strategy_ops *ops) {
  char name[128], path[1024];
  file_name(b->files[f], name, sizeof name);
  snprintf(path, sizeof path, "%s/%s_%s.tsv", b->traces, strat, name);
  FILE *out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "%s: cannot write\n", path);
    return 1;
  }
  kt__method_trace *traces = NULL;
  int n = 0;
  kt__errbuf eb = {{0}};
  int rc = kt__method_traces(b->rec[f], ops, b->repeats, b->seed, &traces, &n, &eb);
  for (int i = 0; rc == KT_OK && i < n; i++)
    for (long j = 0; j < traces[i].n; j++) fprintf(out, "%d\t%.17g\t%.17g\n", i, traces[i].time[j], traces[i].best[j]);
  kt__method_traces_free(traces, n);
  fclose(out);
  if (rc != KT_OK) fprintf(stderr, "%s: %s\n", b->files[f], eb.msg);
  return rc != KT_OK;
}

/* With -x: the repeats in DIR/STRAT_FILE.tsv ("repeat seconds best" lines,
 * repeats numbered from 0 in order, best "nan" before any valid value). */
static int read_traces(const char *path, kt__method_trace **out, int *n) {
  FILE *in = fopen(path, "r");
  if (!in) return -1;
  int cap = 0, nt = 0, rep;
  long cap_e = 0;
  double t, best;
  char word[64];
  kt__method_trace *tr = NULL;
  double *time = NULL, *bestv = NULL;
  while (fscanf(in, "%d %lf %63s", &rep, &t, word) == 3) {
    best = strcmp(word, "nan") ? strtod(word, NULL) : NAN;
    if (rep >= nt) { /* a new repeat: close the last one */
      if (nt == cap) tr = realloc(tr, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *tr);
      tr[nt++] = (kt__method_trace){NULL, NULL, 0};
      time = bestv = NULL;
      cap_e = 0;
    }
    kt__method_trace *cur = &tr[nt - 1];
    if (cur->n == cap_e) {
      cap_e = cap_e ? 2 * cap_e : 256;
      time = realloc((double *)cur->time, (size_t)cap_e * sizeof *time);
      bestv = realloc((double *)cur->best, (size_t)cap_e * sizeof *bestv);
      cur->time = time;
      cur->best = bestv;
    }
    time[cur->n] = t;
    bestv[cur->n++] = best;
  }
  fclose(in);
  *out = tr;
  *n = nt;
  return nt > 0 ? 0 : -1;
}

static int given_score(const bench *b, const char *strat, int f, double *score) {
  char name[128], path[1024];
  file_name(b->files[f], name, sizeof name);
  snprintf(path, sizeof path, "%s/%s_%s.tsv", b->given, strat, name);
  kt__method_trace *traces = NULL;
  int n = 0;
  if (read_traces(path, &traces, &n) != 0) {
    fprintf(stderr, "%s: cannot read repeats\n", path);
    return 1;
  }
  kt__method_window w;
  kt__errbuf eb = {{0}};
  int rc = kt__method_window_of(b->rec[f], KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, &eb);
  if (rc == KT_OK) rc = kt__method_score_traces(b->rec[f], &w, traces, n, score, &eb);
  if (rc != KT_OK) fprintf(stderr, "%s: %s\n", path, eb.msg);
  kt__method_traces_free(traces, n);
  return rc != KT_OK;
}

static int row(const bench *b, const char *strat) {
  double sum = 0;
  printf("| %s |", strat);
  for (int f = 0; f < b->nfiles && b->given; f++) {
    double score;
    if (given_score(b, strat, f, &score)) return 1;
    printf(" %.3f |", score);
    sum += score;
  }
  for (int f = 0; f < b->nfiles && !b->given; f++) {
    const kt__strategy_ops *ops = ops_for(strat, b->rec[f]);
    if (!ops) {
      fprintf(stderr, "unknown strategy %s\n", strat);
      return 1;
    }
    kt__method_result res;
    kt__errbuf eb = {{0}};
    if (kt__method_score(b->rec[f], ops, b->repeats, b->seed, &res, &eb) != KT_OK) {
      fprintf(stderr, "%s: %s\n", b->files[f], eb.msg);
      return 1;
    }
    if (b->traces && write_traces(b, strat, f, ops)) return 1;
    printf(" %.3f |", res.score);
    sum += res.score;
  }
  printf(" **%.3f** |\n", sum / b->nfiles);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  bench b;
  if (parse_args(&b, argc, argv) != 0) {
    fprintf(stderr, "usage: methodology [-r REPEATS] [-s SEED] [-S a,b] [-t DIR] [-x DIR] FILE...\n");
    return 2;
  }
  for (int f = 0; f < b.nfiles; f++) {
    kt__errbuf eb = {{0}};
    if (kt__recorded_load(b.files[f], &b.rec[f], &eb) != KT_OK) {
      fprintf(stderr, "%s\n", eb.msg);
      return 2;
    }
  }
  int rc = print_windows(&b);
  printf("| strategy |");
  for (int f = 0; f < b.nfiles; f++) {
    char name[128];
    file_name(b.files[f], name, sizeof name);
    printf(" %s |", name);
  }
  printf(" mean |\n|---|");
  for (int f = 0; f <= b.nfiles; f++) printf("---:|");
  printf("\n");
  for (int s = 0; s < b.nstrats && !rc; s++) rc = row(&b, b.strats[s]);
  for (int f = 0; f < b.nfiles; f++) kt__recorded_free(b.rec[f]);
  return rc;
}
