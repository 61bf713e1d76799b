/* A measurement's record, `measurement` in --json and the results
 * database: how the samples were taken and what the device said meanwhile
 * (docs/DESIGN.md, "Timing a configuration"). */
#include "measure.h"

#include <string.h>

void kt__measurement_json(kt__sbuf *b, const char *method, const kt__stats *s) {
  kt__sbuf_printf(b, "{\"method\": ");
  kt__sbuf_json_string(b, method ? method : kt__timing_name(s->timing));
  kt__sbuf_printf(b, ", \"launches_per_sample\": %d, \"samples\": %d", s->reps, s->nsamples);
  const kt__seen *v = &s->seen;
  if (v->clock_known)
    kt__sbuf_printf(b, ", \"sm_clock_mhz\": {\"min\": %u, \"max\": %u}", v->sm_clock_min_mhz, v->sm_clock_max_mhz);
  if (v->throttle_known)
    kt__sbuf_printf(b, ", \"throttle_reasons\": \"0x%llx\"", (unsigned long long)v->throttle_reasons);
  if (v->power_known) kt__sbuf_printf(b, ", \"power_max_w\": %.1f", v->power_max_w);
  if (v->temp_known) kt__sbuf_printf(b, ", \"temperature_max_c\": %u", v->temp_max_c);
  if (s->contended && s->min > 0) kt__sbuf_printf(b, ", \"contended\": true, \"spread\": %.3f", s->max / s->min - 1);
  if (v->retaken_samples) kt__sbuf_printf(b, ", \"retaken_samples\": %d", v->retaken_samples);
  kt__sbuf_printf(b, ", \"valid\": %s", kt__seen_valid(v) ? "true" : "false");
  if (!kt__seen_valid(v))
    kt__sbuf_printf(b, ", \"disturbed_samples\": %d, \"disturbance\": \"%s\"", v->disturbed_samples,
                    kt__disturbance_words(v->disturbance));
  double w = kt__seen_watts(v);
  if (w >= 0 && s->median > 0)
    kt__sbuf_printf(b, ", \"energy_per_launch_j\": %.6g, \"power_mean_w\": %.4g", w * s->median, w);
  kt__sbuf_printf(b, "}");
}

kt_timing kt__timing_from_name(const char *name) {
  if (name && strcmp(name, "graph") == 0) return KT_TIMING_GRAPH;
  if (name && strcmp(name, "events") == 0) return KT_TIMING_EVENTS;
  return KT_TIMING_AUTO;
}
