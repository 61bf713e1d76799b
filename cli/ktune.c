/* ktune: the command line. Uses only the public API in ktune.h.
 *
 *   ktune COMMAND [OPERANDS] [options]   (the commands and options: the table in cli/options.c;
 *                                         `ktune help COMMAND` prints them)
 *
 * Exit status: 0 done, 1 no valid configuration or nothing found (a read
 * command's --db that does not exist, a filter that matches nothing), 2 bad
 * input or a results database error, 130 interrupted (SIGINT, SIGTERM,
 * SIGHUP). */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device_list.h"
#include "help.h"
#include "key_parent.h"
#include "key_process.h"
#include "keys.h"
#include "ktune.h"
#include "mpi_sweep.h"
#include "options.h"
#include "stop_signals.h"
#include "sweep.h"

enum { EXIT_BAD_INPUT = 2, MAX_DIMS = 64, MAX_GIVEN = 512 };

/* The command line as given: a sweep's key that tunes in a process of its
 * own runs it again with that key's sizes. */
static int g_argc;
static char **g_argv;

typedef struct cli {
  const char *command;
  const char *file;
  const char *kernel;
  const char *t1; /* --t1 KERNEL_T1.json instead of FILE */
  const char *backend;
  int device;
  const char *dims[MAX_DIMS];
  int ndims;
  const char *warm[MAX_DIMS]; /* replay --warm files */
  int nwarm;
  const char *inputs[MAX_DIMS], *expects[MAX_DIMS]; /* --input, --expect */
  int ninputs, nexpects;
  const char *check;
  const char *sizes; /* tune/bench --sizes FILE: one key a line */
  const char *pin;
  const char *strategy;
  const char *timing;    /* tune/bench --timing auto|graph|events */
  const char *objective; /* tune/bench --objective time|energy|edp */
  const char *budget;
  const char *db;
  const char *seed;
  const char *timeout;
  const char *compile_timeout;
  const char *jobs;
  const char *repeats;
  const char *format;
  const char *device_filter;
  const char *key;    /* report --key "M=... N=..." */
  const char *report; /* tune/replay --report FILE, report -o FILE */
  const char *positional[4];
  int npositional;
  int json, quiet, no_cache, no_db, show_output, retry_failed, no_binary_cache, binaries;
  int help;                     /* --help, -h: the command's help instead of the command */
  const char *given[MAX_GIVEN]; /* the options as written, checked against the command */
  int ngiven;
  int device_given;    /* --device N was written: `ktune space` counts what fits it */
  device_list devices; /* tune/bench --device N, 0,2,3 or all */
  int mpi;             /* tune --mpi: the keys shared by MPI ranks (cli/mpi_sweep.c) */
} cli;

/* The backends' names into OUT, joined by SEP, the last by LAST. */
static void backend_names(char *out, size_t len, const char *sep, const char *last) {
  size_t used = 0;
  out[0] = 0;
  for (int k = KT_BACKEND_AUTO + 1; kt_backend_name(k) && used < len; k++) {
    const char *before = k == KT_BACKEND_AUTO + 1 ? "" : kt_backend_name(k + 1) ? sep : last;
    used += (size_t)snprintf(out + used, len - used, "%s%s", before, kt_backend_name(k));
  }
}

static int bad(const char *fmt, const char *arg) {
  fprintf(stderr, "ktune: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(run `ktune help` for usage)\n");
  return EXIT_BAD_INPUT;
}

static int parse_int(const char *s, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* A flag's effect on C. */
static void take_flag(cli *c, option_id id) {
  switch (id) {
  case OPT_HELP: c->help = 1; break;
  case OPT_JSON: c->json = 1; break;
  case OPT_QUIET: c->quiet = 1; break;
  case OPT_NO_CACHE: c->no_cache = 1; break;
  case OPT_NO_DB: c->no_db = 1; break;
  case OPT_NO_BINARY_CACHE: c->no_binary_cache = 1; break;
  case OPT_BINARIES: c->binaries = 1; break;
  case OPT_SHOW_OUTPUT: c->show_output = 1; break;
  case OPT_RETRY_FAILED: c->retry_failed = 1; break;
  case OPT_MPI: c->mpi = 1; break;
  default: break;
  }
}

/* Appends V to a repeated option's list (at most MAX_DIMS). */
static int append(const char **list, int *n, const char *opt, const char *v) {
  if (*n == MAX_DIMS) {
    fprintf(stderr, "ktune: error: too many %s options (at most %d): %s\n", opt, MAX_DIMS, v);
    return EXIT_BAD_INPUT;
  }
  list[(*n)++] = v;
  return 0;
}

/* Where the value V of option ID goes. */
static int take_value(cli *c, option_id id, const char *v) {
  switch (id) {
  case OPT_DIM: return append(c->dims, &c->ndims, "--dim", v);
  case OPT_INPUT: return append(c->inputs, &c->ninputs, "--input", v);
  case OPT_EXPECT: return append(c->expects, &c->nexpects, "--expect", v);
  case OPT_WARM: return append(c->warm, &c->nwarm, "--warm", v);
  case OPT_DEVICE_NAME: c->device_filter = v; return 0;
  case OPT_DEVICE: {
    char err[512];
    if (device_list_parse(v, &c->devices, err, sizeof err) != 0) return bad("%s", err);
    c->device = c->devices.all ? 0 : c->devices.index[0];
    c->device_given = 1;
    return 0;
  }
  case OPT_KERNEL: c->kernel = v; return 0;
  case OPT_T1: c->t1 = v; return 0;
  case OPT_BACKEND: c->backend = v; return 0;
  case OPT_SIZES: c->sizes = v; return 0;
  case OPT_AUTOTUNE: c->pin = v; return 0;
  case OPT_CHECK: c->check = v; return 0;
  case OPT_STRATEGY: c->strategy = v; return 0;
  case OPT_TIMING: c->timing = v; return 0;
  case OPT_OBJECTIVE: c->objective = v; return 0;
  case OPT_BUDGET: c->budget = v; return 0;
  case OPT_SEED: c->seed = v; return 0;
  case OPT_DB: c->db = v; return 0;
  case OPT_JOBS: c->jobs = v; return 0;
  case OPT_TIMEOUT: c->timeout = v; return 0;
  case OPT_COMPILE_TIMEOUT: c->compile_timeout = v; return 0;
  case OPT_FORMAT: c->format = v; return 0;
  case OPT_KEY: c->key = v; return 0;
  case OPT_REPORT:
  case OPT_OUTPUT: c->report = v; return 0;
  case OPT_REPEATS: c->repeats = v; return 0;
  default: return 0;
  }
}

/* An option no command has: named, with the likely one it misspells. */
static int unknown_option(const cli *c, const char *a) {
  const char *near = option_suggest(a);
  if (near) fprintf(stderr, "ktune: error: unknown option %s; did you mean %s?\n", a, near);
  else fprintf(stderr, "ktune: error: unknown option %s (`ktune %s --help` lists the options)\n", a, c->command);
  return EXIT_BAD_INPUT;
}

/* Reads the options and operands after the command word. Which options
 * apply is checked afterwards (check_options), once a cache verb is known;
 * MASK is the commands the word may be (every cache verb for cache), so
 * that an option written alike for several (--device) takes its value the
 * way this command means it. */
static int parse_args(int argc, char **argv, unsigned mask, cli *c) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == 0) { /* an operand; "-" is stdin */
      if (c->npositional == 4) return bad("unexpected argument %s", a);
      c->positional[c->npositional++] = a;
      continue;
    }
    const option_spec *o = option_find(a, mask);
    if (!o) return unknown_option(c, a);
    if (c->ngiven < MAX_GIVEN) c->given[c->ngiven++] = a;
    if (!o->value) {
      take_flag(c, o->id);
      continue;
    }
    if (i + 1 >= argc) return bad("option %s needs a value", a);
    int rc = take_value(c, o->id, argv[++i]);
    if (rc) return rc;
  }
  return 0;
}

/* Every option given applies to the command (its CMD_ bit BIT). */
static int check_options(const cli *c, unsigned bit, const char *name) {
  for (int i = 0; i < c->ngiven; i++) {
    const option_spec *o = option_find(c->given[i], bit);
    if (o->commands & bit) continue;
    unsigned where = 0;
    for (size_t j = 0; j < noptions; j++)
      if (strcmp(options[j].name, o->name) == 0) where |= options[j].commands;
    char list[512];
    command_list(where, list, sizeof list);
    fprintf(stderr,
            "ktune: error: %s does not apply to `ktune %s` (it is an option of %s; `ktune %s --help` lists %s's)\n",
            c->given[i], name, list, name, name);
    return EXIT_BAD_INPUT;
  }
  return 0;
}

static int backend_kind(const char *name, kt_backend_kind *out) {
  *out = KT_BACKEND_AUTO;
  for (int k = KT_BACKEND_AUTO + 1; name && kt_backend_name(k); k++)
    if (strcmp(name, kt_backend_name(k)) == 0) {
      *out = (kt_backend_kind)k;
      return 0;
    }
  return name ? -1 : 0;
}

/* --budget 100 (configurations) or --budget 30s (seconds). */
static int parse_budget(const char *s, kt_tune_options *o) {
  if (!s) return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v <= 0) return -1;
  if (strcmp(end, "s") == 0) o->budget_s = v;
  else if (*end == 0 && v == (long)v) o->budget_configs = (long)v;
  else return -1;
  return 0;
}

/* --strategy is checked here, so that the message names the flag (the
 * library names what it was given, not where it came from). */
static int check_strategy(const char *name) {
  if (!name || kt_strategy_summary(name)) return 0;
  char names[1024] = "";
  size_t len = 0;
  for (const char *const *n = kt_strategy_names(); *n && len < sizeof names; n++)
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", *n);
  fprintf(stderr, "ktune: error: --strategy %s: no such strategy; choose one of: %s\n", name, names);
  return EXIT_BAD_INPUT;
}

static int fail(kt_context *ctx, int rc) {
  const char *msg = kt_errmsg(ctx);
  if (msg && *msg) {
    fputs(msg, stderr);
    if (msg[strlen(msg) - 1] != '\n') fputc('\n', stderr);
  } else {
    fprintf(stderr, "ktune: error: %s\n", kt_strerror(rc));
  }
  return kt_exit_status(rc);
}

/* A report that could not be written: the message names the file. */
static int fail_report(kt_context *ctx) {
  fprintf(stderr, "ktune: error: %s\n", kt_errmsg(ctx));
  return EXIT_BAD_INPUT;
}

static int make_context(const cli *c, kt_context **ctx) {
  kt_options o = {0};
  if (backend_kind(c->backend, &o.backend) != 0) {
    char names[256], fmt[300];
    backend_names(names, sizeof names, ", ", " or ");
    snprintf(fmt, sizeof fmt, "--backend %%s: expected %s", names);
    return bad(fmt, c->backend);
  }
  o.labels = (kt_labels){.kernel = "--kernel",
                         .size = "--dim",
                         .pin = "--autotune",
                         .db = "--db",
                         .input = "--input",
                         .expect = "--expect",
                         .check = "--check"};
  o.device = c->device;
  o.db_path = c->db;
  o.no_db = c->no_db;
  o.no_binary_cache = c->no_binary_cache;
  o.quiet = c->quiet;
  long n;
  if (c->jobs) {
    if (parse_int(c->jobs, 1, 4096, &n) != 0) return bad("--jobs %s: expected a number of threads", c->jobs);
    o.jobs = (int)n;
  }
  if (c->timeout) {
    char *end;
    o.run_timeout_s = strtod(c->timeout, &end);
    if (end == c->timeout || *end || !(o.run_timeout_s > 0))
      return bad("--timeout %s: expected seconds, e.g. --timeout 10", c->timeout);
  }
  if (c->compile_timeout) {
    char *end;
    o.compile_timeout_s = strtod(c->compile_timeout, &end);
    if (end == c->compile_timeout || *end || !(o.compile_timeout_s > 0))
      return bad("--compile-timeout %s: expected seconds, e.g. --compile-timeout 120", c->compile_timeout);
  }
  if (kt_context_create(&o, ctx) != KT_OK) { /* a malformed KTUNE_* limit in the environment */
    fprintf(stderr, "%s\n", kt_errmsg(*ctx));
    kt_context_destroy(*ctx);
    return EXIT_BAD_INPUT;
  }
  return 0;
}

/* tune, bench and space take FILE or --t1, not both: checked before
 * anything is made, so that the usage error is exit status 2. */
static int check_kernel_source(const cli *c) {
  if (c->t1 && (c->file || c->kernel))
    return bad("--t1 names the kernel and its file; give no FILE or --kernel beside it (%s)", c->t1);
  if (!c->file && !c->t1) return bad("%s needs a kernel FILE (or --t1 KERNEL_T1.json)", c->command);
  return 0;
}

/* Two FLAG (--input, --expect) values for one tensor: the last would win
 * silently, and every configuration be judged on data the user did not
 * mean; exit status 2 naming both. */
static int check_one_file_per_tensor(const char *flag, const char *const *specs, int n) {
  for (int i = 0; i < n; i++) {
    size_t len = strcspn(specs[i], "=");
    for (int j = 0; j < i; j++)
      if (strncmp(specs[i], specs[j], len) == 0 && specs[j][len] == '=') {
        fprintf(stderr, "ktune: error: %s %s and %s %s name the same tensor %.*s: give one file per tensor\n", flag,
                specs[j], flag, specs[i], (int)len, specs[i]);
        return EXIT_BAD_INPUT;
      }
  }
  return 0;
}

/* The kernel at the sizes SIZES ("NAME=VALUE" each), with the pins and data. */
static int load_kernel(const cli *c, kt_context *ctx, char *const *sizes, int nsizes, kt_kernel **k) {
  int rc = c->t1 ? kt_kernel_load_t1(ctx, c->t1, k) : kt_kernel_load_file(ctx, c->file, c->kernel, k);
  for (int i = 0; rc == KT_OK && i < nsizes; i++) rc = kt_kernel_set_size_arg(*k, sizes[i]);
  if (rc == KT_OK && c->pin) rc = kt_kernel_pin(*k, c->pin);
  for (int i = 0; rc == KT_OK && i < c->ninputs; i++) rc = kt_kernel_set_input(*k, c->inputs[i]);
  for (int i = 0; rc == KT_OK && i < c->nexpects; i++) rc = kt_kernel_set_expect(*k, c->expects[i]);
  if (rc == KT_OK && c->check) rc = kt_kernel_set_check(*k, c->check);
  return rc;
}

/* The tuning options from the command line; exit status 2 on bad input. */
static int tune_options(const cli *c, int bench, kt_tune_options *o) {
  *o = (kt_tune_options){0};
  o->bench_only = bench;
  o->strategy = c->strategy;
  o->no_cache = c->no_cache || bench;
  o->show_output = c->show_output;
  o->retry_failed = c->retry_failed;
  if (parse_budget(c->budget, o) != 0)
    return bad("--budget %s: expected a number of configurations or seconds (30s)", c->budget);
  if (check_strategy(c->strategy)) return EXIT_BAD_INPUT;
  if (c->timing) {
    static const char *const words[] = {
        [KT_TIMING_AUTO] = "auto", [KT_TIMING_GRAPH] = "graph", [KT_TIMING_EVENTS] = "events"};
    int i = 0;
    while (i < 3 && strcmp(c->timing, words[i]) != 0) i++;
    if (i == 3)
      return bad("--timing %s: expected auto (chosen per configuration), graph (each sample's launches replayed from a "
                 "CUDA graph) or events (events around launches made one by one)",
                 c->timing);
    o->timing = (kt_timing)i;
  }
  if (c->objective) {
    static const char *const words[] = {
        [KT_OBJECTIVE_TIME] = "time", [KT_OBJECTIVE_ENERGY] = "energy", [KT_OBJECTIVE_EDP] = "edp"};
    int i = 0;
    while (i < 3 && strcmp(c->objective, words[i]) != 0) i++;
    if (i == 3)
      return bad("--objective %s: expected time (seconds per launch), energy (joules per launch) or edp (joules "
                 "times seconds)",
                 c->objective);
    o->objective = (kt_objective)i;
  }
  if (c->seed) {
    long s;
    if (parse_int(c->seed, 0, 0x7fffffffL, &s) != 0) return bad("--seed %s: expected a non-negative integer", c->seed);
    o->seed = (uint64_t)s;
  }
  return 0;
}

/* The keys of the run from --dim and --sizes; exit status 2 on bad input. */
static int tune_keys(const cli *c, keys *ks) {
  char err[1024];
  if (keys_build(c->dims, c->ndims, c->sizes, ks, err, sizeof err) != 0) return bad("%s", err);
  if (ks->n > 1 && c->report)
    return keys_free(ks),
           bad("--report %s shows one key; a run of several keys is shown by `ktune report --db PATH`", c->report);
  return 0;
}

/* A tuning whose result is worth printing: it ran, even if nothing won or
 * the database could not keep it. */
static int printable(int rc) { return rc == KT_OK || rc == KT_NOVALID || rc == KT_INTERRUPTED || rc == KT_STORE; }

/* Every key's kernel loads and takes its sizes, so that a bad key is exit
 * status 2 before any key is tuned. A key from a --sizes line is named by
 * its FILE:LINE. */
static int check_keys(const cli *c, kt_context *ctx, const keys *ks, const char **backend) {
  for (int i = 0; i < ks->n; i++) {
    kt_kernel *k = NULL;
    int rc = load_kernel(c, ctx, ks->list[i].sizes, ks->list[i].nsizes, &k);
    if (rc == KT_OK) *backend = kt_kernel_backend(k); /* the registry's name: outlives K */
    kt_kernel_destroy(k);
    if (rc == KT_OK) continue;
    if (ks->list[i].where[0]) fprintf(stderr, "ktune: error: %s: in this key:\n", ks->list[i].where);
    return fail(ctx, rc);
  }
  return 0;
}

/* A tuning that could not open its device: when --device names one the
 * backend lacks (--device 7 on a machine with one), the message names the
 * option and how to list the devices instead of the backend's own words. */
static int fail_tuning(const cli *c, kt_context *ctx, kt_kernel *kernel, int rc) {
  int count;
  if (rc != KT_NOBACKEND || !c->device_given || !kernel) return fail(ctx, rc);
  char *why = strdup(kt_errmsg(ctx) ? kt_errmsg(ctx) : ""); /* the count may overwrite it */
  char err[512];
  device_list one = c->devices;
  if (kt_kernel_device_count(kernel, &count) == KT_OK &&
      device_list_resolve(&one, count, kt_kernel_backend(kernel), err, sizeof err) != 0) {
    free(why);
    fprintf(stderr, "ktune: error: %s\n", err);
    return EXIT_BAD_INPUT;
  }
  if (why && *why) fprintf(stderr, "%s%s", why, why[strlen(why) - 1] == '\n' ? "" : "\n");
  else fprintf(stderr, "ktune: error: %s\n", kt_strerror(rc));
  free(why);
  return kt_exit_status(rc);
}

/* Tunes key I of KS and prints its result (a table, or its JSON document,
 * after a comma when it is not the first of several). Returns kt_tune's
 * code, with its message printed unless it is KT_OK (*STATUS: the exit
 * status it means); *R is the result, to be destroyed by the caller. */
static int tune_key(const cli *c, kt_context *ctx, const kt_tune_options *o, const keys *ks, int i, kt_result **r,
                    int *status) {
  const key *k = &ks->list[i];
  if (ks->n > 1 && !c->quiet) fprintf(stderr, "ktune: key %d/%d: %s\n", i + 1, ks->n, k->label);
  kt_kernel *kernel = NULL;
  int rc = load_kernel(c, ctx, k->sizes, k->nsizes, &kernel);
  if (rc == KT_OK) rc = kt_tune(kernel, o, r);
  if (*r && printable(rc)) {
    if (c->json && ks->n > 1 && i > 0) fputs(",\n", stdout);
    if (c->json) kt_result_print_json(*r, stdout);
    else kt_result_print_table(*r, stdout);
  }
  *status = rc == KT_OK ? 0 : fail_tuning(c, ctx, kernel, rc);
  kt_kernel_destroy(kernel);
  return rc;
}

/* Whether each key of a sweep tunes in a ktune process of its own: only
 * when KTUNE_SWEEP_PROCESSES=1 asks for it. A CUDA sweep once had to (the
 * first key's NVRTC compiles load the CUDA driver into this process, and a
 * worker forked from it cannot use the GPU); the later keys' tunings now
 * start their zygote as a fresh image (docs/DESIGN.md, "A zygote of a fresh
 * image"), so every backend tunes its keys here. */
static int keys_in_own_processes(void) {
  const char *force = getenv("KTUNE_SWEEP_PROCESSES");
  return force && strcmp(force, "1") == 0;
}

/* Runs key I of KS in a ktune process of its own; its table or JSON
 * document reaches stdout (after a comma when it is not the first), its
 * messages stderr. Returns the process's exit status (130 when it was
 * stopped by a signal). */
static int tune_key_in_process(const cli *c, const keys *ks, int i) {
  const key *k = &ks->list[i];
  if (!c->quiet) fprintf(stderr, "ktune: key %d/%d: %s (in a process of its own)\n", i + 1, ks->n, k->label);
  fflush(NULL);
  /* The device as resolved (--device all on one device is 0), so that no
   * key's process lists the devices again. */
  static const char *const drop[] = {"--device", NULL};
  char device[16];
  snprintf(device, sizeof device, "%d", c->device);
  const char *const extra[] = {"--device", device, NULL};
  key_command cmd = {.argc = g_argc, .argv = g_argv, .drop = c->device_given ? drop : NULL};
  key_process p;
  if (key_process_start(&p, &cmd, k, c->device_given ? extra : NULL, c->json) != 0) {
    fprintf(stderr, "ktune: error: cannot start ktune for key %s: %s\n", k->label, strerror(errno));
    return kt_exit_status(KT_INTERNAL);
  }
  int status = key_process_wait(&p);
  if (p.len) { /* the key's JSON document */
    if (i > 0) fputs(",\n", stdout);
    fwrite(p.out, 1, p.len, stdout);
  }
  key_process_free(&p);
  return status;
}

/* --device 0,2,3 or all: the indices, checked against the devices of the
 * kernel's backend before any key is tuned; exit status 2 on bad input. */
static int resolve_devices(const cli *c, kt_context *ctx, const keys *ks, device_list *out) {
  *out = c->devices;
  kt_kernel *k = NULL;
  int count = 0, status = 0;
  int rc = load_kernel(c, ctx, ks->list[0].sizes, ks->list[0].nsizes, &k);
  if (rc == KT_OK) rc = kt_kernel_device_count(k, &count);
  char err[512];
  if (rc != KT_OK) status = fail(ctx, rc);
  else if (device_list_resolve(out, count, kt_kernel_backend(k), err, sizeof err) != 0)
    fprintf(stderr, "ktune: error: %s\n", err), status = EXIT_BAD_INPUT;
  kt_kernel_destroy(k);
  if (status == 0 && ks->n == 1 && out->n > 1 && !c->quiet) /* docs/DESIGN.md: why one device measures a key */
    fprintf(stderr, "ktune: one key: measured on device %d alone (several keys are dealt to several devices)\n",
            out->index[0]);
  return status;
}

/* The keys dealt to several devices, a ktune process each (cli/sweep.c). */
static int tune_on_devices(const cli *c, const keys *ks, const device_list *devs, char *novalid, int *tuned) {
  static const char *const drop[] = {"--device", NULL};
  key_command cmd = {.argc = g_argc, .argv = g_argv, .drop = drop};
  sweep s = {.cmd = &cmd,
             .ks = ks,
             .devices = devs->index,
             .ndevices = devs->n,
             .json = c->json,
             .quiet = c->quiet,
             .novalid = novalid};
  int status = sweep_run(&s);
  *tuned = s.tuned;
  return status;
}

/* After the keys of a sweep: which had no valid configuration. */
static void sweep_summary(const keys *ks, int tuned, const char *novalid, int quiet) {
  int n = 0;
  for (int i = 0; i < tuned; i++) n += novalid[i];
  if (!quiet || n)
    fprintf(stderr, "ktune: %d of %d keys tuned, %d with a winner, %d without a valid configuration\n", tuned, ks->n,
            tuned - n, n);
  for (int i = 0; i < tuned; i++)
    if (novalid[i]) fprintf(stderr, "ktune: no valid configuration for key %s\n", ks->list[i].label);
}

/* The results key of key I (mpi_key_id_fn): its kernel and key sizes. */
static int mpi_key_of(void *ud, int i, mpi_key_id *id) {
  const cli *c = ((void **)ud)[0];
  kt_context *ctx = ((void **)ud)[1];
  const keys *ks = ((void **)ud)[2];
  kt_kernel *k = NULL;
  int rc = load_kernel(c, ctx, ks->list[i].sizes, ks->list[i].nsizes, &k);
  if (rc == KT_OK) rc = kt_kernel_key_sizes(k, id->sizes, sizeof id->sizes);
  if (rc == KT_OK) snprintf(id->kernel, sizeof id->kernel, "%s", kt_kernel_name(k));
  if (rc != KT_OK) fail(ctx, rc);
  kt_kernel_destroy(k);
  return rc == KT_OK ? 0 : -1;
}

/* tune --mpi: refused where it cannot do what it is asked (exit 2, before
 * MPI starts); then rank 0 checks the keys and deals them, and the other
 * ranks tune what they are dealt (cli/mpi_sweep.c). */
static int cmd_tune_mpi(const cli *c) {
  if (c->no_db)
    return bad("%s gathers every rank's results into rank 0's database; --no-db leaves it none: drop --no-db "
               "(--db PATH names that database, on rank 0's local disk)",
               "--mpi");
  if (c->report)
    return bad("--mpi: --report %s would be written by whichever rank tunes the key; run `ktune report --db PATH` "
               "on rank 0's database afterwards",
               c->report);
  int rank, rc = mpi_check_launcher();
  if (rc || (rc = mpi_start(&rank)) != 0) return rc;
  /* Every rank resolves --device against its own host's devices; rank 0
   * also checks every key before dealing any. */
  kt_tune_options o;
  keys ks = {0};
  kt_context *ctx = NULL;
  const char *backend = NULL;
  device_list devs = {.n = 1, .index = {c->device}};
  if ((rc = tune_options(c, 0, &o)) == 0 && (rc = tune_keys(c, &ks)) == 0 && (rc = make_context(c, &ctx)) == 0) {
    if (rank == 0) rc = check_keys(c, ctx, &ks, &backend);
    if (rc == 0 && device_list_several(&c->devices)) rc = resolve_devices(c, ctx, &ks, &devs);
  }
  mpi_run run = {g_argc, g_argv, devs.index, rc ? 0 : devs.n, c->json, c->quiet};
  int status;
  if (rank != 0) status = mpi_worker(&run); /* with no device (RC), it leaves at once */
  else {
    void *ud[] = {(void *)c, ctx, &ks};
    status = rc ? mpi_abandon(rc) : mpi_dealer(&run, ctx, &ks, mpi_key_of, ud);
  }
  kt_context_destroy(ctx);
  keys_free(&ks);
  return status;
}

/* tune and bench: each key in turn in one process. Later keys compile
 * nothing the binary cache holds and warm-start from the keys stored before
 * them; a key already stored is not measured again. A key without a valid
 * configuration does not stop the others (exit status 1 at the end); an
 * interruption or a database error does. */
static int cmd_tune(const cli *c, int bench) {
  if (bench && !c->pin) return bad("%s needs --autotune \"NAME=VALUE ...\" (the configuration to time)", "bench");
  if (c->mpi) return cmd_tune_mpi(c); /* bench refuses --mpi: cli/options.c */
  kt_tune_options o;
  keys ks;
  int rc = tune_options(c, bench, &o);
  if (rc || (rc = tune_keys(c, &ks)) != 0) return rc;
  kt_context *ctx;
  if ((rc = make_context(c, &ctx)) != 0) return keys_free(&ks), rc;
  if (c->report && kt_report_check(ctx, c->report) != KT_OK) { /* before the work, not after */
    int status = fail_report(ctx);
    kt_context_destroy(ctx);
    keys_free(&ks);
    return status;
  }
  const char *backend = NULL; /* of the keys' kernel, when there are several */
  int status = ks.n > 1 ? check_keys(c, ctx, &ks, &backend) : 0;
  device_list devs = c->devices; /* "all" is 0..n-1: its first is c->device, the context's */
  if (status == 0 && device_list_several(&c->devices)) status = resolve_devices(c, ctx, &ks, &devs);
  int dealt = status == 0 && ks.n > 1 && devs.n > 1;
  char *novalid = calloc((size_t)ks.n, 1);
  if (!novalid) status = bad("%s", "out of memory");
  int tuned = 0;
  if (status == 0) stop_signals_install();
  int open_document = status == 0 && c->json && ks.n > 1; /* closed however the run ends */
  if (open_document) fputs("{\"keys\": [\n", stdout);
  int own = !dealt && status == 0 && ks.n > 1 && keys_in_own_processes();
  if (dealt || own) key_parent_mark(); /* key processes end with this one, even a SIGKILLed one */
  if (dealt && status == 0) status = tune_on_devices(c, &ks, &devs, novalid, &tuned);
  for (int i = 0; own && status == 0 && i < ks.n; i++) {
    int key_status = tune_key_in_process(c, &ks, i);
    tuned += key_status == 0 || key_status == kt_exit_status(KT_NOVALID);
    if (key_status == kt_exit_status(KT_NOVALID)) novalid[i] = 1;
    else if (key_status != 0) status = key_status;
  }
  for (int i = 0; !own && !dealt && status == 0 && i < ks.n; i++) {
    kt_result *r = NULL;
    int key_status;
    rc = tune_key(c, ctx, &o, &ks, i, &r, &key_status);
    tuned += printable(rc);
    if (rc == KT_NOVALID) novalid[i] = 1;
    else if (rc != KT_OK) status = key_status;
    /* The report shows what the result shows, however the tuning ended. */
    if (r && printable(rc) && c->report && kt_result_report(ctx, r, c->report) != KT_OK) {
      int report_status = fail_report(ctx);
      if (status == 0) status = report_status;
    }
    kt_result_destroy(r);
  }
  if (open_document) fputs("]}\n", stdout);
  if (ks.n > 1 && (status == 0 || tuned)) sweep_summary(&ks, tuned, novalid, c->quiet);
  if (status == 0)
    for (int i = 0; i < ks.n; i++)
      if (novalid[i]) status = kt_exit_status(KT_NOVALID);
  free(novalid);
  kt_context_destroy(ctx);
  keys_free(&ks);
  return status;
}

static int cmd_space(const cli *c) {
  if (device_list_several(&c->devices))
    return bad("--device %s: `ktune space` counts what fits one device; give one index (see `ktune devices`)",
               c->devices.spec);
  kt_context *ctx;
  int rc = make_context(c, &ctx);
  if (rc) return rc;
  kt_kernel *k = NULL;
  rc = load_kernel(c, ctx, (char *const *)c->dims, c->ndims, &k);
  if (rc == KT_OK)
    rc = c->device_given ? kt_space_print_device(k, stdout, c->json) : kt_space_print(k, stdout, c->json);
  int status = rc == KT_OK ? 0 : fail(ctx, rc);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  return status;
}

static int cmd_devices(const cli *c) {
  kt_context *ctx;
  int rc = make_context(c, &ctx);
  if (rc) return rc;
  rc = kt_devices_print(ctx, stdout, c->json);
  int status = rc == KT_OK ? 0 : fail(ctx, rc);
  kt_context_destroy(ctx);
  return status;
}

/* The database's and replay's messages name no file of their own, so the
 * line says who speaks. */
static int fail_command(kt_context *ctx, int rc) {
  const char *msg = kt_errmsg(ctx);
  fprintf(stderr, "ktune: error: %s\n", msg && *msg ? msg : kt_strerror(rc));
  return kt_exit_status(rc);
}

/* A command that reads the database (cache, report): what it was asked for
 * is not there (no database at --db, nothing matching the filter) is exit
 * status 1, as a tuning that found nothing valid; bad input stays 2. */
static int fail_reading(kt_context *ctx, int rc) {
  int status = fail_command(ctx, rc);
  return rc == KT_NOTFOUND ? 1 : status;
}

/* --db names a file that does not exist: a read command says so (exit 1)
 * instead of reading it as an empty database, and creates nothing. */
static int missing_db(const cli *c) {
  struct stat sb;
  if (!c->db || stat(c->db, &sb) == 0) return 0;
  fprintf(stderr,
          "ktune: error: no results database at %s (--db): check the path; `ktune tune FILE --db %s` creates one\n",
          c->db, c->db);
  return 1;
}

/* One of the verbs on the context's database. */
static int cache_verb(const cli *c, kt_context *ctx, const char *verb) {
  kt_cache_filter f = {c->kernel, c->device_filter, c->key};
  if (strcmp(verb, "list") == 0) return kt_cache_list(ctx, &f, c->json, stdout);
  if (strcmp(verb, "show") == 0) return kt_cache_show(ctx, &f, c->json ? "json" : c->format, stdout);
  if (strcmp(verb, "export") == 0) return kt_cache_export(ctx, &f, c->format, stdout);
  if (strcmp(verb, "import") == 0) return kt_cache_import(ctx, c->positional[1], stdout);
  if (c->binaries) return kt_binary_cache_clear(ctx, stdout);
  return kt_cache_clear(ctx, &f, stdout);
}

static int cmd_cache(const cli *c) {
  const char *verb = c->positional[0]; /* known: check_verb */
  if (c->binaries && (c->kernel || c->device_filter || c->key))
    return bad("%s: --binaries goes with `cache clear` alone (the binary cache is cleared whole)", verb);
  if (strcmp(verb, "import") == 0 && c->npositional < 2)
    return bad("%s needs a FILE to import (- for stdin)", "cache import");
  if (strcmp(verb, "import") != 0 && missing_db(c)) return 1;
  kt_context *ctx;
  int rc = make_context(c, &ctx);
  if (rc) return rc;
  rc = cache_verb(c, ctx, verb);
  int status = rc == KT_OK ? 0 : fail_reading(ctx, rc);
  kt_context_destroy(ctx);
  return status;
}

static int cmd_replay(const cli *c) {
  if (!c->file) return bad("%s needs a T4 results file (RESULTS.json or .json.gz)", "replay");
  long repeats = 100, seed = 1;
  kt_tune_options budget = {0}; /* --budget N or Ns, as tune reads it */
  if (parse_budget(c->budget, &budget) != 0)
    return bad("--budget %s: expected a number of configurations or of seconds (60s)", c->budget);
  if (budget.budget_s > 0 && c->report)
    return bad("--report with --budget %s: the report plots progress per evaluation, so it needs a budget of "
               "configurations (--budget 100)",
               c->budget);
  if (c->repeats && parse_int(c->repeats, 1, 1000000, &repeats) != 0)
    return bad("--repeats %s: expected a positive number", c->repeats);
  if (c->seed && parse_int(c->seed, 0, 0x7fffffffL, &seed) != 0)
    return bad("--seed %s: expected a non-negative integer", c->seed);
  kt_context *ctx;
  int rc = make_context(c, &ctx);
  if (rc) return rc;
  if (c->report) {
    signal(SIGXFSZ, SIG_IGN); /* as in cmd_report */
    rc = kt_report_check(ctx, c->report);
  }
  if (rc == KT_OK && budget.budget_s > 0)
    rc = kt_replay_seconds(ctx, c->file, c->strategy, budget.budget_s, (int)repeats, (uint64_t)seed, c->warm, c->nwarm,
                           c->json, stdout);
  else if (rc == KT_OK)
    rc = kt_replay(ctx, c->file, c->strategy, budget.budget_configs, (int)repeats, (uint64_t)seed, c->warm, c->nwarm,
                   c->json, stdout);
  if (rc == KT_OK && c->report)
    rc = kt_replay_report(ctx, c->file, budget.budget_configs, (int)repeats, (uint64_t)seed, c->warm, c->nwarm,
                          c->report);
  int status = rc == KT_OK ? 0 : fail_command(ctx, rc);
  kt_context_destroy(ctx);
  return status;
}

static int cmd_report(const cli *c) {
  if (c->npositional) return bad("unexpected argument %s (report takes options only)", c->positional[0]);
  signal(SIGXFSZ, SIG_IGN); /* a file-size limit fails the write, reported, instead of killing us mid-file */
  if (missing_db(c)) return 1;
  kt_context *ctx;
  int rc = make_context(c, &ctx);
  if (rc) return rc;
  kt_cache_filter f = {c->kernel, c->device_filter, c->key};
  const char *path = c->report ? c->report : "report.html";
  rc = kt_report(ctx, &f, path);
  if (rc == KT_OK && !c->quiet) fprintf(stderr, "ktune: report written to %s\n", path);
  int status = rc == KT_OK ? 0 : fail_reading(ctx, rc);
  kt_context_destroy(ctx);
  return status;
}

/* `ktune help [COMMAND [VERB]]`, and `ktune help --man`: the man page's
 * COMMANDS and OPTIONS (docs/ktune.1, scripts/update-manpage.sh). */
static int cmd_help(int argc, char **argv) {
  if (argc < 3) return help_usage(stdout), 0;
  if (strcmp(argv[2], "--man") == 0) return help_man_sections(stdout), 0;
  if (help_command(stdout, argv[2], argc > 3 ? argv[3] : NULL) == 0) return 0;
  const char *near = option_suggest(argv[2]);
  fprintf(stderr, "ktune: error: help: no command %s%s%s", argv[2], argc > 3 ? " " : "", argc > 3 ? argv[3] : "");
  if (near) fprintf(stderr, "; did you mean `ktune help %s`?\n", near);
  else fputs(" (`ktune help` lists the commands)\n", stderr);
  return EXIT_BAD_INPUT;
}

static int unknown_command(const char *word) {
  const char *near = option_suggest(word);
  if (near && strcmp(near, word) != 0)
    fprintf(stderr, "ktune: error: unknown command %s; did you mean %s?\n", word, near);
  else fprintf(stderr, "ktune: error: unknown command %s (`ktune help` lists the commands)\n", word);
  return EXIT_BAD_INPUT;
}

/* The cache verb: given and known (with a "did you mean" when not). */
static int check_verb(const cli *c) {
  static const char *const verbs = "list, show, export, import or clear";
  if (c->npositional == 0) return bad("cache needs a verb: %s", verbs);
  if (command_find("cache", c->positional[0])) return 0;
  const char *near = option_suggest(c->positional[0]);
  if (near && command_find("cache", near))
    fprintf(stderr, "ktune: error: cache %s: unknown verb; did you mean %s?\n", c->positional[0], near);
  else fprintf(stderr, "ktune: error: cache %s: unknown verb; use %s\n", c->positional[0], verbs);
  return EXIT_BAD_INPUT;
}

/* The command C names, after its options are read: help when asked for,
 * else its options checked against it and the command run. */
static int run_command(cli *c) {
  int cache = strcmp(c->command, "cache") == 0;
  const char *verb = cache && c->npositional ? c->positional[0] : NULL;
  if (c->help) {
    if (help_command(stdout, c->command, verb) == 0) return 0;
    return check_verb(c);
  }
  int rc = cache ? check_verb(c) : 0;
  const command_spec *spec = command_find(c->command, verb);
  if (rc || (rc = check_options(c, spec->bit, spec->name)) != 0) return rc;
  c->file = c->npositional > 0 ? c->positional[0] : NULL;
  if (spec->bit & (CMD_TUNE | CMD_BENCH | CMD_SPACE) && (rc = check_kernel_source(c)) != 0) return rc;
  if ((rc = check_one_file_per_tensor("--input", c->inputs, c->ninputs)) != 0) return rc;
  if ((rc = check_one_file_per_tensor("--expect", c->expects, c->nexpects)) != 0) return rc;
  if (spec->bit == CMD_TUNE) return cmd_tune(c, 0);
  if (spec->bit == CMD_BENCH) return cmd_tune(c, 1);
  if (spec->bit == CMD_SPACE) return cmd_space(c);
  if (spec->bit == CMD_DEVICES) return cmd_devices(c);
  if (spec->bit == CMD_REPLAY) return cmd_replay(c);
  if (spec->bit == CMD_REPORT) return cmd_report(c);
  return cmd_cache(c);
}

int main(int argc, char **argv) {
  if (argc < 2) return help_usage(stderr), EXIT_BAD_INPUT;
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return help_usage(stdout), 0;
  if (strcmp(argv[1], "help") == 0) return cmd_help(argc, argv);
  key_parent_watch();
  if (strcmp(argv[1], "--version") == 0) {
    printf("ktune %s%s\n", kt_version(), mpi_build_note());
    return 0;
  }
  g_argc = argc;
  g_argv = argv;
  cli c = {.command = argv[1]};
  const command_spec *spec = command_find(c.command, NULL);
  int cache = strcmp(c.command, "cache") == 0;
  if (!spec && !cache) return unknown_command(c.command);
  int rc = parse_args(argc, argv, cache ? CMD_CACHE : spec->bit, &c);
  return rc ? rc : run_command(&c);
}
