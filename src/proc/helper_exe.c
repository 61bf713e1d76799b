/* Finding ktune-tuner (helper_exe.h). */
#include "helper_exe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../envvars.h"

#ifndef KTUNE_LIBEXEC_FROM_LIB
#define KTUNE_LIBEXEC_FROM_LIB "../libexec"
#endif

static bool executable(const char *path) { return access(path, X_OK) == 0; }

/* The folder of the file that holds this code: the shared library, or the
 * executable it is linked into. */
static bool library_dir(char *dir, size_t len) {
  Dl_info info;
  char exe[4096];
  const char *file = NULL;
  if (dladdr((void *)kt__helper_exe_path, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
    file = info.dli_fname;
  if (!file) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    file = exe;
  }
  const char *slash = strrchr(file, '/');
  snprintf(dir, len, "%.*s", (int)(slash - file), file);
  return true;
}

bool kt__helper_exe_path(char *path, size_t len, kt__sbuf *why) {
  const char *env = kt__envvar_text(KT__ENV_HELPER);
  if (env && *env) {
    snprintf(path, len, "%s", env);
    return true;
  }
  char dir[4096];
  if (!library_dir(dir, sizeof dir)) {
    kt__sbuf_printf(why, "the library's folder is unknown (set KTUNE_HELPER to the ktune-tuner executable)");
    return false;
  }
  const char *const places[] = {"", "/" KTUNE_LIBEXEC_FROM_LIB, "/../libexec"};
  kt__sbuf tried = {0};
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
    snprintf(path, len, "%s%s/ktune-tuner", dir, places[i]);
    if (executable(path)) {
      kt__sbuf_free(&tried);
      return true;
    }
    kt__sbuf_printf(&tried, "%s%s", i ? ", " : "", path);
  }
  kt__sbuf_printf(why, "no ktune-tuner beside the library (looked for %s; set KTUNE_HELPER to it)", tried.s);
  kt__sbuf_free(&tried);
  return false;
}
