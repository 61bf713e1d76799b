/* Where the code of ktune is on disk (code_dir.h). */
#include "code_dir.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool kt__code_dir(char *dir, size_t len) {
  Dl_info info;
  char exe[4096];
  const char *file = NULL; /* absolute: a program started as ./prog has dladdr say "./prog" */
  if (dladdr((void *)kt__code_dir, &info) && info.dli_fname && info.dli_fname[0] == '/') file = info.dli_fname;
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
