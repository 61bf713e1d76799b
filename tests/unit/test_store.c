/* The results database: records, keys, winners, schema header, damaged
 * files, export/import, T4, the cache commands, two writers at once and a
 * writer killed mid-stream. Every case works in its own temporary directory. */
#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hash.h"
#include "store/store.h"

/* ---- fixtures ---- */

static const char *tmp_path(const char *name) { return kt_test_tmp_path(name); }

static kt__device_info device(const char *name) {
  kt__device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "cuda");
  snprintf(d.name, sizeof d.name, "%s", name);
  snprintf(d.arch, sizeof d.arch, "sm_90");
  d.memory_bytes = 150ull << 30;
  snprintf(d.driver_version, sizeof d.driver_version, "570.1");
  snprintf(d.toolchain_version, sizeof d.toolchain_version, "nvrtc 13.0");
  return d;
}

static kt__store_key key_for(const kt__device_info *d, const char *sizes) {
  return (kt__store_key){.source_hash = "abc123", .kernel = "square", .device = d, .sizes = sizes};
}

static kt__record record(const char *config, kt__status st, double median) {
  kt__record r;
  memset(&r, 0, sizeof r);
  r.config = config;
  r.status = st;
  r.stats = (kt__stats){.median = median,
                        .min = median * 0.9,
                        .max = median * 1.2,
                        .mean = median * 1.05,
                        .stddev = median * 0.01,
                        .nsamples = 7,
                        .reps = 16};
  r.compile_s = 0.25;
  return r;
}

static kt__store *open_ok(const char *path) {
  kt__store *s = NULL;
  kt__errbuf eb = {{0}};
  int rc = kt__store_open(path, "kt_options.db_path", &s, &eb);
  if (rc != KT_OK) fprintf(stderr, "%s\n", eb.msg);
  ASSERT_EQ(rc, KT_OK);
  return s;
}

static long count_under(kt__store *s, const kt__store_key *k) {
  long n = -1;
  kt__errbuf eb;
  ASSERT_EQ(kt__store_count(s, k, &n, &eb), KT_OK);
  return n;
}

/* Collects each'd records (deep copies) for comparison. */
typedef struct collected {
  kt__record r[64];
  int n;
} collected;

static void collect(void *ud, const kt__record *r) {
  collected *c = ud;
  ASSERT_TRUE(c->n < 64);
  c->r[c->n] = *r;
  c->r[c->n].config = strdup(r->config);
  c->r[c->n].message = r->message ? strdup(r->message) : NULL;
  c->n++;
}

static void collected_free(collected *c) {
  for (int i = 0; i < c->n; i++) {
    free((char *)c->r[i].config);
    free((char *)c->r[i].message);
  }
  c->n = 0;
}

static const kt__record *find(const collected *c, const char *config) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->r[i].config, config) == 0) return &c->r[i];
  return NULL;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  ASSERT_TRUE(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* Captures what FN writes to a FILE. */
typedef struct capture {
  char *text;
  size_t len;
  FILE *f;
} capture;

static FILE *capture_start(capture *c) {
  c->text = NULL;
  c->len = 0;
  c->f = open_memstream(&c->text, &c->len);
  ASSERT_TRUE(c->f != NULL);
  return c->f;
}

static const char *capture_end(capture *c) {
  fclose(c->f);
  return c->text;
}

static int sql_int(const char *path, const char *sql) {
  sqlite3 *db;
  sqlite3_stmt *st;
  ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  int v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

static void sql_exec(const char *path, const char *sql) {
  sqlite3 *db;
  ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* ---- SHA-256 ---- */

static void check_sha(const char *text, size_t len, const char *hex) {
  char out[65];
  kt__hash_text(text, len, out);
  ASSERT_STREQ(out, hex);
}

TEST(sha256_vectors) {
  /* FIPS 180-4 examples and the million-'a' vector. */
  check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check_sha(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  check_sha(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(million);
}

TEST(sha256_padding_boundaries) {
  /* Lengths around the 55/56/64-byte padding edges ("0123456789" repeated),
   * checked against coreutils sha256sum. */
  static const struct {
    int len;
    const char *hex;
  } v[] = {
      {55, "f34d5a0f80c0cbf84c8c0b90218c22637abd199965249da736a20143c8c9c9d9"},
      {56, "83aa034bda83e458a0dc9cbce0d4e354716aa0ff770ed37ac0ed2b292052e4af"},
      {63, "074f6e9ac301d5d1b6df6f1dfb8c6f89c187ea945d352ce6a29279a9c630680b"},
      {64, "9674d9e078535b7cec43284387a6ee39956188e735a85452b0050b55341cda56"},
      {65, "52774b57c10e45040a61c14d35c1c8ebefe880082313aa0a21ebb077734cd067"},
      {119, "d0cb70d05ff14123f114c0cca360c62077379cf1ac90e1bfafa9e9e4d827596a"},
      {120, "08642f0525963875af954100280fe3009293fa7e19c273444f31464c9b089243"},
      {127, "8e1814fdcfd56f26b96bcdba97754ab886dcb95373419b94a341a17d2634775e"},
      {128, "916e19992e7f9b1e8d9267c3324616dac8f4199419c6e4ebf68fda985f4b64ea"},
  };
  char text[128];
  for (int i = 0; i < 128; i++) text[i] = (char)('0' + i % 10);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) check_sha(text, (size_t)v[i].len, v[i].hex);
}

TEST(sha256_incremental_equals_oneshot) {
  char text[300], one[65], inc[65];
  unsigned char d[32];
  for (int i = 0; i < 300; i++) text[i] = (char)(i * 7 + 3);
  kt__hash_text(text, sizeof text, one);
  kt__sha256 c;
  kt__sha256_init(&c);
  for (size_t off = 0, step = 1; off < sizeof text; off += step, step = step * 2 % 61 + 1)
    kt__sha256_update(&c, text + off, off + step > sizeof text ? sizeof text - off : step);
  kt__sha256_final(&c, d);
  kt__sha256_hex(d, inc);
  ASSERT_STREQ(inc, one);
}

/* ---- paths ---- */

TEST(default_path_order) {
  kt__errbuf eb;
  char buf[512];
  setenv("KTUNE_DB", "/x/y.db", 1);
  setenv("XDG_CACHE_HOME", "/cache", 1);
  ASSERT_EQ(kt__store_default_path(buf, sizeof buf, "kt_options.db_path", &eb), KT_OK);
  ASSERT_STREQ(buf, "/x/y.db");
  unsetenv("KTUNE_DB");
  ASSERT_EQ(kt__store_default_path(buf, sizeof buf, "kt_options.db_path", &eb), KT_OK);
  ASSERT_STREQ(buf, "/cache/ktune/results.db");
  setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, as the XDG spec says */
  setenv("HOME", "/home/u", 1);
  ASSERT_EQ(kt__store_default_path(buf, sizeof buf, "kt_options.db_path", &eb), KT_OK);
  ASSERT_STREQ(buf, "/home/u/.cache/ktune/results.db");
  unsetenv("XDG_CACHE_HOME");
  ASSERT_EQ(kt__store_default_path(buf, sizeof buf, "kt_options.db_path", &eb), KT_OK);
  ASSERT_STREQ(buf, "/home/u/.cache/ktune/results.db");
}

TEST(default_path_creates_private_dirs) {
  unsetenv("KTUNE_DB");
  setenv("XDG_CACHE_HOME", tmp_path("xdg"), 1);
  kt__store *s = open_ok(NULL);
  ASSERT_STREQ(kt__store_path(s), tmp_path("xdg/ktune/results.db"));
  kt__store_close(s);
  struct stat sb;
  ASSERT_EQ(stat(tmp_path("xdg/ktune"), &sb), 0);
  ASSERT_EQ(sb.st_mode & 0777, 0700);
  ASSERT_EQ(stat(tmp_path("xdg/ktune/results.db"), &sb), 0);
}

/* ---- records, keys, winners ---- */

TEST(put_each_roundtrip) {
  kt__store *s = open_ok(tmp_path("r.db"));
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  kt__errbuf eb;
  kt__record a = record("BLOCK=64 VEC=1", KT__ST_OK, 1.5e-5);
  kt__record b = record("BLOCK=128 VEC=8", KT__ST_COMPILE, NAN);
  b.message = "ptxas: too many registers";
  b.stats.nsamples = 0;
  kt__record c = record("BLOCK=256 VEC=2", KT__ST_OK, 3e-5);
  c.stats.stopped_early = true;
  ASSERT_EQ(kt__store_put(s, &k, &a, &eb), KT_OK);
  ASSERT_EQ(kt__store_put(s, &k, &b, &eb), KT_OK);
  ASSERT_EQ(kt__store_put(s, &k, &c, &eb), KT_OK);
  collected got = {0};
  ASSERT_EQ(kt__store_each(s, &k, collect, &got, &eb), KT_OK);
  ASSERT_EQ(got.n, 3);
  const kt__record *ra = find(&got, a.config), *rb = find(&got, b.config), *rc = find(&got, c.config);
  ASSERT_TRUE(ra && rb && rc);
  ASSERT_EQ(ra->status, KT__ST_OK);
  ASSERT_TRUE(ra->stats.median == a.stats.median && ra->stats.min == a.stats.min && ra->stats.max == a.stats.max &&
              ra->stats.mean == a.stats.mean && ra->stats.stddev == a.stats.stddev);
  ASSERT_EQ(ra->stats.nsamples, 7);
  ASSERT_EQ(ra->stats.reps, 16);
  ASSERT_TRUE(ra->compile_s == 0.25);
  ASSERT_TRUE(ra->message == NULL);
  ASSERT_FALSE(ra->stats.stopped_early);
  ASSERT_EQ(rb->status, KT__ST_COMPILE);
  ASSERT_TRUE(isnan(rb->stats.median));
  ASSERT_STREQ(rb->message, "ptxas: too many registers");
  ASSERT_TRUE(rc->stats.stopped_early);
  collected_free(&got);
  kt__store_close(s);
}

/* How a result was measured (issue 27): the method comes back for the
 * finalist rounds, the whole record is kept as JSON. */
TEST(measurement_roundtrip) {
  const char *path = tmp_path("m.db");
  kt__store *s = open_ok(path);
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=16384");
  kt__errbuf eb;
  kt__record a = record("BLOCK=128 VEC=4", KT__ST_OK, 1.1e-6);
  a.stats.timing = KT_TIMING_GRAPH;
  a.stats.seen = (kt__seen){.clock_known = true, .sm_clock_min_mhz = 1755, .sm_clock_max_mhz = 1980};
  a.method = "graph";
  kt__record b = record("BLOCK=256 VEC=4", KT__ST_OK, 2e-6);
  b.stats.timing = KT_TIMING_EVENTS;
  b.method = "events";
  ASSERT_EQ(kt__store_put(s, &k, &a, &eb), KT_OK);
  ASSERT_EQ(kt__store_put(s, &k, &b, &eb), KT_OK);
  collected got = {0};
  ASSERT_EQ(kt__store_each(s, &k, collect, &got, &eb), KT_OK);
  ASSERT_EQ(find(&got, a.config)->stats.timing, KT_TIMING_GRAPH);
  ASSERT_EQ(find(&got, b.config)->stats.timing, KT_TIMING_EVENTS);
  collected_free(&got);
  kt__store_close(s);
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM results WHERE measurement LIKE '%\"method\": \"graph\"%' AND "
                          "measurement LIKE '%\"sm_clock_mhz\": {\"min\": 1755, \"max\": 1980}%' AND "
                          "measurement LIKE '%\"launches_per_sample\": 16%'"),
            1);
}

TEST(upsert_replaces_same_config) {
  kt__store *s = open_ok(tmp_path("u.db"));
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  kt__errbuf eb;
  kt__record r = record("BLOCK=64", KT__ST_TIMEOUT, NAN);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  r = record("BLOCK=64", KT__ST_OK, 2e-6);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  collected got = {0};
  ASSERT_EQ(kt__store_each(s, &k, collect, &got, &eb), KT_OK);
  ASSERT_EQ(got.n, 1);
  ASSERT_EQ(got.r[0].status, KT__ST_OK);
  ASSERT_NEAR(got.r[0].stats.median, 2e-6, 0);
  collected_free(&got);
  kt__store_close(s);
}

TEST(winner_roundtrip) {
  kt__store *s = open_ok(tmp_path("w.db"));
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  kt__errbuf eb;
  char *cfg = NULL;
  double sec = 0;
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_NOTFOUND);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "BLOCK=256 VEC=4", 1.25e-5, &eb), KT_OK);
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "BLOCK=256 VEC=4");
  ASSERT_NEAR(sec, 1.25e-5, 0);
  free(cfg);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "BLOCK=512 VEC=2", 1e-5, &eb), KT_OK);
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "BLOCK=512 VEC=2");
  free(cfg);
  kt__store_close(s);
}

/* A device on the host's cores (PoCL's CPU device) reports a global memory
 * that changes from process to process: the key does not follow it. A GPU's
 * memory still tells two models apart. */
TEST(host_cpu_device_key_ignores_the_reported_memory) {
  kt__store *s = open_ok(tmp_path("hostmem.db"));
  kt__device_info d = device("cpu-skylake-avx512");
  snprintf(d.backend, sizeof d.backend, "opencl");
  d.host_cpu = true;
  d.memory_bytes = 3ull << 30;
  kt__store_key k = key_for(&d, "N=1000");
  kt__errbuf eb;
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "ITEMS=4", 2e-6, &eb), KT_OK);
  d.memory_bytes = 11ull << 30; /* the next process */
  char *cfg = NULL;
  double sec = 0;
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "ITEMS=4");
  free(cfg);
  kt__device_info g = device("NVIDIA H100");
  kt__store_key kg = key_for(&g, "N=1000");
  ASSERT_EQ(kt__store_set_winner(s, &kg, KT_OBJECTIVE_TIME, "ITEMS=8", 1e-6, &eb), KT_OK);
  g.memory_bytes = 80ull << 30; /* another model of that name */
  ASSERT_EQ(kt__store_winner(s, &kg, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_NOTFOUND);
  kt__store_close(s);
}

typedef struct winners_seen {
  int n;
  char sizes[8][32];
} winners_seen;

static void see_winner(void *ud, const char *sizes, const char *config, double seconds) {
  winners_seen *w = ud;
  ASSERT_TRUE(w->n < 8 && config && seconds > 0);
  snprintf(w->sizes[w->n++], 32, "%s", sizes);
}

TEST(each_winner_across_sizes) {
  kt__store *s = open_ok(tmp_path("ew.db"));
  kt__device_info d = device("NVIDIA H200"), other = device("NVIDIA A100");
  kt__errbuf eb;
  kt__store_key k1 = key_for(&d, "N=1024"), k2 = key_for(&d, "N=4096"), k3 = key_for(&other, "N=2048");
  ASSERT_EQ(kt__store_set_winner(s, &k1, KT_OBJECTIVE_TIME, "B=1", 1e-6, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k2, KT_OBJECTIVE_TIME, "B=2", 2e-6, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k3, KT_OBJECTIVE_TIME, "B=3", 3e-6, &eb), KT_OK);
  winners_seen w = {0};
  ASSERT_EQ(kt__store_each_winner(s, &k1, see_winner, &w, &eb), KT_OK);
  ASSERT_EQ(w.n, 2);
  ASSERT_STREQ(w.sizes[0], "N=1024");
  ASSERT_STREQ(w.sizes[1], "N=4096");
  kt__store_close(s);
}

/* Winners of the same source on other devices (any sizes), not this one's. */
TEST(each_winner_elsewhere_is_other_devices) {
  kt__store *s = open_ok(tmp_path("ewe.db"));
  kt__device_info d = device("NVIDIA H200"), other = device("NVIDIA A100"), newer = device("NVIDIA H200");
  snprintf(newer.driver_version, sizeof newer.driver_version, "999.1");
  kt__errbuf eb;
  kt__store_key k1 = key_for(&d, "N=1024"), k2 = key_for(&d, "N=4096"), k3 = key_for(&other, "N=2048"),
                k4 = key_for(&newer, "N=1024");
  ASSERT_EQ(kt__store_set_winner(s, &k1, KT_OBJECTIVE_TIME, "B=1", 1e-6, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k2, KT_OBJECTIVE_TIME, "B=2", 2e-6, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k3, KT_OBJECTIVE_TIME, "B=3", 3e-6, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k4, KT_OBJECTIVE_TIME, "B=4", 4e-6, &eb), KT_OK);
  winners_seen w = {0};
  ASSERT_EQ(kt__store_each_winner_elsewhere(s, &k1, see_winner, &w, &eb), KT_OK);
  ASSERT_EQ(w.n, 2); /* the A100's and the other driver's, not this device's two */
  ASSERT_STREQ(w.sizes[0], "N=2048");
  ASSERT_STREQ(w.sizes[1], "N=1024");
  kt__store_key other_kernel = k3;
  other_kernel.kernel = "another";
  winners_seen none = {0};
  ASSERT_EQ(kt__store_each_winner_elsewhere(s, &other_kernel, see_winner, &none, &eb), KT_OK);
  ASSERT_EQ(none.n, 0);
  kt__store_close(s);
}

TEST(key_separation) {
  kt__store *s = open_ok(tmp_path("k.db"));
  kt__errbuf eb;
  kt__device_info base = device("NVIDIA H200");
  kt__store_key k = key_for(&base, "N=4096");
  kt__record r = record("BLOCK=64", KT__ST_OK, 1e-5);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "BLOCK=64", 1e-5, &eb), KT_OK);

  /* Each variant differs from the base key in exactly one part. */
  kt__device_info dev[7];
  for (int i = 0; i < 7; i++) dev[i] = base;
  snprintf(dev[0].name, sizeof dev[0].name, "NVIDIA H100");
  snprintf(dev[1].driver_version, sizeof dev[1].driver_version, "575.0");
  snprintf(dev[2].toolchain_version, sizeof dev[2].toolchain_version, "nvrtc 13.1");
  snprintf(dev[3].arch, sizeof dev[3].arch, "sm_100");
  dev[4].memory_bytes = 80ull << 30;
  snprintf(dev[5].backend, sizeof dev[5].backend, "opencl");
  dev[6].index = 3; /* another card of the same model shares results */
  kt__store_key variants[] = {
      key_for(&dev[0], "N=4096"), key_for(&dev[1], "N=4096"), key_for(&dev[2], "N=4096"), key_for(&dev[3], "N=4096"),
      key_for(&dev[4], "N=4096"), key_for(&dev[5], "N=4096"), key_for(&base, "N=8192"),   key_for(&base, "N=4096"),
      key_for(&base, "N=4096"),   key_for(&base, "N=4096"),   key_for(&base, ""),
  };
  variants[7].method_version = "2";
  variants[8].source_hash = "def456";
  variants[9].kernel = "cube";
  int nvar = (int)(sizeof variants / sizeof variants[0]);
  for (int i = 0; i < nvar; i++) {
    char *cfg = NULL;
    ASSERT_EQ(count_under(s, &variants[i]), 0);
    ASSERT_EQ(kt__store_winner(s, &variants[i], KT_OBJECTIVE_TIME, &cfg, NULL, &eb), KT_NOTFOUND);
    collected got = {0};
    ASSERT_EQ(kt__store_each(s, &variants[i], collect, &got, &eb), KT_OK);
    ASSERT_EQ(got.n, 0);
  }
  /* Same device identity on another index: the same key. */
  kt__store_key same = key_for(&dev[6], "N=4096");
  ASSERT_EQ(count_under(s, &same), 1);
  /* A record under a variant leaves the base untouched. */
  kt__record other = record("BLOCK=64", KT__ST_OK, 9e-5);
  ASSERT_EQ(kt__store_put(s, &variants[1], &other, &eb), KT_OK);
  collected got = {0};
  ASSERT_EQ(kt__store_each(s, &k, collect, &got, &eb), KT_OK);
  ASSERT_EQ(got.n, 1);
  ASSERT_NEAR(got.r[0].stats.median, 1e-5, 0);
  collected_free(&got);
  kt__store_close(s);
}

TEST(bad_key_is_invalid) {
  kt__store *s = open_ok(tmp_path("bk.db"));
  kt__errbuf eb;
  kt__store_key k = {.source_hash = "x", .kernel = "k", .device = NULL, .sizes = ""};
  kt__record r = record("A=1", KT__ST_OK, 1);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_INVALID);
  kt__store_close(s);
}

/* ---- the file: header, reopen, damage ---- */

TEST(schema_version_stored) {
  const char *path = tmp_path("v.db");
  kt__store_close(open_ok(path));
  ASSERT_EQ(sql_int(path, "PRAGMA user_version"), KT__SCHEMA_VERSION);
  ASSERT_EQ(sql_int(path, "PRAGMA application_id"), 0x6b74756e);
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('keys','results','winners')"), 3);
  sqlite3 *db;
  sqlite3_stmt *st;
  ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  ASSERT_STREQ((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(reopen_keeps_records) {
  const char *path = tmp_path("re.db");
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=1");
  kt__errbuf eb;
  kt__store *s = open_ok(path);
  kt__record r = record("A=1", KT__ST_OK, 1e-3);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "A=1", 1e-3, &eb), KT_OK);
  kt__store_close(s);
  s = open_ok(path);
  ASSERT_EQ(count_under(s, &k), 1);
  char *cfg;
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, NULL, &eb), KT_OK);
  ASSERT_STREQ(cfg, "A=1");
  free(cfg);
  kt__store_close(s);
}

TEST(not_a_database_is_a_clear_error) {
  const char *path = tmp_path("junk.db");
  char junk[4096];
  for (size_t i = 0; i < sizeof junk - 1; i++) junk[i] = (char)('a' + i % 26);
  junk[sizeof junk - 1] = 0;
  write_file(path, junk);
  kt__store *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__store_open(path, "--db", &s, &eb), KT_STORE);
  ASSERT_TRUE(s == NULL);
  ASSERT_CONTAINS(eb.msg, path);
  ASSERT_CONTAINS(eb.msg, "Move it away");
  ASSERT_CONTAINS(eb.msg, "mv '");
  ASSERT_CONTAINS(eb.msg, "choose another file with --db or KTUNE_DB"); /* the caller's label */
}

TEST(damaged_header_is_a_clear_error) {
  const char *path = tmp_path("dmg.db");
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=1");
  kt__errbuf eb = {{0}};
  kt__store *s = open_ok(path);
  kt__record r = record("A=1", KT__ST_OK, 1e-3);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  kt__store_close(s);
  /* Overwrite the "SQLite format 3" magic of the file's first page. */
  FILE *f = fopen(path, "r+b");
  ASSERT_TRUE(f != NULL);
  fwrite("garbage garbage!", 1, 16, f);
  fclose(f);
  s = NULL;
  ASSERT_EQ(kt__store_open(path, "kt_options.db_path", &s, &eb), KT_STORE);
  ASSERT_CONTAINS(eb.msg, path);
  ASSERT_CONTAINS(eb.msg, "damaged");
}

TEST(newer_schema_refused) {
  const char *path = tmp_path("new.db");
  kt__store_close(open_ok(path));
  sql_exec(path, "PRAGMA user_version=99");
  kt__store *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__store_open(path, "kt_options.db_path", &s, &eb), KT_STORE);
  ASSERT_CONTAINS(eb.msg, "schema version 99");
  ASSERT_CONTAINS(eb.msg, "newer ktune");
  ASSERT_EQ(sql_int(path, "PRAGMA user_version"), 99); /* left as it was */
}

TEST(foreign_sqlite_file_refused) {
  const char *path = tmp_path("other.db");
  sql_exec(path, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine')");
  kt__store *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__store_open(path, "kt_options.db_path", &s, &eb), KT_STORE);
  ASSERT_CONTAINS(eb.msg, "not a ktune results database");
  ASSERT_CONTAINS(eb.msg, "Choose another file with kt_options.db_path or KTUNE_DB");
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM notes"), 1);
}

TEST(unwritable_directory_is_a_clear_error) {
  if (geteuid() == 0) return; /* root writes anywhere */
  const char *dir = tmp_path("ro");
  ASSERT_EQ(mkdir(dir, 0500), 0);
  kt__store *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__store_open(tmp_path("ro/sub/r.db"), "kt_options.db_path", &s, &eb), KT_STORE);
  ASSERT_CONTAINS(eb.msg, "cannot create directory");
}

/* ---- export and import ---- */

/* Two keys, assorted records (NaN, infinity, messages), winners. */
static void populate(const char *path) {
  kt__store *s = open_ok(path);
  kt__device_info h200 = device("NVIDIA H200"), a100 = device("NVIDIA A100");
  kt__store_key k1 = key_for(&h200, "N=4096"), k2 = key_for(&a100, "M=64 N=128");
  k2.kernel = "gemm";
  kt__errbuf eb;
  kt__record rs[] = {record("BLOCK=64 VEC=1", KT__ST_OK, 1.234567890123e-5),
                     record("BLOCK=128 VEC=1", KT__ST_OK, 0.1 + 0.2), record("BLOCK=256 VEC=8", KT__ST_COMPILE, NAN),
                     record("BLOCK=512 VEC=8", KT__ST_CORRECTNESS, INFINITY)};
  rs[2].message = "error: \"quoted\"\nsecond line";
  rs[3].stats.stopped_early = true;
  for (size_t i = 0; i < 4; i++) ASSERT_EQ(kt__store_put(s, &k1, &rs[i], &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k1, KT_OBJECTIVE_TIME, "BLOCK=64 VEC=1", 1.234567890123e-5, &eb), KT_OK);
  kt__record g = record("TILE_M=64 TILE_N=64", KT__ST_OK, 3e-4);
  ASSERT_EQ(kt__store_put(s, &k2, &g, &eb), KT_OK);
  kt__store_close(s);
}

/* A context on the database DB, for the kt_cache_* calls. */
static kt_context *on_db(const char *db) {
  kt_options o = {.db_path = db};
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  return ctx;
}

static json_object *export_doc(const char *db, const kt_cache_filter *f, const char *format) {
  capture c;
  kt_context *ctx = on_db(db);
  int rc = kt_cache_export(ctx, f, format, capture_start(&c));
  const char *text = capture_end(&c);
  if (rc != KT_OK) fprintf(stderr, "%s\n", kt_errmsg(ctx));
  ASSERT_EQ(rc, KT_OK);
  kt_context_destroy(ctx);
  json_object *doc = json_tokener_parse(text);
  ASSERT_TRUE(doc != NULL);
  free(c.text);
  return doc;
}

static void export_to_file(const char *db, const char *file) {
  kt_context *ctx = on_db(db);
  FILE *f = fopen(file, "w");
  ASSERT_TRUE(f != NULL);
  ASSERT_EQ(kt_cache_export(ctx, NULL, "json", f), KT_OK);
  fclose(f);
  kt_context_destroy(ctx);
}

TEST(export_import_roundtrip) {
  const char *a = tmp_path("a.db"), *b = tmp_path("b.db"), *file = tmp_path("a.json");
  kt_context *ctx = on_db(b);
  populate(a);
  export_to_file(a, file);
  capture c;
  ASSERT_EQ(kt_cache_import(ctx, file, capture_start(&c)), KT_OK);
  ASSERT_CONTAINS(capture_end(&c), "imported 5 results under 2 keys");
  free(c.text);
  json_object *da = export_doc(a, NULL, "json"), *db = export_doc(b, NULL, "json");
  json_object *ka, *kb;
  ASSERT_TRUE(json_object_object_get_ex(da, "keys", &ka) && json_object_object_get_ex(db, "keys", &kb));
  ASSERT_EQ(json_object_array_length(ka), 2);
  if (!json_object_equal(ka, kb))
    kt_test_fail(__FILE__, __LINE__, "exports differ:\n%s\n---\n%s", json_object_to_json_string(ka),
                 json_object_to_json_string(kb));
  /* Records read back exactly, through the internal API as the tuner sees them. */
  kt__store *s = open_ok(b);
  kt__device_info h200 = device("NVIDIA H200");
  kt__store_key k1 = key_for(&h200, "N=4096");
  collected got = {0};
  kt__errbuf eb;
  ASSERT_EQ(kt__store_each(s, &k1, collect, &got, &eb), KT_OK);
  ASSERT_EQ(got.n, 4);
  ASSERT_TRUE(find(&got, "BLOCK=128 VEC=1")->stats.median == 0.1 + 0.2);
  ASSERT_TRUE(isinf(find(&got, "BLOCK=512 VEC=8")->stats.median));
  ASSERT_STREQ(find(&got, "BLOCK=256 VEC=8")->message, "error: \"quoted\"\nsecond line");
  collected_free(&got);
  kt__store_close(s);
  json_object_put(da);
  json_object_put(db);
  kt_context_destroy(ctx);
}

TEST(import_keeps_newer_and_is_idempotent) {
  const char *a = tmp_path("a.db"), *file = tmp_path("a.json");
  kt_context *ctx = on_db(a);
  populate(a);
  export_to_file(a, file);
  /* A newer measurement of one configuration after the export. */
  kt__store *s = open_ok(a);
  kt__device_info h200 = device("NVIDIA H200");
  kt__store_key k1 = key_for(&h200, "N=4096");
  kt__errbuf eb;
  usleep(2000);
  kt__record r = record("BLOCK=64 VEC=1", KT__ST_OK, 5e-6);
  ASSERT_EQ(kt__store_put(s, &k1, &r, &eb), KT_OK);
  kt__store_close(s);
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_OK);
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_OK);
  s = open_ok(a);
  collected got = {0};
  ASSERT_EQ(kt__store_each(s, &k1, collect, &got, &eb), KT_OK);
  ASSERT_EQ(got.n, 4);
  ASSERT_NEAR(find(&got, "BLOCK=64 VEC=1")->stats.median, 5e-6, 0);
  collected_free(&got);
  kt__store_close(s);
  kt_context_destroy(ctx);
}

/* Two hosts tuned the same key: the merge's winner is the faster of the
 * two hosts' winners on the merged results, whichever file is imported
 * first and whichever winner is newer. */
TEST(import_chooses_the_winner_on_merged_results) {
  const char *a = tmp_path("a.db"), *b = tmp_path("b.db"), *fa = tmp_path("a.json"), *fb = tmp_path("b.json");
  kt__device_info h200 = device("NVIDIA H200");
  kt__store_key k1 = key_for(&h200, "N=4096");
  kt__errbuf eb;
  kt__store *s = open_ok(a);
  kt__record x = record("BLOCK=64 VEC=1", KT__ST_OK, 1e-5), y = record("BLOCK=128 VEC=1", KT__ST_OK, 3e-5);
  ASSERT_EQ(kt__store_put(s, &k1, &x, &eb), KT_OK);
  ASSERT_EQ(kt__store_put(s, &k1, &y, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k1, KT_OBJECTIVE_TIME, "BLOCK=64 VEC=1", 1e-5, &eb), KT_OK);
  kt__store_close(s);
  usleep(2000); /* host b's winner is the newer one, and the slower */
  s = open_ok(b);
  y.stats.median = 2e-5;
  ASSERT_EQ(kt__store_put(s, &k1, &y, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k1, KT_OBJECTIVE_TIME, "BLOCK=128 VEC=1", 2e-5, &eb), KT_OK);
  kt__store_close(s);
  export_to_file(a, fa);
  export_to_file(b, fb);
  for (int order = 0; order < 2; order++) {
    const char *merged = tmp_path(order ? "ba.db" : "ab.db");
    kt_context *ctx = on_db(merged);
    ASSERT_EQ(kt_cache_import(ctx, order ? fb : fa, NULL), KT_OK);
    ASSERT_EQ(kt_cache_import(ctx, order ? fa : fb, NULL), KT_OK);
    kt_context_destroy(ctx);
    s = open_ok(merged);
    char *config = NULL;
    double seconds = 0;
    ASSERT_EQ(kt__store_winner(s, &k1, KT_OBJECTIVE_TIME, &config, &seconds, &eb), KT_OK);
    ASSERT_STREQ(config, "BLOCK=64 VEC=1");
    ASSERT_NEAR(seconds, 1e-5, 0);
    free(config);
    kt__store_close(s);
  }
  /* A newer failed record of the faster winner leaves the other. */
  s = open_ok(b);
  kt__record xf = record("BLOCK=64 VEC=1", KT__ST_RUNTIME, NAN);
  ASSERT_EQ(kt__store_put(s, &k1, &xf, &eb), KT_OK);
  kt__store_close(s);
  export_to_file(b, fb);
  kt_context *ctx = on_db(tmp_path("ab.db"));
  ASSERT_EQ(kt_cache_import(ctx, fb, NULL), KT_OK);
  kt_context_destroy(ctx);
  s = open_ok(tmp_path("ab.db"));
  char *config = NULL;
  double seconds = 0;
  ASSERT_EQ(kt__store_winner(s, &k1, KT_OBJECTIVE_TIME, &config, &seconds, &eb), KT_OK);
  ASSERT_STREQ(config, "BLOCK=128 VEC=1");
  ASSERT_NEAR(seconds, 2e-5, 0);
  free(config);
  kt__store_close(s);
}

TEST(import_rejects_bad_files_atomically) {
  const char *db = tmp_path("i.db"), *file = tmp_path("bad.json");
  kt_context *ctx = on_db(db);
  write_file(file, "{\"format\": \"ktune-results\", \"format_version\": 1, \"keys\": [");
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "not valid JSON");
  write_file(file, "{\"schema_version\": \"1.0.0\", \"results\": []}");
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "T4");
  write_file(file, "{\"format\": \"ktune-results\", \"format_version\": 7, \"keys\": []}");
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "version 7");
  /* A good key followed by a broken result: nothing goes in. */
  populate(tmp_path("src.db"));
  export_to_file(tmp_path("src.db"), file);
  json_object *doc = json_object_from_file(file), *keys, *results;
  ASSERT_TRUE(json_object_object_get_ex(doc, "keys", &keys));
  ASSERT_TRUE(json_object_object_get_ex(json_object_array_get_idx(keys, 1), "results", &results));
  json_object_object_del(json_object_array_get_idx(results, 0), "status");
  ASSERT_EQ(json_object_to_file(file, doc), 0);
  json_object_put(doc);
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "keys[1].results[0]");
  ASSERT_CONTAINS(kt_errmsg(ctx), "\"status\" is missing");
  ASSERT_TRUE(access(db, F_OK) != 0); /* the database it would have created is gone */
  /* Into an existing database: rolled back, the database stays as it was. */
  populate(db);
  int before = sql_int(db, "SELECT count(*) FROM results");
  ASSERT_EQ(kt_cache_import(ctx, file, NULL), KT_INVALID);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM results"), before);
  ASSERT_EQ(kt_cache_import(ctx, tmp_path("missing.json"), NULL), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "cannot open");
  kt_context_destroy(ctx);
}

TEST(t4_export_fields) {
  const char *db = tmp_path("t4.db");
  kt_context *ctx = on_db(db);
  populate(db);
  kt_cache_filter one = {.kernel = "square"};
  json_object *doc = export_doc(db, &one, "t4"), *v, *results, *meta;
  ASSERT_TRUE(json_object_object_get_ex(doc, "schema_version", &v));
  ASSERT_STREQ(json_object_get_string(v), "1.0.0");
  ASSERT_TRUE(json_object_object_get_ex(doc, "metadata", &meta));
  ASSERT_TRUE(json_object_object_get_ex(meta, "timeunit", &v));
  ASSERT_TRUE(json_object_object_get_ex(doc, "results", &results));
  ASSERT_EQ(json_object_array_length(results), 4);
  int correct = 0;
  for (size_t i = 0; i < 4; i++) {
    json_object *r = json_object_array_get_idx(results, i), *cfg, *times, *inv, *corr, *ms, *obj, *x;
    ASSERT_TRUE(json_object_object_get_ex(r, "configuration", &cfg));
    ASSERT_TRUE(json_object_object_get_ex(cfg, "BLOCK", &x) && json_object_is_type(x, json_type_int));
    ASSERT_TRUE(json_object_object_get_ex(cfg, "VEC", &x) && json_object_is_type(x, json_type_int));
    ASSERT_TRUE(json_object_object_get_ex(r, "times", &times));
    ASSERT_TRUE(json_object_object_get_ex(times, "compilation", &x));
    ASSERT_NEAR(json_object_get_double(x), 250, 1e-9);
    ASSERT_TRUE(json_object_object_get_ex(r, "timestamp", &x));
    ASSERT_CONTAINS(json_object_get_string(x), "+00:00");
    ASSERT_TRUE(json_object_object_get_ex(r, "invalidity", &inv));
    ASSERT_TRUE(json_object_object_get_ex(r, "correctness", &corr));
    ASSERT_TRUE(json_object_object_get_ex(r, "objectives", &obj));
    ASSERT_TRUE(json_object_object_get_ex(r, "measurements", &ms));
    json_object *m0 = json_object_array_get_idx(ms, 0), *name, *value;
    ASSERT_TRUE(json_object_object_get_ex(m0, "name", &name) && json_object_object_get_ex(m0, "value", &value));
    ASSERT_STREQ(json_object_get_string(name), "time");
    if (strcmp(json_object_get_string(inv), "correct") == 0) {
      correct++;
      ASSERT_EQ(json_object_get_int(corr), 1);
      ASSERT_TRUE(json_object_is_type(value, json_type_double));
    } else {
      ASSERT_EQ(json_object_get_int(corr), 0);
      ASSERT_TRUE(json_object_is_type(value, json_type_string));
    }
  }
  ASSERT_EQ(correct, 2);
  json_object *first = json_object_array_get_idx(results, 0), *ms, *value;
  json_object_object_get_ex(first, "measurements", &ms);
  json_object_object_get_ex(json_object_array_get_idx(ms, 0), "value", &value);
  ASSERT_NEAR(json_object_get_double(value), 1.234567890123e-2, 1e-12); /* ms */
  json_object_put(doc);
  capture c;
  ASSERT_EQ(kt_cache_export(ctx, NULL, "t4", capture_start(&c)), KT_INVALID);
  capture_end(&c);
  free(c.text);
  ASSERT_CONTAINS(kt_errmsg(ctx), "2 match");
  ASSERT_EQ(kt_cache_export(ctx, NULL, "xml", stdout), KT_INVALID);
  kt_context_destroy(ctx);
}

/* ---- the cache commands ---- */

TEST(cache_list_filters) {
  const char *db = tmp_path("l.db");
  kt_context *ctx = on_db(db);
  capture c;
  populate(db);
  kt_cache_filter by_dev = {.device = "a100"};
  ASSERT_EQ(kt_cache_list(ctx, &by_dev, 1, capture_start(&c)), KT_OK);
  json_object *doc = json_tokener_parse(capture_end(&c)), *keys, *k0, *x;
  free(c.text);
  ASSERT_TRUE(json_object_object_get_ex(doc, "keys", &keys));
  ASSERT_EQ(json_object_array_length(keys), 1);
  k0 = json_object_array_get_idx(keys, 0);
  ASSERT_TRUE(json_object_object_get_ex(k0, "kernel", &x));
  ASSERT_STREQ(json_object_get_string(x), "gemm");
  json_object_put(doc);
  kt_cache_filter by_kernel = {.kernel = "square", .sizes = "N=4096"};
  ASSERT_EQ(kt_cache_list(ctx, &by_kernel, 0, capture_start(&c)), KT_OK);
  const char *text = capture_end(&c);
  ASSERT_CONTAINS(text, "1 stored tuning");
  ASSERT_CONTAINS(text, "2/4");
  ASSERT_CONTAINS(text, "BLOCK=64 VEC=1");
  ASSERT_TRUE(strstr(text, "gemm") == NULL);
  free(c.text);
  kt_cache_filter none = {.sizes = "N=1"};
  ASSERT_EQ(kt_cache_list(ctx, &none, 0, capture_start(&c)), KT_OK);
  ASSERT_CONTAINS(capture_end(&c), "0 stored tunings");
  free(c.text);
  kt_context_destroy(ctx);
}

TEST(cache_reading_never_creates) {
  const char *db = tmp_path("nothing/here.db");
  kt_context *ctx = on_db(db);
  capture c;
  ASSERT_EQ(kt_cache_list(ctx, NULL, 0, capture_start(&c)), KT_OK);
  ASSERT_CONTAINS(capture_end(&c), "0 stored tunings");
  free(c.text);
  ASSERT_EQ(kt_cache_show(ctx, NULL, "dflags", stdout), KT_NOTFOUND);
  json_object *doc = export_doc(db, NULL, "json"), *keys;
  ASSERT_TRUE(json_object_object_get_ex(doc, "keys", &keys));
  ASSERT_EQ(json_object_array_length(keys), 0);
  json_object_put(doc);
  ASSERT_EQ(kt_cache_clear(ctx, NULL, NULL), KT_OK);
  struct stat sb;
  ASSERT_TRUE(stat(db, &sb) != 0 && errno == ENOENT);
  kt_context_destroy(ctx);
}

TEST(cache_show_formats) {
  const char *db = tmp_path("s.db");
  kt_context *ctx = on_db(db);
  capture c;
  populate(db);
  kt_cache_filter sq = {.kernel = "square"};
  ASSERT_EQ(kt_cache_show(ctx, &sq, "dflags", capture_start(&c)), KT_OK);
  ASSERT_STREQ(capture_end(&c), "-DBLOCK=64 -DVEC=1\n");
  free(c.text);
  ASSERT_EQ(kt_cache_show(ctx, &sq, "defines", capture_start(&c)), KT_OK);
  const char *h = capture_end(&c);
  ASSERT_CONTAINS(h, "#ifndef KTUNE_SQUARE_CONFIG_H");
  ASSERT_CONTAINS(h, "#define BLOCK 64\n#define VEC 1\n#endif\n");
  ASSERT_CONTAINS(h, "NVIDIA H200");
  free(c.text);
  ASSERT_EQ(kt_cache_show(ctx, &sq, "table", capture_start(&c)), KT_OK);
  const char *t = capture_end(&c);
  /* Fastest first, the winner starred, failures after valid results. */
  const char *win = strstr(t, "* BLOCK=64 VEC=1"), *slow = strstr(t, "BLOCK=128 VEC=1"),
             *bad = strstr(t, "BLOCK=256 VEC=8");
  ASSERT_TRUE(win && slow && bad && win < slow && slow < bad);
  ASSERT_CONTAINS(t, "12.35 us");
  free(c.text);
  /* gemm has results but no winner; without a filter both keys match. */
  kt_cache_filter gm = {.kernel = "gemm"};
  ASSERT_EQ(kt_cache_show(ctx, &gm, "defines", stdout), KT_NOTFOUND);
  ASSERT_CONTAINS(kt_errmsg(ctx), "none has a winner");
  kt__store *s = open_ok(db);
  kt__device_info a100 = device("NVIDIA A100");
  kt__store_key k2 = key_for(&a100, "M=64 N=128");
  k2.kernel = "gemm";
  kt__errbuf eb;
  ASSERT_EQ(kt__store_set_winner(s, &k2, KT_OBJECTIVE_TIME, "TILE_M=64 TILE_N=64", 3e-4, &eb), KT_OK);
  kt__store_close(s);
  ASSERT_EQ(kt_cache_show(ctx, NULL, "dflags", stdout), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "2 stored winners match");
  ASSERT_EQ(kt_cache_show(ctx, NULL, "yaml", stdout), KT_INVALID);
  kt_context_destroy(ctx);
}

/* A filter that matches nothing says so, in the table as in the winner's
 * formats, naming what it asked for. */
TEST(cache_show_no_match) {
  const char *db = tmp_path("nomatch.db");
  kt_context *ctx = on_db(db);
  populate(db);
  kt_cache_filter nosuch = {.kernel = "nosuch"};
  static const char *const formats[] = {"table", "defines", "dflags"};
  for (int i = 0; i < 3; i++) {
    capture c;
    ASSERT_EQ(kt_cache_show(ctx, &nosuch, formats[i], capture_start(&c)), KT_NOTFOUND);
    ASSERT_STREQ(capture_end(&c), "");
    free(c.text);
    ASSERT_CONTAINS(kt_errmsg(ctx), "no stored tuning matches kernel nosuch");
  }
  kt_context_destroy(ctx);
}

/* CSV: a header with a column per configuration name across the keys, a
 * row per result, quoting where a field needs it, empty cells for names a
 * kernel lacks and for times never measured. */
TEST(cache_csv) {
  const char *db = tmp_path("csv.db");
  kt_context *ctx = on_db(db);
  populate(db);
  capture c;
  ASSERT_EQ(kt_cache_export(ctx, NULL, "csv", capture_start(&c)), KT_OK);
  const char *t = capture_end(&c);
  ASSERT_TRUE(strncmp(t,
                      "kernel,backend,device,sizes,BLOCK,VEC,TILE_M,TILE_N,status,winner,median_s,min_s,max_s,"
                      "stddev_s,samples,compile_s,message,timestamp\n",
                      strlen("kernel,backend,device,sizes,BLOCK,VEC,TILE_M,TILE_N,status,winner,")) == 0);
  int lines = 0;
  for (const char *p = t; *p; p++) lines += *p == '\n';
  ASSERT_EQ(lines, 1 + 5 + 1); /* the header, five results, one message's quoted line end */
  ASSERT_CONTAINS(t, ",64,1,,,ok,1,1.23456789e-05,");
  ASSERT_CONTAINS(t, ",256,8,,,compile,0,,,,,");
  ASSERT_CONTAINS(t, ",\"error: \"\"quoted\"\"\nsecond line\",");
  ASSERT_CONTAINS(t, "gemm,");
  ASSERT_CONTAINS(t, ",,,64,64,ok,0,");
  free(c.text);
  kt_cache_filter sq = {.kernel = "square"};
  ASSERT_EQ(kt_cache_show(ctx, &sq, "csv", capture_start(&c)), KT_OK);
  ASSERT_TRUE(strstr(capture_end(&c), "TILE_M") == NULL);
  free(c.text);
  kt_cache_filter none = {.kernel = "nosuch"};
  ASSERT_EQ(kt_cache_show(ctx, &none, "csv", stdout), KT_NOTFOUND);
  kt_context_destroy(ctx);
}

TEST(cache_clear_filters) {
  const char *db = tmp_path("c.db");
  kt_context *ctx = on_db(db);
  capture c;
  populate(db);
  kt_cache_filter sq = {.kernel = "square"};
  ASSERT_EQ(kt_cache_clear(ctx, &sq, capture_start(&c)), KT_OK);
  ASSERT_CONTAINS(capture_end(&c), "removed 1 tuning (4 results)");
  free(c.text);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM results"), 1);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM winners"), 0);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM keys WHERE kernel='gemm'"), 1);
  ASSERT_EQ(kt_cache_clear(ctx, NULL, NULL), KT_OK);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM keys"), 0);
  ASSERT_EQ(sql_int(db, "SELECT count(*) FROM results"), 0);
  kt_context_destroy(ctx);
}

/* ---- processes ---- */

/* Writes N records "WHO=i" under the shared key; exits 0 on success. */
static void writer(const char *path, const char *who, int n, int start_fd, int ack_fd) {
  char go;
  if (start_fd >= 0 && read(start_fd, &go, 1) != 1) _exit(3);
  kt__store *s = NULL;
  kt__errbuf eb;
  if (kt__store_open(path, "kt_options.db_path", &s, &eb) != KT_OK) {
    fprintf(stderr, "%s: %s\n", who, eb.msg);
    _exit(1);
  }
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  for (int i = 0; i < n; i++) {
    char cfg[64];
    snprintf(cfg, sizeof cfg, "%s=%d", who, i);
    kt__record r = record(cfg, KT__ST_OK, 1e-6 * (i + 1));
    if (kt__store_put(s, &k, &r, &eb) != KT_OK) {
      fprintf(stderr, "%s: %s\n", who, eb.msg);
      _exit(2);
    }
    if (ack_fd >= 0 && write(ack_fd, "+", 1) != 1) _exit(4);
  }
  kt__store_close(s);
  _exit(0);
}

TEST(two_writers_lose_nothing) {
  const char *path = tmp_path("conc/r.db"); /* neither finds a database: both create it */
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t a = fork();
  if (a == 0) writer(path, "A", 200, go[0], -1);
  pid_t b = fork();
  if (b == 0) writer(path, "B", 200, go[0], -1);
  ASSERT_EQ(write(go[1], "gg", 2), 2);
  int sa, sb;
  ASSERT_EQ(waitpid(a, &sa, 0), a);
  ASSERT_EQ(waitpid(b, &sb, 0), b);
  ASSERT_TRUE(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
  ASSERT_TRUE(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
  kt__store *s = open_ok(path);
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  ASSERT_EQ(count_under(s, &k), 400);
  kt__store_close(s);
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM keys"), 1);
}

TEST(kill9_mid_write_keeps_committed) {
  const char *path = tmp_path("kill.db");
  kt__store_close(open_ok(path));
  int ack[2];
  ASSERT_EQ(pipe(ack), 0);
  pid_t child = fork();
  if (child == 0) {
    close(ack[0]);
    writer(path, "K", 100000, -1, ack[1]);
  }
  close(ack[1]);
  /* Every '+' is a put that has returned: it must be in the file. */
  long acked = 0;
  char c;
  while (acked < 60 && read(ack[0], &c, 1) == 1) acked++;
  ASSERT_EQ(kill(child, SIGKILL), 0);
  while (read(ack[0], &c, 1) == 1) acked++;
  int st;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  kt__store *s = open_ok(path);
  kt__errbuf eb;
  ASSERT_EQ(kt__store_check(s, &eb), KT_OK);
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=4096");
  long n = count_under(s, &k);
  ASSERT_GE(n, acked);
  ASSERT_TRUE(n <= acked + 1); /* at most the one in flight */
  /* And it goes on: the next run writes where the last stopped. */
  kt__record r = record("K=next", KT__ST_OK, 1e-6);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  ASSERT_EQ(count_under(s, &k), n + 1);
  kt__store_close(s);
}

/* ---- energy and objectives (schema 4) ---- */

/* A database as schema 3 left it (winners keyed by the key alone, no energy
 * columns), with a time winner: opening it migrates to 4, the winner there
 * before is the key's time winner, and a key now holds one per objective. */
TEST(schema_3_database_migrates_to_winners_per_objective) {
  const char *path = tmp_path("v3.db");
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=1");
  kt__errbuf eb;
  kt__store *s = open_ok(path);
  kt__record r = record("A=1", KT__ST_OK, 1e-3);
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_TIME, "A=1", 1e-3, &eb), KT_OK);
  kt__store_close(s);
  /* Back to schema 3's tables, as migrations 1 to 3 made them. */
  sql_exec(path, "CREATE TABLE winners3 (key_id INTEGER PRIMARY KEY REFERENCES keys(id) ON DELETE CASCADE,"
                 " config TEXT NOT NULL, seconds REAL, timestamp TEXT NOT NULL);"
                 "INSERT INTO winners3 SELECT key_id, config, seconds, timestamp FROM winners;"
                 "DROP TABLE winners; ALTER TABLE winners3 RENAME TO winners;"
                 "ALTER TABLE results DROP COLUMN energy_j; ALTER TABLE results DROP COLUMN energy_s;"
                 "PRAGMA user_version=3;");
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM pragma_table_info('winners') WHERE name='objective'"), 0);
  s = open_ok(path);
  ASSERT_EQ(sql_int(path, "PRAGMA user_version"), 4);
  char *cfg = NULL;
  double sec = 0;
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "A=1");
  ASSERT_NEAR(sec, 1e-3, 1e-12);
  free(cfg);
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_ENERGY, &cfg, &sec, &eb), KT_NOTFOUND);
  ASSERT_CONTAINS(eb.msg, "no stored energy winner");
  /* An energy winner beside it leaves the time winner as it was. */
  r = record("A=2", KT__ST_OK, 2e-3);
  r.stats.seen = (kt__seen){.energy_known = true, .energy_j = 0.25, .energy_s = 1e-3};
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  ASSERT_EQ(kt__store_set_winner(s, &k, KT_OBJECTIVE_ENERGY, "A=2", 2e-3, &eb), KT_OK);
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_ENERGY, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "A=2");
  free(cfg);
  ASSERT_EQ(kt__store_winner(s, &k, KT_OBJECTIVE_TIME, &cfg, &sec, &eb), KT_OK);
  ASSERT_STREQ(cfg, "A=1");
  free(cfg);
  kt__store_close(s);
  ASSERT_EQ(sql_int(path, "SELECT count(*) FROM winners"), 2);
}

/* A result's energy goes into the database and comes back (a later run
 * ranks reused results by it); a result without energy comes back without. */
TEST(energy_of_a_result_round_trips) {
  const char *path = tmp_path("energy.db");
  kt__device_info d = device("NVIDIA H200");
  kt__store_key k = key_for(&d, "N=1");
  kt__errbuf eb;
  kt__store *s = open_ok(path);
  kt__record r = record("A=1", KT__ST_OK, 1e-3);
  r.stats.seen = (kt__seen){.energy_known = true, .energy_j = 0.75, .energy_s = 2.5e-3};
  ASSERT_EQ(kt__store_put(s, &k, &r, &eb), KT_OK);
  kt__record plain = record("A=2", KT__ST_OK, 2e-3);
  ASSERT_EQ(kt__store_put(s, &k, &plain, &eb), KT_OK);
  collected c = {0};
  ASSERT_EQ(kt__store_each(s, &k, collect, &c, &eb), KT_OK);
  ASSERT_EQ(c.n, 2);
  ASSERT_TRUE(find(&c, "A=1")->stats.seen.energy_known);
  ASSERT_NEAR(kt__seen_watts(&find(&c, "A=1")->stats.seen), 300.0, 1e-9);
  ASSERT_FALSE(find(&c, "A=2")->stats.seen.energy_known);
  collected_free(&c);
  kt__store_close(s);
}
