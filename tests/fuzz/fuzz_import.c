/* `ktune cache import` on arbitrary files, into an in-memory database (the
 * whole path: reading, JSON, header checks, the transaction). */
#include "fuzz.h"

#include <stdio.h>

#include "ktune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = kt__fuzz_file(data, size, ".json");
  char err[1024];
  (void)kt_cache_import(":memory:", path, NULL, err, sizeof err);
  return 0;
}
