/* Run-time loading in one place: every GPU library (libcuda, NVRTC,
 * libOpenCL, NVML) is opened here, so a binary runs on a machine without
 * them and says which library is missing. */
#ifndef KT_BACKEND_DL_H
#define KT_BACKEND_DL_H

#include "../common.h"

/* Opens the first of CANDIDATES (NULL-terminated) that loads. On failure
 * returns NULL and EB names the library and the loader's reason. */
void *kt__dl_open_any(const char *const *candidates, const char *what, kt__errbuf *eb);
/* Resolves SYMBOLS[i] into ADDRS[i]; KT_NOBACKEND naming the first missing. */
int kt__dl_resolve(void *lib, const char *what, const char *const *symbols, void **addrs, int n, kt__errbuf *eb);
/* Whether this process has loaded library NAME (a soname); loads nothing. */
bool kt__dl_loaded(const char *name);

#endif
