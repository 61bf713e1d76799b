/* Work split over threads: every element in exactly one part, parts in
 * order; the parallel copy and page touching built on it. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "parallel.h"

typedef struct seen {
  unsigned char hits[1000];
  uint64_t begin[KT__SPLIT_MAX_PARTS], len[KT__SPLIT_MAX_PARTS];
} seen;

static void mark(void *arg, int part, uint64_t begin, uint64_t len) {
  seen *s = arg;
  s->begin[part] = begin;
  s->len[part] = len;
  for (uint64_t i = begin; i < begin + len; i++) s->hits[i]++; /* parts never overlap */
}

TEST(split_run_covers_every_element_once) {
  static seen s, few, one; /* zeroed */
  int n = kt__split_run(1000, 100, 8, mark, &s);
  ASSERT_EQ(n, 8);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(s.hits[i], 1);
  for (int i = 1; i < n; i++) ASSERT_EQ(s.begin[i], s.begin[i - 1] + s.len[i - 1]);
  ASSERT_EQ(kt__split_run(1000, 400, 8, mark, &few), 2); /* at least 400 per part */
  ASSERT_EQ(kt__split_run(1000, 100, 0, mark, &one), 1);
  ASSERT_EQ(one.len[0], 1000);
}

/* Pages of BUF (page-aligned, BYTES) resident in memory. */
static size_t resident_pages(void *buf, size_t bytes) {
  long page = sysconf(_SC_PAGESIZE);
  size_t n = (bytes + (size_t)page - 1) / (size_t)page, count = 0;
  unsigned char *v = malloc(n);
  if (mincore(buf, bytes, v) != 0) n = 0;
  for (size_t i = 0; i < n; i++) count += v[i] & 1;
  free(v);
  return count;
}

/* Whatever the size and alignment (malloc's is not a page's): every page
 * that BUF touches is mapped afterwards, by populating or by writing into
 * it. glibc maps a block this large fresh, so its pages past the first are
 * not resident before. */
TEST(prefault_maps_every_page) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t bytes = ((size_t)64 << 20) + 3;
  unsigned char *p = malloc(bytes);
  uintptr_t lo = (uintptr_t)p / page * page, hi = ((uintptr_t)p + bytes + page - 1) / page * page;
  ASSERT_TRUE(resident_pages((void *)lo, hi - lo) < (hi - lo) / page);
  kt__prefault(p, bytes); /* unaligned: a zero written into each page */
  ASSERT_EQ(resident_pages((void *)lo, hi - lo), (hi - lo) / page);
  free(p);
  size_t len = ((size_t)8 << 20) + 5;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_TRUE(m != MAP_FAILED);
  ASSERT_EQ(resident_pages(m, len), 0);
  kt__prefault(m, len);
  ASSERT_EQ(resident_pages(m, len), (len + page - 1) / page);
  munmap(m, len);
}

/* The worker's scratch is touched on every core before the driver
 * page-locks it (worker.c, pin_scratch): every page it spans is then
 * allocated, none of the next. */
TEST(touch_pages_allocates_every_page_and_no_more) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = ((size_t)24 << 20) + 5;
  unsigned char *m = mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_TRUE(m != MAP_FAILED);
  kt__touch_pages(m, 0);
  ASSERT_EQ(resident_pages(m, len + page), 0);
  kt__touch_pages(m, len);
  size_t spanned = (len + page - 1) / page;
  ASSERT_EQ(resident_pages(m, len + page), spanned);
  ASSERT_EQ(m[0] | m[len - 1], 0);
  munmap(m, len + page);
}

/* Shared memory written by another mapping keeps its contents when a new
 * mapping of it is populated, read-only ones included (the worker's
 * inputs); the pages of a fresh memfd exist once populated. */
TEST(populate_keeps_the_contents_of_shared_memory) {
  size_t len = ((size_t)16 << 20) + 7;
  int fd = memfd_create("test-populate", MFD_CLOEXEC);
  ASSERT_TRUE(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
  unsigned char *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_TRUE(w != MAP_FAILED);
  for (size_t i = 0; i < len; i++) w[i] = (unsigned char)(i * 2654435761u >> 13);
  unsigned char *rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  unsigned char *ro = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_TRUE(rw != MAP_FAILED && ro != MAP_FAILED);
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = (len + (size_t)page - 1) / (size_t)page;
  kt__populate(rw, len);
  kt__populate(ro, len);
  ASSERT_EQ(memcmp(rw, w, len), 0);
  ASSERT_EQ(memcmp(ro, w, len), 0);
  ASSERT_TRUE(kt__populate(rw, 0));
  munmap(w, len);
  munmap(rw, len);
  munmap(ro, len);
  close(fd);
  int fresh = memfd_create("test-populate-fresh", MFD_CLOEXEC);
  ASSERT_TRUE(fresh >= 0 && ftruncate(fresh, (off_t)len) == 0);
  unsigned char *f = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fresh, 0);
  ASSERT_TRUE(f != MAP_FAILED);
  ASSERT_EQ(resident_pages(f, len), 0);
  if (kt__populate(f, len)) ASSERT_EQ(resident_pages(f, len), pages); /* false before Linux 5.14 */
  ASSERT_EQ(f[len - 1], 0);
  munmap(f, len);
  close(fresh);
}

TEST(copy_parallel_copies_every_byte) {
  size_t bytes = ((size_t)80 << 20) + 3; /* several parts and a ragged end */
  unsigned char *src = malloc(bytes), *dst = calloc(bytes, 1);
  for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)(i * 2654435761u >> 13);
  kt__copy_parallel(dst, src, bytes, 8);
  ASSERT_EQ(memcmp(dst, src, bytes), 0);
  memset(dst, 0, bytes);
  kt__copy_parallel(dst, src, 5, 8);
  ASSERT_EQ(memcmp(dst, src, 5), 0);
  ASSERT_EQ(dst[5], 0);
  free(src);
  free(dst);
}
