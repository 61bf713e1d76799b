/* Shared by the libFuzzer targets and the replay driver (replay_main.c). */
#ifndef KT_FUZZ_H
#define KT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* DATA as a NUL-terminated string (malloc'ed), cut at the first NUL. */
char *kt__fuzz_string(const uint8_t *data, size_t size);
/* Writes DATA to a private temporary file (one per process, rewritten on
 * each call) and returns its path. */
const char *kt__fuzz_file(const uint8_t *data, size_t size, const char *suffix);

#endif
