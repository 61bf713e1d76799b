/* The dealer of a sweep over several devices (sweep.h). */
#include "sweep.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stop_signals.h"

/* The key processes' KTUNE_PRINT_AUTOTUNING line starts so: the dealer
 * takes the winner and the time from it (src/common.c writes it). */
static const char TUNING_LINE[] = "ktune: kernel ";
/* How long key processes get to stop after SIGTERM before SIGKILL (they
 * stop within 50 ms: docs/FAULTS.md). */
enum { STOP_GRACE_S = 10, POLL_MS = 200 };

/* One device and the key process running on it. */
typedef struct slot {
  int device;
  int key; /* -1: idle */
  key_process p;
  double started;
  char summary[1024]; /* the key's tuning line, after "key [...]: " */
  char device_arg[16];
} slot;

typedef struct dealer {
  sweep *s;
  slot *slots;
  char **outputs; /* per key: its standard output, once it ended */
  char *ended;    /* per key */
  int next_key, next_print, printed, running, status;
  int relay_tuning_lines; /* the user set KTUNE_PRINT_AUTOTUNING: show them too */
  double stop_since;      /* when the key processes were told to stop; 0: not yet */
} dealer;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *key_label(const dealer *d, int i) { return d->s->ks->list[i].label; }

/* Starts the next key on slot SL. */
static int deal(dealer *d, slot *sl) {
  int i = d->next_key++;
  const char *extra[] = {"--device", sl->device_arg, "--quiet", NULL};
  if (!d->s->quiet)
    fprintf(stderr, "ktune: key %d/%d: %s on device %d\n", i + 1, d->s->ks->n, key_label(d, i), sl->device);
  fflush(NULL);
  if (key_process_start(&sl->p, d->s->cmd, &d->s->ks->list[i], extra, KEY_PROCESS_STDOUT | KEY_PROCESS_STDERR) != 0) {
    fprintf(stderr, "ktune: error: cannot start ktune for key %s: %s\n", key_label(d, i), strerror(errno));
    return -1;
  }
  sl->key = i;
  sl->started = now_s();
  sl->summary[0] = 0;
  d->running++;
  return 0;
}

/* One line of a key process's standard error: its tuning line is kept for
 * the key's closing line, the rest is relayed behind its device. */
static void relay_line(const dealer *d, slot *sl, const char *line) {
  if (strncmp(line, TUNING_LINE, sizeof TUNING_LINE - 1) == 0) {
    const char *after = strstr(line, "]: ");
    snprintf(sl->summary, sizeof sl->summary, "%s", after ? after + 3 : line);
    if (!d->relay_tuning_lines) return;
  }
  fprintf(stderr, "[device %d] %s\n", sl->device, line);
}

/* Relays the complete lines SL's process wrote to standard error (all of
 * it, the last line unterminated, once it ended: AT_END). */
static void relay(const dealer *d, slot *sl, int at_end) {
  key_process *p = &sl->p;
  size_t used = 0;
  for (char *nl; p->err && (nl = memchr(p->err + used, '\n', p->err_len - used)) != NULL;) {
    *nl = 0;
    relay_line(d, sl, p->err + used);
    used = (size_t)(nl - p->err) + 1;
  }
  if (at_end && used < p->err_len) relay_line(d, sl, p->err + used), used = p->err_len;
  if (!p->err) return;
  memmove(p->err, p->err + used, p->err_len - used);
  p->err_len -= used;
  p->err[p->err_len] = 0;
}

/* The closing line of a key that ended with exit status STATUS. */
static void print_end(const dealer *d, const slot *sl, int status) {
  if (d->s->quiet && status == 0) return;
  const char *how = status == 0     ? (sl->summary[0] ? sl->summary : "done")
                    : status == 1   ? "no valid configuration"
                    : status == 130 ? "interrupted"
                                    : "failed";
  fprintf(stderr, "ktune: key %d/%d: %s ended on device %d after %.1f s: %s", sl->key + 1, d->s->ks->n,
          key_label(d, sl->key), sl->device, now_s() - sl->started, how);
  if (status != 0 && status != 1 && status != 130) fprintf(stderr, " (exit status %d)", status);
  fputc('\n', stderr);
}

/* Prints the outputs of the keys ended so far in key order, as far as the
 * first key not ended (ALL: every ended key, gaps skipped). */
static void print_outputs(dealer *d, int all) {
  for (; d->next_print < d->s->ks->n; d->next_print++) {
    int i = d->next_print;
    if (!d->ended[i] && !all) break;
    if (!d->outputs[i]) continue;
    if (d->s->json && d->printed++) fputs(",\n", stdout);
    fputs(d->outputs[i], stdout);
    free(d->outputs[i]);
    d->outputs[i] = NULL;
  }
  fflush(stdout);
}

/* SL's process closed its output: waits for it and records how it ended. */
static void finish(dealer *d, slot *sl) {
  int status = key_process_wait(&sl->p);
  relay(d, sl, 1);
  int i = sl->key;
  print_end(d, sl, status);
  if (sl->p.len) d->outputs[i] = sl->p.out, sl->p.out = NULL; /* the JSON document or the table */
  key_process_free(&sl->p);
  d->ended[i] = 1;
  d->s->tuned += status == 0 || status == 1;
  if (status == 1) d->s->novalid[i] = 1;
  else if (status != 0 && d->status == 0) d->status = status;
  sl->key = -1;
  d->running--;
  print_outputs(d, 0);
}

/* Tells every running key process to stop (once), and kills those still
 * there STOP_GRACE_S later. */
static void stop_all(dealer *d) {
  double now = now_s();
  int kill_now = d->stop_since > 0 && now - d->stop_since > STOP_GRACE_S;
  if (d->stop_since > 0 && !kill_now) return;
  if (d->stop_since == 0) d->stop_since = now;
  for (int j = 0; j < d->s->ndevices; j++)
    if (d->slots[j].key >= 0 && d->slots[j].p.pid > 0) kill(d->slots[j].p.pid, kill_now ? SIGKILL : SIGTERM);
}

/* Waits (signals unblocked, MASK is the mask to wait with) until a key
 * process has output or a signal came, then reads what there is and
 * finishes the processes that closed their output. */
static void pump(dealer *d, const sigset_t *mask) {
  struct pollfd fds[2 * SWEEP_DEVICES_MAX];
  int nfds = 0;
  for (int j = 0; j < d->s->ndevices; j++) {
    const slot *sl = &d->slots[j];
    if (sl->key < 0) continue;
    if (sl->p.out_fd >= 0) fds[nfds++] = (struct pollfd){.fd = sl->p.out_fd, .events = POLLIN};
    if (sl->p.err_fd >= 0) fds[nfds++] = (struct pollfd){.fd = sl->p.err_fd, .events = POLLIN};
  }
  struct timespec timeout = {0, POLL_MS * 1000000L};
  if (ppoll(fds, (nfds_t)nfds, &timeout, mask) < 0 && errno != EINTR) return;
  for (int j = 0; j < d->s->ndevices; j++) {
    slot *sl = &d->slots[j];
    if (sl->key < 0) continue;
    int open = key_process_read(&sl->p, 1);
    relay(d, sl, 0);
    if (open <= 0) finish(d, sl);
  }
}

/* Deals the keys until all ended, a key failed or a signal came. */
static void run(dealer *d, const sigset_t *mask) {
  for (;;) {
    int stopping = stop_signal() || d->status != 0;
    if (stop_signal()) stop_all(d);
    for (int j = 0; !stopping && j < d->s->ndevices && d->next_key < d->s->ks->n; j++)
      if (d->slots[j].key < 0 && deal(d, &d->slots[j]) != 0) d->status = 2, stopping = 1;
    if (d->running == 0) return;
    pump(d, mask);
  }
}

/* The command's stopping signals (stop_signals.h), blocked but while
 * waiting (ppoll's mask), so that none is lost between a look at
 * stop_signal() and the wait. OLD: the mask to put back. */
static void catch_signals(sigset_t *old) {
  stop_signals_install();
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, old);
}

/* The key processes print their tuning line (KTUNE_PRINT_AUTOTUNING), from
 * which the dealer takes each key's winner; the user's setting comes back
 * after the sweep. Returns whether the user had asked for those lines. */
static int ask_for_tuning_lines(char **saved) {
  const char *env = getenv("KTUNE_PRINT_AUTOTUNING");
  *saved = env ? strdup(env) : NULL;
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  return env && *env && strcmp(env, "0") != 0;
}

static void restore_tuning_lines(char *saved) {
  if (saved) setenv("KTUNE_PRINT_AUTOTUNING", saved, 1);
  else unsetenv("KTUNE_PRINT_AUTOTUNING");
  free(saved);
}

int sweep_run(sweep *s) {
  if (s->ndevices > SWEEP_DEVICES_MAX) s->ndevices = SWEEP_DEVICES_MAX;
  dealer d = {.s = s,
              .slots = calloc((size_t)s->ndevices, sizeof *d.slots),
              .outputs = calloc((size_t)s->ks->n, sizeof *d.outputs),
              .ended = calloc((size_t)s->ks->n, 1)};
  if (!d.slots || !d.outputs || !d.ended) {
    free(d.slots), free(d.outputs), free(d.ended);
    fprintf(stderr, "ktune: error: out of memory\n");
    return 2;
  }
  for (int j = 0; j < s->ndevices; j++) {
    d.slots[j] = (slot){.device = s->devices[j], .key = -1, .p = {.out_fd = -1, .err_fd = -1}};
    snprintf(d.slots[j].device_arg, sizeof d.slots[j].device_arg, "%d", s->devices[j]);
  }
  char *saved_env;
  d.relay_tuning_lines = ask_for_tuning_lines(&saved_env);
  sigset_t old;
  catch_signals(&old);
  run(&d, &old);
  print_outputs(&d, 1);
  sigprocmask(SIG_SETMASK, &old, NULL);
  restore_tuning_lines(saved_env);
  if (stop_signal()) fprintf(stderr, "ktune: interrupted: %d of %d keys ended\n", s->tuned, s->ks->n);
  int status = stop_signal() ? 130 : d.status;
  for (int i = 0; i < s->ks->n; i++) free(d.outputs[i]);
  free(d.slots), free(d.outputs), free(d.ended);
  return status;
}
