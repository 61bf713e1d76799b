/* The T4 results reader behind `ktune replay` on arbitrary files (plain or
 * gzip'ed JSON), followed by a short replay when the file loads. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "ktune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  if (!sink && !(sink = fopen("/dev/null", "w"))) abort();
  const char *path = kt__fuzz_file(data, size, ".json");
  char err[1024];
  (void)kt_replay(path, "random", 8, 2, 1, NULL, 0, size % 2, sink, err, sizeof err);
  return 0;
}
