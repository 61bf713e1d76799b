/* The per-process private working directory of compiler outputs. */
#ifndef KT_WORKDIR_H
#define KT_WORKDIR_H

#include "common.h"

/* Per-process private directory (0700) for compiler outputs, removed at
 * exit; creating it first removes the folders of ktune processes that died
 * without removing theirs. NULL with KT_INVALID in EB when TMPDIR is
 * missing, read-only or relative. */
const char *kt__workdir(kt__errbuf *eb);

#endif
