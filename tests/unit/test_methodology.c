/* The autotuning_methodology score (src/search/methodology.c) against the
 * figures the package itself (autotuning_methodology 1.1.0) gives for the
 * same file and the same repeats (bench/methodology_check.py; the commands
 * are in docs/SEARCH.md). */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "search/methodology.h"
#include "search/strategies.h"

static kt__recorded *load_shipped(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/t4/%s", KTUNE_SOURCE_DIR, name);
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  return r;
}

/* The package on convolution_A4000: SearchspaceStatistics'
 * cutoff_point_fevals_time_start_end(0.01, 0.95) and
 * RandomSearchCalculatedBaseline's curve over 1000 instants of the window. */
TEST(methodology_window_and_random_search_match_the_package) {
  kt__recorded *r = load_shipped("convolution_A4000.json.gz");
  kt__method_window w;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__method_window_of(r, KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, &eb), KT_OK);
  ASSERT_EQ(w.fevals_start, 2);
  ASSERT_EQ(w.fevals_end, 323);
  ASSERT_NEAR(w.median_cost, 2.420634, 1e-6);
  ASSERT_NEAR(w.t_start, 4.8413, 1e-4);
  ASSERT_NEAR(w.t_end, 781.8648, 1e-4);
  enum { N = KT__METHOD_RESOLUTION };
  static double times[N], curve[N];
  for (int k = 0; k < N; k++) times[k] = w.t_start + (w.t_end - w.t_start) * k / (N - 1);
  kt__method_random_curve(r, &w, times, N, curve);
  static const int at[] = {0, 1, 10, 100, 500, 999};
  static const double package[] = {2.51724105, 2.44077857, 1.99759447, 1.48945839, 1.28980299, 1.17311599};
  for (int i = 0; i < 6; i++) ASSERT_NEAR(curve[at[i]], package[i], 1e-6 * package[i]); /* times kept as floats */
  kt__recorded_free(r);
}

/* 20 repeats of ils and of random search (seed 1), scored here and, from
 * the same repeats, by the package: 0.7046, 0.7031, 0.6989, 0.7112 for ils
 * in four runs (its bagged isotonic fit draws random subsamples), 0.0623
 * and 0.0657 for random search. Ours is deterministic. */
TEST(methodology_scores_repeats_as_the_package_does) {
  kt__recorded *r = load_shipped("convolution_A4000.json.gz");
  kt__method_result a, b;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__method_score(r, &kt__strategy_ils, 20, 1, &a, &eb), KT_OK);
  ASSERT_EQ(kt__method_score(r, &kt__strategy_ils, 20, 1, &b, &eb), KT_OK);
  ASSERT_TRUE(a.score == b.score);
  ASSERT_NEAR(a.score, 0.7045, 0.01);
  ASSERT_EQ(kt__method_score(r, &kt__strategy_random, 20, 1, &a, &eb), KT_OK);
  ASSERT_NEAR(a.score, 0.064, 0.01);
  kt__recorded_free(r);
}

/* Costs are the sum of a record's "times" in its metadata.timeunit, a
 * failure's included; a file without times cannot be scored. */
static const char *const timed_t4 =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"milliseconds\"}, \"results\": ["
    "{\"configuration\": {\"P\": 1}, \"invalidity\": \"correct\", \"times\": {\"compilation\": 1000,"
    " \"runtimes\": [10, 20], \"framework\": 5}, \"measurements\": [{\"name\": \"time\", \"value\": 15}]},"
    "{\"configuration\": {\"P\": 2}, \"invalidity\": \"compile\", \"times\": {\"compilation\": 3000},"
    " \"measurements\": [{\"name\": \"time\", \"value\": \"CompilationFailedConfig\"}]},"
    "{\"configuration\": {\"P\": 4}, \"invalidity\": \"correct\", \"measurements\": [{\"name\": \"time\", \"value\": "
    "5}]}"
    "]}";

TEST(methodology_costs_come_from_the_recorded_times) {
  char path[] = "/tmp/kt_test_method_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(write(fd, timed_t4, strlen(timed_t4)), (long long)strlen(timed_t4));
  close(fd);
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  unlink(path);
  int64_t v[1] = {1};
  ASSERT_NEAR(kt__recorded_cost(r, kt__space_index_of(kt__recorded_space(r), v)), 1.035, 1e-6); /* kept as a float */
  v[0] = 2;
  ASSERT_NEAR(kt__recorded_cost(r, kt__space_index_of(kt__recorded_space(r), v)), 3.0, 1e-6);
  v[0] = 4;
  ASSERT_TRUE(isnan(kt__recorded_cost(r, kt__space_index_of(kt__recorded_space(r), v))));
  kt__recorded_free(r);
}

TEST(methodology_rejects_files_without_times) {
  char path[] = "/tmp/kt_test_method_XXXXXX";
  const char *text = "{\"results\": [{\"configuration\": {\"P\": 1}, \"invalidity\": \"correct\","
                     " \"measurements\": [{\"name\": \"time\", \"value\": 2}]},"
                     "{\"configuration\": {\"P\": 2}, \"invalidity\": \"correct\","
                     " \"measurements\": [{\"name\": \"time\", \"value\": 1}]}]}";
  int fd = mkstemp(path);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
  close(fd);
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  unlink(path);
  kt__method_window w;
  ASSERT_EQ(kt__method_window_of(r, KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, &eb), KT_INVALID);
  ASSERT_TRUE(strstr(eb.msg, "no compile or run times") != NULL);
  kt__recorded_free(r);
}
