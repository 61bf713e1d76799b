/* The result object and its two renderings: the closing table and JSON. */
#include "result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

kt_result *kt__result_create(const char *kernel, const char *file, const char *const *names, int nnames, int ntune) {
  kt_result *r = kt__xcalloc(1, sizeof *r);
  r->kernel = kt__xstrdup(kernel);
  r->file = kt__xstrdup(file);
  r->names = kt__xcalloc((size_t)nnames + 1, sizeof *r->names);
  for (int i = 0; i < nnames; i++) r->names[i] = kt__xstrdup(names[i]);
  r->nnames = nnames;
  r->ntune = ntune;
  r->winner = -1;
  r->runner_up = -1;
  r->default_trial = -1;
  r->valid_size = UINT64_MAX;
  return r;
}

kt__trial *kt__result_add(kt_result *r, const int64_t *values, int stage) {
  if (r->ntrials == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    r->trials = kt__xreallocarray(r->trials, (size_t)r->cap, sizeof *r->trials);
  }
  kt__trial *t = &r->trials[r->ntrials];
  memset(t, 0, sizeof *t);
  t->id = (uint64_t)r->ntrials++;
  memcpy(t->values, values, (size_t)r->nnames * sizeof *values);
  t->stage = stage;
  t->status = KT__ST_PENDING;
  return t;
}

void kt_result_destroy(kt_result *r) {
  if (!r) return;
  for (int i = 0; i < r->ntrials; i++) {
    free(r->trials[i].message);
    free(r->trials[i].output);
    free(r->trials[i].artifact);
  }
  free(r->trials);
  for (int i = 0; i < r->nnames; i++) free(r->names[i]);
  free(r->names);
  free(r->kernel);
  free(r->file);
  free(r->sizes);
  free(r->strategy);
  free(r->strategy_reason);
  free(r->db_path);
  free(r->not_cached);
  free(r);
}

void kt__result_config_string(const kt_result *r, const kt__trial *t, kt__sbuf *out) {
  kt__config_format((const char *const *)r->names, t->values, r->nnames, "", out);
}

void kt__trial_why(const kt__trial *t, char *out, size_t size) {
  const char *m = t->message ? t->message : "";
  /* A compiler's log leads with where it was included from: its first
   * error is the line that says why. */
  const char *error = strstr(m, "error:");
  if (error) {
    while (error > m && error[-1] != '\n') error--;
    m = error;
  }
  while (*m == '\n' || *m == ' ') m++;
  int line = (int)strcspn(m, "\n"), n = line > KT__WHY_WIDTH ? KT__WHY_WIDTH : line;
  snprintf(out, size, "%.*s%s", n, m, line > n ? "..." : "");
}

double kt__trial_seconds(const kt__trial *t) { return t->final_s > 0 ? t->final_s : t->stats.median; }

double kt__trial_score(const kt_result *r, const kt__trial *t) {
  return kt__objective_score(r->objective, kt__trial_seconds(t), &t->stats.seen);
}

static const kt_result *rank_subject;
static int by_objective(const void *a, const void *b) {
  const kt__trial *x = &rank_subject->trials[*(const int *)a], *y = &rank_subject->trials[*(const int *)b];
  bool fx = x->final_s > 0, fy = y->final_s > 0;
  if (fx != fy) return fy - fx;
  double ta = kt__trial_score(rank_subject, x), tb = kt__trial_score(rank_subject, y);
  return (ta > tb) - (ta < tb);
}

int kt__result_ranked(const kt_result *r, int *order, int max) {
  int n = 0;
  int *all = kt__xcalloc((size_t)r->ntrials + 1, sizeof *all);
  for (int i = 0; i < r->ntrials; i++)
    if (r->trials[i].status == KT__ST_OK && !r->trials[i].reference_only) all[n++] = i;
  rank_subject = r; /* qsort has no user pointer; results are ranked on one thread */
  qsort(all, (size_t)n, sizeof *all, by_objective);
  if (n > max) n = max;
  memcpy(order, all, (size_t)n * sizeof *order);
  free(all);
  return n;
}

int kt_result_winner_value(const kt_result *r, const char *name, int64_t *value) {
  if (!r || r->winner < 0) return KT_NOTFOUND;
  for (int i = 0; i < r->nnames; i++)
    if (strcmp(r->names[i], name) == 0) {
      *value = r->trials[r->winner].values[i];
      return KT_OK;
    }
  return KT_NOTFOUND;
}

double kt_result_winner_seconds(const kt_result *r) {
  return r && r->winner >= 0 ? kt__trial_seconds(&r->trials[r->winner]) : -1.0;
}

/* "1.234 ms" style, three significant digits. */
static void format_time(double s, char *buf, size_t n) {
  if (!(s > 0)) snprintf(buf, n, "-");
  else if (s < 1e-6) snprintf(buf, n, "%.3g ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, n, "%.3g us", s * 1e6);
  else if (s < 1) snprintf(buf, n, "%.3g ms", s * 1e3);
  else snprintf(buf, n, "%.3g s", s);
}

/* PER_S in the unit that gives readable digits (41.9 GFLOP/s, not 0.0419 TFLOP/s). */
static void rate(kt__sbuf *b, double per_s, const char *unit) {
  static const struct {
    double scale;
    const char *prefix;
  } units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (per_s >= units[i].scale || i + 1 == sizeof units / sizeof units[0]) {
      kt__sbuf_printf(b, "  %.4g %s%s", per_s / units[i].scale, units[i].prefix, unit);
      return;
    }
}

static void throughput(const kt_result *r, double s, kt__sbuf *b) {
  if (!(s > 0)) return;
  if (r->flops > 0) {
    double tf = r->flops / s / 1e12;
    rate(b, r->flops / s, "FLOP/s");
    if (r->device.peak_gflops > 0) kt__sbuf_printf(b, " (%.0f%% of fp32 peak)", 100 * tf * 1e3 / r->device.peak_gflops);
  }
  if (r->bytes > 0) {
    double gb = r->bytes / s / 1e9;
    rate(b, r->bytes / s, "B/s");
    if (r->device.peak_gbps > 0) kt__sbuf_printf(b, " (%.0f%% of peak)", 100 * gb / r->device.peak_gbps);
  }
}

/* "  12.3 uJ 402 W": a launch's energy and the mean power, where measured. */
static void energy(const kt__trial *t, kt__sbuf *b) {
  double w = kt__seen_watts(&t->stats.seen), j = w * kt__trial_seconds(t);
  if (!(w >= 0) || !(j >= 0)) return;
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1, "J"}, {1e-3, "mJ"}, {1e-6, "uJ"}, {1e-9, "nJ"}};
  size_t i = 0;
  while (i + 1 < sizeof units / sizeof units[0] && j < units[i].scale) i++;
  kt__sbuf_printf(b, "  %.3g %s %.0f W", j / units[i].scale, units[i].unit, w);
}

static void table_row(const kt_result *r, const char *label, const kt__trial *t, FILE *out) {
  kt__sbuf cfg = {0}, tp = {0};
  char med[32], mn[32];
  kt__result_config_string(r, t, &cfg);
  format_time(kt__trial_seconds(t), med, sizeof med);
  format_time(t->stats.min, mn, sizeof mn);
  energy(t, &tp);
  throughput(r, kt__trial_seconds(t), &tp);
  if (!kt__seen_valid(&t->stats.seen))
    kt__sbuf_printf(&tp, "  [not valid: %d samples %s]", t->stats.seen.disturbed_samples,
                    kt__disturbance_words(t->stats.seen.disturbance));
  double spread = t->stats.median > 0 ? 100 * t->stats.stddev / t->stats.median : 0;
  fprintf(out, "  %-8s %10s  min %10s  +-%4.1f%%  %s%s\n", label, med, mn, spread, cfg.s, tp.s ? tp.s : "");
  kt__sbuf_free(&cfg);
  kt__sbuf_free(&tp);
}

static void count_statuses(const kt_result *r, int counts[KT__ST_COUNT]) {
  memset(counts, 0, sizeof(int) * KT__ST_COUNT);
  for (int i = 0; i < r->ntrials; i++) counts[r->trials[i].status]++;
}

/* How many builds the binary cache served each way (KT__BIN_* order). */
static void count_builds(const kt_result *r, int counts[4]) {
  memset(counts, 0, sizeof(int) * 4);
  for (int i = 0; i < r->ntrials; i++) counts[r->trials[i].compile_use]++;
}

static void print_binary_cache(const kt_result *r, FILE *out) {
  int n[4];
  count_builds(r, n);
  if (!kt__bincache_on(&r->bincache)) {
    fprintf(out, "binary cache %s: %d compiled\n", r->bincache.off_reason ? r->bincache.off_reason : "off",
            n[KT__BIN_COMPILED]);
    return;
  }
  fprintf(out, "binary cache: %d cached, %d compiled", n[KT__BIN_CACHED], n[KT__BIN_COMPILED]);
  if (n[KT__BIN_REBUILT]) fprintf(out, ", %d rebuilt (a bad entry was removed)", n[KT__BIN_REBUILT]);
  fprintf(out, " (%s)\n", r->bincache.dir);
  if (r->not_cached) fprintf(out, "binary cache: this kernel's builds are not kept: %s\n", r->not_cached);
}

static void json_binary_cache(const kt_result *r, kt__sbuf *b) {
  int n[4];
  count_builds(r, n);
  kt__sbuf_printf(b, ",\n  \"binary_cache\": {\"path\": ");
  if (kt__bincache_on(&r->bincache)) kt__sbuf_json_string(b, r->bincache.dir);
  else
    kt__sbuf_printf(b, "null, \"off\": "),
        kt__sbuf_json_string(b, r->bincache.off_reason ? r->bincache.off_reason : "off");
  kt__sbuf_printf(b, ", \"cached\": %d, \"compiled\": %d, \"rebuilt\": %d", n[KT__BIN_CACHED], n[KT__BIN_COMPILED],
                  n[KT__BIN_REBUILT]);
  if (r->not_cached) {
    kt__sbuf_printf(b, ", \"not_cached\": ");
    kt__sbuf_json_string(b, r->not_cached);
  }
  kt__sbuf_printf(b, "}");
}

static void print_time_budget(const kt_result *r, FILE *out) {
  fprintf(out, "time budget %g s: ", r->budget_s);
  if (r->reference_over_budget) fprintf(out, "spent by the default configuration, which is always run\n");
  else if (!r->budget_ran_out) fprintf(out, "enough: nothing was stopped or cut off\n");
  else
    fprintf(out, "ran out (%d compilations abandoned, %d runs cut off, %d of %d finalist rounds%s)\n",
            r->compiles_abandoned, r->requests_cut, r->rounds_done, r->rounds_planned,
            r->rounds_settled ? ", the winner settled" : "");
}

/* The first few failed configurations, each with why (all of them are in
 * --json and the report). */
enum { KT__FAILURES_SHOWN = 5 };
static void print_failures(const kt_result *r, FILE *out) {
  int failed = 0;
  for (int i = 0; i < r->ntrials; i++) {
    const kt__trial *t = &r->trials[i];
    if (t->status == KT__ST_OK || t->status == KT__ST_PENDING) continue;
    if (failed++ >= KT__FAILURES_SHOWN) continue;
    kt__sbuf cfg = {0};
    char why[KT__WHY_WIDTH + 8];
    kt__result_config_string(r, t, &cfg);
    kt__trial_why(t, why, sizeof why);
    fprintf(out, "  failed   %s: %s%s%s\n", cfg.s, kt__status_name(t->status), *why ? ": " : "", why);
    kt__sbuf_free(&cfg);
  }
  if (failed > KT__FAILURES_SHOWN)
    fprintf(out, "  ... and %d more failed (each with why in --json and the report)\n", failed - KT__FAILURES_SHOWN);
}

/* A winner within its own noise of #2 is a tie that the next run may
 * resolve the other way: say so, with the numbers that make it one. */
static void print_tie(const kt_result *r, FILE *out) {
  const kt__stats *w = &r->trials[r->winner].stats, *u = &r->trials[r->runner_up].stats;
  fprintf(out,
          "winner tied with #2: their medians are %.1f%% apart, within the winner's own noise (interquartile range "
          "%.1f%% of its median); either is as fast here, and another run may pick the other\n",
          100 * (u->median - w->median) / w->median, 100 * w->iqr / w->median);
}

int kt_result_print_table(const kt_result *r, FILE *out) {
  int counts[KT__ST_COUNT];
  count_statuses(r, counts);
  fprintf(out, "\n%s on %s (%s)  sizes: %s\n", r->kernel, r->device.name, r->device.backend,
          r->sizes && *r->sizes ? r->sizes : "-");
  fprintf(out, "space %llu configurations", (unsigned long long)r->space_size);
  if (r->valid_size != UINT64_MAX) fprintf(out, ", %llu valid", (unsigned long long)r->valid_size);
  fprintf(out, "; strategy %s (%s)\n", r->strategy ? r->strategy : "-", r->strategy_reason ? r->strategy_reason : "");
  fprintf(out, "tried %d", r->ntrials);
  if (r->default_trial >= 0) fprintf(out, " (the default and %d more)", r->ntrials - 1);
  fprintf(out, ":");
  for (int s = KT__ST_OK; s < KT__ST_COUNT; s++)
    if (counts[s]) fprintf(out, " %d %s", counts[s], kt__status_name((kt__status)s));
  if (r->reused) fprintf(out, " (%d from the results database)", r->reused);
  fprintf(out, "\n");
  if (r->objective != KT_OBJECTIVE_TIME)
    fprintf(out, "objective %s: ranked by %s per launch (the samples' mean power times the time)\n",
            kt__objective_name(r->objective), r->objective == KT_OBJECTIVE_ENERGY ? "joules" : "joules times seconds");
  int order[5];
  int n = kt__result_ranked(r, order, 5);
  for (int i = 0; i < n; i++) {
    char label[16];
    snprintf(label, sizeof label, "#%d", i + 1);
    table_row(r, label, &r->trials[order[i]], out);
  }
  if (r->default_trial >= 0) table_row(r, "default", &r->trials[r->default_trial], out);
  print_failures(r, out);
  if (r->winner >= 0 && r->default_trial >= 0 && r->trials[r->default_trial].status == KT__ST_OK) {
    double w = kt__trial_seconds(&r->trials[r->winner]), d = kt__trial_seconds(&r->trials[r->default_trial]);
    fprintf(out, "winner is %.2fx the speed of the default\n", d / w);
    double we = kt__trial_score(r, &r->trials[r->winner]), de = kt__trial_score(r, &r->trials[r->default_trial]);
    if (r->objective != KT_OBJECTIVE_TIME && isfinite(we) && isfinite(de) && we > 0)
      fprintf(out, "winner's %s per launch is %.2fx the default's\n", kt__objective_name(r->objective), we / de);
  }
  if (r->within_noise) print_tie(r, out);
  if (r->winner >= 0 && !kt__seen_valid(&r->trials[r->winner].stats.seen)) {
    const kt__seen *v = &r->trials[r->winner].stats.seen;
    fprintf(out,
            "winner's measurement is not valid: %d of its samples were taken %s (%s) and could not be taken again "
            "within the time allowed; tune again on a quiet device, or with more time (--budget)\n",
            v->disturbed_samples,
            v->disturbance & KT__DISTURBED_SHARED ? "while another process used the device" : "while throttled",
            kt__disturbance_words(v->disturbance));
  }
  if (r->winner < 0) fprintf(out, "no configuration was valid\n");
  if (r->kept_stored)
    fprintf(out, "winner kept from the results database: nothing was measured anew, so no finalist rounds "
                 "(--retry-failed or --no-cache measures again)\n");
  else if (r->rounds_tied)
    fprintf(out, "finalist rounds: %d of %d, the others within the leader's noise or apart from it\n", r->rounds_done,
            r->rounds_planned);
  fprintf(out, "time %.2f s: compile busy %.2f s on %d threads, device busy %.2f s\n", r->wall_s, r->compile_busy_s,
          r->compile_threads, r->device_busy_s);
  print_binary_cache(r, out);
  if (r->budget_s > 0) print_time_budget(r, out);
  if (r->interrupted) fprintf(out, "interrupted: results so far are kept\n");
  return KT_OK;
}

static void json_num(kt__sbuf *b, const char *key, double v) {
  if (isfinite(v)) kt__sbuf_printf(b, "\"%s\": %.9g", key, v);
  else kt__sbuf_printf(b, "\"%s\": null", key);
}

static void json_config(const kt_result *r, const kt__trial *t, kt__sbuf *b) {
  kt__sbuf_printf(b, "{");
  for (int i = 0; i < r->nnames; i++) {
    kt__sbuf_printf(b, "%s", i ? ", " : "");
    kt__sbuf_json_string(b, r->names[i]);
    kt__sbuf_printf(b, ": %lld", (long long)t->values[i]);
  }
  kt__sbuf_printf(b, "}");
}

static void json_trial(const kt_result *r, const kt__trial *t, kt__sbuf *b) {
  kt__sbuf_printf(b, "{\"config\": ");
  json_config(r, t, b);
  kt__sbuf_printf(b, ", \"status\": \"%s\"", kt__status_name(t->status));
  if (t->status == KT__ST_OK) {
    kt__sbuf_printf(b, ", ");
    json_num(b, "median_s", t->stats.median);
    kt__sbuf_printf(b, ", ");
    json_num(b, "min_s", t->stats.min);
    kt__sbuf_printf(b, ", ");
    json_num(b, "mean_s", t->stats.mean);
    kt__sbuf_printf(b, ", ");
    json_num(b, "stddev_s", t->stats.stddev);
    kt__sbuf_printf(b, ", ");
    json_num(b, "iqr_s", t->stats.iqr);
    kt__sbuf_printf(b, ", \"samples\": %d, \"reps\": %d", t->stats.nsamples, t->stats.reps);
    if (t->final_s > 0) {
      kt__sbuf_printf(b, ", ");
      json_num(b, "final_median_s", t->final_s);
    }
    if (t->stats.stopped_early) kt__sbuf_printf(b, ", \"stopped_early\": true");
    if (t->stats.timing != KT_TIMING_AUTO) { /* AUTO: a record from before methods were kept */
      kt__sbuf_printf(b, ", \"measurement\": ");
      kt__measurement_json(b, r->timings ? r->timings[t->stats.timing] : NULL, &t->stats);
    }
  }
  kt__sbuf_printf(b, ", ");
  json_num(b, "compile_s", t->compile_s);
  if (kt__bin_use_name(t->compile_use)) kt__sbuf_printf(b, ", \"compile\": \"%s\"", kt__bin_use_name(t->compile_use));
  if (t->load_s + t->verify_s + t->measure_s > 0)
    kt__sbuf_printf(b, ", \"worker_s\": {\"load\": %.6g, \"verify\": %.6g, \"measure\": %.6g}", t->load_s, t->verify_s,
                    t->measure_s);
  if (t->is_default) kt__sbuf_printf(b, ", \"default\": true");
  if (t->reused) kt__sbuf_printf(b, ", \"reused\": true");
  if (t->message) {
    kt__sbuf_printf(b, ", \"message\": ");
    kt__sbuf_json_string(b, t->message);
  }
  if (t->outside) kt__sbuf_printf(b, ", \"cause\": \"outside\"");
  if (t->output_bytes) {
    kt__sbuf_printf(b, ", \"output\": ");
    kt__sbuf_json_string(b, t->output ? t->output : "");
    kt__sbuf_printf(b, ", \"output_bytes\": %llu", (unsigned long long)t->output_bytes);
  }
  kt__sbuf_printf(b, "}");
}

void kt__device_json(const kt__device_info *d, kt__sbuf *b) {
  kt__sbuf_printf(b, "{\"backend\": ");
  kt__sbuf_json_string(b, d->backend);
  kt__sbuf_printf(b, ", \"index\": %d, \"name\": ", d->index);
  kt__sbuf_json_string(b, d->name);
  kt__sbuf_printf(b, ", \"vendor\": ");
  kt__sbuf_json_string(b, d->vendor);
  kt__sbuf_printf(b, ", \"arch\": ");
  kt__sbuf_json_string(b, d->arch);
  kt__sbuf_printf(b, ", \"memory_bytes\": %llu, \"driver\": ", (unsigned long long)d->memory_bytes);
  kt__sbuf_json_string(b, d->driver_version);
  kt__sbuf_printf(b, ", \"toolchain\": ");
  kt__sbuf_json_string(b, d->toolchain_version);
  kt__sbuf_printf(b, ", \"compute_units\": %d, \"host_cpu\": %s}", d->compute_units, d->host_cpu ? "true" : "false");
}

static void json_summary(const kt_result *r, const kt__trial *t, const char *key, kt__sbuf *b) {
  kt__sbuf_printf(b, ",\n  \"%s\": ", key);
  if (!t) {
    kt__sbuf_printf(b, "null");
    return;
  }
  json_trial(r, t, b);
  double s = kt__trial_seconds(t);
  if (t->status == KT__ST_OK && r->flops > 0) kt__sbuf_printf(b, ",\n  \"%s_tflops\": %.6g", key, r->flops / s / 1e12);
  if (t->status == KT__ST_OK && r->bytes > 0) kt__sbuf_printf(b, ",\n  \"%s_gbps\": %.6g", key, r->bytes / s / 1e9);
  if (t->status == KT__ST_OK && r->flops > 0 && r->device.peak_gflops > 0)
    kt__sbuf_printf(b, ",\n  \"%s_fraction_of_fp32_peak\": %.4g", key, r->flops / s / 1e9 / r->device.peak_gflops);
  if (t->status == KT__ST_OK && r->bytes > 0 && r->device.peak_gbps > 0)
    kt__sbuf_printf(b, ",\n  \"%s_fraction_of_bandwidth_peak\": %.4g", key, r->bytes / s / 1e9 / r->device.peak_gbps);
  double w = kt__seen_watts(&t->stats.seen);
  if (t->status == KT__ST_OK && w >= 0 && s > 0)
    kt__sbuf_printf(b, ",\n  \"%s_joules_per_launch\": %.6g,\n  \"%s_watts\": %.4g", key, w * s, key, w);
}

/* How the time budget was spent; the phases are in the timeline. */
static void json_time_budget(const kt_result *r, kt__sbuf *b) {
  kt__sbuf_printf(b, ",\n  \"time_budget\": {\"ran_out\": %s, \"reference_over_budget\": %s, ",
                  r->budget_ran_out ? "true" : "false", r->reference_over_budget ? "true" : "false");
  json_num(b, "reserved_for_finalists_s", r->finalists_reserved_s);
  kt__sbuf_printf(b,
                  ", \"compiles_abandoned\": %d, \"requests_cut\": %d, \"finalist_rounds\": %d, "
                  "\"finalist_rounds_planned\": %d, \"finalist_rounds_settled\": %s}",
                  r->compiles_abandoned, r->requests_cut, r->rounds_done, r->rounds_planned,
                  r->rounds_settled ? "true" : "false");
}

int kt_result_print_json(const kt_result *r, FILE *out) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "{\n  \"kernel\": ");
  kt__sbuf_json_string(&b, r->kernel);
  kt__sbuf_printf(&b, ",\n  \"file\": ");
  kt__sbuf_json_string(&b, r->file);
  kt__sbuf_printf(&b, ",\n  \"sizes\": ");
  kt__sbuf_json_string(&b, r->sizes ? r->sizes : "");
  kt__sbuf_printf(&b, ",\n  \"device\": ");
  kt__device_json(&r->device, &b);
  kt__sbuf_printf(&b, ",\n  \"space_size\": %llu", (unsigned long long)r->space_size);
  if (r->valid_size != UINT64_MAX) kt__sbuf_printf(&b, ",\n  \"valid_size\": %llu", (unsigned long long)r->valid_size);
  kt__sbuf_printf(&b, ",\n  \"strategy\": ");
  kt__sbuf_json_string(&b, r->strategy ? r->strategy : "");
  kt__sbuf_printf(&b, ",\n  \"strategy_reason\": ");
  kt__sbuf_json_string(&b, r->strategy_reason ? r->strategy_reason : "");
  kt__sbuf_printf(&b, ",\n  \"timing\": \"%s\"", kt__timing_name(r->timing));
  kt__sbuf_printf(&b, ",\n  \"objective\": \"%s\"", kt__objective_name(r->objective));
  if (r->device.no_energy[0]) {
    kt__sbuf_printf(&b, ",\n  \"no_energy\": ");
    kt__sbuf_json_string(&b, r->device.no_energy);
  }
  if (r->device.no_readings[0]) {
    kt__sbuf_printf(&b, ",\n  \"no_device_readings\": ");
    kt__sbuf_json_string(&b, r->device.no_readings);
  }
  kt__sbuf_printf(&b, ",\n  \"budget\": %ld,\n  \"budget_s\": %.6g", r->budget, r->budget_s);
  if (r->budget_s > 0) json_time_budget(r, &b);
  kt__sbuf_printf(&b, ",\n  \"configurations\": [");
  for (int i = 0; i < r->ntrials; i++) {
    kt__sbuf_printf(&b, "%s\n    ", i ? "," : "");
    json_trial(r, &r->trials[i], &b);
  }
  kt__sbuf_printf(&b, "\n  ]");
  json_summary(r, r->winner >= 0 ? &r->trials[r->winner] : NULL, "winner", &b);
  json_summary(r, r->runner_up >= 0 ? &r->trials[r->runner_up] : NULL, "runner_up", &b);
  kt__sbuf_printf(&b, ",\n  \"winner_within_noise\": %s", r->within_noise ? "true" : "false");
  json_summary(r, r->default_trial >= 0 ? &r->trials[r->default_trial] : NULL, "default", &b);
  if (r->winner >= 0)
    kt__sbuf_printf(&b, ",\n  \"winner_valid\": %s",
                    kt__seen_valid(&r->trials[r->winner].stats.seen) ? "true" : "false");
  if (r->winner >= 0 && r->default_trial >= 0 && r->trials[r->default_trial].status == KT__ST_OK)
    kt__sbuf_printf(&b, ",\n  \"speedup_over_default\": %.6g",
                    kt__trial_seconds(&r->trials[r->default_trial]) / kt__trial_seconds(&r->trials[r->winner]));
  json_binary_cache(r, &b);
  kt__sbuf_printf(&b, ",\n  \"timeline\": {");
  json_num(&b, "wall_s", r->wall_s);
  kt__sbuf_printf(&b, ", ");
  json_num(&b, "compile_busy_s", r->compile_busy_s);
  kt__sbuf_printf(&b, ", \"compile_threads\": %d, ", r->compile_threads);
  json_num(&b, "device_busy_s", r->device_busy_s);
  kt__sbuf_printf(&b, ", ");
  json_num(&b, "device_idle_s", r->wall_s - r->device_busy_s);
  kt__sbuf_printf(&b, ", ");
  json_num(&b, "setup_s", r->setup_s);
  kt__sbuf_printf(&b,
                  ", \"phases_s\": {\"setup\": %.6g, \"reference\": %.6g, \"search\": %.6g, \"finalists\": %.6g, "
                  "\"teardown\": %.6g}",
                  r->setup_s, r->reference_s, r->search_s, r->finalists_s,
                  fmax(r->wall_s - r->setup_s - r->reference_s - r->search_s - r->finalists_s, 0.0));
  kt__sbuf_printf(&b, ", \"device_busy_split_s\": {\"load\": %.6g, \"verify\": %.6g, \"measure\": %.6g}", r->load_s,
                  r->verify_s, r->measure_s);
  kt__sbuf_printf(&b,
                  ", \"finalist_rounds\": {\"done\": %d, \"planned\": %d, \"settled\": %s, \"tied\": %s, "
                  "\"leader_spread\": %.4g, \"kept_stored_winner\": %s}",
                  r->rounds_done, r->rounds_planned, r->rounds_settled ? "true" : "false",
                  r->rounds_tied ? "true" : "false", r->rounds_spread, r->kept_stored ? "true" : "false");
  kt__sbuf_printf(&b, "},\n  \"reused\": %d,\n  \"worker_restarts\": %d,\n  \"interrupted\": %s\n}\n", r->reused,
                  r->restarts, r->interrupted ? "true" : "false");
  fputs(b.s, out);
  kt__sbuf_free(&b);
  return KT_OK;
}
