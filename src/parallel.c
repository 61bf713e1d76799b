#include "parallel.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One part, as its thread sees it. */
typedef struct part {
  void (*body)(void *, int, uint64_t, uint64_t);
  void *arg;
  int index;
  uint64_t begin, len;
} part;

static void *part_main(void *p) {
  part *h = p;
  h->body(h->arg, h->index, h->begin, h->len);
  return NULL;
}

int kt__split_run(uint64_t count, uint64_t min_per_part, int threads,
                  void (*body)(void *arg, int part, uint64_t begin, uint64_t len), void *arg) {
  int n = threads < 1 ? 1 : threads > KT__SPLIT_MAX_PARTS ? KT__SPLIT_MAX_PARTS : threads;
  if ((uint64_t)n > count / min_per_part) n = count / min_per_part > 1 ? (int)(count / min_per_part) : 1;
  if (n == 1) {
    body(arg, 0, 0, count);
    return 1;
  }
  part parts[KT__SPLIT_MAX_PARTS];
  pthread_t tid[KT__SPLIT_MAX_PARTS];
  bool running[KT__SPLIT_MAX_PARTS];
  uint64_t step = (count + (uint64_t)n - 1) / (uint64_t)n;
  for (int i = 0; i < n; i++) {
    uint64_t b = step * (uint64_t)i;
    parts[i] = (part){body, arg, i, b, b >= count ? 0 : count - b < step ? count - b : step};
    running[i] = pthread_create(&tid[i], NULL, part_main, &parts[i]) == 0;
    if (!running[i]) body(arg, i, parts[i].begin, parts[i].len);
  }
  for (int i = 0; i < n; i++)
    if (running[i]) pthread_join(tid[i], NULL);
  return n;
}

typedef struct copy_job {
  char *dst;
  const char *src;
} copy_job;

static void copy_body(void *arg, int index, uint64_t begin, uint64_t len) {
  (void)index;
  copy_job *j = arg;
  memcpy(j->dst + begin, j->src + begin, len);
}

void kt__copy_parallel(void *dst, const void *src, size_t bytes, int threads) {
  copy_job j = {dst, src};
  kt__split_run(bytes, 1 << 24, threads, copy_body, &j);
}

typedef struct equal_job {
  const char *a, *b;
  bool differs[KT__SPLIT_MAX_PARTS];
} equal_job;

static void equal_body(void *arg, int index, uint64_t begin, uint64_t len) {
  equal_job *j = arg;
  j->differs[index] = memcmp(j->a + begin, j->b + begin, len) != 0;
}

bool kt__equal_parallel(const void *a, const void *b, size_t bytes, int threads) {
  equal_job j = {.a = a, .b = b};
  int n = kt__split_run(bytes, 1 << 24, threads, equal_body, &j);
  for (int i = 0; i < n; i++)
    if (j.differs[i]) return false;
  return true;
}

typedef struct prefault_job {
  volatile char *buf;
  uint64_t bytes, page;
} prefault_job;

/* Touches offsets k * page (and the last byte), so every page the buffer
 * overlaps is touched whatever its alignment. */
static void prefault_body(void *arg, int index, uint64_t begin, uint64_t len) {
  (void)index;
  prefault_job *j = arg;
  for (uint64_t k = begin; k < begin + len; k++) j->buf[k * j->page < j->bytes ? k * j->page : j->bytes - 1] = 0;
}

void kt__touch_pages(void *buf, size_t bytes) {
  if (bytes == 0) return;
  prefault_job j = {buf, bytes, (uint64_t)sysconf(_SC_PAGESIZE)};
  kt__split_run(bytes / j.page + 2, 4096, kt__ncores(), prefault_body, &j);
}

void kt__prefault(void *buf, size_t bytes) {
  if (bytes == 0 || kt__populate(buf, bytes)) return;
  kt__touch_pages(buf, bytes);
}

bool kt__populate(void *buf, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  /* A read-only mapping (the worker's inputs) takes the read form. */
  return bytes == 0 || madvise(buf, bytes, MADV_POPULATE_WRITE) == 0 || madvise(buf, bytes, MADV_POPULATE_READ) == 0;
#else
  (void)buf, (void)bytes;
  return false;
#endif
}
