/* The annotation parser on arbitrary text: the first byte picks the
 * language (C, OpenCL C, CUDA C), the rest is the source. Every kernel found
 * is also looked up by name, as the command line does. */
#include "fuzz.h"

#include <stdlib.h>

#include "lang/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  kt__lang lang = (kt__lang)(data[0] % 3);
  char *text = kt__fuzz_string(data + 1, size - 1);
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("fuzz.c", text, lang, &d);
  if (f) {
    kt__errbuf eb;
    for (int i = 0; i < f->nkernels; i++) (void)kt__file_kernel(f, f->kernels[i].name, "--kernel", &eb);
    (void)kt__file_kernel(f, NULL, "--kernel", &eb);
  }
  kt__file_free(f);
  kt__diag_free(&d);
  free(text);
  return 0;
}
