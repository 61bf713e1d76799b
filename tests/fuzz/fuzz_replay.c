/* The T4 results reader behind `ktune replay` on arbitrary files (plain or
 * gzip'ed JSON), followed by a short replay when the file loads. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "ktune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  static kt_context *ctx;
  if (!sink && !(sink = fopen("/dev/null", "w"))) abort();
  if (!ctx) (void)kt_context_create(NULL, &ctx);
  const char *path = kt__fuzz_file(data, size, ".json");
  (void)kt_replay(ctx, path, "random", 8, 2, 1, NULL, 0, size % 2, sink);
  return 0;
}
