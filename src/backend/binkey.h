/* A build's use of the binary cache (src/bincache/): its key, and compile
 * through the cache for backends that compile (the artifact's files are
 * the entry). Backends that build at load (OpenCL) use the key and keep
 * their own program binary. */
#ifndef KT_BACKEND_BINKEY_H
#define KT_BACKEND_BINKEY_H

#include "backend.h"

/* The key of build B on BE: the backend, the device's name, architecture,
 * driver and toolchain versions, the kernel's name, the backend's flags
 * (binary_flags), the -D values and the source with what it includes.
 * False when B is not cached: the cache is off, the backend has no
 * binary_flags, or an include cannot be hashed (WHY says which; may be
 * NULL). */
bool kt__build_binary_key(const kt__backend *be, const kt__build *b, unsigned char key[32], char *why, size_t whylen);

/* be->compile through the cache: a hit writes the entry's files where
 * compile would have and compiles nothing; a miss compiles and stores.
 * A->cache_use says which. */
kt__status kt__compile_cached(const kt__backend *be, const kt__build *b, kt__artifact *a, kt__errbuf *eb);

#endif
