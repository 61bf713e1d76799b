/* Work split over threads: every element in exactly one part, parts in
 * order; the parallel copy and page touching built on it. */
#include <string.h>
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

/* Whatever the size and alignment (malloc's is not a page's). */
TEST(prefault_zeroes_every_page) {
  size_t bytes = ((size_t)64 << 20) + 3;
  unsigned char *p = malloc(bytes);
  memset(p, 0xA5, bytes);
  kt__prefault(p, bytes);
  long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < bytes; i += (size_t)page) ASSERT_EQ(p[i], 0);
  ASSERT_EQ(p[bytes - 1], 0);
  free(p);
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
