/* Data files (.npy versions 1-3 and raw binary) and the library's check
 * callback (kt_tune_options.check). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/datafile.h"
#include "harness.h"
#include "ktune.h"
#include "tuner/result.h"

/* Writes a .npy file of format VERSION with header dict DICT and BYTES of data. */
static void write_npy(const char *path, int version, const char *dict, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  ASSERT_TRUE(f != NULL);
  size_t len = strlen(dict);
  unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0};
  size_t prefix = version == 1 ? 10 : 12;
  if (version == 1) pre[8] = (unsigned char)len, pre[9] = (unsigned char)(len >> 8);
  else pre[8] = (unsigned char)len, pre[9] = (unsigned char)(len >> 8), pre[10] = 0, pre[11] = 0;
  fwrite(pre, 1, prefix, f);
  fwrite(dict, 1, len, f);
  fwrite(data, 1, bytes, f);
  fclose(f);
}

static int read_header(const char *path, bool raw, kt__dtype type, kt__data_header *h, kt__errbuf *eb) {
  kt__data_source src = {.path = (char *)path, .raw = raw, .type = type};
  return kt__data_header_read(&src, h, eb);
}

TEST(npy_versions_types_and_shapes) {
  char path[] = "/tmp/kt-data-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  double d[6] = {1, 2, 3, 4, 5, 6};
  kt__data_header h;
  kt__errbuf eb = {{0}};
  write_npy(path, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", d, sizeof d);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_OK);
  ASSERT_EQ(h.type, KT__DT_F64);
  ASSERT_EQ(h.ndims, 2);
  ASSERT_EQ(h.shape[1], 3);
  ASSERT_EQ(h.count, 6);
  double back[6];
  kt__data_source src = {.path = path};
  ASSERT_EQ(kt__data_read(&src, &h, back, sizeof back, &eb), KT_OK);
  ASSERT_EQ(back[5], 6);
  /* Version 3 (UTF-8 header), keys in another order, a single byte type. */
  unsigned char bytes[4] = {1, 2, 3, 4};
  write_npy(path, 3, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"|u1\"}\n", bytes, 4);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_OK);
  ASSERT_EQ(h.type, KT__DT_U8);
  ASSERT_EQ(h.ndims, 1);
  ASSERT_EQ(h.offset, 12 + strlen("{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"|u1\"}\n"));
  /* A scalar: shape (). */
  write_npy(path, 2, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }\n", bytes, 4);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_OK);
  ASSERT_EQ(h.ndims, 0);
  ASSERT_EQ(h.count, 1);
  /* Refused: data cut short, a structured type, bool, and a raw file's odd length. */
  write_npy(path, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", d, sizeof d - 8);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "the header promises 48 bytes of data (6 f64 elements) but the file holds 40");
  write_npy(path, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", d, 4);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "no 'descr' string (a structured dtype?)");
  write_npy(path, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }\n", bytes, 4);
  ASSERT_EQ(read_header(path, false, KT__DT_F32, &h, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "element type '|b1' has no ktune type");
  ASSERT_EQ(read_header(path, true, KT__DT_U8, &h, &eb), KT_OK); /* the same bytes, raw */
  ASSERT_EQ(h.count, (uint64_t)(10 + strlen("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }\n") + 4));
  FILE *f = fopen(path, "wb");
  fwrite(d, 1, 10, f);
  fclose(f);
  ASSERT_EQ(read_header(path, true, KT__DT_F64, &h, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "no whole number of f64 elements");
  unlink(path);
}

TEST(source_spec_type_suffix) {
  kt__data_source s;
  kt__data_source_parse("dir/x.bin:f32", &s);
  ASSERT_STREQ(s.path, "dir/x.bin");
  ASSERT_TRUE(s.raw);
  ASSERT_EQ(s.type, KT__DT_F32);
  kt__data_source_free(&s);
  kt__data_source_parse("c:/weird:name.npy", &s); /* a colon that names no type stays in the path */
  ASSERT_STREQ(s.path, "c:/weird:name.npy");
  ASSERT_FALSE(s.raw);
  kt__data_source_free(&s);
}

/* ---- the library's check callback ------------------------------------- */

static int calls;

/* Accepts every configuration but U=2, whose output is right: the check,
 * not the comparison, decides. */
static int reject_u2(const kt_check_args *a) {
  calls++;
  int *expected = a->user;
  const kt_check_tensor *y = kt_check_tensor_named(a, "y");
  if (!y || !y->is_output || y->count != 16 || y->reference != NULL || *expected != 42) return 0;
  if (kt_check_value(a, "U", 0) == 2) {
    snprintf(a->message, a->message_size, "U=2 is not wanted");
    return 0;
  }
  return kt_check_value(a, "N", 0) == 16;
}

TEST(check_callback_decides) {
  kt_options opt = {.no_db = 1, .quiet = 1};
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&opt, &ctx), KT_OK);
  kt_kernel *k;
  ASSERT_EQ(
      kt_kernel_load_string(ctx, "cb.c",
                            "// @autotune(U in [1, 2, 4])\n"
                            "// @kernel cb(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                            "// @dims(N = 16)\n"
                            "void cb(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n",
                            "c", NULL, &k),
      KT_OK);
  int expected = 42;
  kt_tune_options o = {.check = reject_u2, .check_data = &expected};
  kt_result *r = NULL;
  ASSERT_EQ(kt_tune(k, &o, &r), KT_OK);
  ASSERT_EQ(r->ntrials, 3);
  for (int i = 0; i < r->ntrials; i++) {
    const kt__trial *tr = &r->trials[i];
    ASSERT_EQ(tr->status, tr->values[0] == 2 ? KT__ST_CORRECTNESS : KT__ST_OK);
    if (tr->values[0] == 2) ASSERT_CONTAINS(tr->message, "kt_tune_options.check rejected it: U=2 is not wanted");
  }
  ASSERT_EQ(calls, 0); /* called in the worker, a child process */
  kt_result_destroy(r);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}
