/* Host tensors, launch geometry, scalar values and the launch description from @kernel. */
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lang/parser.h"
#include "launch/args.h"
#include "launch/launch.h"

static const char *const SRC =
    "// @autotune(BLOCK in [64, 256])\n"
    "// @kernel k(a: in tensor<f32>[M, K], b: tensor<i32>[K] = iota, c: out tensor<f64>[M, 3] = ones,\n"
    "//           d: out tensor<u8>[M], m: i32 = M, s: i64)\n"
    "// @grid(cdiv(M, BLOCK))\n"
    "// @block(BLOCK)\n"
    "// @shared(BLOCK * 4)\n"
    "void k(const float *a, int *b, double *c, unsigned char *d, int m, long s) {}\n";

typedef struct fx {
  kt__file *file;
  const kt__kernel_decl *decl;
  const char *names[4];
  int64_t values[4];
  kt__env env;
} fx;

/* Parses SRC with runtime sizes M and K (and s, bound by name). */
static void setup(fx *f, int64_t m, int64_t k) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  f->file = kt__parse_string("args.c", SRC, KT__LANG_C, &d);
  if (!f->file) kt_test_fail(__FILE__, __LINE__, "parse failed:\n%s", d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  f->decl = kt__file_kernel(f->file, NULL, "the name", NULL);
  f->names[0] = "M", f->names[1] = "K", f->names[2] = "s";
  f->values[0] = m, f->values[1] = k, f->values[2] = 7;
  f->env = (kt__env){f->names, f->values, 3, NULL};
}

/* Maps and fills the tensors as the tuner does (kt__argset_map, then
 * kt__argset_fill with no files); NULL in *OUT on failure. */
static int argset_create(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t seed, uint64_t max_bytes,
                         kt__argset **out, kt__errbuf *eb) {
  KT__FORWARD(kt__argset_map(decl, sizes, max_bytes, out, eb));
  int rc = kt__argset_fill(decl, seed, NULL, NULL, NULL, *out, eb);
  if (rc != KT_OK) {
    kt__argset_free(*out);
    *out = NULL;
  }
  return rc;
}

TEST(tensors_shapes_modes_and_contents) {
  fx f;
  setup(&f, 5, 4);
  kt__argset *a, *again;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &a, &eb), KT_OK);
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &again, &eb), KT_OK);
  ASSERT_EQ(a->ntensors, 4);
  ASSERT_EQ(a->tensor_of_param[4], -1);
  ASSERT_EQ(a->tensor_of_param[2], 2);
  const kt__host_tensor *ta = &a->tensors[0], *tb = &a->tensors[1], *tc = &a->tensors[2], *td = &a->tensors[3];
  ASSERT_EQ(ta->count, 20);
  ASSERT_EQ(ta->bytes, 80);
  ASSERT_EQ(ta->ndims, 2);
  ASSERT_EQ(ta->shape[1], 4);
  ASSERT_TRUE(ta->reference == NULL);  /* inputs need none */
  ASSERT_EQ(tb->mode, KT__MODE_INOUT); /* non-const pointer without a mode */
  ASSERT_TRUE(tb->reference != NULL);
  ASSERT_EQ(((int32_t *)tb->initial)[3], 3);
  ASSERT_EQ(((double *)tc->initial)[14], 1);
  ASSERT_EQ(td->bytes, 5);
  ASSERT_EQ(a->total_bytes, 80 + 16 + 120 + 5);
  ASSERT_EQ(memcmp(ta->initial, again->tensors[0].initial, ta->bytes), 0); /* seeded */
  char where[64];
  kt__tensor_index_text(f.decl, tc, 7, where, sizeof where);
  ASSERT_STREQ(where, "c[2, 1]");
  kt__tensor_index_text(f.decl, td, 4, where, sizeof where);
  ASSERT_STREQ(where, "d[4]");
  kt__argset_free(a);
  kt__argset_free(again);
  kt__file_free(f.file);
}

TEST(negative_dimension_is_refused) {
  fx f;
  setup(&f, -3, 4);
  kt__argset *a = (kt__argset *)1;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &a, &eb), KT_INVALID);
  ASSERT_TRUE(a == NULL);
  ASSERT_CONTAINS(eb.msg, "tensor a: dimension 1 is negative (-3)");
  kt__file_free(f.file);
}

TEST(absurd_and_overflowing_shapes_are_refused) {
  fx f;
  setup(&f, (int64_t)1 << 50, 4);
  kt__argset *a;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &a, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "absurdly large");
  kt__file_free(f.file);
  setup(&f, (int64_t)1 << 40, (int64_t)1 << 40);
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &a, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "tensor a: the element count overflows");
  kt__file_free(f.file);
}

TEST(total_beyond_limit_is_refused_before_allocating) {
  fx f;
  setup(&f, 1000, 1000); /* a: 4 MB, the largest */
  kt__argset *a;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 1000000, &a, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "the largest is a");
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 5000000, &a, &eb), KT_OK);
  kt__argset_free(a);
  kt__file_free(f.file);
}

TEST(zero_sized_tensor_is_allowed) {
  fx f;
  setup(&f, 0, 4);
  kt__argset *a;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(argset_create(f.decl, &f.env, 1, 0, &a, &eb), KT_OK);
  ASSERT_EQ(a->tensors[0].count, 0);
  kt__argset_free(a);
  kt__file_free(f.file);
}

TEST(launch_geometry) {
  fx f;
  setup(&f, 1000, 4);
  const char *tn[] = {"BLOCK"};
  int64_t tv[] = {64};
  kt__env env = {tn, tv, 1, &f.env};
  uint64_t grid[3], block[3], shared;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__launch_geometry(f.decl, &env, grid, block, &shared, &eb), KT_OK);
  ASSERT_EQ(grid[0], 16);
  ASSERT_EQ(grid[1], 1);
  ASSERT_EQ(grid[2], 1);
  ASSERT_EQ(block[0], 64);
  ASSERT_EQ(shared, 256);
  f.values[0] = 0; /* an empty grid cannot launch */
  ASSERT_EQ(kt__launch_geometry(f.decl, &env, grid, block, &shared, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "@grid x is 0");
  ASSERT_EQ(kt__launch_geometry(f.decl, &f.env, grid, block, &shared, &eb), KT_INVALID); /* BLOCK unbound */
  ASSERT_CONTAINS(eb.msg, "BLOCK");
  kt__file_free(f.file);
}

/* Past 2^64 work-items in all, every backend's count wraps: refused, while
 * each extent alone and grid * block per dimension would fit. */
TEST(launch_geometry_refuses_overflowing_work_items) {
  static const char *const src = "// @autotune(G in [1, 2], B in [1, 2])\n"
                                 "// @kernel k(x: out tensor<f32>[4])\n"
                                 "// @grid(G, G, G)\n"
                                 "// @block(B)\n"
                                 "void k(float *x) {}\n";
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *file = kt__parse_string("geo.c", src, KT__LANG_C, &d);
  if (!file) kt_test_fail(__FILE__, __LINE__, "parse failed:\n%s", d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  const kt__kernel_decl *decl = kt__file_kernel(file, NULL, "the name", NULL);
  const char *names[] = {"G", "B"};
  int64_t values[] = {(int64_t)1 << 21, 4};
  kt__env env = {names, values, 2, NULL};
  uint64_t grid[3], block[3], shared;
  kt__errbuf eb = {{0}};
  /* 2^63 * 4 = 2^65 */
  ASSERT_EQ(kt__launch_geometry(decl, &env, grid, block, &shared, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "@grid(2097152, 2097152, 2097152) x @block(4, 1, 1) is more than 2^64 work-items");
  values[1] = 1; /* 2^63 fits */
  ASSERT_EQ(kt__launch_geometry(decl, &env, grid, block, &shared, &eb), KT_OK);
  ASSERT_EQ(grid[2], (uint64_t)1 << 21);
  values[0] = -1;
  ASSERT_EQ(kt__launch_geometry(decl, &env, grid, block, &shared, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "@grid x is -1, not a positive count");
  kt__file_free(file);
}

TEST(scalar_values) {
  fx f;
  setup(&f, 1000, 4);
  unsigned char v[8];
  size_t size;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__scalar_value(f.decl, 4, &f.env, v, &size, &eb), KT_OK);
  int32_t m;
  memcpy(&m, v, sizeof m);
  ASSERT_EQ(size, 4);
  ASSERT_EQ(m, 1000);
  ASSERT_EQ(kt__scalar_value(f.decl, 5, &f.env, v, &size, &eb), KT_OK); /* s: by name */
  int64_t s;
  memcpy(&s, v, sizeof s);
  ASSERT_EQ(size, 8);
  ASSERT_EQ(s, 7);
  f.values[0] = (int64_t)1 << 33;
  ASSERT_EQ(kt__scalar_value(f.decl, 4, &f.env, v, &size, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "does not fit in i32");
  f.env.n = 2; /* s unbound */
  ASSERT_EQ(kt__scalar_value(f.decl, 5, &f.env, v, &size, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "scalar s has no value");
  kt__file_free(f.file);
}

/* One configuration's launch, as the worker and kt_launch get it: geometry,
 * no cluster (no CLUSTER_ names), scalars evaluated, tensors left zero. */
TEST(launch_description) {
  fx f;
  setup(&f, 1000, 4);
  kt__config cfg;
  kt__config_init(&cfg, f.decl);
  int64_t block = 256;
  kt__arg args[6];
  memset(args, 0xff, sizeof args);
  kt__launch l;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__launch_describe(f.decl, &cfg, &block, &f.env, args, &l, &eb), KT_OK);
  ASSERT_EQ(l.nargs, 6);
  ASSERT_TRUE(l.args == args);
  ASSERT_EQ(l.grid[0], 4);
  ASSERT_EQ(l.block[0], 256);
  ASSERT_EQ(l.shared_bytes, 1024);
  ASSERT_EQ(l.cluster[0], 0);
  ASSERT_TRUE(!args[0].is_tensor && args[0].buf == NULL && args[0].size == 0);
  int32_t m;
  memcpy(&m, args[4].scalar, sizeof m);
  ASSERT_EQ(args[4].size, 4);
  ASSERT_EQ(m, 1000);
  ASSERT_EQ(args[5].size, 8);
  ASSERT_EQ(kt__launch_describe(f.decl, &cfg, &block, &f.env, NULL, &l, &eb), KT_OK); /* kt_launch: no arguments */
  ASSERT_TRUE(l.args == NULL);
  ASSERT_EQ(l.grid[0], 4);
  f.env.n = 2; /* s unbound */
  ASSERT_EQ(kt__launch_describe(f.decl, &cfg, &block, &f.env, args, &l, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "scalar s has no value");
  kt__config_free(&cfg);
  kt__file_free(f.file);
}

/* A tensor map's encoding inputs: the mapped tensor's shape innermost first,
 * its row strides in bytes, the box and swizzle of the configuration, and
 * what TMA cannot copy refused with its reason. */
static const char *const TMAP_SRC =
    "// @autotune(BM in [128, 512], BK in [64, 32, 128, 4], SW in [128, 48, 32])\n"
    "// @kernel g(c: out tensor<f32>[M, N], a: tensor<bf16>[M, K], amap: tensormap(a, box = [BM, BK],\n"
    "//           swizzle = SW), n: i32 = N)\n"
    "__global__ void g(float *c, const __nv_bfloat16 *a, const __grid_constant__ CUtensorMap amap, int n) {}\n";

static int tmap_describe(const kt__kernel_decl *decl, int64_t m, int64_t k, int64_t bm, int64_t bk, int64_t sw,
                         kt__launch *l, kt__errbuf *eb) {
  const char *names[] = {"M", "N", "K"};
  int64_t sizes[] = {m, 256, k};
  kt__env env = {names, sizes, 3, NULL};
  kt__config cfg;
  kt__config_init(&cfg, decl);
  int64_t values[] = {bm, bk, sw};
  kt__arg args[4];
  int rc = kt__launch_describe(decl, &cfg, values, &env, args, l, eb);
  if (rc == KT_OK && (args[2].size != 0 || args[3].size != 4)) rc = -99; /* no scalar made of the map */
  kt__config_free(&cfg);
  return rc;
}

TEST(tensormap_description) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *file = kt__parse_string("g.cu", TMAP_SRC, KT__LANG_CUDA, &d);
  if (!file) kt_test_fail(__FILE__, __LINE__, "parse failed:\n%s", d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  const kt__kernel_decl *decl = kt__file_kernel(file, NULL, "the name", NULL);
  kt__launch l;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(tmap_describe(decl, 1000, 4096, 128, 64, 128, &l, &eb), KT_OK);
  ASSERT_EQ(l.ntensormaps, 1);
  const kt__tensormap_spec *s = &l.tensormaps[0];
  ASSERT_EQ(s->param, 2);
  ASSERT_EQ(s->tensor, 1);
  ASSERT_EQ(s->type, KT__DT_BF16);
  ASSERT_EQ(s->rank, 2);
  ASSERT_EQ(s->dims[0], 4096); /* K, innermost */
  ASSERT_EQ(s->dims[1], 1000);
  ASSERT_EQ(s->strides[0], 4096 * 2);
  ASSERT_EQ(s->box[0], 64);
  ASSERT_EQ(s->box[1], 128);
  ASSERT_EQ(s->swizzle, 128);
  struct {
    int64_t k, bm, bk, sw;
    const char *why;
  } bad[] = {
      {4096, 512, 64, 128, "box extent 0 is 512, outside 1 to 256"},
      {4096, 128, 64, 48, "TMA swizzles 0, 32, 64 or 128 bytes"},
      {4096, 128, 128, 128, "256 bytes, wider than its swizzle span of 128"},
      {4096, 128, 4, 32, "innermost extent is 8 bytes, not a multiple of 16"},
      {4092, 128, 64, 128, "a row of a is 8184 bytes, not a multiple of 16"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(tmap_describe(decl, 1000, bad[i].k, bad[i].bm, bad[i].bk, bad[i].sw, &l, &eb), KT_INVALID);
    ASSERT_CONTAINS(eb.msg, bad[i].why);
  }
  kt__file_free(file);
}

/* Tensors laid out by another process in a memfd after a header (as a
 * tuning request holds them): adopted where they lie, the first tensor's
 * content seen through the mapping; a length other than the layout's is
 * refused (KT_NOTFOUND) before anything is mapped. */
TEST(tensors_adopted_in_shared_memory_at_an_offset) {
  fx f;
  setup(&f, 5, 4);
  kt__errbuf eb = {{0}};
  kt__argset *plan = NULL;
  ASSERT_EQ(kt__argset_plan(f.decl, &f.env, 0, &plan, &eb), KT_OK);
  size_t initial[8];
  kt__argset_layout(plan, initial, NULL);
  size_t at = (size_t)sysconf(_SC_PAGESIZE), bytes = plan->map_bytes;
  int fd = memfd_create("test-adopt", MFD_CLOEXEC);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(ftruncate(fd, (off_t)(at + bytes)), 0);
  float first = 42.5f;
  ASSERT_EQ(pwrite(fd, &first, sizeof first, (off_t)(at + initial[0])), (ssize_t)sizeof first);
  kt__argset *a = NULL;
  ASSERT_EQ(kt__argset_adopt(f.decl, &f.env, 0, fd, at, bytes + 1, &a, &eb), KT_NOTFOUND);
  ASSERT_TRUE(a == NULL);
  ASSERT_EQ(kt__argset_adopt(f.decl, &f.env, 0, fd, at, bytes, &a, &eb), KT_OK);
  close(fd); /* the argset keeps its own descriptor */
  ASSERT_TRUE(a->adopted);
  ASSERT_EQ(a->fd_offset, at);
  ASSERT_EQ(((const float *)a->tensors[0].initial)[0], 42.5f);
  kt__argset_free(a);
  kt__argset_free(plan);
  kt__file_free(f.file);
}
