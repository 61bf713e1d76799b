/* The tuning helper process (tune_helper.h). */
#include "tune_helper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../handles/context.h"
#include "../launch/args.h"
#include "../proc/fdpass.h"
#include "../signals.h"
#include "../tuner/result.h"
#include "../tuner/tuner.h"
#include "../tuner/worker_client.h"
#include "../workdir.h"
#include "key_lock.h"
#include "tune_request.h"

/* SIGINT, SIGTERM, SIGHUP (Ctrl-C reaches the helper with its
 * application, which shares its process group): stop soon, keeping what
 * was measured, as `ktune tune` does. The library's handler (signals.c)
 * records the signal and calls kt_interrupt; it has no SA_RESTART, so a
 * wait for the lock returns. Never released: the process ends stopped. */
static void install_signals(void) {
  kt_signals_catch();
  signal(SIGPIPE, SIG_IGN); /* an application gone: the reply is lost, the results are stored */
}

static bool stopping(void) { return *kt__signals_caught() != 0; }

static void reply(int fd, const char *text) {
  size_t len = strlen(text);
  while (len) {
    ssize_t w = write(fd, text, len);
    if (w <= 0) return;
    text += w;
    len -= (size_t)w;
  }
}

static void reply_failed(int fd, int rc, const char *msg) {
  char head[32];
  snprintf(head, sizeof head, "failed %d\n", rc);
  reply(fd, head);
  reply(fd, msg);
}

static kt_options context_options(const kt__tune_request *r) {
  kt_options o = {0};
  o.backend = (kt_backend_kind)r->backend;
  o.device = r->device;
  o.db_path = kt__tune_request_text(r, r->db);
  o.no_db = r->no_db;
  o.jobs = r->jobs;
  o.quiet = r->quiet;
  o.compile_timeout_s = r->compile_timeout_s;
  o.run_timeout_s = r->run_timeout_s;
  o.max_tensor_bytes = r->max_tensor_bytes;
  o.objective = (kt_objective)r->objective;
  return o;
}

static kt_tune_options tune_options(const kt__tune_request *r) {
  return (kt_tune_options){.strategy = kt__tune_request_text(r, r->strategy),
                           .budget_configs = (long)r->budget_configs,
                           .budget_s = r->budget_s,
                           .seed = r->seed,
                           .no_cache = r->no_cache,
                           .finalists = r->finalists,
                           .rounds = r->rounds,
                           .retry_failed = r->retry_failed,
                           .objective = (kt_objective)r->objective};
}

/* The kernel of the request, its sizes and pins set; ARGS: the caller's
 * tensors (into the mapped request). */
static int load_kernel(kt_context *ctx, const kt__tune_request *r, void **args, kt_kernel **out) {
  const kt__backend *be = kt__backend_of(r->backend);
  KT__RETURN_IF(!be, &ctx->err, KT_INVALID, "ktune-tuner: the request names no backend");
  kt_kernel *k = NULL;
  KT__FORWARD(kt_kernel_load_string(ctx, kt__tune_request_text(r, r->path), kt__tune_request_text(r, r->source),
                                    be->extensions[0] + 1, kt__tune_request_text(r, r->kernel), &k));
  *out = k;
  KT__RETURN_IF(
      strcmp(k->source_hash, r->source_hash) != 0 || k->decl->nsizes != r->nsizes || k->decl->nparams != r->nparams,
      &ctx->err, KT_INTERNAL, "ktune-tuner: the kernel read back differs from the application's");
  for (int i = 0; i < r->nsizes; i++) KT__FORWARD(kt_kernel_set_size(k, k->decl->sizes[i], r->sizes[i]));
  KT__FORWARD(kt_kernel_pin(k, kt__tune_request_text(r, r->pins)));
  for (int i = 0; i < r->nparams; i++) args[i] = r->tensor[i].len ? (char *)r + r->tensor[i].offset : NULL;
  return KT_OK;
}

/* The winner stored for the key, when another process tuned it while this
 * one waited for the lock. */
static char *stored_winner(kt_kernel *k, const kt__tune_request *r) {
  kt__store *store = kt__context_store(k->ctx);
  if (!store) return NULL;
  kt__sbuf key_sizes = {0};
  kt__store_key key = kt__kernel_store_key(k, r->sizes, &r->device_info, &key_sizes);
  char *config = NULL;
  double secs;
  kt__errbuf eb;
  if (kt__store_winner(store, &key, k->ctx->opts.objective, &config, &secs, &eb) != KT_OK) config = NULL;
  kt__sbuf_free(&key_sizes);
  return config;
}

/* Waits until the application wrote its tensors into the request (it
 * copies them while this process starts and the tuner's worker opens its
 * device): kt__tune_helper_opts.args_wait, UD the socket it says so on. Fails
 * when it could not (an end of file: the application says why) or a signal
 * stopped the wait. */
static int wait_for_data(void *ud, kt__errbuf *eb) {
  int ready = *(const int *)ud;
  char c;
  ssize_t n;
  while ((n = read(ready, &c, 1)) < 0 && errno == EINTR && !stopping()) continue;
  if (n != 1)
    return kt__err(eb, KT_INTERRUPTED, "ktune-tuner: %s",
                   n == 0 ? "the application did not hand over its tensors" : "interrupted");
  kt__trace("helper: the application's tensors are in the request");
  return KT_OK;
}

/* KT_MISS_ONLINE's reply: "verified CONFIG;CONFIG;...", every
 * configuration that passed verification (the application times them on
 * its own calls, runtime/online.h); a configuration is "NAME=VALUE ..." and
 * holds no ';'. */
static void reply_verified(const kt_result *res, int out) {
  kt__sbuf list = {0};
  kt__sbuf_printf(&list, "verified ");
  int n = 0;
  for (int i = 0; i < res->ntrials; i++) {
    const kt__trial *tr = &res->trials[i];
    if (tr->status != KT__ST_OK || tr->reference_only) continue;
    if (n++) kt__sbuf_printf(&list, ";");
    kt__result_config_string(res, tr, &list);
  }
  kt__sbuf_printf(&list, "\n");
  reply(out, list.s);
  kt__sbuf_free(&list);
}

/* Tunes on the caller's tensors ARGS, announced on READY, for the device
 * the application saw; WARM: the device worker is kept for the next miss.
 * Replies on OUT; the winner of an interrupted tuning still counts. */
static void tune_and_reply(kt_kernel *k, const kt__tune_request *r, int in, void *const *args, int ready, bool warm,
                           int out) {
  kt__tune_helper_opts helper = {.args = args,
                                 .args_wait = wait_for_data,
                                 .args_ud = &ready,
                                 .tensors_fd = in,
                                 .tensors_at = r->tensors_at,
                                 .tensors_bytes = r->tensors_bytes,
                                 .device = &r->device_info,
                                 .keep_worker = warm,
                                 .verify_only = r->verify_only,
                                 .shared = r->shared,
                                 /* the application, which spawned this helper */
                                 .peer_pid = (int)getppid()};
  kt_tune_options o = tune_options(r);
  kt_result *res = NULL;
  int rc = kt__tune(k, &o, &helper, &res);
  if (res && res->winner >= 0 && r->verify_only) {
    reply_verified(res, out);
  } else if (res && res->winner >= 0) {
    kt__sbuf cfg = {0};
    kt__result_config_string(res, &res->trials[res->winner], &cfg);
    kt__sbuf_printf(&cfg, "%s", ""); /* an empty configuration is still a string */
    reply(out, "tuned ");
    reply(out, cfg.s);
    reply(out, "\n");
    kt__sbuf_free(&cfg);
  } else {
    reply_failed(out, rc == KT_OK ? KT_NOVALID : rc, kt_errmsg(k->ctx));
  }
  kt_result_destroy(res);
}

static int serve(const kt__tune_request *r, int in, int ready, int out, bool warm) {
  kt_options opts = context_options(r);
  kt_context *ctx = NULL;
  kt_kernel *k = NULL;
  void *args[KT__RT_MAX_ARGS] = {0};
  int rc = kt_context_create(&opts, &ctx);
  if (rc == KT_OK) rc = load_kernel(ctx, r, args, &k);
  int lock = -1;
  if (rc == KT_OK && !r->no_db)
    rc = kt__key_lock(kt__tune_request_text(r, r->db), kt__tune_request_text(r, r->key), kt__signals_caught(), &lock,
                      &ctx->err);
  char *stored = rc == KT_OK && !r->no_db ? stored_winner(k, r) : NULL;
  if (rc != KT_OK) {
    reply_failed(out, rc, kt_errmsg(ctx));
  } else if (stored) {
    reply(out, "stored ");
    reply(out, stored);
    reply(out, "\n");
  } else {
    tune_and_reply(k, r, in, args, ready, warm, out);
  }
  free(stored);
  if (lock >= 0) close(lock); /* after the winner is stored */
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  return 0;
}

static bool parse_fd(const char *s, int *fd) {
  char *end;
  long v = s ? strtol(s, &end, 10) : -1;
  if (!s || end == s || *end || v < 0 || v > 1 << 20) return false;
  *fd = (int)v;
  return true;
}

/* Serves the request in fd IN, replying on OUT; its data is announced on
 * READY. All three are closed here. */
static int serve_request(int in, int out, int ready, bool warm) {
  const kt__tune_request *r = NULL;
  size_t len = 0;
  kt__errbuf eb = {{0}};
  int status = 2;
  if (kt__tune_request_map(in, &r, &len, &eb) != KT_OK) {
    fprintf(stderr, "%s\n", eb.msg);
    reply_failed(out, KT_INVALID, eb.msg);
  } else {
    kt__trace("helper: started");
    status = serve(r, in, ready, out, warm);
    munmap((void *)r, len);
  }
  close(in);
  close(ready);
  close(out);
  return status;
}

/* The next request on CONTROL (a byte with its three files), waiting at
 * most IDLE_S; false when none comes: the application ended (an end of
 * file), the wait timed out, or a signal asks to stop. A request sent while
 * the helper gives up waiting is still served: reading is shut down first
 * (later sends fail, and the application starts another helper), then
 * what had come is read. */
static bool next_request(int control, double idle_s, int fds[3]) {
  struct pollfd p = {.fd = control, .events = POLLIN};
  int n;
  while ((n = poll(&p, 1, (int)(idle_s * 1000))) < 0 && errno == EINTR && !stopping()) continue;
  if (n <= 0 || stopping()) {
    shutdown(control, SHUT_RD);
    if (stopping()) return false;
    fcntl(control, F_SETFL, O_NONBLOCK);
  }
  char c;
  int nfds = 0;
  if (!kt__recv_fds(control, &c, 1, fds, 3, &nfds)) return false;
  if (nfds == 3) { /* taken: the application need not start another helper for it */
    ssize_t w;
    while ((w = send(control, "t", 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) continue;
    return true;
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  return false;
}

/* The worker of K's device opened and kept for the first request
 * (kt__worker_park), as a tuning's teardown keeps it: that request binds it
 * (kt__worker_rebind) instead of waiting for a process start and the
 * driver's. K's sizes are the bare request's (all 1). */
static int open_device(kt_kernel *k, const kt__tune_request *r) {
  kt_context *ctx = k->ctx;
  const kt__kernel_decl *d = k->decl;
  kt__env env = {(const char *const *)d->sizes, r->sizes, d->nsizes, NULL};
  const char *workdir = kt__workdir(&ctx->err);
  if (!workdir) return KT_INVALID;
  kt__argset *args = NULL;
  KT__FORWARD(kt__argset_map(d, &env, ctx->opts.max_tensor_bytes, &args, &ctx->err));
  kt__worker_setup ws = {.backend = k->backend,
                         .device = ctx->opts.device,
                         .file = k->file,
                         .decl = d,
                         .sizes = &env,
                         .args = args,
                         .atol = -1,
                         .rtol = -1,
                         .workdir = workdir,
                         .bincache = &ctx->bincache,
                         .constants_seed = 42,
                         .spawn_zygote = ctx->env.v[KT__ENV_ZYGOTE].choice == KT__ZYGOTE_SPAWN};
  kt__worker *w = NULL;
  kt__device_info info;
  int rc = kt__worker_start(&ws, &info, &w, &ctx->err);
  if (rc == KT_OK) kt__trace("helper: prepared: the worker's device is open");
  if (rc == KT_OK && (!kt__worker_bindable(&ws) || !kt__worker_park(w))) kt__worker_stop(w);
  kt__argset_free(args);
  return rc;
}

/* A helper started by kt_kernel_prepare: the bare request in IN names the
 * kernel and device; their worker is opened before the first miss. A
 * failure only costs that miss the start (it is said in the trace). */
static void prepare(int in) {
  const kt__tune_request *r = NULL;
  size_t len = 0;
  kt__errbuf eb = {{0}};
  kt_context *ctx = NULL;
  kt_kernel *k = NULL;
  void *args[KT__RT_MAX_ARGS] = {0};
  int rc = kt__tune_request_map(in, &r, &len, &eb);
  kt__trace("helper: started to prepare");
  if (rc == KT_OK) {
    kt_options opts = context_options(r);
    rc = kt_context_create(&opts, &ctx);
    if (rc == KT_OK) rc = load_kernel(ctx, r, args, &k);
    if (rc == KT_OK) rc = open_device(k, r);
    if (rc != KT_OK) kt__trace("helper: prepare failed: %s", ctx ? kt_errmsg(ctx) : "no context");
    kt_kernel_destroy(k);
    kt_context_destroy(ctx);
    munmap((void *)r, len);
  } else {
    kt__trace("helper: prepare failed: %s", eb.msg);
  }
  close(in);
}

static bool parse_seconds(const char *s, double *out) {
  char *end;
  double v = s ? strtod(s, &end) : -1;
  if (!s || end == s || *end || !(v >= 0) || v > 86400) return false;
  *out = v;
  return true;
}

int kt__tune_helper_main(int argc, char **argv) {
  int in = -1, out = -1, ready = -1, control = -1;
  double idle_s = 0;
  bool prepared = argc == 12 && strcmp(argv[11], "--prepare") == 0;
  if (prepared) argc = 11;
  bool ok = (argc == 7 || argc == 11) && strcmp(argv[1], "--request") == 0 && parse_fd(argv[2], &in) &&
            strcmp(argv[3], "--reply") == 0 && parse_fd(argv[4], &out) && strcmp(argv[5], "--ready") == 0 &&
            parse_fd(argv[6], &ready);
  if (ok && argc == 11)
    ok = strcmp(argv[7], "--control") == 0 && parse_fd(argv[8], &control) && strcmp(argv[9], "--idle") == 0 &&
         parse_seconds(argv[10], &idle_s);
  if (!ok) {
    fprintf(stderr, "usage: ktune-tuner --request FD --reply FD --ready FD [--control FD --idle SECONDS [--prepare]]\n"
                    "ktune-tuner is the tuning process kt_launch starts on a miss; it is not run by hand.\n");
    return 2;
  }
  install_signals();
  int status = 0;
  if (prepared) {
    close(out);
    close(ready);
    prepare(in);
  } else {
    status = serve_request(in, out, ready, control >= 0);
  }
  if (control < 0) return status;
  /* Warm: the next miss of the application, until it ends or IDLE_S pass. */
  int fds[3];
  while (!stopping() && next_request(control, idle_s, fds)) {
    kt__trace("helper: a request of the application while warm");
    status = serve_request(fds[0], fds[1], fds[2], true);
  }
  kt__trace("helper: leaving (%s)", stopping() ? "stopped" : "no more requests");
  close(control);
  return status;
}
