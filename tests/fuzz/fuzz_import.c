/* `ktune cache import` on arbitrary files, into an in-memory database (the
 * whole path: reading, JSON, header checks, the transaction). */
#include "fuzz.h"

#include <stdio.h>

#include "ktune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static kt_context *ctx;
  if (!ctx) (void)kt_context_create(&(kt_options){.db_path = ":memory:"}, &ctx);
  const char *path = kt__fuzz_file(data, size, ".json");
  (void)kt_cache_import(ctx, path, NULL);
  return 0;
}
