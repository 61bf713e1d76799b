/* NVRTC compilation of CUDA configurations (see nvrtc.h). */
#include "nvrtc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../envvars.h"
#include "cuda_limits.h"
#include "dl.h"

#ifdef KTUNE_HAVE_CUDA_H
#include <nvrtc.h>
#endif

static bool is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static pthread_once_t include_once = PTHREAD_ONCE_INIT;
static const char *found_include_dir;

static void find_include_dir(void) {
  static char from_env[4096];
  const char *home = kt__envvar_text(KT__ENV_CUDA_HOME);
  if (home && *home) {
    snprintf(from_env, sizeof from_env, "%s/include", home);
    if (is_dir(from_env)) {
      found_include_dir = from_env;
      return;
    }
  }
  found_include_dir = is_dir("/usr/local/cuda/include") ? "/usr/local/cuda/include" : NULL;
}

/* Looked up once: compile threads share the answer. */
const char *kt__nvrtc_include_dir(void) {
  pthread_once(&include_once, find_include_dir);
  return found_include_dir;
}

/* The argument of `@arch(...)` above the kernel, which the parser keeps as
 * an unknown attribute (name and place only): read back from the source. */
static void requested_arch(const kt__build *b, char *out, size_t len) {
  out[0] = 0;
  for (int i = 0; b->decl && i < b->decl->nunknown; i++) {
    if (strcmp(b->decl->unknown[i].name, "arch") != 0) continue;
    const char *p = b->file->src.text;
    for (int line = 1; p && line < b->decl->unknown[i].loc.line; line++) {
      p = strchr(p, '\n');
      if (p) p++;
    }
    const char *open = p ? strstr(p, "@arch(") : NULL;
    const char *eol = p ? strchr(p, '\n') : NULL;
    if (!open || (eol && open > eol)) continue;
    open += strlen("@arch(");
    size_t n = strcspn(open, ") \t\n");
    snprintf(out, len, "%.*s", (int)n, open);
  }
}

void kt__nvrtc_arch(const kt__build *b, char *out, size_t len) {
  char req[32];
  requested_arch(b, req, sizeof req);
  kt__cuda_pick_arch(kt__envvar_text(KT__ENV_CUDA_ARCH), req, b->device ? b->device->arch : NULL, out, len);
}

char **kt__nvrtc_options(const kt__build *b, const char *arch, const char *include_dir, int *count) {
  char **opts = kt__xcalloc((size_t)b->n + 6, sizeof *opts);
  int n = 0;
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "--gpu-architecture=%s", arch);
  opts[n++] = s.s;
  opts[n++] = kt__xstrdup("--std=c++17");
  if (include_dir) {
    s = (kt__sbuf){0};
    kt__sbuf_printf(&s, "-I%s", include_dir);
    opts[n++] = s.s;
    /* CUDA 13 keeps libcu++ (<cuda/std/...>, needed by cooperative_groups) here. */
    s = (kt__sbuf){0};
    kt__sbuf_printf(&s, "%s/cccl", include_dir);
    if (is_dir(s.s)) {
      kt__sbuf_free(&s);
      kt__sbuf_printf(&s, "-I%s/cccl", include_dir);
      opts[n++] = s.s;
    } else {
      kt__sbuf_free(&s);
    }
  }
  for (int i = 0; i < b->n; i++) {
    s = (kt__sbuf){0};
    kt__sbuf_printf(&s, "-D%s=%lld", b->names[i], (long long)b->values[i]);
    opts[n++] = s.s;
  }
  opts[n] = NULL;
  *count = n;
  return opts;
}

void kt__nvrtc_options_free(char **opts) {
  for (int i = 0; opts && opts[i]; i++) free(opts[i]);
  free(opts);
}

void kt__nvrtc_binary_flags(const kt__build *b, kt__sbuf *out) {
  char arch[32];
  kt__nvrtc_arch(b, arch, sizeof arch);
  int n = 0;
  char **opts = kt__nvrtc_options(b, arch, kt__nvrtc_include_dir(), &n);
  for (int i = 0; i < n; i++) kt__sbuf_printf(out, "%s ", opts[i]);
  kt__nvrtc_options_free(opts);
}

#ifdef KTUNE_HAVE_CUDA_H

/* Every NVRTC function ktune calls: name, return type, parameters. */
#define KT__NVRTC_FUNCS(XX)                                                                       \
  XX(nvrtcVersion, nvrtcResult, (int *, int *))                                                   \
  XX(nvrtcGetErrorString, const char *, (nvrtcResult))                                            \
  XX(nvrtcCreateProgram, nvrtcResult,                                                             \
     (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
  XX(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *))                                          \
  XX(nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char *const *))                  \
  XX(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *))                               \
  XX(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *))                                     \
  XX(nvrtcGetCUBINSize, nvrtcResult, (nvrtcProgram, size_t *))                                    \
  XX(nvrtcGetCUBIN, nvrtcResult, (nvrtcProgram, char *))                                          \
  XX(nvrtcAddNameExpression, nvrtcResult, (nvrtcProgram, const char *))                           \
  XX(nvrtcGetLoweredName, nvrtcResult, (nvrtcProgram, const char *, const char **))

static struct {
  pthread_once_t once;
  int rc;
  kt__errbuf eb;
#define KT__NV_FIELD_(name, ret, params) ret(*name) params;
  KT__NVRTC_FUNCS(KT__NV_FIELD_)
#undef KT__NV_FIELD_
} nv = {.once = PTHREAD_ONCE_INIT};

/* Candidate library names, most specific first. */
static void candidates(char store[][4096], const char *list[], int max) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  const char *env = kt__envvar_text(KT__ENV_NVRTC), *home = kt__envvar_text(KT__ENV_CUDA_HOME);
  int n = 0;
  if (env && *env) list[n++] = env;
  for (int i = 0; i < 3; i++) list[n++] = names[i];
  for (int i = 0; i < 3 && home && *home; i++) {
    snprintf(store[i], sizeof store[i], "%s/lib64/%s", home, names[i]);
    list[n++] = store[i];
  }
  for (int i = 0; i < 3; i++) {
    snprintf(store[3 + i], sizeof store[3 + i], "/usr/local/cuda/lib64/%s", names[i]);
    list[n++] = store[3 + i];
  }
  list[n] = NULL;
  (void)max;
}

static void load_once(void) {
  static char store[6][4096];
  const char *list[16];
  candidates(store, list, 16);
  void *lib = kt__dl_open_any(list, "NVRTC (the CUDA runtime compiler)", &nv.eb);
  if (!lib) {
    nv.rc = KT_NOBACKEND;
    return;
  }
  static const char *const names[] = {
#define KT__NV_NAME_(name, ret, params) #name,
      KT__NVRTC_FUNCS(KT__NV_NAME_)
#undef KT__NV_NAME_
  };
  void *slots[] = {
#define KT__NV_SLOT_(name, ret, params) (void *)&nv.name,
      KT__NVRTC_FUNCS(KT__NV_SLOT_)
#undef KT__NV_SLOT_
  };
  enum { N = sizeof names / sizeof names[0] };
  void *addrs[N];
  nv.rc = kt__dl_resolve(lib, "NVRTC", names, addrs, N, &nv.eb);
  /* POSIX guarantees that dlsym's object pointers convert to functions. */
  for (int i = 0; nv.rc == KT_OK && i < N; i++) memcpy(slots[i], &addrs[i], sizeof addrs[i]);
}

int kt__nvrtc_load(kt__errbuf *eb) {
  pthread_once(&nv.once, load_once);
  if (nv.rc != KT_OK && eb) *eb = nv.eb;
  return nv.rc;
}

int kt__nvrtc_version_string(char *out, size_t len, kt__errbuf *eb) {
  KT__FORWARD(kt__nvrtc_load(eb));
  int major = 0, minor = 0;
  nv.nvrtcVersion(&major, &minor);
  snprintf(out, len, "NVRTC %d.%d", major, minor);
  return KT_OK;
}

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nv.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1) return NULL;
  char *log = kt__xmalloc(n);
  if (nv.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
    free(log);
    return NULL;
  }
  return log;
}

/* Writes one output into the work folder; a failure (a full disk, no
 * descriptors left, the folder gone) is the machine's, told in *ENVIRONMENT. */
static int write_file(const char *path, const void *data, size_t n, bool *environment, kt__errbuf *eb) {
  FILE *f = fopen(path, "wb");
  int err = errno;
  if (f) {
    size_t w = fwrite(data, 1, n, f);
    err = w != n ? errno : 0;
    if (fclose(f) != 0 && !err) err = errno;
    if (!err && w != n) err = EIO;
  }
  if (!err) return KT_OK;
  *environment = kt__errno_is_environment(err);
  return kt__err(eb, KT_IO, "cannot write %s: %s", path, strerror(err));
}

/* The cubin, and the kernel's lowered name when it differs (C++ linkage). */
static kt__status save_outputs(nvrtcProgram prog, const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  size_t n = 0;
  nvrtcResult r = nv.nvrtcGetCUBINSize(prog, &n);
  if (r != NVRTC_SUCCESS || n == 0) {
    return kt__fail(eb, KT__ST_COMPILE, "NVRTC produced no cubin (%s): is the architecture a real one (sm_XY)?",
                    nv.nvrtcGetErrorString(r));
  }
  char *cubin = kt__xmalloc(n);
  nv.nvrtcGetCUBIN(prog, cubin);
  kt__sbuf path = {0};
  kt__sbuf_printf(&path, "%s/%s.cubin", b->workdir, b->tag);
  int rc = write_file(path.s, cubin, n, &a->environment, eb);
  free(cubin);
  const char *lowered = NULL;
  if (rc == KT_OK && nv.nvrtcGetLoweredName(prog, b->decl->name, &lowered) == NVRTC_SUCCESS && lowered &&
      strcmp(lowered, b->decl->name) != 0) {
    kt__sbuf sym = {0};
    kt__sbuf_printf(&sym, "%s.sym", path.s);
    rc = write_file(sym.s, lowered, strlen(lowered), &a->environment, eb);
    kt__sbuf_free(&sym);
  }
  if (rc != KT_OK) {
    kt__sbuf_free(&path);
    return KT__ST_COMPILE;
  }
  a->path = path.s;
  return KT__ST_OK;
}

/* Keeps the head of a long log in the one-line error message. */
static void compile_error(kt__errbuf *eb, const kt__build *b, const char *arch, const char *log, nvrtcResult r) {
  kt__err(eb, KT_INVALID, "NVRTC (%s) could not compile %s for %s:\n%.6000s", nv.nvrtcGetErrorString(r),
          b->file->src.path ? b->file->src.path : "the kernel", arch, log ? log : "(no log)");
}

static kt__status compile_program(nvrtcProgram prog, const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  char arch[32];
  kt__nvrtc_arch(b, arch, sizeof arch);
  int nopts = 0;
  char **opts = kt__nvrtc_options(b, arch, kt__nvrtc_include_dir(), &nopts);
  nvrtcResult r = nv.nvrtcCompileProgram(prog, nopts, (const char *const *)opts);
  kt__nvrtc_options_free(opts);
  a->log = program_log(prog);
  if (r != NVRTC_SUCCESS) {
    a->environment = r == NVRTC_ERROR_OUT_OF_MEMORY || kt__log_says_environment(a->log);
    compile_error(eb, b, arch, a->log, r);
    return KT__ST_COMPILE;
  }
  return save_outputs(prog, b, a, eb);
}

kt__status kt__nvrtc_build(const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  double t0 = kt__now();
  if (kt__nvrtc_load(eb) != KT_OK) {
    a->environment = true; /* no compiler to build with */
    return KT__ST_COMPILE;
  }
  nvrtcProgram prog = NULL;
  nvrtcResult r = nv.nvrtcCreateProgram(&prog, b->file->src.text, b->file->src.path, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    a->environment = r == NVRTC_ERROR_OUT_OF_MEMORY;
    return kt__fail(eb, KT__ST_COMPILE, "NVRTC could not create a program: %s", nv.nvrtcGetErrorString(r));
  }
  /* Asking for the kernel's lowered name finds it whether or not it is
   * extern "C"; a missing kernel becomes a compile error naming it. */
  nv.nvrtcAddNameExpression(prog, b->decl->name);
  kt__status st = compile_program(prog, b, a, eb);
  nv.nvrtcDestroyProgram(&prog);
  a->seconds = kt__now() - t0;
  return st;
}

int kt__nvrtc_cubin(const char *source, const char *arch, char **image, size_t *len, kt__errbuf *eb) {
  KT__FORWARD(kt__nvrtc_load(eb));
  nvrtcProgram prog = NULL;
  nvrtcResult r = nv.nvrtcCreateProgram(&prog, source, "ktune_internal.cu", 0, NULL, NULL);
  KT__RETURN_IF(r != NVRTC_SUCCESS, eb, KT_INVALID, "NVRTC could not create a program: %s", nv.nvrtcGetErrorString(r));
  kt__sbuf opt = {0};
  kt__sbuf_printf(&opt, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt.s, "--fmad=false"};
  r = nv.nvrtcCompileProgram(prog, 2, opts);
  kt__sbuf_free(&opt);
  size_t n = 0;
  if (r == NVRTC_SUCCESS) r = nv.nvrtcGetCUBINSize(prog, &n);
  if (r != NVRTC_SUCCESS || n == 0) {
    char *log = program_log(prog);
    kt__err(eb, KT_INVALID, "NVRTC (%s) could not compile ktune's own kernel for %s:\n%.6000s",
            nv.nvrtcGetErrorString(r), arch, log ? log : "(no log)");
    free(log);
    nv.nvrtcDestroyProgram(&prog);
    return KT_INVALID;
  }
  *image = kt__xmalloc(n);
  nv.nvrtcGetCUBIN(prog, *image);
  *len = n;
  nv.nvrtcDestroyProgram(&prog);
  return KT_OK;
}

#endif
