/* The table of commands and options (options.h), and finding a name in it. */
#include "options.h"

#include <stdio.h>
#include <string.h>

#define KERNEL_CMDS (CMD_TUNE | CMD_BENCH | CMD_SPACE)
#define TUNING_CMDS (CMD_TUNE | CMD_BENCH)
#define ALL_CMDS (KERNEL_CMDS | CMD_DEVICES | CMD_CACHE | CMD_REPLAY | CMD_REPORT)

const command_spec commands[] = {
    {"tune", CMD_TUNE, "FILE|--t1 KERNEL_T1.json",
     "Tunes the annotated kernel in FILE: compiles its configurations in parallel, runs each on real data in a "
     "worker process, checks its outputs, times it, prints each one's status and time and the winner, and "
     "stores them in the results database."},
    {"bench", CMD_BENCH, "FILE --autotune \"NAME=VALUE ...\"",
     "Times one pinned configuration beside the default, storing nothing."},
    {"space", CMD_SPACE, "FILE|--t1 KERNEL_T1.json",
     "Prints the expanded search space, its size and valid count, and the default configuration as -D flags."},
    {"devices", CMD_DEVICES, "", "Lists the backends and the devices they find."},
    {"cache list", CMD_CACHE_LIST, "", "Lists the stored tunings (keys) of the results database."},
    {"cache show", CMD_CACHE_SHOW, "",
     "Shows the stored results of the selected keys, or their winner as #defines or -D flags."},
    {"cache export", CMD_CACHE_EXPORT, "",
     "Writes the selected keys' results to stdout: ktune's JSON (read back by cache import), a T4 results "
     "file or CSV."},
    {"cache import", CMD_CACHE_IMPORT, "FILE", "Merges a JSON export from FILE (- for stdin), all or nothing."},
    {"cache clear", CMD_CACHE_CLEAR, "",
     "Removes the selected keys with their results (with --binaries: the "
     "binary cache instead)."},
    {"replay", CMD_REPLAY, "RESULTS.json[.gz]",
     "Replays a search strategy on a recorded, exhaustively measured space (a T4 results file) and reports the "
     "fraction of the optimum it finds."},
    {"report", CMD_REPORT, "",
     "Writes one self-contained HTML page with plots of the stored tunings: per key the times, each tuned "
     "name's effect, the search's progress, the winner against the default; across keys the winners."},
};
const size_t ncommands = sizeof commands / sizeof commands[0];

const option_spec options[] = {
    {OPT_HELP, "--help", "-h", NULL, ALL_CMDS, "Prints this help and exits.", NULL, 0},
    {OPT_KERNEL, "--kernel", NULL, "NAME", KERNEL_CMDS, "The kernel to use when the file annotates several.", NULL, 0},
    {OPT_KERNEL, "--kernel", NULL, "NAME", CMD_CACHE & ~CMD_CACHE_IMPORT, "Selects the keys of this kernel.", NULL, 0},
    {OPT_KERNEL, "--kernel", NULL, "NAME", CMD_REPORT, "Shows the keys of this kernel.", NULL, 0},
    {OPT_T1, "--t1", NULL, "KERNEL_T1.json", KERNEL_CMDS,
     "Reads the kernel, its space and its arguments from a T1 file (Kernel Tuner's tune_kernel_T1 input) "
     "instead of annotations.",
     NULL, 0},
    {OPT_BACKEND, "--backend", NULL, "NAME", KERNEL_CMDS, "The backend, instead of the one the extension names.",
     "from the file's extension", 0},
    {OPT_DEVICE, "--device", NULL, "N|N,N...|all", KERNEL_CMDS,
     "The device, by its index in `ktune devices`; for tune and bench also a list (0,2,3) or all: the keys of a "
     "sweep are dealt to those devices, each key measured whole on one device.",
     "0", 0},
    {OPT_DEVICE_NAME, "--device", NULL, "NAME", (CMD_CACHE & ~CMD_CACHE_IMPORT) | CMD_REPORT,
     "Selects the keys whose device name contains NAME (any case), or whose backend is NAME.", NULL, 0},
    {OPT_DIM, "--dim", NULL, "NAME=VALUE[,VALUE...]", KERNEL_CMDS,
     "A runtime size, instead of the kernel's @dims; for tune and bench a comma list: each key of the product of "
     "the lists is tuned in turn.",
     "the kernel's @dims", 1},
    {OPT_SIZES, "--sizes", NULL, "FILE", TUNING_CMDS,
     "One key a line (M=1024 N=4096 K=4096; blank lines and # comments allowed), each tuned in turn.", NULL, 0},
    {OPT_AUTOTUNE, "--autotune", NULL, "\"NAME=VALUE ...\"", KERNEL_CMDS,
     "Pins tuned names; the rest is searched (bench: the configuration to time).", NULL, 0},
    {OPT_INPUT, "--input", NULL, "NAME=PATH[:TYPE]", KERNEL_CMDS,
     "Fills tensor NAME from a .npy file (type and shape checked) or raw binary of TYPE (f32, i32, ...); sizes "
     "not given otherwise follow from the files.",
     "seeded random contents", 1},
    {OPT_EXPECT, "--expect", NULL, "NAME=PATH[:TYPE]", TUNING_CMDS,
     "The expected content of output NAME, the reference instead of the default configuration's.",
     "the default configuration's outputs", 1},
    {OPT_CHECK, "--check", NULL, "FILE.c:FN", TUNING_CMDS,
     "The C function FN of FILE.c judges each configuration's outputs instead of the comparison.", NULL, 0},
    {OPT_STRATEGY, "--strategy", NULL, "NAME", TUNING_CMDS | CMD_REPLAY, "The search strategy.",
     "exhaustive when the valid space fits the budget, else forest_align (ils above 2000 configurations)", 0},
    {OPT_TIMING, "--timing", NULL, "auto|graph|events", TUNING_CMDS,
     "How a configuration's samples are timed: events around launches made one by one, or the launches of a "
     "sample replayed from a CUDA graph (launch overhead amortised); auto chooses per configuration from its "
     "first sample. CPU and OpenCL time their own way (events).",
     "auto", 0},
    {OPT_OBJECTIVE, "--objective", NULL, "time|energy|edp", TUNING_CMDS,
     "What the winner minimises: the time per launch, the energy per launch (the device's energy counter over "
     "the samples: NVML on CUDA, RAPL on the CPU), or their product (energy-delay). The winner is stored under "
     "its objective; a device that reports no energy refuses energy and edp.",
     "time", 0},
    {OPT_BUDGET, "--budget", NULL, "N|Ns", TUNING_CMDS,
     "At most N configurations measured besides the default (always run, as the reference), or N seconds (30s) "
     "of wall time for the whole tuning.",
     "every valid configuration up to 10000, else 400", 0},
    {OPT_BUDGET, "--budget", NULL, "N|Ns", CMD_REPLAY,
     "Configurations each replayed search may evaluate, or N seconds (60s) of the recorded compile and benchmark "
     "times, each evaluation spending what it cost when recorded.",
     "no limit", 0},
    {OPT_SEED, "--seed", NULL, "S", TUNING_CMDS, "The seed of the search and of the tensors' random contents.", "42",
     0},
    {OPT_SEED, "--seed", NULL, "S", CMD_REPLAY, "The seed the replays' seeds derive from.", "1", 0},
    {OPT_DB, "--db", NULL, "PATH", TUNING_CMDS | CMD_CACHE | CMD_REPORT,
     "The results database; a read command (cache list, show, export; report) never creates it.",
     "$KTUNE_DB, else ~/.cache/ktune/results.db", 0},
    {OPT_NO_DB, "--no-db", NULL, NULL, TUNING_CMDS, "Keeps nothing on disk.", NULL, 0},
    {OPT_NO_CACHE, "--no-cache", NULL, NULL, CMD_TUNE, "Measures again what the database already holds.", NULL, 0},
    {OPT_NO_BINARY_CACHE, "--no-binary-cache", NULL, NULL, TUNING_CMDS,
     "Compiles every configuration instead of loading it from the binary cache (also KTUNE_BINARY_CACHE=off).", NULL,
     0},
    {OPT_JOBS, "--jobs", NULL, "N", TUNING_CMDS, "Compile processes or threads.", "all cores", 0},
    {OPT_TIMEOUT, "--timeout", NULL, "S", TUNING_CMDS, "Seconds one run may take (plus 2 for measuring).", "10", 0},
    {OPT_COMPILE_TIMEOUT, "--compile-timeout", NULL, "S", TUNING_CMDS, "Seconds one compilation may take.", "60", 0},
    {OPT_RETRY_FAILED, "--retry-failed", NULL, NULL, CMD_TUNE, "Measures every stored failure again.", NULL, 0},
    {OPT_SHOW_OUTPUT, "--show-output", NULL, NULL, TUNING_CMDS,
     "Prints what each configuration printed under its progress line.", NULL, 0},
    {OPT_MPI, "--mpi", NULL, NULL, CMD_TUNE,
     "Under mpirun -np R: rank 0 deals the run's keys to the R ranks and keeps every result in its database "
     "(--db, on its local disk; never SQLite on a shared file system); mpirun --enable-recovery lets a rank die "
     "losing only its key in flight. Not with --no-db, --report or bench.",
     NULL, 0},
    {OPT_JSON, "--json", NULL, NULL, KERNEL_CMDS | CMD_DEVICES | CMD_CACHE_LIST | CMD_CACHE_SHOW | CMD_REPLAY,
     "One JSON document on stdout instead of the text.", NULL, 0},
    {OPT_QUIET, "--quiet", "-q", NULL, KERNEL_CMDS | CMD_REPORT, "No progress or notes on stderr.", NULL, 0},
    {OPT_REPORT, "--report", NULL, "FILE", TUNING_CMDS | CMD_REPLAY,
     "Also writes the HTML report of this tuning or replay to FILE.", NULL, 0},
    {OPT_FORMAT, "--format", NULL, "table|defines|dflags|json|csv", CMD_CACHE_SHOW,
     "Every result as a table or CSV (a row per result, a column per tuned name), the winner as a header of "
     "#defines or as -D flags, or JSON.",
     "table", 0},
    {OPT_FORMAT, "--format", NULL, "json|t4|csv", CMD_CACHE_EXPORT,
     "ktune's JSON document, the T4 results schema (one key), or CSV (a row per result, a column per tuned "
     "name).",
     "json", 0},
    {OPT_BINARIES, "--binaries", NULL, NULL, CMD_CACHE_CLEAR,
     "Empties the binary cache of compiled configurations instead of the results database.", NULL, 0},
    {OPT_KEY, "--key", NULL, "\"M=... N=...\"", CMD_REPORT, "Shows the key with these sizes.", NULL, 0},
    {OPT_KEY, "--key", NULL, "\"M=... N=...\"", CMD_CACHE & ~CMD_CACHE_IMPORT,
     "Selects the keys with these sizes (each NAME=VALUE among the key's; none matching is exit status 1).", NULL, 0},
    {OPT_OUTPUT, "-o", NULL, "FILE", CMD_REPORT, "The file the report is written to.", "report.html", 0},
    {OPT_REPEATS, "--repeats", NULL, "R", CMD_REPLAY, "Replays per strategy.", "100", 0},
    {OPT_WARM, "--warm", NULL, "OTHER.json", CMD_REPLAY,
     "A recorded space whose best configurations warm-start each replay, as winners stored at other sizes do in "
     "a tuning.",
     NULL, 1},
};
const size_t noptions = sizeof options / sizeof options[0];

const command_spec *command_find(const char *word, const char *verb) {
  char name[64];
  if (strcmp(word, "cache") == 0 && verb) snprintf(name, sizeof name, "cache %s", verb);
  else snprintf(name, sizeof name, "%s", word);
  for (size_t i = 0; i < ncommands; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static int written_as(const option_spec *o, const char *arg) {
  return strcmp(o->name, arg) == 0 || (o->alias && strcmp(o->alias, arg) == 0);
}

const option_spec *option_find(const char *arg, unsigned command) {
  const option_spec *any = NULL;
  for (size_t i = 0; i < noptions; i++) {
    if (!written_as(&options[i], arg)) continue;
    if (options[i].commands & command) return &options[i];
    if (!any) any = &options[i];
  }
  return any;
}

/* The edits (insertion, deletion, substitution, swap of neighbours) that
 * turn A into B, both shorter than 32 characters (else a large number). */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), d[32][32];
  if (la >= 32 || lb >= 32) return (size_t)-1;
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

/* A typo is at most a third of the word's letters away: none for a name as
 * short as -o, whose every neighbour is another letter altogether. */
static void consider(const char *arg, const char *name, const char **best, size_t *best_d) {
  size_t d = edit_distance(arg, name), limit = strlen(name) / 3;
  if (d <= limit && d < *best_d) *best = name, *best_d = d;
}

const char *option_suggest(const char *arg) {
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  if (arg[0] == '-') {
    for (size_t i = 0; i < noptions; i++) consider(arg, options[i].name, &best, &best_d);
    return best;
  }
  static const char *const words[] = {"tune", "bench", "space", "devices", "cache",  "replay", "report",
                                      "help", "list",  "show",  "export",  "import", "clear"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) consider(arg, words[i], &best, &best_d);
  return best;
}

void command_list(unsigned mask, char *buf, size_t len) {
  const char *names[sizeof commands / sizeof commands[0]];
  size_t n = 0, used = 0;
  for (size_t i = 0; i < ncommands; i++)
    if (commands[i].bit & mask) names[n++] = commands[i].name;
  buf[0] = 0;
  for (size_t i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", names[i]);
}
