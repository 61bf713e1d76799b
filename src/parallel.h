/* Work on large host buffers spread over the cores: one splitting helper
 * (contiguous parts, one thread each) and the two memory operations the
 * tuner and its worker run on hundreds of megabytes. */
#ifndef KT_PARALLEL_H
#define KT_PARALLEL_H

#include "common.h"

enum { KT__SPLIT_MAX_PARTS = 64 };

/* Runs BODY(ARG, part, begin, len) over [0, COUNT) in at most THREADS
 * contiguous parts of at least MIN_PER_PART each, in threads (part 0 first;
 * a part whose thread cannot start runs in the caller); returns the number
 * of parts, at most KT__SPLIT_MAX_PARTS. */
int kt__split_run(uint64_t count, uint64_t min_per_part, int threads,
                  void (*body)(void *arg, int part, uint64_t begin, uint64_t len), void *arg);

/* memcpy on up to THREADS threads (large copies only). */
void kt__copy_parallel(void *dst, const void *src, size_t bytes, int threads);

/* memcmp(A, B, BYTES) == 0 on up to THREADS threads. */
bool kt__equal_parallel(const void *a, const void *b, size_t bytes, int threads);

/* Touches every page of BUF (writing zeros) on every core, so that the
 * kernel maps its pages now rather than during a later copy into it. */
void kt__prefault(void *buf, size_t bytes);

/* Fills the page tables of BUF (page-aligned), which maps pages that exist
 * already (shared memory written before), on every core and without
 * touching the contents (MADV_POPULATE_WRITE, Linux 5.14: a fault per page
 * costs a tenth of a second per GB; on older kernels nothing is done and
 * the faults come later). */
void kt__populate(void *buf, size_t bytes);

#endif
