/* The plain-C backend. Each configuration is compiled by the system C
 * compiler, spawned directly (never through a shell), into a shared object
 * together with a small generated wrapper, `void kt__entry(void **args)`,
 * that calls the kernel with typed arguments. The worker dlopens the object
 * and calls kt__entry once per launch; @grid and @block are ignored. */
#include "../envvars.h"
#include "backend.h"
#include "cc.h"
#include "rapl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../proc/code_dir.h"
#include "../proc/process.h"

extern char **environ;

enum {
  LOG_LINES = 20,       /* compiler output kept on failure */
  MAX_LOG = 1 << 20,    /* output read at most; the rest is drained */
  MAX_CC_WORDS = 32,    /* words of $CC */
  MAX_ARGS = 256,       /* kernel parameters */
  FLUSH_CAP = 64 << 20, /* flush buffer limit: VMs report a socket's whole L3 */
  MAX_DEFS = 64         /* -D definitions */
};
static const double DEFAULT_COMPILE_TIMEOUT_S = 120;

typedef struct cpu_state {
  kt__device_info info;
  unsigned char *flush;
  size_t flush_bytes;
  unsigned char flush_round;
  kt__rapl rapl; /* the packages' energy counters; none: info.no_energy says why */
} cpu_state;

typedef void (*entry_fn)(void **args);

typedef struct cpu_fn {
  void *lib;
  entry_fn entry;
} cpu_fn;

/* --- spawning the compiler ---------------------------------------------- */

/* Splits $CC (or "cc") into words; "ccache gcc" is two. Owns *STORAGE. */
static int compiler_words(const char *argv[], int max, char **storage) {
  const char *cc = kt__envvar_text(KT__ENV_CC);
  *storage = kt__xstrdup(cc && *cc ? cc : "cc");
  int n = 0;
  char *save = NULL;
  for (char *w = strtok_r(*storage, " \t", &save); w && n < max; w = strtok_r(NULL, " \t", &save)) argv[n++] = w;
  if (n == 0) argv[n++] = "cc";
  return n;
}

typedef struct spawned {
  int status; /* waitpid status */
  bool timed_out;
  kt__sbuf out; /* stdout and stderr, interleaved as written */
} spawned;

/* True once the tuner has abandoned this build (its time budget ran out). */
static bool cancelled(const atomic_int *cancel) { return cancel && atomic_load(cancel); }

/* Reads the child's output until EOF or DEADLINE; false on timeout, and
 * soon after kt_interrupt() or CANCEL (the wait wakes every 50 ms to look:
 * the signal may land on another thread), so that neither Ctrl-C nor a
 * spent time budget waits for compilers. */
static bool drain(int fd, double deadline, const atomic_int *cancel, kt__sbuf *out) {
  char buf[4096];
  for (;;) {
    double left = deadline - kt__now();
    if (left <= 0 || kt__interrupted || cancelled(cancel)) return false;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, left > 0.05 ? 50 : (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue; /* the loop checks the deadline */
    ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) return true;
    if (out->len < MAX_LOG) kt__sbuf_append(out, buf, (size_t)k);
  }
}

/* Runs ARGV with stdin from /dev/null and output captured, in its own process
 * group so that a timeout kills the driver and the cc1/as/ld it started. */
static int run_captured(const char *const argv[], char *const envp[], double timeout_s, const atomic_int *cancel,
                        spawned *sp, kt__errbuf *eb) {
  *sp = (spawned){0};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return kt__err(eb, KT_IO, "pipe: %s", strerror(errno));
  /* Ordinary scheduling on purpose: SCHED_IDLE would keep compilers off a
   * core that times a CPU kernel, but starves them (and trips the compile
   * timeout) on a loaded machine. Leaving a core to the worker is the
   * compile pool's business. */
  kt__proc_fd out[] = {{fds[1], STDOUT_FILENO}, {fds[1], STDERR_FILENO}};
  kt__proc_spawn_opts o = {
      .fds = out, .nfds = 2, .null_stdin = true, .own_group = true, .search_path = true, .envp = envp};
  pid_t pid;
  int rc = kt__proc_spawn(argv[0], (char *const *)argv, &o, &pid);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return kt__err(eb, KT_NOBACKEND, "cannot run the C compiler `%s`: %s (set CC to choose another)", argv[0],
                   strerror(rc));
  }
  if (!drain(fds[0], kt__now() + timeout_s, cancel, &sp->out)) {
    sp->timed_out = true;
    kill(-pid, SIGKILL);
  }
  close(fds[0]);
  while (waitpid(pid, &sp->status, 0) < 0 && errno == EINTR) {}
  return KT_OK;
}

/* --- generated files ------------------------------------------------------ */

static int write_file(const char *path, const char *text, size_t len, kt__errbuf *eb) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return kt__err(eb, KT_IO, "cannot write %s: %s", path, strerror(errno));
  size_t done = 0;
  while (done < len) {
    ssize_t k = write(fd, text + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      int e = errno;
      close(fd);
      return kt__err(eb, KT_IO, "cannot write %s: %s", path, strerror(e));
    }
    done += (size_t)k;
  }
  return close(fd) == 0 ? KT_OK : kt__err(eb, KT_IO, "cannot write %s: %s", path, strerror(errno));
}

/* True when PATH is a file whose whole content is TEXT: then the compiler
 * can read the user's file and its messages name it. */
static bool file_holds(const char *path, const char *text, size_t len) {
  FILE *f = path ? fopen(path, "rbe") : NULL;
  if (!f) return false;
  bool same = true;
  char buf[4096];
  size_t off = 0, k;
  while (same && (k = fread(buf, 1, sizeof buf, f)) > 0) {
    same = off + k <= len && memcmp(buf, text + off, k) == 0;
    off += k;
  }
  fclose(f);
  return same && off == len;
}

/* The kernel source to -include: the user's file when it still holds what
 * was parsed, else a copy in the work directory (strings, edited files). */
static int kernel_source(const kt__build *b, kt__sbuf *path, kt__errbuf *eb) {
  const kt__source *src = &b->file->src;
  char *real = src->path ? realpath(src->path, NULL) : NULL;
  if (real && file_holds(real, src->text, src->len)) {
    kt__sbuf_printf(path, "%s", real);
    free(real);
    return KT_OK;
  }
  free(real);
  kt__sbuf_printf(path, "%s/%s.src.c", b->workdir, b->tag);
  kt__sbuf text = {0};
  kt__sbuf_printf(&text, "#line 1 ");
  kt__sbuf_json_string(&text, src->path ? src->path : "kernel");
  kt__sbuf_printf(&text, "\n%s\n", src->text);
  int rc = write_file(path->s, text.s, text.len, eb);
  kt__sbuf_free(&text);
  return rc;
}

static const char *c_scalar_type(kt__dtype t) {
  switch (t) {
  case KT__DT_F16:
  case KT__DT_BF16: return "uint16_t"; /* raw bits */
  case KT__DT_F32: return "float";
  case KT__DT_F64: return "double";
  case KT__DT_I8: return "int8_t";
  case KT__DT_U8: return "uint8_t";
  case KT__DT_I32: return "int32_t";
  case KT__DT_U32: return "uint32_t";
  case KT__DT_I64: return "int64_t";
  default: return "uint64_t";
  }
}

/* kt__entry(args): tensors pass args[i] (void * converts to the kernel's
 * pointer type), scalars are read through a pointer of their @kernel type. */
static int write_wrapper(const kt__build *b, const char *path, kt__errbuf *eb) {
  const kt__kernel_decl *d = b->decl;
  kt__sbuf w = {0};
  kt__sbuf_printf(&w,
                  "/* Generated by ktune: calls %s with the tuner's argument array. */\n"
                  "#include <stdint.h>\n"
                  "void kt__entry(void **kt__args);\n"
                  "void kt__entry(void **kt__args) {\n  %s(",
                  d->name, d->name);
  for (int i = 0; i < d->nparams; i++) {
    const kt__param *p = &d->params[i];
    if (i) kt__sbuf_append(&w, ", ", 2);
    if (p->is_tensor) kt__sbuf_printf(&w, "kt__args[%d]", i);
    else kt__sbuf_printf(&w, "*(const %s *)kt__args[%d]", c_scalar_type(p->type), i);
  }
  kt__sbuf_printf(&w, ");\n}\n");
  int rc = write_file(path, w.s, w.len, eb);
  kt__sbuf_free(&w);
  return rc;
}

/* --- compile -------------------------------------------------------------- */

/* The first LOG_LINES lines of OUT, with a note of how many were cut. */
static char *first_lines(const char *out) {
  kt__sbuf s = {0};
  const char *p = out ? out : "";
  int lines = 0;
  while (*p && lines < LOG_LINES) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    kt__sbuf_append(&s, p, len);
    p += len;
    lines++;
  }
  int more = 0;
  for (; *p; p++) more += *p == '\n';
  if (more) kt__sbuf_printf(&s, "... (%d more lines)\n", more);
  return s.s; /* NULL when there was no output */
}

typedef struct cc_command {
  const char *argv[MAX_CC_WORDS + 20 + 2 * MAX_DEFS];
  char *words;
  char defs[MAX_DEFS][96];
  char *srcdir; /* the user's file's directory, for its "quoted" includes */
} cc_command;

/* "dir" of "dir/file.c", "." of "file.c". */
static char *directory_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  if (!slash) return kt__xstrdup(".");
  return kt__xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static const char *const CC_FLAGS[] = {"-O3", "-march=native", "-fPIC", "-shared", "-std=gnu11"};

static void build_command(const kt__build *b, const char *so, const char *src, const char *wrapper, cc_command *c) {
  int n = compiler_words(c->argv, MAX_CC_WORDS, &c->words);
  for (size_t i = 0; i < sizeof CC_FLAGS / sizeof CC_FLAGS[0]; i++) c->argv[n++] = CC_FLAGS[i];
  for (int i = 0; i < b->n && i < MAX_DEFS; i++) {
    snprintf(c->defs[i], sizeof c->defs[i], "-D%s=%lld", b->names[i], (long long)b->values[i]);
    c->argv[n++] = c->defs[i];
  }
  /* A copied source (see kernel_source) still finds the headers beside the
   * user's file. */
  c->srcdir = directory_of(b->file->src.path);
  c->argv[n++] = "-iquote";
  c->argv[n++] = c->srcdir;
  c->argv[n++] = "-I"; /* a file that holds an @check function includes <ktune.h> */
  c->argv[n++] = kt__cc_ktune_include_dir();
  c->argv[n++] = "-o";
  c->argv[n++] = so;
  c->argv[n++] = "-include";
  c->argv[n++] = src;
  c->argv[n++] = wrapper;
  c->argv[n++] = "-lm";
  c->argv[n] = NULL;
}

static kt__status compile_failed(kt__artifact *a, kt__errbuf *eb, const char *why, const char *log) {
  a->log = first_lines(log);
  a->environment = kt__log_says_environment(log);
  return kt__fail(eb, KT__ST_COMPILE, "%s%s%s", why, a->log ? ":\n" : "", a->log ? a->log : "");
}

/* The environment with TMPDIR set to DIR: the compiler's own temporaries
 * (cc's .s and .o files) then live in the private workdir too, and go with
 * it, even when a timeout or Ctrl-C kills the compiler before it cleans up. */
static char **env_with_tmpdir(const char *dir) {
  size_t n = 0, k = 0;
  while (environ[n]) n++;
  char **env = kt__xcalloc(n + 2, sizeof *env);
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = kt__xstrdup(environ[i]);
  kt__sbuf tmp = {0};
  kt__sbuf_printf(&tmp, "TMPDIR=%s", dir);
  env[k] = tmp.s;
  return env;
}

static void free_env(char **env) {
  for (size_t i = 0; env[i]; i++) free(env[i]);
  free(env);
}

static kt__status run_compiler(const kt__build *b, const char *so, const char *src, const char *wrapper,
                               kt__artifact *a, kt__errbuf *eb) {
  cc_command *c = kt__xcalloc(1, sizeof *c);
  build_command(b, so, src, wrapper, c);
  double timeout = b->timeout_s > 0 ? b->timeout_s : DEFAULT_COMPILE_TIMEOUT_S;
  spawned sp;
  kt__status st = KT__ST_OK;
  char why[256];
  char **envp = env_with_tmpdir(b->workdir);
  int spawned_rc = run_captured(c->argv, envp, timeout, b->cancel, &sp, eb);
  free_env(envp);
  if (spawned_rc != KT_OK) {
    st = KT__ST_COMPILE; /* no compiler to run, or no descriptors or processes left to run it */
    a->environment = true;
  } else if (sp.timed_out && (kt__interrupted || cancelled(b->cancel))) {
    /* killed by the interrupt or the budget: not a compile failure */
    st = kt__fail(eb, KT__ST_PENDING, "%s", kt__interrupted ? "interrupted" : "abandoned: the time budget ran out");
  } else if (sp.timed_out) {
    snprintf(why, sizeof why, "the C compiler ran past the %g s timeout", timeout);
    st = compile_failed(a, eb, why, sp.out.s);
  } else if (!WIFEXITED(sp.status) || WEXITSTATUS(sp.status) != 0) {
    if (WIFEXITED(sp.status)) snprintf(why, sizeof why, "%s exited with status %d", c->argv[0], WEXITSTATUS(sp.status));
    else snprintf(why, sizeof why, "%s was killed by signal %d", c->argv[0], WTERMSIG(sp.status));
    st = compile_failed(a, eb, why, sp.out.s);
    if (WIFSIGNALED(sp.status)) a->environment = true; /* killed from outside (the OOM killer, a file-size limit) */
  } else {
    a->log = first_lines(sp.out.s); /* warnings, if any */
  }
  kt__sbuf_free(&sp.out);
  free(c->words);
  free(c->srcdir);
  free(c);
  return st;
}

#ifndef KTUNE_INCLUDE_FROM_LIB
#define KTUNE_INCLUDE_FROM_LIB "../include"
#endif
#ifndef KTUNE_INCLUDE_FROM_BIN
#define KTUNE_INCLUDE_FROM_BIN "../include"
#endif

static bool has_ktune_h(const char *dir) {
  char path[4200 + 16];
  snprintf(path, sizeof path, "%s/ktune.h", dir);
  return access(path, R_OK) == 0;
}

static char include_dir[4200];
static pthread_once_t include_dir_once = PTHREAD_ONCE_INIT;

/* The installed tree's include folder relative to the library (or to the
 * ktune command that libktune.a is linked into), wherever the prefix was
 * moved; else the configured install folder; else the source tree's. */
static void find_include_dir(void) {
  char code[4096];
  static const char *const tails[] = {KTUNE_INCLUDE_FROM_LIB, KTUNE_INCLUDE_FROM_BIN};
  for (size_t i = 0; kt__code_dir(code, sizeof code) && i < sizeof tails / sizeof tails[0]; i++) {
    snprintf(include_dir, sizeof include_dir, "%s/%s", code, tails[i]);
    if (has_ktune_h(include_dir)) return;
  }
#ifdef KTUNE_INSTALL_INCLUDEDIR
  snprintf(include_dir, sizeof include_dir, "%s", KTUNE_INSTALL_INCLUDEDIR);
  if (has_ktune_h(include_dir)) return;
#endif
#ifdef KTUNE_SOURCE_DIR
  snprintf(include_dir, sizeof include_dir, "%s/include", KTUNE_SOURCE_DIR);
#else
  snprintf(include_dir, sizeof include_dir, ".");
#endif
}

const char *kt__cc_ktune_include_dir(void) {
  pthread_once(&include_dir_once, find_include_dir);
  return include_dir;
}

int kt__cc_shared_object(const char *src, const char *so, const char *const *flags, int nflags, double timeout_s,
                         const char *tmpdir, kt__errbuf *eb) {
  const char *argv[MAX_CC_WORDS + 16 + 64];
  char *words;
  int n = compiler_words(argv, MAX_CC_WORDS, &words);
  static const char *const base[] = {"-O2", "-fPIC", "-shared", "-std=gnu11"};
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) argv[n++] = base[i];
  for (int i = 0; i < nflags && i < 64; i++) argv[n++] = flags[i];
  argv[n++] = "-o";
  argv[n++] = so;
  argv[n++] = src;
  argv[n++] = "-lm";
  argv[n] = NULL;
  char **envp = env_with_tmpdir(tmpdir);
  spawned sp;
  int rc = run_captured(argv, envp, timeout_s, NULL, &sp, eb);
  free_env(envp);
  if (rc == KT_OK && (sp.timed_out || !WIFEXITED(sp.status) || WEXITSTATUS(sp.status) != 0)) {
    char *log = first_lines(sp.out.s);
    rc = kt__err(eb, KT_INVALID, "%s: %s%s%s", src,
                 sp.timed_out ? "the C compiler ran past its timeout" : "the C compiler failed", log ? ":\n" : "",
                 log ? log : "");
    free(log);
  }
  if (rc == KT_OK || sp.out.s) kt__sbuf_free(&sp.out);
  free(words);
  return rc;
}

/* The compiler's words and flags, for the binary cache's key: what
 * build_command passes besides the -D values, the sources and the paths. */
static void cpu_binary_flags(const kt__build *b, kt__sbuf *out) {
  (void)b;
  cc_command *c = kt__xcalloc(1, sizeof *c);
  int n = compiler_words(c->argv, MAX_CC_WORDS, &c->words);
  for (int i = 0; i < n; i++) kt__sbuf_printf(out, "%s ", c->argv[i]);
  for (size_t i = 0; i < sizeof CC_FLAGS / sizeof CC_FLAGS[0]; i++) kt__sbuf_printf(out, "%s ", CC_FLAGS[i]);
  kt__sbuf_printf(out, "-lm");
  free(c->words);
  free(c);
}

static kt__status cpu_compile(const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  double t0 = kt__now();
  kt__sbuf so = {0}, src = {0}, wrapper = {0};
  kt__sbuf_printf(&so, "%s/%s.so", b->workdir, b->tag);
  kt__sbuf_printf(&wrapper, "%s/%s.entry.c", b->workdir, b->tag);
  kt__status st = KT__ST_COMPILE;
  if (b->n > MAX_DEFS) {
    kt__fail(eb, KT__ST_COMPILE, "too many tuned names (%d, at most %d)", b->n, MAX_DEFS);
  } else if (kernel_source(b, &src, eb) == KT_OK && write_wrapper(b, wrapper.s, eb) == KT_OK) {
    st = run_compiler(b, so.s, src.s, wrapper.s, a, eb);
  } else {
    a->environment = true; /* the generated files could not be written into the work folder */
  }
  if (st == KT__ST_OK) a->path = kt__xstrdup(so.s);
  else if (!a->log) a->log = kt__xstrdup(eb ? eb->msg : "compilation failed");
  a->seconds = kt__now() - t0;
  kt__sbuf_free(&so);
  kt__sbuf_free(&src);
  kt__sbuf_free(&wrapper);
  return st;
}

/* --- the device ------------------------------------------------------------ */

/* Value of "KEY : value" in /proc/cpuinfo, or false. */
static bool cpuinfo_field(const char *key, char *out, size_t len) {
  FILE *f = fopen("/proc/cpuinfo", "re");
  if (!f) return false;
  char line[512];
  bool found = false;
  size_t klen = strlen(key);
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *v = colon + 1 + strspn(colon + 1, " \t");
    v[strcspn(v, "\n")] = 0;
    snprintf(out, len, "%s", v);
    found = true;
  }
  fclose(f);
  return found;
}

/* Size of the last-level cache: sysconf, else the largest /sys cache index. */
static uint64_t last_level_cache(void) {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l3 > 0) return (uint64_t)l3;
  uint64_t best = l2 > 0 ? (uint64_t)l2 : 0;
  for (int i = 0; i < 8; i++) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "re");
    if (!f) continue;
    unsigned long long v = 0;
    char unit = 0;
    if (fscanf(f, "%llu%c", &v, &unit) >= 1) {
      if (unit == 'K') v <<= 10;
      else if (unit == 'M') v <<= 20;
      if (v > best) best = v;
    }
    fclose(f);
  }
  return best;
}

/* "cc (Debian 12.2.0-14) 12.2.0": the first line of `cc --version`. */
static void toolchain_version(char *out, size_t len) {
  const char *argv[MAX_CC_WORDS + 2];
  char *words;
  int n = compiler_words(argv, MAX_CC_WORDS, &words);
  argv[n++] = "--version";
  argv[n] = NULL;
  spawned sp;
  snprintf(out, len, "%s (version unknown)", argv[0]);
  if (run_captured(argv, NULL, 10, NULL, &sp, NULL) == KT_OK && sp.out.s && WIFEXITED(sp.status) &&
      WEXITSTATUS(sp.status) == 0)
    snprintf(out, len, "%.*s", (int)strcspn(sp.out.s, "\n"), sp.out.s);
  kt__sbuf_free(&sp.out);
  free(words);
}

static void describe_cpu(kt__device_info *info) {
  struct utsname u;
  if (uname(&u) != 0) memset(&u, 0, sizeof u);
  strncpy(info->backend, "cpu", sizeof info->backend - 1);
  if (!cpuinfo_field("model name", info->name, sizeof info->name))
    snprintf(info->name, sizeof info->name, "%.64s CPU", u.machine);
  if (!cpuinfo_field("vendor_id", info->vendor, sizeof info->vendor))
    snprintf(info->vendor, sizeof info->vendor, "unknown");
  snprintf(info->arch, sizeof info->arch, "%.63s", u.machine);
  snprintf(info->driver_version, sizeof info->driver_version, "%.15s %.47s", u.sysname, u.release);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  info->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  info->compute_units = kt__ncores();
  info->l2_bytes = last_level_cache();
  info->host_cpu = true;
  toolchain_version(info->toolchain_version, sizeof info->toolchain_version);
}

static int cpu_list_devices(kt__device_info *out, int max, int *count, kt__errbuf *eb) {
  *count = 0;
  if (max < 1) return KT_OK;
  memset(out, 0, sizeof *out);
  describe_cpu(out);
  *count = 1;
  return KT_OK;
}

static int cpu_open(int index, void **state, kt__device_info *info, kt__errbuf *eb) {
  KT__RETURN_IF(index != 0, eb, KT_NOBACKEND, "the cpu backend has one device (0), not %d", index);
  cpu_state *s = kt__xcalloc(1, sizeof *s);
  describe_cpu(&s->info);
  kt__rapl_open(&s->rapl, s->info.no_energy, sizeof s->info.no_energy);
  /* RAPL's counters move about every millisecond: 50 ms of samples span
   * fifty of their steps. */
  if (!s->info.no_energy[0]) s->info.energy_window_s = 0.05;
  *info = s->info;
  *state = s;
  return KT_OK;
}

static void cpu_close(void *state) {
  cpu_state *s = state;
  free(s->flush);
  free(s);
}

/* --- configurations -------------------------------------------------------- */

static kt__status load_object(const char *path, void **fn, kt__errbuf *eb) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    return kt__fail(eb, KT__ST_RUNTIME, "cannot load %s: %s", path, e ? e : "unknown reason");
  }
  entry_fn entry;
  void *sym = dlsym(lib, "kt__entry");
  if (!sym) {
    dlclose(lib);
    return kt__fail(eb, KT__ST_RUNTIME, "%s has no kt__entry", path);
  }
  memcpy(&entry, &sym, sizeof entry); /* object pointer -> function pointer */
  cpu_fn *f = kt__xcalloc(1, sizeof *f);
  f->lib = lib;
  f->entry = entry;
  *fn = f;
  return KT__ST_OK;
}

/* Loads A's shared object; without an artifact, compiles here first. */
static kt__status cpu_load(void *state, const kt__build *b, const kt__artifact *a, void **fn, kt__errbuf *eb) {
  if (a && a->path) return load_object(a->path, fn, eb);
  kt__artifact own = {0};
  kt__status st = cpu_compile(b, &own, eb);
  if (st == KT__ST_OK) st = load_object(own.path, fn, eb);
  kt__artifact_free(&own);
  return st;
}

/* @constant data: a global of the kernel's file, found with dlsym (a
 * `static` one is invisible, and named so). The object has no sizes: the
 * declared size is trusted, as the kernel's C declaration must match it. */
static kt__status cpu_set_constant(void *state, void *fn, const char *name, const void *host, size_t bytes,
                                   kt__errbuf *eb) {
  cpu_fn *f = fn;
  dlerror();
  void *sym = dlsym(f->lib, name);
  if (!sym)
    return kt__fail(eb, KT__ST_COMPILE,
                    "@constant %s: the kernel's file has no global %s (declare it at file scope, not static: "
                    "`T %s[...];`)",
                    name, name, name);
  memcpy(sym, host, bytes);
  return KT__ST_OK;
}

static void cpu_unload(void *state, void *fn) {
  cpu_fn *f = fn;
  dlclose(f->lib);
  free(f);
}

/* Buffers sit between two fences of pages that fault (FENCE_BYTES each,
 * address space only): a write past the worker's guard zones (guard.h), on
 * either side, stops the kernel at once instead of corrupting the heap or
 * another tensor. A read-only header page in front of the first fence
 * keeps the allocation's length. */
enum { FENCE_BYTES = 64 << 20 };

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static int cpu_alloc(void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  (void)state;
  size_t page = page_size(), body = round_up(bytes ? bytes : 1, page), total = page + FENCE_BYTES + body + FENCE_BYTES;
  unsigned char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  unsigned char *data = base + page + FENCE_BYTES;
  if (base == MAP_FAILED || mprotect(base, page, PROT_READ | PROT_WRITE) != 0 ||
      mprotect(data, body, PROT_READ | PROT_WRITE) != 0) {
    int err = errno;
    if (base != MAP_FAILED) munmap(base, total);
    *buf = NULL;
    return kt__err(eb, KT_NOMEM, "cannot allocate %zu bytes: %s", bytes, strerror(err));
  }
  memcpy(base, &total, sizeof total);
  mprotect(base, page, PROT_READ);
  *buf = data;
  return KT_OK;
}

static void cpu_release(void *state, void *buf) {
  (void)state;
  unsigned char *base = (unsigned char *)buf - FENCE_BYTES - page_size();
  size_t total;
  memcpy(&total, base, sizeof total);
  munmap(base, total);
}

/* Host memory: a slice is an address inside the buffer. */
static int cpu_slice(void *state, void *buf, size_t offset, size_t bytes, void **out, kt__errbuf *eb) {
  (void)state, (void)bytes, (void)eb;
  *out = (unsigned char *)buf + offset;
  return KT_OK;
}

static int cpu_upload(void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb) {
  memcpy(buf, host, bytes);
  return KT_OK;
}

static int cpu_download(void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb) {
  memcpy(host, buf, bytes);
  return KT_OK;
}

/* A buffer to buffer copy: what lets the worker keep an output's decoys
 * made once per tuning instead of once per run (run_checks.c). */
static int cpu_copy(void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb) {
  (void)state, (void)eb;
  memcpy(dst, src, bytes);
  return KT_OK;
}

/* A blocking miss's tensor shared with the helper's worker (backend.h,
 * share): the caller's process and the buffer's address in it. The worker
 * reads it straight from there (cpu_copy_shared), so that the tensor is
 * copied once instead of into the request and again out of it. */
typedef struct cpu_shared_at {
  int64_t pid;
  uint64_t address;
} cpu_shared_at;

/* Yama's ptrace_scope: from 1 on, a worker may not read its ancestor (the
 * application) without the application's leave; 0 where there is no Yama. */
static int ptrace_scope(void) {
  FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  int scope = 0;
  if (f && fscanf(f, "%d", &scope) != 1) scope = 0;
  if (f) fclose(f);
  return scope;
}

static int cpu_share(void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb) {
  (void)state;
  int scope = ptrace_scope();
  KT__RETURN_IF(scope > 0, eb, KT_NOTFOUND, "the helper may not read this process (Yama ptrace_scope %d)", scope);
  cpu_shared_at at = {getpid(), (uint64_t)(uintptr_t)buf};
  _Static_assert(sizeof at <= sizeof out->handle, "a process and an address fit in a handle");
  *out = (kt__shared_buffer){.bytes = bytes, .set = 1};
  memcpy(out->handle, &at, sizeof at);
  return KT_OK;
}

/* process_vm_readv, in parts (it may read less than asked): the worker is
 * a descendant of the application, which waits in kt_launch meanwhile. It
 * fails where the system forbids reading another process all the same (a
 * seccomp filter; Yama is asked in cpu_share): the miss then tunes again
 * with the copy through host memory (runtime.c). */
static int cpu_copy_shared(void *state, void *dst, const kt__shared_buffer *src, kt__errbuf *eb) {
  (void)state;
  cpu_shared_at at;
  memcpy(&at, src->handle, sizeof at);
  size_t done = 0;
  while (done < src->bytes) {
    struct iovec local = {(char *)dst + done, src->bytes - done};
    struct iovec remote = {(void *)(uintptr_t)(at.address + src->offset + done), src->bytes - done};
    ssize_t n = process_vm_readv((pid_t)at.pid, &local, 1, &remote, 1, 0);
    if (n <= 0)
      return kt__err(eb, KT_IO, "cannot read %" PRIu64 " bytes of process %" PRId64 "'s memory: %s", src->bytes, at.pid,
                     n < 0 ? strerror(errno) : "nothing read");
    done += (size_t)n;
  }
  return KT_OK;
}

/* The pointer array kt__entry takes: buffers for tensors, addresses of the
 * scalars' bytes for scalars. */
typedef struct call_args {
  void *ptr[MAX_ARGS];
  unsigned char scalar[MAX_ARGS][8];
} call_args;

static kt__status prepare(const kt__launch *l, call_args *c, kt__errbuf *eb) {
  if (l->nargs > MAX_ARGS)
    return kt__fail(eb, KT__ST_RUNTIME, "too many arguments (%d, at most %d)", l->nargs, MAX_ARGS);
  for (int i = 0; i < l->nargs; i++) {
    if (l->args[i].is_tensor) {
      c->ptr[i] = l->args[i].buf;
    } else {
      memcpy(c->scalar[i], l->args[i].scalar, sizeof c->scalar[i]);
      c->ptr[i] = c->scalar[i];
    }
  }
  return KT__ST_OK;
}

static kt__status cpu_run(void *state, void *fn, const kt__launch *l, kt__errbuf *eb) {
  call_args c;
  kt__status st = prepare(l, &c, eb);
  if (st == KT__ST_OK) ((cpu_fn *)fn)->entry(c.ptr);
  return st;
}

static double seconds_between(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

static kt__status cpu_time(void *state, void *fn, const kt__launch *l, int n, kt_timing how, bool energy_wanted,
                           double *seconds, kt__reading *reading, kt__errbuf *eb) {
  (void)how; /* one method; a CPU reports nothing of its clocks here, only RAPL's energy */
  cpu_state *s = state;
  call_args c;
  kt__status st = prepare(l, &c, eb);
  if (st != KT__ST_OK) return st;
  entry_fn entry = ((cpu_fn *)fn)->entry;
  struct timespec t0, t1, c0, c1;
  kt__rapl_counts e0, e1;
  bool energy = reading && energy_wanted && s->rapl.n && kt__rapl_read(&s->rapl, &e0);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) entry(c.ptr);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  double wall = seconds_between(&t0, &t1), cpu = seconds_between(&c0, &c1);
  /* The packages' energy over the wall-clock time: whatever else ran on
   * them meanwhile is in it too, as the power a busy host draws. */
  if (energy && kt__rapl_read(&s->rapl, &e1))
    reading->energy_known = true, reading->energy_j = kt__rapl_joules(&s->rapl, &e0, &e1), reading->energy_s = wall;
  /* The worker's CPU time leaves out the time other processes took the core
   * from it: on a loaded machine a sample otherwise lasts longer by whatever
   * the scheduler gave them, and short configurations, preempted in most of
   * their samples, lost to ones ten times slower (docs/DESIGN.md, "Host
   * timings"). A kernel that ran threads of its own used more CPU time than
   * wall-clock time: its wall-clock time is the one that counts. */
  *seconds = cpu < wall ? cpu : wall;
  return KT__ST_OK;
}

/* Writes a buffer twice the last-level cache (capped), so that the next
 * sample starts from memory as a kernel called in an application would. */
static void cpu_flush_cache(void *state) {
  cpu_state *s = state;
  if (!s->flush) {
    uint64_t want = s->info.l2_bytes ? 2 * s->info.l2_bytes : 8u << 20;
    s->flush_bytes = (size_t)(want < FLUSH_CAP ? want : FLUSH_CAP);
    s->flush = malloc(s->flush_bytes);
    if (!s->flush) return;
  }
  memset(s->flush, ++s->flush_round, s->flush_bytes);
  /* A read the compiler cannot drop keeps the stores from being elided. */
  volatile unsigned char sink = s->flush[s->flush_bytes / 2];
  (void)sink;
}

const kt__backend kt__backend_cpu = {
    .name = "cpu",
    .timings = {[KT_TIMING_EVENTS] = "clock"},
    .lang = KT__LANG_C,
    .extensions = {".c"},
    .runs_host_code = true,
    .list_devices = cpu_list_devices,
    .compile = cpu_compile,
    .binary_flags = cpu_binary_flags,
    .artifact_parts = {".so"},
    .stops_on_cancel = true,
    .open = cpu_open,
    .close = cpu_close,
    .load = cpu_load,
    .unload = cpu_unload,
    .set_constant = cpu_set_constant,
    .check = NULL,
    .alloc = cpu_alloc,
    .slice = cpu_slice,
    .release = cpu_release,
    .upload = cpu_upload,
    .download = cpu_download,
    .copy = cpu_copy,
    .share = cpu_share,
    .copy_shared = cpu_copy_shared,
    .run = cpu_run,
    .time = cpu_time,
    .flush_cache = cpu_flush_cache,
};
