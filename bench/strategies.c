/* Replay evaluation of every search strategy on recorded spaces:
 *   strategies [-r REPEATS] [-s SEED] [-b 25,50,...] [-S name,name] [-w] [-v] [-t TRACE] FILE...
 * prints a Markdown table (mean fraction of optimum per file and overall)
 * and, with -v, one line per run on stderr. With -t, every evaluation of
 * every repeat is written to TRACE, a line each: file, strategy, budget,
 * repeat, evaluation, fraction of the optimum (0 for a failure), then the
 * configuration's values; a line "# FILE names NAME..." comes first for each
 * file (bench/space_parts.py --trace reads it). With -w, each file's tunings
 * start warm from the best configuration of every other file of the same
 * kernel (the name before the first '_': the same kernel on other GPUs), as
 * kt_tune does with winners stored for other devices. Built and run by
 * strategies.sh. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/replay.h"

enum { MAX_FILES = 64, MAX_BUDGETS = 16, MAX_STRATS = 32 };

typedef struct bench {
  int repeats, nfiles, nbudgets, nstrats, verbose, warm;
  uint64_t seed;
  const char *trace_path; /* -t */
  FILE *trace;
  long budgets[MAX_BUDGETS];
  const char *strats[MAX_STRATS];
  const char *files[MAX_FILES];
  kt__recorded *rec[MAX_FILES];
} bench;

static void parse_list(char *arg, const char **out, int *n, int max) {
  for (char *tok = strtok(arg, ","); tok && *n < max; tok = strtok(NULL, ",")) out[(*n)++] = tok;
}

static int parse_args(bench *b, int argc, char **argv) {
  *b = (bench){.repeats = 100, .seed = 1};
  const char *budgets[MAX_BUDGETS];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-r") && i + 1 < argc) b->repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc) b->seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-b") && i + 1 < argc) parse_list(argv[++i], budgets, &b->nbudgets, MAX_BUDGETS);
    else if (!strcmp(argv[i], "-S") && i + 1 < argc) parse_list(argv[++i], b->strats, &b->nstrats, MAX_STRATS);
    else if (!strcmp(argv[i], "-v")) b->verbose = 1;
    else if (!strcmp(argv[i], "-w")) b->warm = 1;
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) b->trace_path = argv[++i];
    else if (argv[i][0] == '-') return -1;
    else if (b->nfiles < MAX_FILES) b->files[b->nfiles++] = argv[i];
  }
  for (int i = 0; i < b->nbudgets; i++) b->budgets[i] = atol(budgets[i]);
  if (!b->nbudgets) {
    static const long dflt[] = {25, 50, 100, 200, 400};
    b->nbudgets = 5;
    memcpy(b->budgets, dflt, sizeof dflt);
  }
  if (!b->nstrats)
    for (const char *const *n = kt__strategy_names(); *n && b->nstrats < MAX_STRATS; n++)
      if (strcmp(*n, "exhaustive") != 0) b->strats[b->nstrats++] = *n; /* index order says nothing */
  return b->nfiles ? 0 : -1;
}

static const char *short_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void header(const bench *b) {
  printf("| strategy | budget |");
  for (int f = 0; f < b->nfiles; f++) {
    char name[128];
    snprintf(name, sizeof name, "%s", short_name(b->files[f]));
    char *dot = strstr(name, ".json");
    if (dot) *dot = 0;
    printf(" %s |", name);
  }
  printf(" mean |\n|---|---:|");
  for (int f = 0; f <= b->nfiles; f++) printf("---:|");
  printf("\n");
}

/* Same kernel: the same file name up to its first '_'. */
static bool same_kernel(const char *a, const char *b) {
  a = short_name(a);
  b = short_name(b);
  size_t n = strcspn(a, "_");
  return n == strcspn(b, "_") && strncmp(a, b, n) == 0;
}

/* With -w: the best configuration of each other file of the same kernel. */
static int warm_for(const bench *b, int f, uint64_t *warm) {
  int n = 0;
  for (int g = 0; b->warm && g < b->nfiles; g++)
    if (g != f && same_kernel(b->files[f], b->files[g]) && kt__recorded_best_in(b->rec[f], b->rec[g], &warm[n])) n++;
  return n;
}

/* What a traced evaluation is written with (-t). */
typedef struct trace_ctx {
  const bench *b;
  int file;
  const char *strat;
  long budget;
} trace_ctx;

static void trace_line(void *ud, int repeat, long eval, uint64_t index, kt__status status, double time) {
  const trace_ctx *t = ud;
  const kt__recorded *r = t->b->rec[t->file];
  const kt__space *sp = kt__recorded_space(r);
  int64_t v[KT__MAX_NAMES];
  kt__space_values(sp, index, v);
  fprintf(t->b->trace, "%s %s %ld %d %ld %.6f", short_name(t->b->files[t->file]), t->strat, t->budget, repeat, eval,
          status == KT__ST_OK ? kt__recorded_optimum(r) / time : 0.0);
  for (int d = 0; d < kt__space_ndims(sp); d++) fprintf(t->b->trace, " %lld", (long long)v[d]);
  fputc('\n', t->b->trace);
}

static void trace_names(const bench *b) {
  for (int f = 0; b->trace && f < b->nfiles; f++) {
    const kt__space *sp = kt__recorded_space(b->rec[f]);
    fprintf(b->trace, "# %s names", short_name(b->files[f]));
    for (int d = 0; d < kt__space_ndims(sp); d++) fprintf(b->trace, " %s", kt__space_name(sp, d));
    fputc('\n', b->trace);
  }
}

static int row(const bench *b, const char *strat, long budget) {
  const kt__strategy_ops *ops = kt__strategy_find(strat);
  if (!ops) {
    fprintf(stderr, "unknown strategy %s\n", strat);
    return 1;
  }
  double sum = 0;
  printf("| %s | %ld |", strat, budget);
  for (int f = 0; f < b->nfiles; f++) {
    kt__replay_stats st;
    kt__errbuf eb = {{0}};
    uint64_t warm[MAX_FILES];
    int nwarm = warm_for(b, f, warm);
    trace_ctx tc = {b, f, strat, budget};
    if (kt__replay_run_traced(b->rec[f], ops, budget, b->repeats, b->seed, warm, nwarm, &st,
                              b->trace ? trace_line : NULL, &tc, &eb) != KT_OK) {
      fprintf(stderr, "%s: %s\n", b->files[f], eb.msg);
      return 1;
    }
    if (b->verbose)
      fprintf(stderr, "%s %s %ld: mean %.4f std %.4f min %.4f below0.80 %d failed %.2f\n", short_name(b->files[f]),
              strat, budget, st.mean, st.std, st.min, st.below_080, st.failed_mean);
    printf(" %.3f |", st.mean);
    sum += st.mean;
  }
  printf(" **%.3f** |\n", sum / b->nfiles);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  bench b;
  if (parse_args(&b, argc, argv) != 0) {
    fprintf(stderr, "usage: strategies [-r REPEATS] [-s SEED] [-b 25,50] [-S a,b] [-v] [-w] [-t TRACE] FILE...\n");
    return 2;
  }
  for (int f = 0; f < b.nfiles; f++) {
    kt__errbuf eb = {{0}};
    if (kt__recorded_load(b.files[f], &b.rec[f], &eb) != KT_OK) {
      fprintf(stderr, "%s\n", eb.msg);
      return 2;
    }
  }
  if (b.trace_path && !(b.trace = fopen(b.trace_path, "w"))) {
    fprintf(stderr, "strategies: cannot write the trace %s: %s\n", b.trace_path, strerror(errno));
    return 2;
  }
  header(&b);
  trace_names(&b);
  int rc = 0;
  for (int s = 0; s < b.nstrats && !rc; s++)
    for (int i = 0; i < b.nbudgets && !rc; i++) rc = row(&b, b.strats[s], b.budgets[i]);
  for (int f = 0; f < b.nfiles; f++) kt__recorded_free(b.rec[f]);
  if (b.trace && fclose(b.trace) != 0) {
    perror("strategies: the trace");
    rc = 1;
  }
  return rc;
}
