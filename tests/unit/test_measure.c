/* The timing loop, driven by deterministic fake timers. */
#include <math.h>

#include "harness.h"
#include "measure/measure.h"

/* A fake device: each launch takes PER_LAUNCH seconds scaled by the next
 * factor of NOISE (cycled), or GRAPH_PER_LAUNCH when replayed from a graph
 * (0: the same), and the timer can be told to fail. Each sample reports
 * the next of READINGS (cycled) when there are any. */
typedef struct fake {
  double per_launch, graph_per_launch;
  const double *noise;
  int nnoise;
  int calls, launches, fail_at;
  int first_reps[2];
  int graph_calls, events_calls;
  const kt__reading *readings;
  int nreadings;
  int energy_calls; /* samples asked to read the energy */
} fake;

static kt__status fake_timer(void *ud, kt_timing how, int reps, bool energy, double *seconds, kt__reading *reading,
                             kt__errbuf *eb) {
  fake *f = ud;
  f->energy_calls += energy;
  if (f->calls < 2) f->first_reps[f->calls] = reps;
  if (++f->calls == f->fail_at) return kt__fail(eb, KT__ST_RUNTIME, "device fault at call %d", f->calls);
  double factor = f->nnoise ? f->noise[(f->calls - 1) % f->nnoise] : 1.0;
  bool graph = how == KT_TIMING_GRAPH;
  if (how == KT_TIMING_AUTO) return kt__fail(eb, KT__ST_RUNTIME, "asked to time by AUTO");
  f->graph_calls += graph, f->events_calls += !graph;
  f->launches += reps;
  double per = graph && f->graph_per_launch > 0 ? f->graph_per_launch : f->per_launch;
  *seconds = reps * per * factor;
  if (f->nreadings) *reading = f->readings[(f->calls - 1) % f->nreadings];
  return KT__ST_OK;
}

TEST(steady_timer_scales_reps_and_stops_when_stable) {
  fake f = {.per_launch = 1e-5};
  kt__measure_opts o = {0};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(f.first_reps[0], 1); /* warm-up launches one at a time */
  ASSERT_EQ(f.first_reps[1], 1);
  ASSERT_GE(s.reps * 1e-5, 1e-3 - 1e-12); /* a sample lasts at least 1 ms */
  ASSERT_TRUE(s.reps * 1e-5 < 4e-3);      /* and not far beyond */
  ASSERT_EQ(s.nsamples, 5);               /* no spread: min_samples suffice */
  ASSERT_NEAR(s.median, 1e-5, 1e-15);
  ASSERT_NEAR(s.min, s.max, 1e-15);
  ASSERT_EQ(s.stddev, 0);
  ASSERT_FALSE(s.stopped_early);
}

TEST(slow_kernel_runs_once_per_sample) {
  fake f = {.per_launch = 5e-3};
  kt__measure_opts o = {.max_total_s = 100};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.reps, 1);
  ASSERT_EQ(f.launches, 2 + s.nsamples); /* warm-up + samples, the first scaling sample kept */
}

TEST(noisy_timer_takes_more_samples_and_keeps_median) {
  static const double noise[] = {1.0, 1.3, 0.9, 1.6, 1.05, 0.95, 1.2, 1.0, 0.8, 1.1};
  fake f = {.per_launch = 2e-3, .noise = noise, .nnoise = 10};
  kt__measure_opts o = {.max_samples = 30, .max_total_s = 1000};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(s.nsamples > 5);
  ASSERT_TRUE(s.nsamples <= 30);
  ASSERT_NEAR(s.median, 2e-3 * 1.05, 2e-3 * 0.1);
  ASSERT_NEAR(s.min, 2e-3 * 0.8, 1e-12);
  ASSERT_NEAR(s.max, 2e-3 * 1.6, 1e-12);
  ASSERT_TRUE(s.stddev > 0);
}

TEST(max_samples_caps_a_never_stable_timer) {
  static const double noise[] = {1.0, 3.0};
  fake f = {.per_launch = 2e-3, .noise = noise, .nnoise = 2};
  kt__measure_opts o = {.max_samples = 12, .max_total_s = 1000};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.nsamples, 12);
}

TEST(budget_limits_time_spent) {
  static const double noise[] = {1.0, 3.0};
  fake f = {.per_launch = 0.1, .noise = noise, .nnoise = 2};
  kt__measure_opts o = {.max_total_s = 0.75};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  /* One warm-up launch (0.1 s: long enough), then samples of 0.3, 0.1 and
   * 0.3 s, when 0.8 s are spent. */
  ASSERT_EQ(s.nsamples, 3);
  ASSERT_EQ(f.calls, 4);
}

TEST(clearly_slower_stops_early) {
  fake f = {.per_launch = 1e-4};
  kt__measure_opts o = {.best_s = 0.5e-4};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(s.stopped_early);
  ASSERT_EQ(s.nsamples, 3);
  ASSERT_NEAR(s.median, 1e-4, 1e-15);
}

TEST(close_to_best_is_measured_fully) {
  static const double noise[] = {1.0, 1.3, 0.9, 1.6, 1.05, 0.95, 1.2, 1.0, 0.8, 1.1};
  fake f = {.per_launch = 1e-4, .noise = noise, .nnoise = 10};
  kt__measure_opts o = {.best_s = 1e-4, .max_total_s = 1000};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_FALSE(s.stopped_early);
  ASSERT_TRUE(s.nsamples > 5);
}

TEST(slower_by_a_little_stops_after_min_samples) {
  fake f = {.per_launch = 1.2e-4};
  kt__measure_opts o = {.best_s = 1e-4, .min_samples = 7};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.nsamples, 7);
  ASSERT_TRUE(s.stopped_early);
}

TEST(timer_failure_is_returned) {
  fake f = {.per_launch = 1e-4, .fail_at = 6};
  kt__measure_opts o = {0};
  kt__stats s;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, &eb), KT__ST_RUNTIME);
  ASSERT_CONTAINS(eb.msg, "device fault at call 6");
  ASSERT_EQ(f.calls, 6);
}

TEST(stats_compute) {
  double v[] = {4, 1, 3, 2};
  kt__stats s;
  kt__stats_compute(v, 4, 10, &s);
  ASSERT_NEAR(s.median, 2.5, 0);
  ASSERT_NEAR(s.min, 1, 0);
  ASSERT_NEAR(s.max, 4, 0);
  ASSERT_NEAR(s.mean, 2.5, 1e-15);
  ASSERT_NEAR(s.stddev, sqrt(5.0 / 3.0), 1e-12);
  ASSERT_EQ(s.nsamples, 4);
  ASSERT_EQ(s.reps, 10);
  ASSERT_EQ(v[0], 1); /* sorted in place */
  double one[] = {7};
  kt__stats_compute(one, 1, 1, &s);
  ASSERT_NEAR(s.median, 7, 0);
  ASSERT_EQ(s.stddev, 0);
}

TEST(very_slow_kernel_warms_up_once) {
  fake f = {.per_launch = 0.5};
  kt__measure_opts o = {.max_total_s = 1.2};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  /* One warm-up launch, then samples until the budget is spent. */
  ASSERT_EQ(f.launches, 1 + s.nsamples);
  ASSERT_EQ(s.nsamples, 2);
  ASSERT_NEAR(s.median, 0.5, 1e-12);
}

TEST(reps_start_from_the_warm_up_estimate) {
  fake f = {.per_launch = 1e-6};
  kt__measure_opts o = {.min_samples = 3, .timing = KT_TIMING_EVENTS};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  /* Two warm-ups, one scaling sample straight at the estimate, two more. */
  ASSERT_EQ(f.calls, 5);
  ASSERT_EQ(s.reps, 1024); /* capped growth per step: 1024 launches = 1.02 ms */
}

/* A launch timed by the caller (the verified run) is the first sample when
 * it is long enough, else it sets the first sample's launch count. */
TEST(first_launch_from_the_caller) {
  fake f = {.per_launch = 5e-3};
  kt__measure_opts o = {.max_total_s = 100, .first_s = 5e-3};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.reps, 1);
  ASSERT_EQ(f.launches, s.nsamples - 1); /* one sample came from the caller */
  ASSERT_NEAR(s.median, 5e-3, 1e-15);
  fake g = {.per_launch = 1e-5};
  kt__measure_opts short_o = {.max_total_s = 100, .first_s = 1e-5};
  ASSERT_EQ(kt__measure(&short_o, fake_timer, &g, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(g.first_reps[0] >= 100); /* straight to about 1 ms per sample */
  ASSERT_GE(s.reps * 1e-5, 1e-3 - 1e-12);
  ASSERT_NEAR(s.median, 1e-5, 1e-15);
}

/* Finalist rounds: three candidates, three rounds each (stride 4, as the
 * tuner's array for 4 planned rounds). */
static kt__rounds_verdict verdict3(const double rows[3][4]) {
  const bool counts[3] = {true, true, true};
  return kt__rounds_verdict_of(&rows[0][0], 4, 3, 3, counts, NULL);
}

TEST(rounds_apart_when_the_leaders_slowest_beats_the_others_fastest) {
  const double rows[3][4] = {{1.00, 1.05, 1.02}, {1.10, 1.20, 1.06}, {2.0, 2.1, 2.2}};
  ASSERT_EQ(verdict3(rows), KT__ROUNDS_APART);
}

/* A second candidate within the leader's interquartile range (1.01 - 1.00
 * = 0.01 here, 1% of its median) is tied: more rounds could gain at most that. */
TEST(rounds_tied_within_the_leaders_interquartile_range) {
  const double rows[3][4] = {{1.00, 1.01, 1.02}, {1.012, 1.006, 1.03}, {2.0, 2.1, 2.2}};
  ASSERT_EQ(verdict3(rows), KT__ROUNDS_TIED);
}

/* Overlapping samples but a median beyond the leader's spread: open. */
TEST(rounds_open_when_another_is_neither_apart_nor_tied) {
  const double rows[3][4] = {{1.00, 1.001, 1.002}, {0.999, 1.03, 1.04}, {2.0, 2.1, 2.2}};
  ASSERT_EQ(verdict3(rows), KT__ROUNDS_OPEN);
}

/* A leader whose spread passes KT__TIE_MAX_SPREAD bounds nothing: the same
 * medians as a tie, but with 10% noise the rounds go on. */
TEST(rounds_a_noisy_leader_ties_with_no_one) {
  const double rows[3][4] = {{0.90, 1.00, 1.10}, {1.09, 1.005, 0.95}, {2.0, 2.1, 2.2}};
  ASSERT_EQ(verdict3(rows), KT__ROUNDS_OPEN);
}

/* A candidate that takes no part (failed in the rounds) is ignored. */
TEST(rounds_ignore_candidates_not_counted) {
  const double rows[3][4] = {{1.00, 1.001, 1.002}, {0.999, 1.03, 1.04}, {2.0, 2.1, 2.2}};
  const bool counts[3] = {true, false, true};
  double spread;
  ASSERT_EQ(kt__rounds_verdict_of(&rows[0][0], 4, 3, 3, counts, &spread), KT__ROUNDS_APART);
  ASSERT_NEAR(spread, 0.001 / 1.001, 1e-9);
  const bool none[3] = {false, false, false};
  ASSERT_EQ(kt__rounds_verdict_of(&rows[0][0], 4, 3, 3, none, &spread), KT__ROUNDS_OPEN);
  ASSERT_NEAR(spread, 0, 0);
}

TEST(interquartile_of_samples) {
  double v[5] = {5, 1, 4, 2, 3};
  ASSERT_NEAR(kt__interquartile(v, 5), 2.0, 1e-12); /* quartiles 2 and 4 */
  double three[3] = {1.02, 1.00, 1.01};
  ASSERT_NEAR(kt__interquartile(three, 3), 0.01, 1e-12); /* half the range */
}

/* --- the timing method (issue 27) --- */

TEST(timing_choice_keeps_graph_only_where_launch_overhead_shows) {
  /* elementwise.cu at N = 16384 on the H200: 3.6 us per launch by events, 1 us from a graph */
  ASSERT_EQ(kt__timing_choose(1000, 3.6e-6, 1.0e-6), KT_TIMING_GRAPH);
  ASSERT_EQ(kt__timing_choose(10, 1.0e-4, 1.0e-4), KT_TIMING_EVENTS);  /* a long kernel: no gaps */
  ASSERT_EQ(kt__timing_choose(10, 1.02e-4, 1.0e-4), KT_TIMING_EVENTS); /* within KT__GRAPH_GAIN_MIN */
  ASSERT_EQ(kt__timing_choose(10, 1.05e-4, 1.0e-4), KT_TIMING_GRAPH);
  ASSERT_EQ(kt__timing_choose(1, 3.6e-6, 1.0e-6), KT_TIMING_EVENTS); /* one launch: nothing to amortise */
  ASSERT_EQ(kt__timing_choose(10, 3.6e-6, 0), KT_TIMING_EVENTS);     /* a graph sample that said nothing */
  ASSERT_EQ(kt__timing_choose(10, NAN, 1e-6), KT_TIMING_EVENTS);
}

TEST(auto_times_a_launch_bound_kernel_from_a_graph) {
  fake f = {.per_launch = 4e-6, .graph_per_launch = 1e-6};
  kt__measure_opts o = {.max_total_s = 100};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_GRAPH);
  ASSERT_NEAR(s.median, 1e-6, 1e-12); /* the kernel, not the launch */
  /* Scaled again from the graph's shorter sample: each still lasts 1 ms. */
  ASSERT_TRUE(s.reps * 1e-6 >= 1e-3);
  ASSERT_TRUE(f.graph_calls >= s.nsamples);
}

TEST(auto_keeps_events_for_a_kernel_longer_than_its_launch) {
  fake f = {.per_launch = 5e-5, .graph_per_launch = 5e-5};
  kt__measure_opts o = {.max_total_s = 100};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_EVENTS);
  ASSERT_EQ(f.graph_calls, 1); /* the one comparison sample */
  ASSERT_NEAR(s.median, 5e-5, 1e-12);
}

/* From KT__GRAPH_USELESS_S a launch on, no graph sample at all, even where
 * a (fake) graph would be faster: no real gap between launches that long
 * is. */
TEST(auto_takes_no_graph_sample_for_launches_of_a_tenth_of_a_millisecond) {
  fake f = {.per_launch = KT__GRAPH_USELESS_S, .graph_per_launch = KT__GRAPH_USELESS_S / 2};
  kt__measure_opts o = {.max_total_s = 100};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_EVENTS);
  ASSERT_EQ(f.graph_calls, 0);
  ASSERT_TRUE(s.reps > 1);
  fake g = {.per_launch = KT__GRAPH_USELESS_S * 0.9, .graph_per_launch = KT__GRAPH_USELESS_S / 2};
  ASSERT_EQ(kt__measure(&o, fake_timer, &g, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_GRAPH); /* just under it: compared, and the graph kept */
  ASSERT_TRUE(g.graph_calls >= 1);
}

TEST(auto_takes_no_graph_sample_when_one_launch_fills_a_sample) {
  fake f = {.per_launch = 5e-3, .graph_per_launch = 1e-3};
  kt__measure_opts o = {.max_total_s = 100, .first_s = 5e-3};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_EVENTS);
  ASSERT_EQ(f.graph_calls, 0);
  ASSERT_EQ(s.reps, 1);
}

TEST(graph_asked_for_times_every_sample_from_a_graph) {
  fake f = {.per_launch = 4e-6, .graph_per_launch = 1e-6};
  kt__measure_opts o = {.max_total_s = 100, .timing = KT_TIMING_GRAPH};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_GRAPH);
  ASSERT_EQ(f.events_calls, 0);
  ASSERT_NEAR(s.median, 1e-6, 1e-12);
}

TEST(events_asked_for_never_builds_a_graph) {
  fake f = {.per_launch = 4e-6, .graph_per_launch = 1e-6};
  kt__measure_opts o = {.max_total_s = 100, .timing = KT_TIMING_EVENTS};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_EQ(s.timing, KT_TIMING_EVENTS);
  ASSERT_EQ(f.graph_calls, 0);
  ASSERT_NEAR(s.median, 4e-6, 1e-12);
}

TEST(readings_are_gathered_over_the_samples) {
  kt__reading rs[] = {
      {.clock_known = true,
       .sm_clock_mhz = 1980,
       .throttle_known = true,
       .throttle_reasons = 0x1,
       .power_known = true,
       .power_w = 300,
       .temp_known = true,
       .temp_c = 40},
      {.clock_known = true,
       .sm_clock_mhz = 1755,
       .throttle_known = true,
       .throttle_reasons = 0x4,
       .power_known = true,
       .power_w = 650,
       .temp_known = true,
       .temp_c = 52},
  };
  fake f = {.per_launch = 1e-4, .readings = rs, .nreadings = 2};
  kt__measure_opts o = {.max_total_s = 100, .timing = KT_TIMING_EVENTS, .min_samples = 4};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(s.seen.clock_known && s.seen.power_known && s.seen.temp_known && s.seen.throttle_known);
  ASSERT_EQ(s.seen.sm_clock_min_mhz, 1755);
  ASSERT_EQ(s.seen.sm_clock_max_mhz, 1980);
  ASSERT_EQ(s.seen.throttle_reasons, 0x5);
  ASSERT_NEAR(s.seen.power_max_w, 650, 1e-9);
  ASSERT_EQ(s.seen.temp_max_c, 52);
  /* kt__stats_compute (the finalist rounds) keeps them */
  double again[] = {1e-4, 2e-4};
  kt__stats_compute(again, 2, 3, &s);
  ASSERT_EQ(s.seen.sm_clock_min_mhz, 1755);
  ASSERT_EQ(s.timing, KT_TIMING_EVENTS);
}

TEST(no_readings_leave_every_field_unknown) {
  fake f = {.per_launch = 1e-4};
  kt__measure_opts o = {.max_total_s = 100, .timing = KT_TIMING_EVENTS};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_FALSE(s.seen.clock_known || s.seen.power_known || s.seen.temp_known || s.seen.throttle_known);
}

/* The interquartile range of the samples, what a tie is judged by. */
TEST(stats_keep_the_interquartile_range) {
  double samples[5] = {5, 1, 3, 2, 4};
  kt__stats s = {0};
  kt__stats_compute(samples, 5, 1, &s);
  ASSERT_NEAR(s.iqr, 2.0, 1e-12); /* 4 - 2 */
}

/* A runner-up whose median lies within the winner's interquartile range is
 * a tie, however wide that range; one beyond it is not. */
TEST(within_noise_is_within_the_winners_interquartile_range) {
  kt__stats winner = {.median = 1.00, .iqr = 0.20}, close = {.median = 1.15}, far = {.median = 1.25};
  ASSERT_TRUE(kt__within_noise(&winner, &close));
  ASSERT_FALSE(kt__within_noise(&winner, &far));
  kt__stats steady = {.median = 1.00, .iqr = 0};
  ASSERT_FALSE(kt__within_noise(&steady, &close));
}

/* A busy application beside the tuning: every third sample overlaps its
 * kernel and takes 60% longer; the rest are within 1% of each other. */
TEST(contended_samples_are_told_from_quiet_ones) {
  double quiet[] = {1.00, 1.01, 0.995, 1.005, 1.0};
  double busy[] = {1.00, 1.6, 1.01, 0.995, 1.62, 1.0};
  double two[] = {1.0, 2.0};
  ASSERT_FALSE(kt__samples_contended(quiet, 5));
  ASSERT_TRUE(kt__samples_contended(busy, 6));
  ASSERT_FALSE(kt__samples_contended(two, 2)); /* too few to say */
  kt__stats s = {0};
  kt__stats_compute(busy, 6, 1, &s);
  ASSERT_TRUE(s.contended);
  kt__stats_compute(quiet, 5, 1, &s);
  ASSERT_FALSE(s.contended);
}

TEST(contended_measurement_takes_more_samples_and_keeps_the_gaps_median) {
  static const double noise[] = {1.0, 1.0, 1.6, 1.0, 1.005, 1.6, 0.995, 1.0, 1.6};
  fake f = {.per_launch = 2e-3, .noise = noise, .nnoise = 9};
  kt__measure_opts o = {.min_samples = 3, .max_samples = 20, .max_total_s = 1000};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(s.contended);
  ASSERT_GE(s.nsamples, KT__CONTENDED_SAMPLES);
  ASSERT_NEAR(s.median, 2e-3, 2e-3 * 0.01); /* within 1% of the quiet device's */
  kt__sbuf b = {0};
  kt__measurement_json(&b, NULL, &s);
  ASSERT_TRUE(strstr(b.s, "\"contended\": true, \"spread\": 0.6") != NULL);
  kt__sbuf_free(&b);
}

TEST(quiet_measurement_is_not_marked) {
  fake f = {.per_launch = 2e-3};
  kt__measure_opts o = {.min_samples = 3, .max_samples = 20, .max_total_s = 1000};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_FALSE(s.contended);
  ASSERT_EQ(s.nsamples, 3);
  kt__sbuf b = {0};
  kt__measurement_json(&b, NULL, &s);
  ASSERT_TRUE(strstr(b.s, "contended") == NULL);
  kt__sbuf_free(&b);
}

/* Energy over the samples: the joules and the seconds of each sample's
 * counter reads add up, their ratio is the mean power; samples without a
 * reading leave it as it is, and the objectives score from it. */
TEST(energy_of_the_samples_gives_the_mean_power_and_the_scores) {
  kt__seen seen = {0};
  ASSERT_TRUE(isnan(kt__seen_watts(&seen)));
  ASSERT_TRUE(isinf(kt__objective_score(KT_OBJECTIVE_ENERGY, 1e-3, &seen)));
  ASSERT_NEAR(kt__objective_score(KT_OBJECTIVE_TIME, 1e-3, &seen), 1e-3, 1e-15);
  kt__seen_add(&seen, &(kt__reading){.energy_known = true, .energy_j = 0.3, .energy_s = 1e-3});
  kt__seen_add(&seen, &(kt__reading){.energy_known = false, .energy_j = 99, .energy_s = 1});
  kt__seen_add(&seen, &(kt__reading){.energy_known = true, .energy_j = 0.5, .energy_s = 3e-3});
  ASSERT_NEAR(kt__seen_watts(&seen), 200.0, 1e-9);
  ASSERT_NEAR(kt__objective_score(KT_OBJECTIVE_ENERGY, 2e-6, &seen), 4e-4, 1e-12);
  ASSERT_NEAR(kt__objective_score(KT_OBJECTIVE_EDP, 2e-6, &seen), 8e-10, 1e-18);
  kt__stats s = {.median = 2e-6, .reps = 100, .nsamples = 2, .timing = KT_TIMING_GRAPH, .seen = seen};
  kt__sbuf b = {0};
  kt__measurement_json(&b, NULL, &s);
  ASSERT_CONTAINS(b.s, "\"energy_per_launch_j\": 0.0004, \"power_mean_w\": 200");
  kt__sbuf_free(&b);
  ASSERT_EQ(kt__objective_from_name("edp"), KT_OBJECTIVE_EDP);
  ASSERT_EQ(kt__objective_from_name("joules"), -1);
  ASSERT_STREQ(kt__objective_name(KT_OBJECTIVE_ENERGY), "energy");
}

/* A sample read with the SM clock below its maximum and a thermal or
 * hardware slowdown reason was throttled; the software power cap alone is
 * the kernel's own steady state; another process in the device's list
 * shares it; a device that says nothing disturbs nothing. */
TEST(disturbance_of_a_sample_from_its_reading) {
  kt__reading r = {.clock_known = true, .sm_clock_mhz = 1500, .max_clock_mhz = 1980, .throttle_known = true};
  r.throttle_reasons = 0x20; /* software thermal slowdown */
  ASSERT_EQ(kt__reading_disturbance(&r, 0), KT__DISTURBED_THROTTLED);
  r.throttle_reasons = 0x4; /* the software power cap */
  ASSERT_EQ(kt__reading_disturbance(&r, 0), 0);
  r.throttle_reasons = 0x80 | 0x4; /* the hardware power brake */
  ASSERT_EQ(kt__reading_disturbance(&r, 0), KT__DISTURBED_THROTTLED);
  r.sm_clock_mhz = 1980; /* at its maximum: whatever the reasons, not slowed */
  ASSERT_EQ(kt__reading_disturbance(&r, 0), 0);
  r.max_clock_mhz = 0; /* no maximum known: nothing judged */
  r.sm_clock_mhz = 1000;
  ASSERT_EQ(kt__reading_disturbance(&r, 0), 0);
  kt__reading shared = {.others_known = true, .other_processes = 1};
  ASSERT_EQ(kt__reading_disturbance(&shared, 0), KT__DISTURBED_SHARED);
  shared.other_processes = 0;
  ASSERT_EQ(kt__reading_disturbance(&shared, 0), 0);
  ASSERT_EQ(kt__reading_disturbance(&(kt__reading){0}, 0), 0);
  ASSERT_STREQ(kt__disturbance_words(KT__DISTURBED_THROTTLED | KT__DISTURBED_SHARED), "throttled, shared");
}

static const kt__reading clean = {.clock_known = true, .sm_clock_mhz = 1980, .max_clock_mhz = 1980};
static const kt__reading hot = {
    .clock_known = true, .sm_clock_mhz = 1200, .max_clock_mhz = 1980, .throttle_known = true, .throttle_reasons = 0x40};

/* Now and then a throttled sample: each is taken again, none is kept, and
 * the measurement is valid. */
TEST(a_disturbed_sample_is_taken_again) {
  const kt__reading readings[] = {clean, clean, hot, clean, clean, clean, hot};
  fake f = {.per_launch = 1e-5, .readings = readings, .nreadings = 7};
  kt__measure_opts o = {0};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_GE(s.seen.retaken_samples, 1);
  ASSERT_EQ(s.seen.disturbed_samples, 0);
  ASSERT_TRUE(kt__seen_valid(&s.seen));
  ASSERT_EQ(s.seen.disturbance, KT__DISTURBED_THROTTLED); /* what was seen, though none was kept */
  ASSERT_EQ(s.nsamples, 5);
  kt__sbuf b = {0};
  kt__measurement_json(&b, NULL, &s);
  ASSERT_CONTAINS(b.s, "\"valid\": true");
  kt__sbuf_free(&b);
}

/* Throttled throughout, with the time allowed spent: the samples kept are
 * disturbed, the measurement is not valid and says why, and it still has a
 * time (never a zero median that would win). */
TEST(disturbed_throughout_is_not_valid) {
  fake f = {.per_launch = 0.1, .readings = &hot, .nreadings = 1};
  kt__measure_opts o = {.max_total_s = 0.75};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_GE(s.nsamples, 1);
  ASSERT_EQ(s.seen.disturbed_samples, s.nsamples);
  ASSERT_NEAR(s.median, 0.1, 1e-12);
  ASSERT_FALSE(kt__seen_valid(&s.seen));
  kt__sbuf b = {0};
  kt__measurement_json(&b, NULL, &s);
  ASSERT_CONTAINS(b.s, "\"valid\": false, \"disturbed_samples\": ");
  ASSERT_CONTAINS(b.s, "\"disturbance\": \"throttled\"");
  kt__sbuf_free(&b);
}

/* A counter that moves in steps (NVML's, about every 100 ms) says nothing
 * over a few milliseconds of samples: energy over a shorter span than the
 * device's window is unknown, never 0 J, and a time tuning does not ask the
 * backend to read it (each read cost milliseconds); under an energy
 * objective the samples go on until their reads span the window. */
TEST(energy_is_known_only_over_the_devices_window) {
  static const kt__reading step = {.energy_known = true, .energy_j = 0.2, .energy_s = 2e-3};
  fake f = {.per_launch = 2e-3, .readings = &step, .nreadings = 1};
  kt__measure_opts o = {.min_samples = 3, .max_samples = 20, .max_total_s = 1000, .energy_window_s = 0.1};
  kt__stats s;
  ASSERT_EQ(kt__measure(&o, fake_timer, &f, &s, NULL), KT__ST_OK);
  ASSERT_FALSE(s.seen.energy_known); /* 3-4 samples of 2 ms: 8 ms of reads */
  ASSERT_TRUE(isnan(kt__seen_watts(&s.seen)));
  ASSERT_EQ(f.energy_calls, 0); /* samples of 2 ms never span a quarter window: no counter read asked */
  int calls_time_only = f.calls;
  fake g = {.per_launch = 2e-3, .readings = &step, .nreadings = 1};
  o.energy_wanted = true;
  ASSERT_EQ(kt__measure(&o, fake_timer, &g, &s, NULL), KT__ST_OK);
  ASSERT_TRUE(s.seen.energy_known);
  ASSERT_GE(s.seen.energy_s, 0.1);
  ASSERT_NEAR(kt__seen_watts(&s.seen), 100.0, 1e-9);
  ASSERT_TRUE(g.calls > calls_time_only);
  ASSERT_EQ(g.energy_calls, g.calls); /* an energy objective reads it around every sample */
  ASSERT_TRUE(s.nsamples <= 20);      /* the samples past max_samples give energy only */
}
