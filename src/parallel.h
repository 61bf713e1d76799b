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

/* Maps every page of BUF now rather than during a later copy into it:
 * kt__populate where the kernel can (BUF page-aligned), else a write of a
 * zero byte into each page on every core; what BUF holds afterwards is for
 * the caller to write. */
void kt__prefault(void *buf, size_t bytes);

/* Writes a zero byte into each page of BUF on every core, allocating the
 * pages of private memory in parallel (a populate call allocates them on
 * one core). What BUF holds afterwards is for the caller to write. */
void kt__touch_pages(void *buf, size_t bytes);

/* Fills the page tables of BUF (page-aligned) at once, allocating the
 * pages of shared memory that do not exist yet and keeping the contents of
 * those that do (MADV_POPULATE_WRITE, or _READ on a read-only mapping;
 * Linux 5.14; false where refused).
 * One call, on one core: in a miss on the H100 machine (the application,
 * the helper and the worker touching one file at once) a fault per page
 * cost 0.35 s for 268 MB of fresh shared memory copied on 16 cores, and
 * populating 802 MB of existing pages took 0.044 s in one call against
 * 0.104 s split over the cores (docs/BENCHMARKS.md, fifteenth session).
 * Alone, on a 2-core machine, splitting is faster (bench/shm_pages.c): the
 * choice is the GPU machine's, under contention. Pages that exist already
 * are mapped faster by the faults of a copy on every core (0.013-0.019 s
 * against 0.035-0.073 s for one populate call and then the copy, 256 MB on
 * the GPU machine's 16 cores, bench/shm_pages.c):
 * the worker's copy of the reference, whose pages the tuner allocated,
 * takes no populate call (kt__run_reference). */
bool kt__populate(void *buf, size_t bytes);

#endif
