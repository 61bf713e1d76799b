/* Finding ktune-tuner (helper_exe.h). */
#include "helper_exe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../envvars.h"
#include "code_dir.h"

#ifndef KTUNE_LIBEXEC_FROM_LIB
#define KTUNE_LIBEXEC_FROM_LIB "../libexec"
#endif
#ifndef KTUNE_LIBEXEC_FROM_BIN
#define KTUNE_LIBEXEC_FROM_BIN "../libexec"
#endif

static bool executable(const char *path) { return access(path, X_OK) == 0; }

/* Whether DIR/ktune-tuner, then DIR/TAIL/ktune-tuner for each of the NTAILS
 * TAILS, is executable: its path in PATH. Each place tried goes into TRIED. */
static bool look_in(const char *dir, const char *const *tails, size_t ntails, char *path, size_t len, kt__sbuf *tried) {
  for (size_t i = 0; i <= ntails; i++) {
    snprintf(path, len, "%s%s%s/ktune-tuner", dir, i ? "/" : "", i ? tails[i - 1] : "");
    if (executable(path)) return true;
    kt__sbuf_printf(tried, "%s%s", tried->len ? ", " : "", path);
  }
  return false;
}

/* The folders of $PATH in turn: a program linked with libktune.a, or a
 * library copied elsewhere, still finds the ktune-tuner of the ktune
 * command its user runs (beside it, or in the installed layout's libexec).
 * Only folders that hold ktune or ktune-tuner are tried, so that WHY stays
 * short. */
static bool look_on_path(char *path, size_t len, kt__sbuf *tried) {
  const char *list = kt__envvar_text(KT__ENV_PATH);
  static const char *const tails[] = {KTUNE_LIBEXEC_FROM_BIN};
  char dir[4096], probe[4096 + 16];
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ":");
    snprintf(dir, sizeof dir, "%.*s", (int)n, p);
    p += n + (p[n] == ':');
    if (!*dir || dir[0] != '/') continue; /* a relative folder would depend on the working directory */
    snprintf(probe, sizeof probe, "%s/ktune", dir);
    bool has_command = executable(probe);
    snprintf(probe, sizeof probe, "%s/ktune-tuner", dir);
    if (!has_command && !executable(probe)) continue;
    if (look_in(dir, tails, has_command ? 1 : 0, path, len, tried)) return true;
  }
  return false;
}

bool kt__helper_exe_path(char *path, size_t len, kt__sbuf *why) {
  const char *env = kt__envvar_text(KT__ENV_HELPER);
  if (env && *env) {
    snprintf(path, len, "%s", env);
    return true;
  }
  static const char *const beside_library[] = {KTUNE_LIBEXEC_FROM_LIB, "../libexec"};
  size_t ntails = strcmp(beside_library[0], beside_library[1]) ? 2 : 1; /* the usual layout: one place */
  char dir[4096];
  kt__sbuf tried = {0};
  bool found = (kt__code_dir(dir, sizeof dir) && look_in(dir, beside_library, ntails, path, len, &tried)) ||
               look_on_path(path, len, &tried);
  if (!found)
    kt__sbuf_printf(why,
                    "no ktune-tuner beside the library or the ktune command on PATH (looked for %s; "
                    "put ktune's bin folder on PATH, or set KTUNE_HELPER to the ktune-tuner executable)",
                    tried.len ? tried.s : "nothing: the library's folder is unknown and no ktune is on PATH");
  kt__sbuf_free(&tried);
  return found;
}
