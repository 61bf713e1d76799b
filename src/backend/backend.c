/* Backend registry and the wrappers through which the core calls backends. */
#include "backend.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

#include "binkey.h"
#include "dl.h"

/* Each table at its kt_backend_kind; KT_BACKEND_AUTO's slot stays NULL. */
#define KT__BACKEND_ENTRY(kind, table) [kind] = &table,
static const kt__backend *const registry[] = {KT__BACKENDS(KT__BACKEND_ENTRY)};
#undef KT__BACKEND_ENTRY

const kt__backend *kt__backend_of(int kind) {
  return kind >= 0 && (size_t)kind < sizeof registry / sizeof registry[0] ? registry[kind] : NULL;
}

const kt__backend *kt__backend_for_path(const char *path) {
  const char *dot = strrchr(path, '.');
  const kt__backend *be;
  for (int k = KT_BACKEND_AUTO + 1; dot && (be = kt__backend_of(k)); k++)
    for (int i = 0; be->extensions[i]; i++)
      if (strcmp(dot, be->extensions[i]) == 0) return be;
  return NULL;
}

const kt__backend *kt__backend_for_lang(kt__lang lang) {
  const kt__backend *be;
  for (int k = KT_BACKEND_AUTO + 1; (be = kt__backend_of(k)); k++)
    if (be->lang == lang) return be;
  return NULL;
}

/* A backend this build cannot use fails with its reason wherever it can be
 * reached without an open device. */
static int unavailable(const kt__backend *be, kt__errbuf *eb) {
  return kt__err(eb, KT_NOBACKEND, "%s", be->unavailable);
}

void kt__artifact_free(kt__artifact *a) {
  if (!a) return;
  free(a->path);
  free(a->log);
  free(a->not_cached);
  a->path = a->log = a->not_cached = NULL;
  a->environment = false;
}

bool kt__log_says_environment(const char *log) {
  static const char *const signs[] = {"No space left on device", "Disk quota exceeded",    "Too many open files",
                                      "Read-only file system",   "Cannot allocate memory", NULL};
  for (int i = 0; log && signs[i]; i++)
    if (strstr(log, signs[i])) return true;
  return false;
}

bool kt__errno_is_environment(int err) {
  return err == ENOSPC || err == EDQUOT || err == EMFILE || err == ENFILE || err == EROFS || err == ENOMEM ||
         err == ENOENT || err == EACCES || err == EIO || err == EFBIG;
}

const char *kt__be_loaded_driver(const kt__backend *be) {
  for (int i = 0; be->drivers[i]; i++)
    if (kt__dl_loaded(be->drivers[i])) return be->drivers[i];
  return NULL;
}

int kt__be_list_devices(const kt__backend *be, kt__device_info *out, int max, int *count, kt__errbuf *eb) {
  *count = 0;
  if (be->unavailable) return unavailable(be, eb);
  return be->list_devices(out, max, count, eb);
}

kt__status kt__be_compile(const kt__backend *be, const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  memset(a, 0, sizeof *a);
  if (be->builds_at_load) return KT__ST_OK;
  if (be->unavailable) {
    unavailable(be, eb);
    return KT__ST_COMPILE;
  }
  return kt__compile_cached(be, b, a, eb);
}

bool kt__be_compiles(const kt__backend *be) { return be->compile != NULL; }

int kt__be_open(const kt__backend *be, int index, void **state, kt__device_info *info, kt__errbuf *eb) {
  memset(info, 0, sizeof *info);
  strncpy(info->backend, be->name, sizeof info->backend - 1);
  info->index = index;
  if (be->unavailable) {
    *state = NULL;
    return unavailable(be, eb);
  }
  return be->open(index, state, info, eb);
}

bool kt__be_can_adopt(const kt__backend *be) { return be->adopt != NULL; }

int kt__be_adopt(const kt__backend *be, void *native, void *device, void **state, kt__device_info *info,
                 kt__errbuf *eb) {
  memset(info, 0, sizeof *info);
  strncpy(info->backend, be->name, sizeof info->backend - 1);
  *state = NULL;
  if (be->unavailable) return unavailable(be, eb);
  KT__RETURN_IF(!be->adopt, eb, KT_INVALID,
                "the %s backend cannot use an application's own context (kt_options.opencl_context is for "
                "OpenCL kernels)",
                be->name);
  return be->adopt(native, device, state, info, eb);
}

void kt__be_close(const kt__backend *be, void *state) {
  if (state) be->close(state);
}

kt__status kt__be_load(const kt__backend *be, void *state, const kt__build *b, const kt__artifact *a, void **fn,
                       kt__errbuf *eb) {
  *fn = NULL;
  return be->load(state, b, a, fn, eb);
}

void kt__be_unload(const kt__backend *be, void *state, void *fn) {
  if (fn) be->unload(state, fn);
}

kt__status kt__be_check(const kt__backend *be, void *state, void *fn, const kt__launch *l, kt__errbuf *eb) {
  return be->check ? be->check(state, fn, l, eb) : KT__ST_OK;
}

int kt__be_alloc(const kt__backend *be, void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  *buf = NULL;
  return be->alloc(state, bytes, buf, eb);
}

void kt__be_release(const kt__backend *be, void *state, void *buf) {
  if (buf) be->release(state, buf);
}

int kt__be_equal(const kt__backend *be, void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb) {
  return be->equal ? be->equal(state, a, b, bytes, same, eb) : KT_NOTFOUND;
}

int kt__be_copy(const kt__backend *be, void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb) {
  return be->copy ? be->copy(state, dst, src, bytes, eb) : KT_NOTFOUND;
}

int kt__be_share(const kt__backend *be, void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb) {
  return be->share ? be->share(state, buf, bytes, out, eb) : KT_NOTFOUND;
}

int kt__be_copy_shared(const kt__backend *be, void *state, void *dst, const kt__shared_buffer *src, kt__errbuf *eb) {
  return be->copy_shared ? be->copy_shared(state, dst, src, eb) : KT_NOTFOUND;
}

kt__status kt__be_set_constant(const kt__backend *be, void *state, void *fn, const char *name, const void *host,
                               size_t bytes, kt__errbuf *eb) {
  if (!be->set_constant)
    return kt__fail(eb, KT__ST_COMPILE, "the %s backend has no constant symbols to fill (@constant %s)", be->name,
                    name);
  return be->set_constant(state, fn, name, host, bytes, eb);
}

int kt__be_compare(const kt__backend *be, void *state, kt__dtype t, void *got, void *want, uint64_t count, double atol,
                   double rtol, kt__device_mismatch *m, kt__errbuf *eb) {
  return be->compare ? be->compare(state, t, got, want, count, atol, rtol, m, eb) : KT_NOTFOUND;
}

int kt__be_decoy(const kt__backend *be, void *state, kt__dtype t, void *buf, void *ref, uint64_t count,
                 kt__errbuf *eb) {
  return be->decoy ? be->decoy(state, t, buf, ref, count, eb) : KT_NOTFOUND;
}

int kt__be_slice(const kt__backend *be, void *state, void *buf, size_t offset, size_t bytes, void **out,
                 kt__errbuf *eb) {
  *out = NULL;
  if (!be->slice) return KT_NOTFOUND;
  return be->slice(state, buf, offset, bytes, out, eb);
}

void kt__be_unslice(const kt__backend *be, void *state, void *slice) {
  if (slice && be->unslice) be->unslice(state, slice);
}

int kt__be_upload(const kt__backend *be, void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb) {
  return be->upload(state, buf, host, bytes, eb);
}

int kt__be_download(const kt__backend *be, void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb) {
  return be->download(state, host, buf, bytes, eb);
}

int kt__be_wait(const kt__backend *be, void *state, void *stream, kt__errbuf *eb) {
  return stream && be->wait ? be->wait(state, stream, eb) : KT_OK;
}

int kt__be_snapshot(const kt__backend *be, void *state, void *stream, void *const *bufs, const size_t *bytes, int n,
                    void **snap, kt__errbuf *eb) {
  *snap = NULL;
  if (!be->snapshot || !be->snapshot_read || !be->snapshot_free) return KT_NOTFOUND;
  return be->snapshot(state, stream, bufs, bytes, n, snap, eb);
}

int kt__be_snapshot_read(const kt__backend *be, void *state, void *snap, int i, void *host, kt__errbuf *eb) {
  return be->snapshot_read(state, snap, i, host, eb);
}

void kt__be_snapshot_free(const kt__backend *be, void *state, void *snap) {
  if (snap) be->snapshot_free(state, snap);
}

kt__status kt__be_run(const kt__backend *be, void *state, void *fn, const kt__launch *l, kt__errbuf *eb) {
  return be->run(state, fn, l, eb);
}

kt__status kt__be_run_timed(const kt__backend *be, void *state, void *fn, const kt__launch *l, double *seconds,
                            const char **method, kt__errbuf *eb) {
  *seconds = 0;
  if (be->run_timed) {
    *method = "events";
    return be->run_timed(state, fn, l, seconds, eb);
  }
  *method = "clock";
  /* The stream's earlier work is not the launch's: waited for untimed. */
  if (kt__be_wait(be, state, l->stream, eb) != KT_OK) return KT__ST_RUNTIME;
  double t0 = kt__now();
  kt__status st = be->run(state, fn, l, eb);
  if (st == KT__ST_OK && kt__be_wait(be, state, l->stream, eb) != KT_OK) st = KT__ST_RUNTIME;
  *seconds = kt__now() - t0;
  return st;
}

kt__status kt__be_time(const kt__backend *be, void *state, void *fn, const kt__launch *l, int n, kt_timing how,
                       bool energy, double *seconds, kt__reading *reading, kt__errbuf *eb) {
  *seconds = 0;
  if (reading) *reading = (kt__reading){0};
  if (!kt__be_can_time(be, how) || how == KT_TIMING_AUTO)
    return kt__fail(eb, KT__ST_RUNTIME, "the %s backend cannot time by method %d", be->name, (int)how);
  return be->time(state, fn, l, n, how, energy, seconds, reading, eb);
}

bool kt__be_can_time(const kt__backend *be, kt_timing how) {
  return how == KT_TIMING_AUTO || ((unsigned)how < 3 && be->timings[how] != NULL);
}

kt_timing kt__be_timing(const kt__backend *be, kt_timing how) {
  return how == KT_TIMING_AUTO && !kt__be_can_time(be, KT_TIMING_GRAPH) ? KT_TIMING_EVENTS : how;
}

void kt__be_flush_cache(const kt__backend *be, void *state) {
  if (be->flush_cache) be->flush_cache(state);
}

void kt__be_prebuild(const kt__backend *be, void *state, const kt__build *b, int n) {
  if (be->prebuild && n > 0) be->prebuild(state, b, n);
}

int kt__be_fill(const kt__backend *be, void *state, void *buf, size_t bytes, const void *pattern, size_t pattern_size,
                kt__errbuf *eb) {
  if (!be->fill || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4)) return KT_NOTFOUND;
  return be->fill(state, buf, bytes, pattern, pattern_size, eb);
}

void kt__be_pin_host(const kt__backend *be, void *state, void *host, size_t bytes) {
  if (be->pin_host && host && bytes) be->pin_host(state, host, bytes);
}

void kt__be_prepare_checks(const kt__backend *be, void *state) {
  if (be->prepare_checks) be->prepare_checks(state);
}

void kt__be_unpin_host(const kt__backend *be, void *state, void *host) {
  if (be->unpin_host && host) be->unpin_host(state, host);
}
