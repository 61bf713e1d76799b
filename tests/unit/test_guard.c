/* Guard zones (src/device/guard.c) over a pretend device in host memory,
 * with and without a device comparison: a write before a tensor or past its
 * end is found, with its distance, whether the zones are compared on the
 * device (against copies kept there) or downloaded; writes inside the
 * tensor, its last bytes included, are not damage; an allocation kept in a
 * worker's pool serves a smaller tensor of the next tuning. */
#include <stdlib.h>
#include <string.h>

#include "device/devpool.h"
#include "device/guard.h"
#include "harness.h"

/* The pretend device: buffers are host memory, a slice an address inside
 * one; it counts what crosses to the host, and its comparisons. */
typedef struct fake_device {
  size_t downloaded;
  int compared, allocated, released;
} fake_device;

static int fake_alloc(void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  (void)eb;
  ((fake_device *)state)->allocated++;
  *buf = malloc(bytes);
  return *buf ? KT_OK : KT_NOMEM;
}

static void fake_release(void *state, void *buf) {
  ((fake_device *)state)->released++;
  free(buf);
}

static int fake_slice(void *state, void *buf, size_t offset, size_t bytes, void **out, kt__errbuf *eb) {
  (void)state, (void)bytes, (void)eb;
  *out = (char *)buf + offset;
  return KT_OK;
}

static int fake_upload(void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb) {
  (void)state, (void)eb;
  memcpy(buf, host, bytes);
  return KT_OK;
}

static int fake_download(void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb) {
  (void)eb;
  ((fake_device *)state)->downloaded += bytes;
  memcpy(host, buf, bytes);
  return KT_OK;
}

static int fake_copy(void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb) {
  (void)state, (void)eb;
  memmove(dst, src, bytes);
  return KT_OK;
}

static int fake_equal(void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb) {
  (void)eb;
  ((fake_device *)state)->compared++;
  *same = memcmp(a, b, bytes) == 0;
  return KT_OK;
}

static const kt__backend host_compare = {.name = "fake-host-compare",
                                         .alloc = fake_alloc,
                                         .release = fake_release,
                                         .slice = fake_slice,
                                         .upload = fake_upload,
                                         .download = fake_download};

static const kt__backend device_compare = {.name = "fake-device-compare",
                                           .alloc = fake_alloc,
                                           .release = fake_release,
                                           .slice = fake_slice,
                                           .upload = fake_upload,
                                           .download = fake_download,
                                           .copy = fake_copy,
                                           .equal = fake_equal};

/* A tensor of BYTES (not a multiple of 8 nor of a slice, so that the back
 * slice starts inside it) between zones on BE: damage before, past and
 * inside it, each found or not as it should be. */
static void finds_writes_outside(const kt__backend *be, size_t bytes) {
  fake_device dev = {0};
  kt__errbuf eb;
  kt__guarded g;
  ASSERT_EQ(kt__guarded_alloc(be, &dev, NULL, bytes, &g, &eb), KT_OK);
  ASSERT_EQ(kt__guarded_arm(be, &dev, &g, &eb), KT_OK);
  ASSERT_EQ(g.front_copy != NULL, be->equal != NULL);
  unsigned char *t = g.inner;
  kt__guard_damage d;
  memset(t, 0x5A, bytes); /* the whole tensor written, its last bytes too: no damage */
  dev.downloaded = 0;
  ASSERT_EQ(kt__guarded_check(be, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 0);
  if (be->equal) ASSERT_EQ(dev.downloaded, 0); /* compared on the device */
  else ASSERT_GE(dev.downloaded, 2 * g.zone);
  t[-3] ^= 0xFF; /* three bytes before the start */
  ASSERT_EQ(kt__guarded_check(be, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 1);
  ASSERT_TRUE(d.before);
  ASSERT_EQ(d.distance, 3);
  ASSERT_EQ(kt__guarded_arm(be, &dev, &g, &eb), KT_OK);
  ASSERT_EQ(kt__guarded_check(be, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 0);  /* re-armed */
  t[bytes + 100] ^= 0xFF; /* 100 bytes past the end */
  t[bytes + 101] ^= 0xFF;
  ASSERT_EQ(kt__guarded_check(be, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 2);
  ASSERT_FALSE(d.before);
  ASSERT_EQ(d.distance, 100);
  ASSERT_EQ(kt__guarded_arm(be, &dev, &g, &eb), KT_OK);
  t[bytes - 1] ^= 0xFF; /* the tensor's last byte changed after arming: its own */
  dev.downloaded = 0;
  ASSERT_EQ(kt__guarded_check(be, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 0);
  if (be->equal) ASSERT_EQ(dev.downloaded, 0); /* not even looked at closer */
  kt__guarded_free(be, &dev, NULL, &g);
  ASSERT_EQ(dev.released, dev.allocated);
}

TEST(guard_zones_compared_on_the_host_find_writes_outside) { finds_writes_outside(&host_compare, 10007); }

TEST(guard_zones_compared_on_the_device_find_writes_outside) {
  finds_writes_outside(&device_compare, 10007);
  finds_writes_outside(&device_compare, 3 * KT__SLICE_ALIGN); /* no tail: the back slice is all zone */
}

/* A worker's pool: the buffers of a tensor (the allocation and both zones'
 * device copies) go back to it and serve the next tuning's smaller tensor,
 * and its zones still catch a write past the end. */
TEST(guard_zones_from_a_kept_allocation) {
  fake_device dev = {0};
  kt__errbuf eb;
  kt__devpool pool = {0};
  kt__guarded g;
  ASSERT_EQ(kt__guarded_alloc(&device_compare, &dev, &pool, 20000, &g, &eb), KT_OK);
  ASSERT_EQ(dev.allocated, 3);
  kt__guarded_free(&device_compare, &dev, &pool, &g);
  ASSERT_EQ(dev.released, 0);
  ASSERT_EQ(kt__guarded_alloc(&device_compare, &dev, &pool, 9000, &g, &eb), KT_OK);
  ASSERT_EQ(dev.allocated, 3);
  ASSERT_EQ(pool.reused, 3);
  ASSERT_EQ(kt__guarded_arm(&device_compare, &dev, &g, &eb), KT_OK);
  ((unsigned char *)g.inner)[9000] ^= 1;
  kt__guard_damage d;
  ASSERT_EQ(kt__guarded_check(&device_compare, &dev, &g, &d, &eb), KT_OK);
  ASSERT_EQ(d.count, 1);
  ASSERT_FALSE(d.before);
  ASSERT_EQ(d.distance, 0);
  kt__guarded_free(&device_compare, &dev, &pool, &g);
  kt__devpool_free(&pool, &device_compare, &dev);
  ASSERT_EQ(dev.released, 3);
}
