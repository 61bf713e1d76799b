/* Read-only views for the command line: the expanded space of a kernel
 * (`ktune space`) and the backends and devices found (`ktune devices`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../handles/context.h"
#include "../launch/args.h"
#include "../space/space.h"
#include "result.h"
#include "worker_client.h"

enum { COUNT_LIMIT = 10000000 };

static void text_dims(const kt__space *s, const char *title, FILE *out) {
  if (kt__space_ndims(s) == 0) return;
  fprintf(out, "%s:\n", title);
  for (int d = 0; d < kt__space_ndims(s); d++) {
    fprintf(out, "  %-12s", kt__space_name(s, d));
    for (int c = 0; c < kt__space_nchoices(s, d); c++) fprintf(out, " %lld", (long long)kt__space_choice(s, d, c));
    fprintf(out, "%s\n", kt__space_is_pinned(s, d) ? "   (pinned)" : "");
  }
}

static void json_dims(const kt__space *s, kt__sbuf *b) {
  kt__sbuf_printf(b, "[");
  for (int d = 0; d < kt__space_ndims(s); d++) {
    kt__sbuf_printf(b, "%s{\"name\": ", d ? ", " : "");
    kt__sbuf_json_string(b, kt__space_name(s, d));
    kt__sbuf_printf(b, ", \"choices\": [");
    for (int c = 0; c < kt__space_nchoices(s, d); c++)
      kt__sbuf_printf(b, "%s%lld", c ? ", " : "", (long long)kt__space_choice(s, d, c));
    kt__sbuf_printf(b, "], \"pinned\": %s}", kt__space_is_pinned(s, d) ? "true" : "false");
  }
  kt__sbuf_printf(b, "]");
}

static void json_values(const kt__space *s, const int64_t *v, kt__sbuf *b) {
  kt__sbuf_printf(b, "{");
  for (int d = 0; d < kt__space_ndims(s); d++) {
    kt__sbuf_printf(b, "%s", d ? ", " : "");
    kt__sbuf_json_string(b, kt__space_name(s, d));
    kt__sbuf_printf(b, ": %lld", (long long)v[d]);
  }
  kt__sbuf_printf(b, "}");
}

static void print_space_json(kt_kernel *k, const kt__space *s, const kt__space *cl, uint64_t valid, FILE *out) {
  const int64_t *def = k->config.defaults; /* the @autotune names come first */
  kt__sbuf b = {0}, flags = {0};
  kt__space_format_defines(s, def, &flags);
  kt__sbuf_printf(&b, "{\n  \"kernel\": ");
  kt__sbuf_json_string(&b, k->decl->name);
  kt__sbuf_printf(&b, ",\n  \"dims\": ");
  json_dims(s, &b);
  kt__sbuf_printf(&b, ",\n  \"cluster_dims\": ");
  json_dims(cl, &b);
  kt__sbuf_printf(&b, ",\n  \"size\": %llu", (unsigned long long)kt__space_size(s));
  if (valid != UINT64_MAX) kt__sbuf_printf(&b, ",\n  \"valid_size\": %llu", (unsigned long long)valid);
  else kt__sbuf_printf(&b, ",\n  \"valid_size\": null");
  kt__sbuf_printf(&b, ",\n  \"cluster_size\": %llu", (unsigned long long)kt__space_size(cl));
  kt__sbuf_printf(&b, ",\n  \"default\": ");
  json_values(s, def, &b);
  kt__sbuf_printf(&b, ",\n  \"default_flags\": ");
  kt__sbuf_json_string(&b, flags.s ? flags.s : "");
  kt__sbuf_printf(&b, ",\n  \"runtime_sizes\": [");
  for (int i = 0; i < k->decl->nsizes; i++) {
    kt__sbuf_printf(&b, "%s", i ? ", " : "");
    kt__sbuf_json_string(&b, k->decl->sizes[i]);
  }
  kt__sbuf_printf(&b, "]\n}\n");
  fputs(b.s, out);
  kt__sbuf_free(&b);
  kt__sbuf_free(&flags);
}

static void print_space_text(kt_kernel *k, const kt__space *s, const kt__space *cl, uint64_t valid, FILE *out) {
  const int64_t *def = k->config.defaults; /* the @autotune names come first */
  fprintf(out, "kernel %s (%s)\n", k->decl->name, k->file->src.path);
  text_dims(s, "@autotune", out);
  text_dims(cl, "@cluster", out);
  fprintf(out, "size: %llu configurations", (unsigned long long)kt__space_size(s));
  if (valid != UINT64_MAX) fprintf(out, ", %llu valid after @where", (unsigned long long)valid);
  else fprintf(out, ", valid count skipped (over %d)", COUNT_LIMIT);
  if (kt__space_ndims(cl)) fprintf(out, "; cluster space %llu", (unsigned long long)kt__space_size(cl));
  kt__sbuf cfg = {0}, flags = {0};
  kt__space_format(s, def, &cfg);
  kt__space_format_defines(s, def, &flags);
  fprintf(out, "\ndefault: %s\nas flags: %s\n", cfg.s ? cfg.s : "", flags.s ? flags.s : "");
  kt__sbuf_free(&cfg);
  kt__sbuf_free(&flags);
}

/* ---- what one device can launch ------------------------------------------ */

typedef struct device_fit {
  const kt__kernel_decl *decl;
  const kt__space *space;
  const kt__env *outer; /* cluster defaults over the sizes */
  const kt__device_info *dev;
} device_fit;

/* A configuration the device's limits admit: threads per block (@block's
 * product) and dynamic shared memory (@shared). Kernel Tuner drops the
 * configurations over the thread limit without saying so; the tuner
 * reports them as `constraint`. */
static int fits_device(void *ud, const int64_t *values) {
  const device_fit *f = ud;
  kt__env env = {kt__space_names(f->space), values, kt__space_ndims(f->space), f->outer};
  uint64_t grid[3], block[3], shared;
  kt__errbuf eb;
  if (kt__launch_geometry(f->decl, &env, grid, block, &shared, &eb) != KT_OK) return 0;
  uint64_t threads = block[0] * block[1] * block[2];
  if (f->dev->max_threads_per_block > 0 && threads > (uint64_t)f->dev->max_threads_per_block) return 0;
  return f->dev->max_shared_bytes == 0 || shared <= f->dev->max_shared_bytes;
}

/* The context's device of K's backend, listed from a short-lived child. */
static int find_device(kt_kernel *k, kt__device_info *out, kt__errbuf *eb) {
  kt__device_info devs[32];
  int n = 0;
  KT__FORWARD(kt__worker_list_devices(k->backend, devs, 32, &n, eb));
  int want = k->ctx->opts.device;
  KT__RETURN_IF(want < 0 || want >= n, eb, KT_NOBACKEND,
                "--device %d: the %s backend has %d device%s (see `ktune devices`)", want, k->backend->name, n,
                n == 1 ? "" : "s");
  *out = devs[want];
  return KT_OK;
}

static void print_device_fit(const kt__device_info *dev, uint64_t valid, uint64_t fit, int json, FILE *out) {
  if (json) {
    kt__sbuf b = {0};
    kt__sbuf_printf(&b, "{\"device\": {\"index\": %d, \"name\": ", dev->index);
    kt__sbuf_json_string(&b, dev->name);
    kt__sbuf_printf(&b,
                    ", \"max_threads_per_block\": %d, \"max_shared_bytes\": %llu}, \"valid_size\": %llu, "
                    "\"valid_on_device\": %llu}\n",
                    dev->max_threads_per_block, (unsigned long long)dev->max_shared_bytes, (unsigned long long)valid,
                    (unsigned long long)fit);
    fputs(b.s, out);
    kt__sbuf_free(&b);
    return;
  }
  fprintf(out, "on device %d (%s): %llu of the %llu valid configurations fit its limits", dev->index, dev->name,
          (unsigned long long)fit, (unsigned long long)valid);
  if (dev->max_threads_per_block > 0) fprintf(out, " (%d threads per block", dev->max_threads_per_block);
  else fprintf(out, " (no thread limit");
  if (dev->max_shared_bytes > 0)
    fprintf(out, ", %llu bytes of shared memory", (unsigned long long)dev->max_shared_bytes);
  fprintf(out, ")\n");
}

/* How many of the valid configurations the context's device can launch. */
static int space_on_device(kt_kernel *k, kt__space *s, const kt__env *outer, uint64_t valid, int json, FILE *out) {
  kt__device_info dev;
  KT__FORWARD(find_device(k, &dev, &k->ctx->err));
  device_fit fit = {k->decl, s, outer, &dev};
  kt__space_set_filter(s, fits_device, &fit);
  uint64_t n = kt__space_count_valid(s, COUNT_LIMIT);
  kt__space_set_filter(s, NULL, NULL);
  print_device_fit(&dev, valid, n, json, out);
  return KT_OK;
}

static int space_print(kt_kernel *k, FILE *out, int json, bool on_device);

int kt_space_print(kt_kernel *k, FILE *out, int json) { return space_print(k, out, json, false); }
int kt_space_print_device(kt_kernel *k, FILE *out, int json) { return space_print(k, out, json, true); }

static int space_print(kt_kernel *k, FILE *out, int json, bool on_device) {
  const kt__kernel_decl *d = k->decl;
  kt__errbuf *eb = &k->ctx->err;
  int64_t *sizes = kt__xcalloc((size_t)d->nsizes + 1, sizeof *sizes);
  int rc = kt__kernel_resolve_sizes(k, sizes, eb);
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  /* The cluster names at their first choices, over the sizes: what the
   * @autotune space's @where sees of them, as in the tuner's first stage. */
  const kt__config *cfg = &k->config;
  int first = kt__config_stage_first(cfg, 1);
  kt__env cluster_defaults = {cfg->names + first, cfg->defaults + first, kt__config_stage_count(cfg, 1), &env};
  kt__space *s = NULL, *cl = NULL;
  if (rc == KT_OK) rc = kt__space_create(d->tune, d->ntune, d->where, d->nwhere, &cluster_defaults, &s, eb);
  if (rc == KT_OK) rc = kt__space_create(d->cluster, d->ncluster, NULL, 0, &env, &cl, eb);
  if (rc == KT_OK) rc = kt__space_check_default(s, k->file->src.path, eb);
  kt__sbuf warn = {0};
  kt__config_pins tune_pins = kt__config_pins_stage(cfg, &k->pins, 0);
  kt__config_pins cluster_pins = kt__config_pins_stage(cfg, &k->pins, 1);
  if (rc == KT_OK) {
    kt__space_pin_values(s, &tune_pins, &warn);
    kt__space_pin_values(cl, &cluster_pins, &warn);
  }
  if (warn.len) fputs(warn.s, stderr);
  uint64_t valid = 0;
  if (rc == KT_OK) {
    kt__space_fault f;
    valid = kt__space_sweep(s, d, COUNT_LIMIT, &f);
    if (f.found) {
      int64_t *values = kt__xcalloc((size_t)cfg->n + 1, sizeof *values);
      memcpy(values, cfg->defaults, (size_t)cfg->n * sizeof *values);
      kt__space_values(s, f.index, values); /* the @autotune names come first */
      kt__env config = {cfg->names, values, cfg->n, NULL};
      rc = kt__space_fault_error(&k->file->src, &config, &env, &f, eb);
      free(values);
    }
  }
  if (rc == KT_OK) {
    if (json) print_space_json(k, s, cl, valid, out);
    else print_space_text(k, s, cl, valid, out);
    /* As `ktune tune` would: it refuses a space with nothing to measure. */
    if (valid == 0) rc = kt__space_none_valid(s, k->file->src.path, d->name, k->ctx->opts.labels.pin, eb);
    else if (on_device) rc = space_on_device(k, s, &cluster_defaults, valid, json, out);
  }
  kt__sbuf_free(&warn);
  kt__space_free(s);
  kt__space_free(cl);
  free(sizes);
  return rc;
}

int kt_kernel_device_count(kt_kernel *k, int *count) {
  kt__device_info devs[64];
  *count = 0;
  return kt__worker_list_devices(k->backend, devs, 64, count, &k->ctx->err);
}

int kt_devices_print(kt_context *ctx, FILE *out, int json) {
  kt__sbuf b = {0};
  if (json) kt__sbuf_printf(&b, "{\"backends\": [");
  const kt__backend *be;
  for (int k = KT_BACKEND_AUTO + 1; (be = kt__backend_of(k)); k++) {
    kt__device_info devs[32];
    int n = 0;
    kt__errbuf eb = {{0}};
    int rc = kt__worker_list_devices(be, devs, 32, &n, &eb);
    if (json) {
      kt__sbuf_printf(&b, "%s\n  {\"backend\": \"%s\", \"available\": %s", k > KT_BACKEND_AUTO + 1 ? "," : "", be->name,
                      rc == KT_OK && n > 0 ? "true" : "false");
      if (rc != KT_OK) {
        kt__sbuf_printf(&b, ", \"reason\": ");
        kt__sbuf_json_string(&b, eb.msg);
      }
      kt__sbuf_printf(&b, ", \"devices\": [");
      for (int j = 0; rc == KT_OK && j < n; j++) {
        kt__sbuf_printf(&b, "%s", j ? ", " : "");
        kt__device_json(&devs[j], &b);
      }
      kt__sbuf_printf(&b, "]}");
    } else if (rc != KT_OK) {
      kt__sbuf_printf(&b, "%s: not available: %s\n", be->name, eb.msg);
    } else {
      kt__sbuf_printf(&b, "%s:\n", be->name);
      for (int j = 0; j < n; j++)
        kt__sbuf_printf(&b, "  --device %d  %s  [%s]  %.1f GiB  %s\n", j, devs[j].name, devs[j].arch,
                        (double)devs[j].memory_bytes / (1u << 30), devs[j].driver_version);
    }
  }
  if (json) kt__sbuf_printf(&b, "\n]}\n");
  fputs(b.s, out);
  kt__sbuf_free(&b);
  (void)ctx;
  return KT_OK;
}
