/* `ktune tune ... --mpi`: a sweep's keys shared by MPI ranks (mpi_sweep.h).
 *
 * The messages (tag TO_DEALER from a rank to rank 0, TO_RANK back), each
 * one wire_head and its two payloads:
 *   rank -> 0   ASK     a slot is free: a key, please
 *               BEAT    all slots busy, still alive
 *               RESULT  key, exit status; its rows (a `cache export`), its
 *                       captured table or JSON document
 *   0 -> rank   KEY     key; its kernel, key sizes and "NAME=VALUE" sizes
 *                       (NUL-separated), rank 0's rows of that key
 *               WAIT    nothing to deal now, ask again
 *               ACK     result taken (or dropped: another rank's came first)
 *               STOP    every key is done: end
 * Rank 0 answers every message at once and sends nothing else, so it never
 * sends to a rank that has not just spoken (a send to a dead rank never
 * completes). A rank waits for the answer to one message before it sends
 * the next; one that gets none for a long time takes rank 0 for gone. */
#include "mpi_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KTUNE_HAVE_MPI
#include <mpi.h>
#endif

const char *mpi_build_note(void) {
#ifdef KTUNE_HAVE_MPI
  static char note[64];
  snprintf(note, sizeof note, " (MPI: Open MPI %d.%d.%d)", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
           OMPI_RELEASE_VERSION);
  return note;
#else
  return " (no MPI)";
#endif
}

int mpi_check_launcher(void) {
#ifndef KTUNE_HAVE_MPI
  fputs("ktune: error: --mpi: this ktune was built without MPI (configured with -DKTUNE_MPI=OFF, or where Open "
        "MPI's development files were missing); install them (Debian: apt-get install openmpi-bin libopenmpi-dev) and "
        "build "
        "again (cmake -S . -B build -DKTUNE_MPI=ON), or tune without --mpi\n",
        stderr);
  return 2;
#else
  /* What Open MPI's mpirun, a PMIx launcher (srun --mpi=pmix) and a PMI one set. */
  static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
    if (getenv(launcher_vars[i])) return 0;
  fputs("ktune: error: --mpi: this process was not started by an MPI launcher (no OMPI_COMM_WORLD_SIZE, PMIX_RANK "
        "or PMI_RANK in its environment); run it as `mpirun -np R ktune tune ... --mpi` (add --enable-recovery "
        "so that a rank that dies does not end the job), or tune without --mpi\n",
        stderr);
  return 2;
#endif
}

#ifndef KTUNE_HAVE_MPI

/* mpi_check_launcher refuses first: nothing below is reached. */
int mpi_start(int *rank) {
  *rank = -1;
  return mpi_check_launcher();
}
int mpi_worker(const mpi_run *run) { return mpi_check_launcher(); }
int mpi_dealer(const mpi_run *run, kt_context *ctx, const keys *ks, mpi_key_id_fn key_id, void *ud) {
  return mpi_check_launcher();
}
int mpi_abandon(int status) { return status; }

#else

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "key_parent.h"
#include "key_process.h"
#include "stop_signals.h"

enum { TO_DEALER = 17, TO_RANK = 18 };
enum { ASK = 1, BEAT, RESULT, KEY, WAIT, ACK, STOP };
enum { EXIT_BAD = 2, EXIT_INTERRUPTED = 130 };

typedef struct wire_head {
  int32_t kind, key, status, pad;
  uint64_t len[2];
} wire_head;

typedef struct message {
  wire_head h;
  char *data[2]; /* into buf, each NUL-terminated */
  char *buf;
  int from;
} message;

/* The command's stopping signals, and no SIGPIPE: a send to a rank gone
 * fails instead. */
static void catch_signals(void) {
  stop_signals_install();
  signal(SIGPIPE, SIG_IGN);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(void) { nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); }

/* Seconds without a message after which rank 0 takes a rank for gone and
 * deals its keys again (KTUNE_MPI_SILENT_S, 30 by default). A busy rank
 * says it is alive six times as often; a rank takes rank 0 for gone after
 * three times as long without an answer. */
static double silent_s(void) {
  const char *v = getenv("KTUNE_MPI_SILENT_S");
  double s = v ? strtod(v, NULL) : 0;
  return s > 0 ? s : 30;
}

/* MPI_Finalize, bounded: with a rank dead it can wait forever for it (seen
 * with Open MPI 4.1 under --enable-recovery, in rank 0 and in a living
 * rank alike). Everything is written and closed by then, so past the limit
 * the process just exits with STATUS. */
static volatile sig_atomic_t g_final_status;
static void on_finalize_alarm(int sig) { _exit(g_final_status); }

static int finalize(int status) {
  fflush(NULL);
  g_final_status = status;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_finalize_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  alarm(10);
  MPI_Finalize();
  alarm(0);
  return status;
}

/* ---- messages --------------------------------------------------------- */

/* Sends in flight: the buffer lives until the send completes. */
typedef struct outbox {
  MPI_Request *req;
  char **buf;
  int n, cap;
} outbox;

static int post(outbox *o, int to, int tag, int kind, int which, int status, const char *p0, size_t n0, const char *p1,
                size_t n1) {
  size_t total = sizeof(wire_head) + n0 + n1;
  if (total > INT32_MAX) {
    fprintf(stderr, "ktune: error: --mpi: a message of %zu bytes is more than MPI sends at once\n", total);
    return -1;
  }
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 16;
    o->req = realloc(o->req, (size_t)o->cap * sizeof *o->req);
    o->buf = realloc(o->buf, (size_t)o->cap * sizeof *o->buf);
    if (!o->req || !o->buf) return fputs("ktune: error: out of memory\n", stderr), -1;
  }
  char *buf = malloc(total);
  if (!buf) return fputs("ktune: error: out of memory\n", stderr), -1;
  wire_head h = {kind, which, status, 0, {n0, n1}};
  memcpy(buf, &h, sizeof h);
  if (n0) memcpy(buf + sizeof h, p0, n0);
  if (n1) memcpy(buf + sizeof h + n0, p1, n1);
  if (MPI_Isend(buf, (int)total, MPI_BYTE, to, tag, MPI_COMM_WORLD, &o->req[o->n]) != MPI_SUCCESS) {
    free(buf);
    fprintf(stderr, "ktune: error: --mpi: cannot send to rank %d\n", to);
    return -1;
  }
  o->buf[o->n++] = buf;
  return 0;
}

/* Frees the sends that completed; returns how many are still in flight. */
static int outbox_poll(outbox *o) {
  for (int i = 0; i < o->n;) {
    int done = 0;
    if (MPI_Test(&o->req[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      done = 1; /* a failed peer: nothing to wait for */
    if (!done) {
      i++;
      continue;
    }
    free(o->buf[i]);
    o->req[i] = o->req[o->n - 1];
    o->buf[i] = o->buf[o->n - 1];
    o->n--;
  }
  return o->n;
}

/* A message with TAG from FROM (MPI_ANY_SOURCE) if one has come: 1 and *M,
 * 0 when none has, -1 on a malformed one or an error. */
static int receive(int from, int tag, message *m) {
  int flag = 0, count = 0;
  MPI_Status st;
  if (MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) return -1;
  if (!flag) return 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  *m = (message){.from = st.MPI_SOURCE, .buf = malloc((size_t)count + 2)};
  if (!m->buf) return -1;
  if (MPI_Recv(m->buf, count, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
      (size_t)count < sizeof m->h) {
    free(m->buf);
    return -1;
  }
  memcpy(&m->h, m->buf, sizeof m->h);
  if (m->h.len[0] > (size_t)count - sizeof m->h || m->h.len[1] > (size_t)count - sizeof m->h - m->h.len[0]) {
    free(m->buf);
    return -1;
  }
  /* Payloads move down one byte each so that both end in a NUL. */
  char *p0 = m->buf + sizeof m->h, *p1 = p0 + m->h.len[0];
  memmove(p1 + 1, p1, m->h.len[1]);
  p1[1 + m->h.len[1]] = 0;
  m->data[1] = p1 + 1;
  memmove(m->buf, p0, m->h.len[0]);
  m->buf[m->h.len[0]] = 0;
  m->data[0] = m->buf;
  return 1;
}

/* ---- files and the database ------------------------------------------- */

static char *make_private_dir(void) {
  const char *tmp = getenv("TMPDIR");
  char *dir = malloc(4096);
  if (!dir) return NULL;
  snprintf(dir, 4096, "%s/ktune-mpi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "ktune: error: --mpi: cannot make a folder %s for this rank's database: %s\n", dir,
            strerror(errno));
    free(dir);
    return NULL;
  }
  return dir;
}

/* Removes DIR with what it holds: the rows file and NSLOTS slot databases. */
static void remove_private_dir(char *dir, int nslots) {
  if (!dir) return;
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".tuning"};
  char path[4200];
  snprintf(path, sizeof path, "%s/rows.json", dir);
  unlink(path);
  for (int i = 0; i < nslots; i++)
    for (size_t j = 0; j < sizeof suffixes / sizeof suffixes[0]; j++) {
      snprintf(path, sizeof path, "%s/slot%d.db%s", dir, i, suffixes[j]);
      unlink(path);
    }
  if (rmdir(dir) != 0) fprintf(stderr, "ktune: warning: --mpi: could not remove %s: %s\n", dir, strerror(errno));
  free(dir);
}

/* Imports the export document TEXT into CTX's database, through a file in DIR. */
static int import_text(kt_context *ctx, const char *dir, const char *text, size_t len, const char *what) {
  char path[4200];
  snprintf(path, sizeof path, "%s/rows.json", dir);
  FILE *f = fopen(path, "w");
  int ok = f && fwrite(text, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = 0;
  int rc = ok ? kt_cache_import(ctx, path, NULL) : KT_IO;
  unlink(path);
  if (rc != KT_OK)
    fprintf(stderr, "ktune: error: --mpi: %s: %s\n", what, ok ? kt_errmsg(ctx) : "cannot write its rows to a file");
  return rc == KT_OK ? 0 : -1;
}

/* The rows of key ID in CTX's database as an export document (malloc'ed,
 * *LEN bytes), or NULL. */
static char *export_key(kt_context *ctx, const mpi_key_id *id, size_t *len) {
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  if (!f) return NULL;
  kt_cache_filter filter = {id->kernel, NULL, id->sizes};
  int rc = kt_cache_export(ctx, &filter, "json", f);
  fclose(f);
  if (rc != KT_OK) {
    fprintf(stderr, "ktune: error: --mpi: exporting the rows of %s %s: %s\n", id->kernel, id->sizes, kt_errmsg(ctx));
    free(text);
    return NULL;
  }
  return text;
}

/* ---- slots: one key process per local device -------------------------- */

enum { MAX_SLOTS = 16 };

typedef struct slot {
  int device;
  int key; /* the key it tunes, -1: free */
  key k;   /* its sizes */
  mpi_key_id id;
  key_process p;
  kt_context *ctx; /* worker ranks: on DB, the slot's own database */
  char db[4200];   /* worker ranks: that database; rank 0: "" (its own) */
} slot;

static void key_clear(key *k) {
  for (int i = 0; i < k->nsizes; i++) free(k->sizes[i]);
  *k = (key){0};
}

/* Key K from its NUL-separated sizes TEXT (LEN bytes). */
static int key_from_text(key *k, const char *text, size_t len) {
  *k = (key){0};
  size_t used = 0;
  for (const char *s = text; s < text + len; s += strlen(s) + 1) {
    if (k->nsizes == KEY_MAX_SIZES || !(k->sizes[k->nsizes] = strdup(s))) return key_clear(k), -1;
    k->nsizes++;
    used += (size_t)snprintf(k->label + used, sizeof k->label - used, "%s%s", used ? " " : "", s);
    if (used >= sizeof k->label) used = sizeof k->label - 1;
  }
  return 0;
}

/* Starts key I (sizes K, taken over) in the free slot S. */
static int slot_start(slot *s, const mpi_run *run, int i, key *k) {
  static const char *const worker_drop[] = {"--device", "--db", NULL}, *const own_drop[] = {"--device", NULL};
  static const char *const flags[] = {"--mpi", NULL};
  char device[32];
  snprintf(device, sizeof device, "%d", s->device);
  const char *extra[] = {"--device", device, s->db[0] ? "--db" : NULL, s->db, NULL};
  key_command cmd = {run->argc, run->argv, s->db[0] ? worker_drop : own_drop, flags};
  fflush(NULL);
  s->k = *k;
  *k = (key){0};
  if (key_process_start(&s->p, &cmd, &s->k, extra, 1) != 0) {
    fprintf(stderr, "ktune: error: cannot start ktune for key %s: %s\n", s->k.label, strerror(errno));
    key_clear(&s->k);
    return -1;
  }
  s->key = i;
  return 0;
}

/* Whether S's key process has ended: 1 with its exit status in *STATUS. */
static int slot_done(slot *s, int *status) {
  if (s->key < 0) return 0;
  if (key_process_read(&s->p, 1) > 0) return 0;
  *status = key_process_wait(&s->p);
  return 1;
}

static void slot_release(slot *s) {
  key_process_free(&s->p);
  key_clear(&s->k);
  s->key = -1;
}

/* Ends S's key process (a duplicate nobody needs, or an interruption). */
static void slot_stop(slot *s) {
  if (s->key < 0) return;
  if (s->p.pid > 0) kill(s->p.pid, SIGTERM);
  key_process_wait(&s->p);
  slot_release(s);
}

/* ---- worker ranks ----------------------------------------------------- */

/* A worker rank keeps one slot per local device (--device N, 0,2,3 or all),
 * each with a key in flight. */
typedef struct worker {
  const mpi_run *run;
  slot slots[MAX_SLOTS];
  int ended[MAX_SLOTS];  /* the slot's key process ended, its result not sent yet */
  int status[MAX_SLOTS]; /* its exit status */
  int nslots;
  char *dir;
  outbox out;
  int waiting;     /* an answer is due */
  double asked_at; /* when the message it answers was sent */
  double next_ask; /* after a WAIT */
} worker;

static int worker_send(worker *w, int kind, int which, int status, const char *p0, size_t n0, const char *p1,
                       size_t n1) {
  if (post(&w->out, 0, TO_DEALER, kind, which, status, p0, n0, p1, n1) != 0) return -1;
  w->waiting = 1;
  w->asked_at = now_s();
  return 0;
}

static slot *free_slot(worker *w) {
  for (int i = 0; i < w->nslots; i++)
    if (w->slots[i].key < 0) return &w->slots[i];
  return NULL;
}

/* A KEY: its rows from rank 0 into a free slot's database, then its process. */
static int worker_take_key(worker *w, const message *m) {
  slot *s = free_slot(w);
  const char *kernel = m->data[0], *sizes = kernel + strlen(kernel) + 1, *rest = sizes + strlen(sizes) + 1;
  if (!s || rest > m->data[0] + m->h.len[0]) return -1;
  size_t rest_len = m->h.len[0] - (size_t)(rest - m->data[0]);
  snprintf(s->id.kernel, sizeof s->id.kernel, "%s", kernel);
  snprintf(s->id.sizes, sizeof s->id.sizes, "%s", sizes);
  key k;
  if (key_from_text(&k, rest, rest_len) != 0) return -1;
  if (m->h.len[1] && import_text(s->ctx, w->dir, m->data[1], m->h.len[1], "rank 0's rows of the key") != 0) {
    key_clear(&k);
    return -1;
  }
  int rc = slot_start(s, w->run, m->h.key, &k);
  key_clear(&k);
  return rc;
}

/* Slot I's key ended: its rows (exported now) and output go to rank 0, and
 * the slot is free again. */
static int worker_send_result(worker *w, int i) {
  slot *s = &w->slots[i];
  size_t rows_len = 0;
  char *rows = export_key(s->ctx, &s->id, &rows_len);
  int status = rows ? w->status[i] : EXIT_BAD;
  int rc = worker_send(w, RESULT, s->key, status, rows, rows ? rows_len : 0, s->p.out, s->p.len);
  free(rows);
  w->ended[i] = 0;
  slot_release(s);
  return rc;
}

/* The answer due, if it has come: 1 to go on, 0 when told to stop, -1 on a
 * fault (rank 0 gone, a bad message). */
static int worker_answer(worker *w, double quiet_s) {
  message m;
  int got = receive(0, TO_RANK, &m);
  if (got < 0) return fputs("ktune: error: --mpi: a malformed message from rank 0\n", stderr), -1;
  if (!got) {
    if (now_s() - w->asked_at <= 3 * quiet_s) return 1;
    fprintf(stderr, "ktune: error: --mpi: rank 0 has not answered for %.0f s: taking it for gone\n",
            now_s() - w->asked_at);
    return -1;
  }
  w->waiting = 0;
  int kind = m.h.kind, rc = 1;
  if (kind == KEY && worker_take_key(w, &m) != 0) rc = -1;
  if (kind == WAIT) w->next_ask = now_s() + 0.5;
  if (kind == STOP) rc = 0;
  free(m.buf);
  return rc;
}

/* One turn: the slots, the answer due, else the next message (a result
 * first, then a request for work, else a sign of life). Returns as
 * worker_answer. */
static int worker_turn(worker *w, double quiet_s) {
  int busy = -1;
  for (int i = 0; i < w->nslots; i++) {
    if (!w->ended[i] && slot_done(&w->slots[i], &w->status[i])) w->ended[i] = 1;
    if (w->slots[i].key >= 0 && !w->ended[i]) busy = w->slots[i].key;
  }
  outbox_poll(&w->out);
  if (w->waiting) return worker_answer(w, quiet_s);
  for (int i = 0; i < w->nslots; i++)
    if (w->ended[i]) return worker_send_result(w, i) == 0 ? 1 : -1;
  if (free_slot(w) && now_s() >= w->next_ask) return worker_send(w, ASK, -1, 0, NULL, 0, NULL, 0) == 0 ? 1 : -1;
  if (!free_slot(w) && now_s() - w->asked_at > quiet_s / 6)
    return worker_send(w, BEAT, busy, 0, NULL, 0, NULL, 0) == 0 ? 1 : -1;
  return 1;
}

/* The slots, one per device, each with its database in DIR. */
static int worker_slots(worker *w, const int *devices, int n) {
  for (int i = 0; i < n && i < MAX_SLOTS; i++) {
    slot *s = &w->slots[w->nslots++];
    *s = (slot){.device = devices[i], .key = -1};
    snprintf(s->db, sizeof s->db, "%s/slot%d.db", w->dir, i);
    kt_options o = {.db_path = s->db, .quiet = 1};
    if (kt_context_create(&o, &s->ctx) != KT_OK) {
      fprintf(stderr, "ktune: error: --mpi: %s\n", kt_errmsg(s->ctx));
      return -1;
    }
  }
  return 0;
}

int mpi_worker(const mpi_run *run) {
  catch_signals();
  key_parent_mark();
  worker w = {.run = run};
  int status = 0;
  w.dir = make_private_dir();
  if (!w.dir || run->ndevices < 1 || worker_slots(&w, run->devices, run->ndevices) != 0) status = EXIT_BAD;
  double quiet_s = silent_s();
  int rc = status ? -1 : 1;
  while (rc > 0 && !stop_signal()) {
    rc = worker_turn(&w, quiet_s);
    nap();
  }
  if (stop_signal()) status = EXIT_INTERRUPTED;
  else if (rc < 0) status = status ? status : 1;
  for (int i = 0; i < w.nslots; i++) {
    slot_stop(&w.slots[i]);
    kt_context_destroy(w.slots[i].ctx);
  }
  remove_private_dir(w.dir, w.nslots);
  double until = now_s() + 5; /* the last messages reach a living rank 0 */
  while (outbox_poll(&w.out) && now_s() < until && rc == 0) nap();
  return finalize(status);
}

/* ---- rank 0 ----------------------------------------------------------- */

enum { MAX_HOLDERS = 8 };

typedef struct key_state {
  int done;
  int status; /* the key process's exit status, once done */
  char *doc;  /* its table or JSON document */
  size_t doc_len;
  int holders[MAX_HOLDERS]; /* the ranks tuning it now */
  int nholders, dealt;
  int id_known;
  mpi_key_id id;
} key_state;

typedef struct dealer {
  const mpi_run *run;
  kt_context *ctx;
  const keys *ks;
  mpi_key_id_fn key_id;
  void *ud;
  key_state *st;
  int nranks;
  double *heard;       /* per rank: when it last spoke */
  char *stopped;       /* per rank: told to stop */
  slot own[MAX_SLOTS]; /* rank 0's own devices, a key process each */
  int nown;
  char *dir;
  outbox out;
  int ndone, status, redealt, duplicates;
  double quiet_s;
} dealer;

static int silent(const dealer *d, int rank) { return rank != 0 && now_s() - d->heard[rank] > d->quiet_s; }

static int finished(const dealer *d) { return d->ndone == d->ks->n || d->status; }

static const mpi_key_id *key_id_of(dealer *d, int i) {
  key_state *s = &d->st[i];
  if (!s->id_known && d->key_id(d->ud, i, &s->id) != 0) return NULL;
  s->id_known = 1;
  return &s->id;
}

static void holder_drop(key_state *s, int rank) {
  for (int j = 0; j < s->nholders; j++)
    if (s->holders[j] == rank) s->holders[j--] = s->holders[--s->nholders];
}

/* The key to give RANK: one never dealt, else one whose every holder has
 * fallen silent (the rank died, or its host), fewest dealt first; -1: none. */
static int pick_key(dealer *d, int rank) {
  int best = -1;
  for (int i = 0; i < d->ks->n; i++) {
    key_state *s = &d->st[i];
    if (s->done || s->nholders == MAX_HOLDERS) continue;
    if (!s->dealt) return i;
    int orphan = 1;
    for (int j = 0; j < s->nholders; j++) orphan &= s->holders[j] != rank && silent(d, s->holders[j]);
    if (orphan && (best < 0 || s->dealt < d->st[best].dealt)) best = i;
  }
  return best;
}

static void note_deal(dealer *d, int i, int rank) {
  key_state *s = &d->st[i];
  if (!d->run->quiet) {
    if (s->dealt) {
      fprintf(stderr, "ktune: key %d/%d: %s again, on rank %d (rank", i + 1, d->ks->n, d->ks->list[i].label, rank);
      for (int j = 0; j < s->nholders; j++) fprintf(stderr, " %d", s->holders[j]);
      fprintf(stderr, " silent for %.0f s or more)\n", d->quiet_s);
    } else {
      fprintf(stderr, "ktune: key %d/%d: %s on rank %d\n", i + 1, d->ks->n, d->ks->list[i].label, rank);
    }
  }
  d->redealt += s->dealt > 0;
  s->dealt++;
  s->holders[s->nholders++] = rank;
}

/* The KEY message for key I to RANK, with rank 0's rows of it. */
static int deal_to(dealer *d, int i, int rank) {
  const mpi_key_id *id = key_id_of(d, i);
  if (!id) return -1;
  const key *k = &d->ks->list[i];
  size_t len = strlen(id->kernel) + strlen(id->sizes) + 2;
  for (int j = 0; j < k->nsizes; j++) len += strlen(k->sizes[j]) + 1;
  char *text = malloc(len), *p = text;
  if (!text) return -1;
  p += sprintf(p, "%s", id->kernel) + 1;
  p += sprintf(p, "%s", id->sizes) + 1;
  for (int j = 0; j < k->nsizes; j++) p += sprintf(p, "%s", k->sizes[j]) + 1;
  size_t rows_len = 0;
  char *rows = export_key(d->ctx, id, &rows_len);
  note_deal(d, i, rank);
  int rc = post(&d->out, rank, TO_RANK, KEY, i, 0, text, len, rows, rows ? rows_len : 0);
  free(text);
  free(rows);
  return rc;
}

/* A key's result, from RANK: the first counts, a later one is dropped. */
static void take_result(dealer *d, int i, int rank, int status, const char *rows, size_t rows_len, char *doc,
                        size_t doc_len) {
  key_state *s = &d->st[i];
  holder_drop(s, rank);
  if (s->done) {
    d->duplicates++;
    free(doc);
    return;
  }
  if (rows_len && import_text(d->ctx, d->dir, rows, rows_len, "importing a rank's results") != 0) status = EXIT_BAD;
  s->done = 1;
  s->status = status;
  s->doc = doc;
  s->doc_len = doc_len;
  d->ndone++;
  if (status != 0 && status != 1 && !d->status) d->status = status;
}

static void own_slot_turn(dealer *d, slot *own) {
  int status;
  if (slot_done(own, &status)) {
    int i = own->key;
    char *doc = own->p.out;
    size_t len = own->p.len;
    own->p.out = NULL;
    slot_release(own);
    take_result(d, i, 0, status, NULL, 0, doc, len);
  }
  if (own->key >= 0 && finished(d)) slot_stop(own);
  int i;
  if (own->key < 0 && !finished(d) && (i = pick_key(d, 0)) >= 0) {
    key k = {0};
    const key *from = &d->ks->list[i];
    for (int j = 0; j < from->nsizes; j++) k.sizes[k.nsizes++] = strdup(from->sizes[j]);
    snprintf(k.label, sizeof k.label, "%s", from->label);
    note_deal(d, i, 0);
    if (slot_start(own, d->run, i, &k) != 0) take_result(d, i, 0, EXIT_BAD, NULL, 0, NULL, 0);
    key_clear(&k);
  }
}

/* Rank 0's own slots: a result taken, a key started where one is free. */
static void own_turn(dealer *d) {
  for (int j = 0; j < d->nown; j++) own_slot_turn(d, &d->own[j]);
}

/* Whether any of rank 0's own slots still has a key. */
static int own_busy(const dealer *d) {
  for (int j = 0; j < d->nown; j++)
    if (d->own[j].key >= 0) return 1;
  return 0;
}

/* Answers one message from another rank. */
static void answer(dealer *d, message *m) {
  int r = m->from, which = m->h.key, rc = 0;
  d->heard[r] = now_s();
  if (m->h.kind == RESULT && which >= 0 && which < d->ks->n) {
    char *doc = m->h.len[1] ? strdup(m->data[1]) : NULL;
    take_result(d, which, r, m->h.status, m->data[0], m->h.len[0], doc, doc ? m->h.len[1] : 0);
  }
  int i = m->h.kind == ASK && !finished(d) ? pick_key(d, r) : -1;
  if (finished(d)) {
    rc = post(&d->out, r, TO_RANK, STOP, -1, 0, NULL, 0, NULL, 0);
    d->stopped[r] = 1;
  } else if (i >= 0) {
    rc = deal_to(d, i, r);
  } else {
    rc = post(&d->out, r, TO_RANK, m->h.kind == ASK ? WAIT : ACK, -1, 0, NULL, 0, NULL, 0);
  }
  if (rc != 0 && !d->status) d->status = EXIT_BAD;
}

/* Every rank told to stop, or silent. */
static int everyone_stopped(const dealer *d) {
  for (int r = 1; r < d->nranks; r++)
    if (!d->stopped[r] && !silent(d, r)) return 0;
  return 1;
}

static void print_results(const dealer *d) {
  int json = d->run->json, several = d->ks->n > 1, first = 1;
  if (json && several) fputs("{\"keys\": [\n", stdout);
  for (int i = 0; i < d->ks->n; i++) {
    const key_state *s = &d->st[i];
    if (!s->doc_len) continue;
    if (json && several && !first) fputs(",\n", stdout);
    fwrite(s->doc, 1, s->doc_len, stdout);
    first = 0;
  }
  if (json && several) fputs("]}\n", stdout);
  fflush(stdout);
}

static int summary(const dealer *d) {
  int tuned = 0, novalid = 0;
  for (int i = 0; i < d->ks->n; i++) {
    tuned += d->st[i].done && (d->st[i].status == 0 || d->st[i].status == 1);
    novalid += d->st[i].done && d->st[i].status == 1;
  }
  if (!d->run->quiet || novalid || tuned < d->ks->n) {
    fprintf(stderr, "ktune: %d of %d keys tuned on %d ranks, %d with a winner, %d without a valid configuration", tuned,
            d->ks->n, d->nranks, tuned - novalid, novalid);
    if (d->redealt) fprintf(stderr, "; %d dealt again after a rank fell silent", d->redealt);
    if (d->duplicates) fprintf(stderr, "; %d later result%s dropped", d->duplicates, d->duplicates > 1 ? "s" : "");
    fputc('\n', stderr);
  }
  for (int i = 0; i < d->ks->n; i++)
    if (d->st[i].done && d->st[i].status == 1)
      fprintf(stderr, "ktune: no valid configuration for key %s\n", d->ks->list[i].label);
  if (d->status) return d->status;
  return novalid ? 1 : 0;
}

/* Waits (boundedly) for the sends to ranks still alive, then finalizes. */
static int dealer_finalize(outbox *out, int status) {
  double until = now_s() + 5;
  while (outbox_poll(out) && now_s() < until) nap();
  return finalize(status);
}

int mpi_dealer(const mpi_run *run, kt_context *ctx, const keys *ks, mpi_key_id_fn key_id, void *ud) {
  catch_signals();
  key_parent_mark();
  dealer d = {.run = run, .ctx = ctx, .ks = ks, .key_id = key_id, .ud = ud, .quiet_s = silent_s()};
  MPI_Comm_size(MPI_COMM_WORLD, &d.nranks);
  d.st = calloc((size_t)ks->n, sizeof *d.st);
  d.heard = calloc((size_t)d.nranks, sizeof *d.heard);
  d.stopped = calloc((size_t)d.nranks, 1);
  d.nown = run->ndevices < MAX_SLOTS ? run->ndevices : MAX_SLOTS;
  for (int j = 0; j < d.nown; j++) d.own[j] = (slot){.device = run->devices[j], .key = -1};
  d.dir = make_private_dir();
  if (!d.st || !d.heard || !d.stopped || !d.dir) d.status = EXIT_BAD;
  for (int r = 0; d.heard && r < d.nranks; r++) d.heard[r] = now_s();
  while (d.heard && d.stopped && !(finished(&d) && !own_busy(&d) && everyone_stopped(&d))) {
    if (stop_signal()) {
      if (!d.status) d.status = EXIT_INTERRUPTED;
      for (int j = 0; j < d.nown; j++) slot_stop(&d.own[j]);
      break;
    }
    if (d.st) own_turn(&d);
    message m;
    int got, busy = 0;
    while ((got = receive(MPI_ANY_SOURCE, TO_DEALER, &m)) > 0) {
      answer(&d, &m);
      free(m.buf);
      busy = 1;
    }
    if (got < 0) fputs("ktune: warning: --mpi: a malformed message from a rank was dropped\n", stderr);
    outbox_poll(&d.out);
    if (!busy) nap();
  }
  int status = d.status;
  if (d.st) {
    print_results(&d);
    status = summary(&d);
    for (int i = 0; i < ks->n; i++) free(d.st[i].doc);
  }
  free(d.st);
  free(d.heard);
  free(d.stopped);
  remove_private_dir(d.dir, 0);
  return dealer_finalize(&d.out, status);
}

int mpi_abandon(int status) {
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  char *stopped = calloc((size_t)nranks + 1, 1);
  outbox out = {0};
  double until = now_s() + silent_s();
  int left = nranks - 1;
  while (stopped && left > 0 && now_s() < until && !stop_signal()) {
    message m;
    if (receive(MPI_ANY_SOURCE, TO_DEALER, &m) > 0) {
      if (!stopped[m.from]) left--;
      stopped[m.from] = 1;
      post(&out, m.from, TO_RANK, STOP, -1, 0, NULL, 0, NULL, 0);
      free(m.buf);
    } else {
      nap();
    }
  }
  free(stopped);
  return dealer_finalize(&out, status);
}

int mpi_start(int *rank) {
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    fputs("ktune: error: --mpi: MPI_Init failed (see the MPI library's message above)\n", stderr);
    return EXIT_BAD;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  return 0;
}

#endif
