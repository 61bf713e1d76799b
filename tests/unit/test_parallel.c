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
 * mapped, by populating or by writing a zero into it. */
TEST(prefault_maps_every_page) {
  size_t bytes = ((size_t)64 << 20) + 3;
  unsigned char *p = malloc(bytes);
  memset(p, 0xA5, bytes);
  kt__prefault(p, bytes); /* unaligned: the zeros */
  long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < bytes; i += (size_t)page) ASSERT_TRUE(p[i] == 0 || p[i] == 0xA5);
  free(p);
  size_t len = ((size_t)8 << 20) + 5;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_TRUE(m != MAP_FAILED);
  kt__prefault(m, len);
  ASSERT_EQ(resident_pages(m, len), (len + (size_t)page - 1) / (size_t)page);
  munmap(m, len);
}

/* Shared memory written by another mapping keeps its contents when a new
 * mapping of it is populated, read-only ones included (the worker's
 * inputs); populated, every page is resident at once. */
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
  if (kt__populate(rw, len)) ASSERT_EQ(resident_pages(rw, len), pages);
  if (kt__populate(ro, len)) ASSERT_EQ(resident_pages(ro, len), pages);
  ASSERT_EQ(memcmp(rw, w, len), 0);
  ASSERT_EQ(memcmp(ro, w, len), 0);
  ASSERT_TRUE(kt__populate(rw, 0));
  munmap(w, len);
  munmap(rw, len);
  munmap(ro, len);
  close(fd);
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
