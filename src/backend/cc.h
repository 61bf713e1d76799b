/* The C compiler as the cpu backend runs it ($CC, spawned without a shell,
 * in its own process group, killed at a timeout), for other host code than
 * kernels: an author's check function (src/check). */
#ifndef KT_BACKEND_CC_H
#define KT_BACKEND_CC_H

#include "../common.h"

/* Compiles SRC into the shared object SO with -O2 -fPIC -shared and FLAGS
 * (NFLAGS words), temporaries in TMPDIR. KT_INVALID with the compiler's
 * first lines of output in EB when it fails or runs past TIMEOUT_S. */
int kt__cc_shared_object(const char *src, const char *so, const char *const *flags, int nflags, double timeout_s,
                         const char *tmpdir, kt__errbuf *eb);

/* Where <ktune.h> is, for host code that includes it (a check, a cpu
 * kernel's file that holds one): the installed header (found relative to
 * the library or the ktune command, so a moved prefix keeps working), else
 * the source tree's, for a build run from its tree. */
const char *kt__cc_ktune_include_dir(void);

#endif
