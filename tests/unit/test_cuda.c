/* The CUDA backend without a GPU: NVRTC compiles every configuration of
 * every shipped CUDA kernel; the resource-limit, cluster and error-class
 * logic; the compile options; and a clear refusal when the driver is missing
 * or is the toolkit's stub. */
#include "harness.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/compare_kernel.h"
#include "backend/cuda_limits.h"
#include "backend/cuda_tensormap.h"
#include "backend/nvrtc.h"
#include "config.h"
#include "lang/parser.h"
#include "launch/launch.h"
#include "space/space.h"
#include "t1/t1.h"

/* ---- compiling whole spaces ---- */

enum { MAX_NAMES = 64 };

typedef struct job {
  int64_t values[MAX_NAMES];
} job;

typedef struct compile_run {
  const kt__file *file;
  const kt__kernel_decl *decl;
  const char *names[MAX_NAMES];
  int nnames;
  job *jobs;
  int njobs;
  atomic_int next;
  atomic_int failed;
  char workdir[64];
  kt__device_info device;
  pthread_mutex_t lock;
  kt__sbuf failures;
} compile_run;

/* The runtime sizes from @dims, each evaluated with the ones before it. */
static void bind_sizes(const kt__kernel_decl *d, int64_t *values, kt__env *env) {
  for (int i = 0; i < d->nsizes; i++) {
    *env = (kt__env){(const char *const *)d->sizes, values, i, NULL};
    values[i] = -1;
    for (int j = 0; j < d->ndims; j++) {
      if (strcmp(d->dims[j].name, d->sizes[i]) != 0) continue;
      kt__eval_error err;
      if (kt__expr_eval(d->dims[j].value, env, &values[i], &err) != 0)
        kt_test_fail(__FILE__, __LINE__, "@dims(%s): %s", d->sizes[i], err.msg);
    }
    if (values[i] < 0) kt_test_fail(__FILE__, __LINE__, "%s has no @dims default", d->sizes[i]);
  }
  *env = (kt__env){(const char *const *)d->sizes, values, d->nsizes, NULL};
}

static kt__space *make_space(const kt__tunedim *dims, int n, kt__expr *const *where, int nwhere, const kt__env *env) {
  kt__space *s = NULL;
  kt__errbuf eb;
  if (kt__space_create(dims, n, where, nwhere, env, &s, &eb) != KT_OK) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  return s;
}

/* Every @cluster point, times every @autotune point valid beside it (the
 * @where clauses may name the cluster's names too); of those, the ones
 * numbered SHARD modulo NSHARDS (so that big spaces fit a test's time). */
static void enumerate(compile_run *r, const kt__env *sizes, int shard, int nshards) {
  const kt__kernel_decl *d = r->decl;
  kt__space *clu = make_space(d->cluster, d->ncluster, NULL, 0, sizes);
  uint64_t nc = kt__space_size(clu), seen = 0;
  int64_t cv[MAX_NAMES];
  kt__env cluster_env = {r->names + d->ntune, cv, d->ncluster, sizes}; /* setup_run: tune names, then cluster's */
  for (uint64_t j = 0; j < nc; j++) {
    kt__space_values(clu, j, cv);
    kt__space *tune = make_space(d->tune, d->ntune, d->where, d->nwhere, &cluster_env);
    uint64_t nt = kt__space_size(tune);
    r->jobs = kt__xrealloc(r->jobs, (size_t)(r->njobs + nt) * sizeof *r->jobs);
    for (uint64_t i = 0; i < nt; i++) {
      if (kt__space_valid_index(tune, i) != 1) continue;
      if (seen++ % (uint64_t)nshards != (uint64_t)shard) continue;
      job *jb = &r->jobs[r->njobs++];
      kt__space_values(tune, i, jb->values);
      memcpy(jb->values + d->ntune, cv, (size_t)d->ncluster * sizeof *cv);
    }
    kt__space_free(tune);
  }
  kt__space_free(clu);
}

/* A cubin is an ELF image that names the kernel. */
static bool cubin_has_kernel(const char *path, const char *name) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  static __thread char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return n > 4 &&
         memcmp(buf,
                "\x7f"
                "ELF",
                4) == 0 &&
         memmem(buf, n, name, strlen(name)) != NULL;
}

static void record_failure(compile_run *r, const job *jb, const char *why) {
  pthread_mutex_lock(&r->lock);
  if (atomic_fetch_add(&r->failed, 1) < 3) {
    kt__sbuf_printf(&r->failures, "\n--- %s:", r->decl->name);
    for (int i = 0; i < r->nnames; i++)
      kt__sbuf_printf(&r->failures, " %s=%lld", r->names[i], (long long)jb->values[i]);
    kt__sbuf_printf(&r->failures, "\n%.2000s", why);
  }
  pthread_mutex_unlock(&r->lock);
}

static void compile_one(compile_run *r, int i) {
  const job *jb = &r->jobs[i];
  char tag[32];
  snprintf(tag, sizeof tag, "c%d", i);
  kt__build b = {.file = r->file,
                 .decl = r->decl,
                 .names = r->names,
                 .values = jb->values,
                 .n = r->nnames,
                 .device = &r->device,
                 .workdir = r->workdir,
                 .tag = tag,
                 .timeout_s = 60};
  kt__artifact a;
  kt__errbuf eb = {{0}};
  kt__status st = kt__be_compile(&kt__backend_cuda, &b, &a, &eb);
  if (st != KT__ST_OK) record_failure(r, jb, eb.msg);
  else if (!cubin_has_kernel(a.path, r->decl->name)) record_failure(r, jb, "the cubin does not name the kernel");
  if (a.path) unlink(a.path);
  kt__artifact_free(&a);
}

static void *compile_worker(void *arg) {
  compile_run *r = arg;
  for (int i; (i = atomic_fetch_add(&r->next, 1)) < r->njobs;) compile_one(r, i);
  return NULL;
}

static int compile_all(compile_run *r) {
  int nthreads = kt__ncores();
  if (nthreads > 16) nthreads = 16;
  pthread_t th[16];
  for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, compile_worker, r);
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  return atomic_load(&r->failed);
}

static void setup_run(compile_run *r, const kt__file *f, const kt__kernel_decl *d) {
  memset(r, 0, sizeof *r);
  r->file = f;
  r->decl = d;
  for (int i = 0; i < d->ntune; i++) r->names[r->nnames++] = d->tune[i].name;
  for (int i = 0; i < d->ncluster; i++) r->names[r->nnames++] = d->cluster[i].name;
  snprintf(r->device.arch, sizeof r->device.arch, "sm_90");
  kt_test_tmp_dir("cuda", r->workdir, sizeof r->workdir);
  pthread_mutex_init(&r->lock, NULL);
}

/* Compiles every configuration of every kernel in PATH for sm_90 (one
 * shard of them: see enumerate). */
static void compile_shard(const char *path, int min_configs, int shard, int nshards) {
  unsetenv("KTUNE_CUDA_ARCH");
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__errbuf eb = {{0}};
  kt__file *f = kt__parse_file(path, -1, &d, &eb);
  if (!f) kt_test_fail(__FILE__, __LINE__, "%s: %s%s", path, eb.msg, d.errors.s ? d.errors.s : "");
  ASSERT_EQ(f->lang, KT__LANG_CUDA);
  ASSERT_GE(f->nkernels, 1);
  int total = 0;
  for (int k = 0; k < f->nkernels; k++) {
    compile_run r;
    setup_run(&r, f, &f->kernels[k]);
    int64_t sizes[64];
    kt__env env;
    bind_sizes(r.decl, sizes, &env);
    enumerate(&r, &env, shard, nshards);
    double t0 = kt__now();
    int failed = compile_all(&r);
    printf("%s: %d configurations of %s (shard %d/%d) compiled in %.1f s\n", path, r.njobs, r.decl->name, shard + 1,
           nshards, kt__now() - t0);
    if (failed) kt_test_fail(__FILE__, __LINE__, "%d of %d configurations failed:%s", failed, r.njobs, r.failures.s);
    total += r.njobs;
    rmdir(r.workdir);
    free(r.jobs);
    kt__sbuf_free(&r.failures);
  }
  ASSERT_GE(total, min_configs);
  kt__file_free(f);
  kt__diag_free(&d);
}

static void compile_file(const char *path, int min_configs) { compile_shard(path, min_configs, 0, 1); }

/* MIN_CONFIGS are the space sizes today: a change that empties a space
 * (a too-strict @where) fails here. */
TEST(compiles_elementwise) { compile_file("kernels/cuda/elementwise.cu", 16); }
TEST(compiles_reduce) { compile_file("kernels/cuda/reduce.cu", 60); }
TEST(compiles_transpose) { compile_file("kernels/cuda/transpose.cu", 26); }
TEST(compiles_softmax) { compile_file("kernels/cuda/softmax.cu", 18); }
TEST(compiles_sgemm_1) { compile_shard("kernels/cuda/sgemm.cu", 58, 0, 6); }
TEST(compiles_sgemm_2) { compile_shard("kernels/cuda/sgemm.cu", 58, 1, 6); }
TEST(compiles_sgemm_3) { compile_shard("kernels/cuda/sgemm.cu", 58, 2, 6); }
TEST(compiles_sgemm_4) { compile_shard("kernels/cuda/sgemm.cu", 58, 3, 6); }
TEST(compiles_sgemm_5) { compile_shard("kernels/cuda/sgemm.cu", 58, 4, 6); }
TEST(compiles_sgemm_6) { compile_shard("kernels/cuda/sgemm.cu", 58, 5, 6); }
TEST(compiles_gemm_bf16_1) { compile_shard("kernels/cuda/gemm_bf16.cu", 90, 0, 4); }
TEST(compiles_gemm_bf16_2) { compile_shard("kernels/cuda/gemm_bf16.cu", 90, 1, 4); }
TEST(compiles_gemm_bf16_3) { compile_shard("kernels/cuda/gemm_bf16.cu", 90, 2, 4); }
TEST(compiles_gemm_bf16_4) { compile_shard("kernels/cuda/gemm_bf16.cu", 90, 3, 4); }
TEST(compiles_gemm_wgmma_1) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 0, 8); }
TEST(compiles_gemm_wgmma_2) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 1, 8); }
TEST(compiles_gemm_wgmma_3) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 2, 8); }
TEST(compiles_gemm_wgmma_4) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 3, 8); }
TEST(compiles_gemm_wgmma_5) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 4, 8); }
TEST(compiles_gemm_wgmma_6) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 5, 8); }
TEST(compiles_gemm_wgmma_7) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 6, 8); }
TEST(compiles_gemm_wgmma_8) { compile_shard("kernels/cuda/gemm_wgmma.cu", 76, 7, 8); }
TEST(compiles_cluster) { compile_file("kernels/cuda/cluster.cu", 64); }
TEST(compiles_spmv) { compile_file("kernels/cuda/spmv.cu", 24); }
TEST(compiles_faulty) { compile_file("tests/data/cuda_faulty.cu", 4); }
TEST(compiles_verify) { compile_file("tests/data/cuda_verify.cu", 8); }
TEST(compiles_constant) { compile_file("tests/data/cuda_constant.cu", 3); }
TEST(compiles_timed_runs) { compile_file("tests/data/cuda_timed_runs.cu", 5); }
TEST(compiles_far_writes) { compile_file("tests/data/cuda_far_writes.cu", 6); }

/* Every shipped CUDA kernel is among the files compiled above. */
TEST(every_shipped_kernel_is_compiled) {
  static const char *const tested[] = {"elementwise.cu", "reduce.cu",  "transpose.cu", "softmax.cu",   "sgemm.cu",
                                       "gemm_bf16.cu",   "cluster.cu", "spmv.cu",      "gemm_wgmma.cu"};
  DIR *dir = opendir("kernels/cuda");
  ASSERT_TRUE(dir != NULL);
  int seen = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t n = strlen(e->d_name);
    if (n < 3 || strcmp(e->d_name + n - 3, ".cu") != 0) continue;
    bool found = false;
    for (size_t i = 0; i < sizeof tested / sizeof tested[0]; i++) found |= strcmp(tested[i], e->d_name) == 0;
    if (!found) kt_test_fail(__FILE__, __LINE__, "kernels/cuda/%s has no compiles_ test", e->d_name);
    seen++;
  }
  closedir(dir);
  ASSERT_EQ(seen, (int)(sizeof tested / sizeof tested[0]));
}

/* ---- compile errors, names, options, architecture ---- */

static kt__file *parse_text(const char *text) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("test.cu", text, KT__LANG_CUDA, &d);
  if (!f) kt_test_fail(__FILE__, __LINE__, "parse: %s", d.errors.s ? d.errors.s : "?");
  kt__diag_free(&d);
  return f;
}

static kt__status build_text(const kt__file *f, const char *const *names, const int64_t *values, int n, kt__artifact *a,
                             kt__errbuf *eb, char workdir[64]) {
  kt_test_tmp_dir("cuda", workdir, 64);
  static kt__device_info dev;
  snprintf(dev.arch, sizeof dev.arch, "sm_90");
  kt__build b = {.file = f,
                 .decl = &f->kernels[0],
                 .names = names,
                 .values = values,
                 .n = n,
                 .device = &dev,
                 .workdir = workdir,
                 .tag = "t"};
  return kt__be_compile(&kt__backend_cuda, &b, a, eb);
}

static void clean(kt__artifact *a, const char *workdir) {
  char sym[4200];
  if (a->path) {
    snprintf(sym, sizeof sym, "%s.sym", a->path);
    unlink(sym);
    unlink(a->path);
  }
  kt__artifact_free(a);
  rmdir(workdir);
}

TEST(compile_error_keeps_the_log) {
  kt__file *f = parse_text("// @autotune(B in [1, 2])\n// @kernel k(x: tensor<f32>[4])\n"
                           "extern \"C\" __global__ void k(float *x) { x[0] = undefined_name * B; }\n");
  const char *names[] = {"B"};
  int64_t values[] = {2};
  kt__artifact a;
  kt__errbuf eb = {{0}};
  char dir[64];
  ASSERT_EQ(build_text(f, names, values, 1, &a, &eb, dir), KT__ST_COMPILE);
  ASSERT_CONTAINS(a.log, "undefined_name");
  ASSERT_CONTAINS(eb.msg, "test.cu");
  ASSERT_CONTAINS(eb.msg, "sm_90");
  ASSERT_TRUE(a.path == NULL);
  clean(&a, dir);
  kt__file_free(f);
}

/* ---- the machine's failures (issue 26 item 3) ---- */

/* Builds a one-line kernel into a work folder that PREPARE spoils first. */
static kt__status build_spoiled(void (*prepare)(const char *workdir), kt__artifact *a, kt__errbuf *eb) {
  kt__file *f = parse_text("// @kernel k(x: tensor<f32>[4])\n"
                           "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = 1; }\n");
  char workdir[64];
  kt_test_tmp_dir("cuda", workdir, sizeof workdir);
  prepare(workdir);
  static kt__device_info dev;
  snprintf(dev.arch, sizeof dev.arch, "sm_90");
  kt__build b = {.file = f, .decl = &f->kernels[0], .device = &dev, .workdir = workdir, .tag = "t"};
  kt__status st = kt__be_compile(&kt__backend_cuda, &b, a, eb);
  char cubin[128];
  snprintf(cubin, sizeof cubin, "%s/t.cubin", workdir);
  unlink(cubin);
  rmdir(workdir);
  kt__file_free(f);
  return st;
}

/* Every write of the cubin fails as on a full disk. */
static void full_disk(const char *workdir) {
  char cubin[128];
  snprintf(cubin, sizeof cubin, "%s/t.cubin", workdir);
  ASSERT_EQ(symlink("/dev/full", cubin), 0);
}

static void vanished(const char *workdir) { ASSERT_EQ(rmdir(workdir), 0); }

TEST(full_disk_is_the_machines_failure) {
  kt__artifact a = {0};
  kt__errbuf eb = {{0}};
  ASSERT_EQ(build_spoiled(full_disk, &a, &eb), KT__ST_COMPILE);
  ASSERT_CONTAINS(eb.msg, "No space left on device");
  ASSERT_TRUE(a.environment);
  kt__artifact_free(&a);
}

TEST(vanished_work_folder_is_the_machines_failure) {
  kt__artifact a = {0};
  kt__errbuf eb = {{0}};
  ASSERT_EQ(build_spoiled(vanished, &a, &eb), KT__ST_COMPILE);
  ASSERT_CONTAINS(eb.msg, "No such file or directory");
  ASSERT_TRUE(a.environment);
  kt__artifact_free(&a);
}

/* The source's own error stays the configuration's. */
TEST(source_error_is_the_configurations_failure) {
  kt__file *f = parse_text("// @kernel k(x: tensor<f32>[4])\n"
                           "extern \"C\" __global__ void k(float *x) { x[0] = no_such_name; }\n");
  kt__artifact a;
  kt__errbuf eb = {{0}};
  char dir[64];
  ASSERT_EQ(build_text(f, NULL, NULL, 0, &a, &eb, dir), KT__ST_COMPILE);
  ASSERT_FALSE(a.environment);
  clean(&a, dir);
  kt__file_free(f);
}

/* A kernel with C++ linkage is found through its mangled name. */
TEST(cpp_kernel_name_is_recorded) {
  kt__file *f = parse_text("// @kernel twice(x: tensor<f32>[4])\n"
                           "__global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n");
  kt__artifact a;
  kt__errbuf eb = {{0}};
  char dir[64];
  ASSERT_EQ(build_text(f, NULL, NULL, 0, &a, &eb, dir), KT__ST_OK);
  char sym[4200];
  snprintf(sym, sizeof sym, "%s.sym", a.path);
  FILE *s = fopen(sym, "r");
  ASSERT_TRUE(s != NULL);
  char mangled[256] = "";
  ASSERT_TRUE(fgets(mangled, sizeof mangled, s) != NULL);
  fclose(s);
  ASSERT_STREQ(mangled, "_Z5twicePf");
  clean(&a, dir);
  kt__file_free(f);
}

TEST(extern_c_kernel_has_no_symbol_file) {
  kt__file *f = parse_text("// @kernel twice(x: tensor<f32>[4])\n"
                           "extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n");
  kt__artifact a;
  kt__errbuf eb = {{0}};
  char dir[64];
  ASSERT_EQ(build_text(f, NULL, NULL, 0, &a, &eb, dir), KT__ST_OK);
  char sym[4200];
  snprintf(sym, sizeof sym, "%s.sym", a.path);
  ASSERT_TRUE(access(sym, F_OK) != 0);
  ASSERT_TRUE(cubin_has_kernel(a.path, "twice"));
  clean(&a, dir);
  kt__file_free(f);
}

TEST(options_carry_arch_and_defines) {
  kt__file *f = parse_text("// @kernel k(x: tensor<f32>[4])\nextern \"C\" __global__ void k(float *x) {}\n");
  const char *names[] = {"TILE_M", "CLUSTER_X"};
  int64_t values[] = {128, -4};
  kt__build b = {.file = f, .decl = &f->kernels[0], .names = names, .values = values, .n = 2};
  int n = 0;
  char **opts = kt__nvrtc_options(&b, "sm_90a", "/usr/local/cuda/include", &n);
  kt__sbuf all = {0};
  for (int i = 0; i < n; i++) kt__sbuf_printf(&all, "%s|", opts[i]);
  ASSERT_TRUE(opts[n] == NULL);
  ASSERT_CONTAINS(all.s, "--gpu-architecture=sm_90a|");
  ASSERT_CONTAINS(all.s, "--std=c++17|");
  ASSERT_CONTAINS(all.s, "-I/usr/local/cuda/include|");
  ASSERT_CONTAINS(all.s, "-DTILE_M=128|");
  ASSERT_CONTAINS(all.s, "-DCLUSTER_X=-4|");
  kt__sbuf_free(&all);
  kt__nvrtc_options_free(opts);
  kt__file_free(f);
}

TEST(pick_arch) {
  char out[32];
  kt__cuda_pick_arch(NULL, NULL, "sm_90", out, sizeof out);
  ASSERT_STREQ(out, "sm_90");
  kt__cuda_pick_arch(NULL, "sm_90a", "sm_90", out, sizeof out);
  ASSERT_STREQ(out, "sm_90a");
  /* A request for another architecture cannot run on this device. */
  kt__cuda_pick_arch(NULL, "sm_100a", "sm_90", out, sizeof out);
  ASSERT_STREQ(out, "sm_90");
  kt__cuda_pick_arch("sm_80", "sm_90a", "sm_90", out, sizeof out);
  ASSERT_STREQ(out, "sm_80");
  kt__cuda_pick_arch("89", NULL, "sm_90", out, sizeof out);
  ASSERT_STREQ(out, "sm_89");
  kt__cuda_pick_arch(NULL, NULL, "", out, sizeof out);
  ASSERT_STREQ(out, "sm_90");
}

/* `@arch(sm_90a)` above the kernel (an attribute the parser keeps as
 * unknown) selects the architecture-specific target. */
TEST(arch_annotation_selects_sm_90a) {
  unsetenv("KTUNE_CUDA_ARCH");
  kt__file *f = parse_text("// @arch(sm_90a)\n// @kernel k(x: tensor<f32>[4])\n"
                           "extern \"C\" __global__ void k(float *x) {}\n");
  kt__device_info dev = {0};
  snprintf(dev.arch, sizeof dev.arch, "sm_90");
  kt__build b = {.file = f, .decl = &f->kernels[0], .device = &dev};
  char arch[32];
  kt__nvrtc_arch(&b, arch, sizeof arch);
  ASSERT_STREQ(arch, "sm_90a");
  setenv("KTUNE_CUDA_ARCH", "sm_100", 1);
  kt__nvrtc_arch(&b, arch, sizeof arch);
  ASSERT_STREQ(arch, "sm_100");
  unsetenv("KTUNE_CUDA_ARCH");
  kt__file_free(f);
}

/* ---- limits ---- */

static kt__cuda_device_limits h100(void) {
  return (kt__cuda_device_limits){.max_threads_per_block = 1024,
                                  .max_block = {1024, 1024, 64},
                                  .max_grid = {2147483647, 65535, 65535},
                                  .regs_per_block = 65536,
                                  .shared_optin = 232448,
                                  .shared_default = 49152,
                                  .max_cluster = 16,
                                  .cc_major = 9};
}

static kt__launch launch1(uint64_t grid, uint64_t block, uint64_t shared) {
  return (kt__launch){.grid = {grid, 1, 1}, .block = {block, 1, 1}, .shared_bytes = shared};
}

TEST(limits_accept_a_plain_launch) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_func_attrs fn = {.num_regs = 32, .static_shared = 1024, .max_threads_per_block = 1024};
  kt__launch l = launch1(1000, 256, 0);
  kt__cuda_launch_dims d;
  char why[256];
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_EQ(d.grid[0], 1000);
  ASSERT_EQ(d.block[0], 256);
  ASSERT_EQ(d.grid[1], 1);
  ASSERT_FALSE(d.use_cluster);
  ASSERT_FALSE(d.raise_shared);
}

TEST(limits_refuse_threads_and_registers) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_func_attrs fn = {.num_regs = 32, .max_threads_per_block = 1024};
  kt__cuda_launch_dims d;
  char why[256];
  kt__launch l = {.grid = {1, 1, 1}, .block = {64, 32, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "2048 threads");
  /* The function itself allows fewer threads than the device. */
  fn = (kt__cuda_func_attrs){.num_regs = 128, .max_threads_per_block = 512};
  l = launch1(1, 1024, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "function's maximum of 512");
  ASSERT_CONTAINS(why, "128 registers");
  /* Registers: 255 per thread x 512 threads is past 64 Ki. */
  fn = (kt__cuda_func_attrs){.num_regs = 255, .max_threads_per_block = 1024};
  l = launch1(1, 512, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "registers");
  /* 64 per thread x 1024 fits exactly. */
  fn.num_regs = 64;
  l = launch1(1, 1024, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
}

TEST(block_registers_round_per_warp) {
  ASSERT_EQ(kt__cuda_block_registers(32, 256), 32 * 256);
  /* 33 registers x 32 lanes = 1056, allocated as 1280 per warp. */
  ASSERT_EQ(kt__cuda_block_registers(33, 64), 2 * 1280);
  /* A partial warp still takes a whole warp's registers. */
  ASSERT_EQ(kt__cuda_block_registers(32, 33), 2 * 1024);
}

TEST(limits_refuse_dims) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_func_attrs fn = {.num_regs = 16, .max_threads_per_block = 1024};
  kt__cuda_launch_dims d;
  char why[256];
  kt__launch l = {.grid = {1, 70000, 1}, .block = {32, 1, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "grid y = 70000");
  l = (kt__launch){.grid = {1, 1, 1}, .block = {1, 1, 128}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "block z = 128");
  l = launch1(0, 32, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "empty launch");
}

/* CUDA's own ceilings hold whatever the driver reports: a limit reported
 * too large (a grid x of 2^32 would be truncated to 0 in the launch's
 * 32-bit field) or as 0 (the attribute query failed). */
TEST(limits_cap_at_cuda_ceilings) {
  kt__cuda_device_limits dev = h100();
  dev.max_grid[0] = dev.max_grid[1] = dev.max_grid[2] = INT64_MAX;
  dev.max_block[0] = dev.max_block[1] = dev.max_block[2] = 1 << 20;
  dev.max_threads_per_block = 1 << 20;
  kt__cuda_func_attrs fn = {.num_regs = 16};
  kt__cuda_launch_dims d;
  char why[256];
  kt__launch l = launch1((uint64_t)1 << 32, 32, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "grid x = 4294967296 exceeds the maximum of 2147483647");
  l = (kt__launch){.grid = {1, 65536, 1}, .block = {1, 1, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "grid y = 65536 exceeds the maximum of 65535");
  l = (kt__launch){.grid = {1, 1, 65536}, .block = {1, 1, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "grid z = 65536");
  l = (kt__launch){.grid = {1, 1, 1}, .block = {2048, 1, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "block x = 2048 exceeds the maximum of 1024");
  l = (kt__launch){.grid = {1, 1, 1}, .block = {1, 1, 65}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "block z = 65 exceeds the maximum of 64");
  l = (kt__launch){.grid = {1, 1, 1}, .block = {64, 32, 1}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "block of 2048 threads exceeds the maximum of 1024");
  /* At the ceilings exactly, the launch is accepted. */
  l = (kt__launch){.grid = {2147483647, 65535, 65535}, .block = {16, 1, 64}};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_EQ(d.grid[0], 2147483647u);
  /* Limits the driver did not report: CUDA's ceilings, not a refusal of all. */
  dev.max_grid[0] = dev.max_grid[1] = dev.max_grid[2] = 0;
  dev.max_block[0] = dev.max_block[1] = dev.max_block[2] = 0;
  dev.max_threads_per_block = 0;
  l = launch1(1000, 256, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
  l = launch1(1, 2048, 0);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
}

TEST(limits_shared_memory) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_func_attrs fn = {.num_regs = 32, .static_shared = 16384, .max_threads_per_block = 1024};
  kt__cuda_launch_dims d;
  char why[256];
  /* 16 KiB static + 32 KiB dynamic = 48 KiB: no opt-in needed. */
  kt__launch l = launch1(10, 128, 32768);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_FALSE(d.raise_shared);
  ASSERT_EQ(d.shared_bytes, 32768);
  /* Past 48 KiB the function must opt in. */
  l = launch1(10, 128, 100000);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_TRUE(d.raise_shared);
  /* Past the opt-in maximum the launch cannot run. */
  l = launch1(10, 128, 220000);
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "236384 bytes");
  ASSERT_CONTAINS(why, "232448");
}

/* ---- clusters ---- */

TEST(cluster_config) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_launch_dims d = {0};
  char why[256];
  kt__launch l = {.grid = {64, 2, 1}, .block = {256, 1, 1}, .cluster = {4, 0, 0}};
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_TRUE(d.use_cluster);
  ASSERT_EQ(d.cluster[0], 4);
  ASSERT_EQ(d.cluster[1], 1); /* unset dimensions are 1 */
  ASSERT_EQ(d.cluster[2], 1);
  ASSERT_FALSE(d.non_portable_cluster);
  /* No cluster: a plain launch. */
  l.cluster[0] = 0;
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_FALSE(d.use_cluster);
  /* 16 blocks need the non-portable opt-in; 32 are too many. */
  l = (kt__launch){.grid = {64, 2, 1}, .block = {128, 1, 1}, .cluster = {8, 2, 1}};
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_OK);
  ASSERT_TRUE(d.non_portable_cluster);
  l.grid[0] = 128;
  l.cluster[0] = 16;
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "32 blocks");
}

TEST(cluster_refusals) {
  kt__cuda_device_limits dev = h100();
  kt__cuda_launch_dims d = {0};
  char why[256];
  kt__launch l = {.grid = {60, 1, 1}, .block = {256, 1, 1}, .cluster = {8, 1, 1}};
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "does not divide grid x = 60");
  dev.cc_major = 8;
  l.grid[0] = 64;
  ASSERT_EQ(kt__cuda_cluster_config(&dev, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(why, "compute capability 9.0");
  /* The full check reaches the cluster part too. */
  kt__cuda_func_attrs fn = {.num_regs = 16, .max_threads_per_block = 1024};
  ASSERT_EQ(kt__cuda_check_limits(&dev, &fn, &l, &d, why, sizeof why), KT__ST_CONSTRAINT);
}

#ifdef KTUNE_HAVE_CUDA_H
TEST(cluster_launch_attribute) {
  kt__cuda_launch_dims d = {
      .grid = {64, 2, 1}, .block = {256, 1, 1}, .cluster = {4, 1, 1}, .shared_bytes = 512, .use_cluster = true};
  CUlaunchConfig cfg;
  CUlaunchAttribute attr;
  kt__cuda_fill_launch_config(&d, NULL, &cfg, &attr);
  ASSERT_EQ(cfg.gridDimX, 64); /* in blocks, not clusters */
  ASSERT_EQ(cfg.gridDimY, 2);
  ASSERT_EQ(cfg.blockDimX, 256);
  ASSERT_EQ(cfg.sharedMemBytes, 512);
  ASSERT_EQ(cfg.numAttrs, 1);
  ASSERT_TRUE(cfg.attrs == &attr);
  ASSERT_EQ(attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  ASSERT_EQ(attr.value.clusterDim.x, 4);
  ASSERT_EQ(attr.value.clusterDim.y, 1);
  ASSERT_EQ(attr.value.clusterDim.z, 1);
  d.use_cluster = false;
  kt__cuda_fill_launch_config(&d, NULL, &cfg, &attr);
  ASSERT_EQ(cfg.numAttrs, 0);
  ASSERT_TRUE(cfg.attrs == NULL);
}

/* cuda_limits.c carries its own copy of the CUresult numbers. */
TEST(error_classes_match_cuda_h) {
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_MISALIGNED_ADDRESS));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_LAUNCH_FAILED));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_ASSERT));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_ILLEGAL_INSTRUCTION));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_HARDWARE_STACK_ERROR));
  ASSERT_TRUE(kt__cuda_error_is_sticky(CUDA_ERROR_LAUNCH_TIMEOUT));
  ASSERT_FALSE(kt__cuda_error_is_sticky(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  ASSERT_FALSE(kt__cuda_error_is_sticky(CUDA_ERROR_INVALID_VALUE));
  ASSERT_FALSE(kt__cuda_error_is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
  ASSERT_TRUE(kt__cuda_error_is_resource(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  ASSERT_TRUE(kt__cuda_error_is_resource(CUDA_ERROR_INVALID_CLUSTER_SIZE));
  ASSERT_TRUE(kt__cuda_error_is_resource(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE));
  ASSERT_FALSE(kt__cuda_error_is_resource(CUDA_ERROR_ILLEGAL_ADDRESS));
}
#endif

TEST(peaks) {
  /* H100 SXM: 132 SMs at 1980 MHz; HBM3 at 2619 MHz on a 5120-bit bus. */
  ASSERT_NEAR(kt__cuda_peak_gflops(9, 0, 132, 1980000), 66908.16, 0.01);
  ASSERT_NEAR(kt__cuda_peak_gbps(2619000, 5120), 3352.32, 0.01);
  ASSERT_EQ(kt__cuda_fp32_lanes(8, 0), 64);
  ASSERT_EQ(kt__cuda_fp32_lanes(8, 6), 128);
  ASSERT_EQ(kt__cuda_peak_gflops(42, 0, 132, 1980000), 0);
  ASSERT_EQ(kt__cuda_peak_gbps(0, 5120), 0);
}

/* ---- no driver ---- */

TEST(missing_libcuda_is_nobackend) {
  setenv("KTUNE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  kt__device_info devs[4];
  int count = -1;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__be_list_devices(&kt__backend_cuda, devs, 4, &count, &eb), KT_NOBACKEND);
  ASSERT_EQ(count, 0);
  ASSERT_CONTAINS(eb.msg, "CUDA driver");
  ASSERT_CONTAINS(eb.msg, "/nonexistent/libcuda.so.1");
  void *state = NULL;
  kt__device_info info;
  ASSERT_EQ(kt__be_open(&kt__backend_cuda, 0, &state, &info, &eb), KT_NOBACKEND);
  ASSERT_TRUE(state == NULL);
}

/* The toolkit's stub libcuda loads but fails cuInit: the message says so. */
TEST(stub_libcuda_names_the_reason) {
  const char *home = getenv("CUDA_HOME");
  char path[4096] = "";
  const char *dirs[] = {home ? home : "", "/usr/local/cuda"};
  for (int i = 0; i < 2 && !path[0]; i++) {
    snprintf(path, sizeof path, "%s/lib64/stubs/libcuda.so", dirs[i]);
    if (!dirs[i][0] || access(path, R_OK) != 0) path[0] = 0;
  }
  if (!path[0]) {
    printf("skipped: no stub libcuda.so in the CUDA toolkit\n");
    return;
  }
  setenv("KTUNE_LIBCUDA", path, 1);
  void *state = NULL;
  kt__device_info info;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__be_open(&kt__backend_cuda, 0, &state, &info, &eb), KT_NOBACKEND);
  ASSERT_CONTAINS(eb.msg, "cuInit");
  ASSERT_CONTAINS(eb.msg, "CUDA_ERROR_STUB_LIBRARY");
  ASSERT_CONTAINS(eb.msg, "no NVIDIA driver");
}

/* The output comparison the worker builds on the device (compare_kernel.h)
 * compiles with NVRTC here, with no GPU: CI catches a broken kernel before
 * the H200 does. */
#ifdef KTUNE_HAVE_CUDA_H
TEST(compare_kernel_compiles) {
  kt__errbuf eb = {{0}};
  char *source = kt__compare_kernel_source(KT__LANG_CUDA), *image = NULL;
  size_t len = 0;
  int rc = kt__nvrtc_cubin(source, "sm_90", &image, &len, &eb);
  free(source);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  ASSERT_TRUE(len > 0);
  free(image);
}

/* The hub's convolution T1 file, translated (src/t1) onto ktune's own
 * convolution_milo.cu: one configuration in 300 of its 4362 compiles. */
TEST(compiles_t1_convolution) {
  kt__t1 t;
  kt__errbuf eb = {{0}};
  if (kt__t1_translate("tests/data/t1/convolution_T1.json", &t, &eb) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  char path[] = "/tmp/ktune-test-t1-XXXXXX.cu";
  int fd = mkstemps(path, 3);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(write(fd, t.source, strlen(t.source)), (ssize_t)strlen(t.source));
  close(fd);
  compile_shard(path, 14, 0, 300);
  unlink(path);
  kt__t1_free(&t);
}
#endif

static char *slurp_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  kt__sbuf s = {0};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) kt__sbuf_append(&s, buf, n);
  fclose(f);
  *len = s.len;
  return s.s;
}

/* The cubin cache: a second build of one configuration (another tag, as a
 * second key's tuning has) compiles nothing and gets the same cubin, and a
 * damaged entry is compiled again. */
TEST(cubin_cache_second_build_compiles_nothing) {
  unsetenv("KTUNE_CUDA_ARCH");
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__errbuf eb = {{0}};
  kt__file *f = kt__parse_file("kernels/cuda/elementwise.cu", -1, &d, &eb);
  if (!f) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  compile_run r;
  setup_run(&r, f, &f->kernels[0]);
  snprintf(r.device.name, sizeof r.device.name, "NVIDIA H200");
  snprintf(r.device.toolchain_version, sizeof r.device.toolchain_version, "NVRTC test");
  kt__bincache cache;
  char bindir[4200];
  snprintf(bindir, sizeof bindir, "%s/bin", r.workdir);
  ASSERT_EQ(kt__bincache_resolve(bindir, false, 0, &cache, &eb), KT_OK);
  int64_t values[KT__MAX_NAMES];
  for (int i = 0; i < r.decl->ntune; i++) values[i] = r.decl->tune[i].values[0];
  kt__sbuf first = {0};
  kt__bin_use want[] = {KT__BIN_COMPILED, KT__BIN_CACHED, KT__BIN_REBUILT};
  for (int round = 0; round < 3; round++) {
    char tag[16];
    snprintf(tag, sizeof tag, "k%d", round);
    kt__build b = {.file = f,
                   .decl = r.decl,
                   .names = r.names,
                   .values = values,
                   .n = r.nnames,
                   .device = &r.device,
                   .workdir = r.workdir,
                   .tag = tag,
                   .timeout_s = 60,
                   .bincache = &cache};
    kt__artifact a;
    if (kt__be_compile(&kt__backend_cuda, &b, &a, &eb) != KT__ST_OK) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
    ASSERT_EQ(a.cache_use, want[round]);
    size_t len = 0;
    char *cubin = slurp_file(a.path, &len);
    ASSERT_TRUE(cubin && cubin_has_kernel(a.path, r.decl->name));
    if (round == 0) kt__sbuf_append(&first, cubin, len);
    else ASSERT_TRUE(len == first.len && memcmp(cubin, first.s, len) == 0);
    free(cubin);
    kt__artifact_free(&a);
    if (round == 1) { /* flip one byte of the only entry */
      char cmd[4400];
      snprintf(cmd, sizeof cmd,
               "python3 -c \"import glob; p=glob.glob('%s/*.ktbin')[0]; b=bytearray(open(p,'rb').read()); "
               "b[200]^=1; open(p,'wb').write(b)\"",
               bindir);
      ASSERT_EQ(system(cmd), 0);
    }
  }
  kt__sbuf_free(&first);
  kt__file_free(f);
  kt__diag_free(&d);
}

#ifdef KTUNE_HAVE_CUDA_H
/* What a tensor map spec becomes in the driver's enums (no GPU needed). */
TEST(tensormap_enums) {
  kt__tensormap_spec s = {.type = KT__DT_BF16, .rank = 2, .swizzle = 128};
  CUtensorMapDataType type;
  CUtensorMapSwizzle swizzle;
  char why[128];
  ASSERT_TRUE(kt__cuda_tensormap_enums(&s, &type, &swizzle, why, sizeof why));
  ASSERT_EQ(type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  ASSERT_EQ(swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  s.type = KT__DT_F32, s.swizzle = 0;
  ASSERT_TRUE(kt__cuda_tensormap_enums(&s, &type, &swizzle, why, sizeof why));
  ASSERT_EQ(type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  ASSERT_EQ(swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  s.swizzle = 48;
  ASSERT_TRUE(!kt__cuda_tensormap_enums(&s, &type, &swizzle, why, sizeof why));
  ASSERT_CONTAINS(why, "not 48");
}

static int encodes;
static CUresult fake_encode(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *base,
                            const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                            const cuuint32_t *unit, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  (void)type, (void)strides, (void)unit, (void)il, (void)sw, (void)l2, (void)oob;
  encodes++;
  memset(map, 0, sizeof *map);
  map->opaque[0] = (cuuint64_t)(uintptr_t)base;
  map->opaque[1] = dims[0] * 1000 + box[0] + rank;
  return CUDA_SUCCESS;
}

/* The cache encodes a spec over an address once; another address or box
 * encodes again; a misaligned address is refused before the driver. */
TEST(tensormap_cache) {
  kt__cuda_tensormap_cache c;
  kt__cuda_tensormap_cache_init(&c);
  kt__tensormap_spec s = {.type = KT__DT_BF16, .rank = 2, .dims = {4096, 1024}, .strides = {8192}, .box = {64, 128}};
  CUtensorMap m;
  char why[128];
  encodes = 0;
  ASSERT_EQ(kt__cuda_tensormap_get(&c, fake_encode, &s, 0x10000, &m, why, sizeof why), CUDA_SUCCESS);
  ASSERT_EQ(m.opaque[0], 0x10000);
  ASSERT_EQ(kt__cuda_tensormap_get(&c, fake_encode, &s, 0x10000, &m, why, sizeof why), CUDA_SUCCESS);
  ASSERT_EQ(encodes, 1);
  ASSERT_EQ(kt__cuda_tensormap_get(&c, fake_encode, &s, 0x20000, &m, why, sizeof why), CUDA_SUCCESS);
  s.box[0] = 32;
  ASSERT_EQ(kt__cuda_tensormap_get(&c, fake_encode, &s, 0x20000, &m, why, sizeof why), CUDA_SUCCESS);
  ASSERT_EQ(encodes, 3);
  ASSERT_EQ(m.opaque[1], 4096 * 1000 + 32 + 2);
  ASSERT_TRUE(kt__cuda_tensormap_get(&c, fake_encode, &s, 0x20008, &m, why, sizeof why) != CUDA_SUCCESS);
  ASSERT_CONTAINS(why, "16-byte aligned");
  ASSERT_EQ(encodes, 3);
  kt__cuda_tensormap_cache_destroy(&c);
}

/* kt_launch's side of gemm_wgmma.cu that needs no GPU: the maps described
 * for a caller's tensors at its shape (as kt_launch describes each new
 * shape: the declaration's runtime sizes, the configuration it launches),
 * and the device state's cache, which encodes each map once per shape over
 * the caller's buffers, so that calls at a shape seen before encode nothing.
 * tests/gpu/launch_tensormap_h200.sh runs the same on the H200. */
static void wgmma_launch(const kt__kernel_decl *d, const kt__config *cfg, int64_t m, int64_t n, int64_t k,
                         kt__launch *l) {
  int64_t sizes[8];
  ASSERT_TRUE(d->nsizes <= 8);
  for (int i = 0; i < d->nsizes; i++) sizes[i] = !strcmp(d->sizes[i], "M") ? m : !strcmp(d->sizes[i], "N") ? n : k;
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  kt__errbuf eb = {{0}};
  if (kt__launch_describe(d, cfg, cfg->defaults, &env, NULL, l, &eb) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  ASSERT_EQ(l->ntensormaps, 2);
}

static void expect_map(const kt__tensormap_spec *s, int param, int tensor, uint64_t inner, uint64_t outer,
                       uint32_t box_inner, uint32_t box_outer) {
  ASSERT_EQ(s->param, param);
  ASSERT_EQ(s->tensor, tensor);
  ASSERT_EQ(s->type, KT__DT_BF16);
  ASSERT_EQ(s->rank, 2);
  ASSERT_EQ(s->dims[0], inner);
  ASSERT_EQ(s->dims[1], outer);
  ASSERT_EQ(s->strides[0], inner * 2);
  ASSERT_EQ(s->box[0], box_inner);
  ASSERT_EQ(s->box[1], box_outer);
  ASSERT_EQ(s->swizzle, 128);
}

TEST(tensormap_for_callers_tensors) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__errbuf eb = {{0}};
  kt__file *f = kt__parse_file("kernels/cuda/gemm_wgmma.cu", -1, &d, &eb);
  if (!f) kt_test_fail(__FILE__, __LINE__, "%s%s", eb.msg, d.errors.s ? d.errors.s : "");
  const kt__kernel_decl *decl = &f->kernels[0];
  kt__config cfg; /* the default: BN=256 WG_M=64 CONSUMERS=2, so A's box is 128 rows of 64 */
  kt__config_init(&cfg, decl);
  kt__launch small, large;
  wgmma_launch(decl, &cfg, 512, 768, 1024, &small);
  expect_map(&small.tensormaps[0], 3, 1, 1024, 512, 64, 128); /* amap over a: K innermost, then M */
  expect_map(&small.tensormaps[1], 4, 2, 1024, 768, 64, 256); /* bmap over b: K, then N */
  wgmma_launch(decl, &cfg, 256, 768, 4096, &large);
  expect_map(&large.tensormaps[0], 3, 1, 4096, 256, 64, 128);
  expect_map(&large.tensormaps[1], 4, 2, 4096, 768, 64, 256);

  kt__cuda_tensormap_cache c;
  kt__cuda_tensormap_cache_init(&c);
  const CUdeviceptr bases[] = {0, 0x7f0000100000, 0x7f0000200000}; /* the caller's c, a, b */
  char why[128];
  CUtensorMap map;
  encodes = 0;
  const kt__launch *calls[] = {&small, &small, &large, &small, &large, &large};
  const int encoded_after[] = {2, 2, 4, 4, 4, 4};
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 2; j++) {
      const kt__tensormap_spec *s = &calls[i]->tensormaps[j];
      ASSERT_EQ(kt__cuda_tensormap_get(&c, fake_encode, s, bases[s->tensor], &map, why, sizeof why), CUDA_SUCCESS);
      ASSERT_EQ(map.opaque[0], bases[s->tensor]); /* the map of this buffer at this shape */
      ASSERT_EQ(map.opaque[1], s->dims[0] * 1000 + s->box[0] + 2);
    }
    ASSERT_EQ(encodes, encoded_after[i]);
  }
  kt__cuda_tensormap_cache_destroy(&c);
  kt__config_free(&cfg);
  kt__file_free(f);
  kt__diag_free(&d);
}
#endif
