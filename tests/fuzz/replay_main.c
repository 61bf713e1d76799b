/* Replays fuzz inputs without libFuzzer: each argument is a file or a
 * directory of files, each fed once to LLVMFuzzerTestOneInput. CTest runs
 * the corpus and tests/fuzz/regressions through it in every build (plain and
 * sanitized), so a crash once found stays fixed. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
    if ((n += got) == cap) buf = realloc(buf, cap *= 2);
  fclose(f);
  if (!buf) abort();
  /* An exact-size copy, so that reading past the input is caught. */
  uint8_t *data = malloc(n ? n : 1);
  memcpy(data, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(data, n);
  free(data);
  return 0;
}

static int run_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "%s: nothing to replay (no such file or directory)\n", path);
    return 0; /* an empty regressions directory is not kept by git */
  }
  if (!S_ISDIR(st.st_mode)) return (*count)++, run_file(path);
  DIR *dir = opendir(path);
  if (!dir) return 1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    rc |= run_path(sub, count);
  }
  closedir(dir);
  return rc;
}

int main(int argc, char **argv) {
  int rc = 0, count = 0;
  for (int i = 1; i < argc; i++) rc |= run_path(argv[i], &count);
  printf("%d inputs replayed\n", count);
  return rc;
}
