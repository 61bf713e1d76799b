/* The command line's vocabulary, in one table: each command with its
 * synopsis, each option with the commands it applies to, its value, what it
 * does and its default. The parser (ktune.c), `--help` and the man page
 * (cli/help.c) all read it, so they cannot disagree. */
#ifndef KTUNE_CLI_OPTIONS_H
#define KTUNE_CLI_OPTIONS_H

#include <stddef.h>

/* The commands, a bit each; the cache verbs are commands of their own
 * because their options differ. */
enum {
  CMD_TUNE = 1u << 0,
  CMD_BENCH = 1u << 1,
  CMD_SPACE = 1u << 2,
  CMD_DEVICES = 1u << 3,
  CMD_CACHE_LIST = 1u << 4,
  CMD_CACHE_SHOW = 1u << 5,
  CMD_CACHE_EXPORT = 1u << 6,
  CMD_CACHE_IMPORT = 1u << 7,
  CMD_CACHE_CLEAR = 1u << 8,
  CMD_REPLAY = 1u << 9,
  CMD_REPORT = 1u << 10,
};
#define CMD_CACHE (CMD_CACHE_LIST | CMD_CACHE_SHOW | CMD_CACHE_EXPORT | CMD_CACHE_IMPORT | CMD_CACHE_CLEAR)

typedef enum option_id {
  OPT_HELP,
  OPT_KERNEL,
  OPT_T1,
  OPT_BACKEND,
  OPT_DEVICE,      /* tune, bench, space: an index, a list or all */
  OPT_DEVICE_NAME, /* cache, report: keys selected by device name */
  OPT_DIM,
  OPT_SIZES,
  OPT_AUTOTUNE,
  OPT_INPUT,
  OPT_EXPECT,
  OPT_CHECK,
  OPT_STRATEGY,
  OPT_TIMING,
  OPT_OBJECTIVE,
  OPT_BUDGET,
  OPT_SEED,
  OPT_DB,
  OPT_NO_DB,
  OPT_NO_CACHE,
  OPT_NO_BINARY_CACHE,
  OPT_JOBS,
  OPT_TIMEOUT,
  OPT_COMPILE_TIMEOUT,
  OPT_RETRY_FAILED,
  OPT_SHOW_OUTPUT,
  OPT_MPI,
  OPT_JSON,
  OPT_QUIET,
  OPT_REPORT,
  OPT_FORMAT,
  OPT_BINARIES,
  OPT_KEY,
  OPT_OUTPUT,
  OPT_REPEATS,
  OPT_WARM,
} option_id;

typedef struct option_spec {
  option_id id;
  const char *name;     /* "--budget" */
  const char *alias;    /* "-q", or NULL */
  const char *value;    /* what the value looks like ("N|Ns"); NULL for a flag */
  unsigned commands;    /* the CMD_ bits it applies to */
  const char *help;     /* what it does, one sentence */
  const char *fallback; /* the default, or NULL where there is none */
  int repeated;         /* may be given several times */
} option_spec;

typedef struct command_spec {
  const char *name;     /* "tune", "cache show" */
  unsigned bit;         /* its CMD_ bit */
  const char *operands; /* what follows the name besides options ("FILE|--t1 KERNEL_T1.json") */
  const char *summary;  /* what it does, one or two sentences */
} command_spec;

extern const option_spec options[];
extern const size_t noptions;
extern const command_spec commands[];
extern const size_t ncommands;

/* The command named by WORD (and, for cache, the verb VERB, may be NULL), or
 * NULL. */
const command_spec *command_find(const char *word, const char *verb);
/* The option written ARG ("--budget", "-q") that applies to COMMAND (a CMD_
 * bit), else any option of that name (which then does not apply), else
 * NULL. */
const option_spec *option_find(const char *arg, unsigned command);
/* The known name closest to ARG (an option when ARG starts with '-', else a
 * command or a cache verb), when it is close enough to be a likely typo;
 * else NULL. */
const char *option_suggest(const char *arg);
/* The commands of MASK as "tune, bench and replay" into BUF. */
void command_list(unsigned mask, char *buf, size_t len);

#endif
