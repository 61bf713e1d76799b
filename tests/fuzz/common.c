/* Helpers for the fuzz targets: input as a string or as a file. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *kt__fuzz_string(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}

static char fuzz_path[4096];

static void remove_fuzz_file(void) {
  if (fuzz_path[0]) unlink(fuzz_path);
}

const char *kt__fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
  if (!fuzz_path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_path, sizeof fuzz_path, "%s/ktune-fuzz-%ld%s", tmp && *tmp ? tmp : "/tmp", (long)getpid(), suffix);
    atexit(remove_fuzz_file);
  }
  FILE *f = fopen(fuzz_path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  return fuzz_path;
}
