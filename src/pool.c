#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct job_list {
  kt__compile_job **items;
  int head, len, cap;
} job_list;

struct kt__pool {
  const kt__backend *be;
  pthread_t *threads;
  int nthreads;
  pthread_mutex_t mu;
  pthread_cond_t work_ready, job_done;
  job_list queued, done;
  int running;
  bool stopping;
  double busy_s;
};

static void list_push(job_list *l, kt__compile_job *j) {
  if (l->head + l->len == l->cap) {
    if (l->head > 0) { /* compact before growing */
      for (int i = 0; i < l->len; i++) l->items[i] = l->items[l->head + i];
      l->head = 0;
    }
    if (l->len == l->cap) {
      l->cap = l->cap ? 2 * l->cap : 16;
      l->items = kt__xreallocarray(l->items, (size_t)l->cap, sizeof *l->items);
    }
  }
  l->items[l->head + l->len++] = j;
}

static kt__compile_job *list_pop(job_list *l) {
  if (l->len == 0) return NULL;
  l->len--;
  return l->items[l->head++];
}

static void compile_one(kt__pool *p, kt__compile_job *j) {
  j->started = kt__now();
  j->err.msg[0] = 0;
  j->status = kt__be_compile(p->be, &j->build, &j->artifact, &j->err);
  j->finished = kt__now();
}

/* Compilers yield to the process that drives the device: with every core
 * compiling, a worker waiting for the CPU leaves the GPU idle, while a
 * compile that waits a little costs nothing as long as the device has work.
 * (Linux: the nice value of a thread, by its id; a refusal changes nothing.) */
enum { COMPILE_NICE = 5 };

static void lower_priority(void) {
#ifdef SYS_gettid
  (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), COMPILE_NICE);
#endif
}

static void *thread_main(void *arg) {
  kt__pool *p = arg;
  lower_priority();
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stopping && p->queued.len == 0) pthread_cond_wait(&p->work_ready, &p->mu);
    if (p->stopping) break;
    kt__compile_job *j = list_pop(&p->queued);
    p->running++;
    pthread_mutex_unlock(&p->mu);
    compile_one(p, j);
    pthread_mutex_lock(&p->mu);
    p->running--;
    p->busy_s += j->finished - j->started;
    list_push(&p->done, j);
    pthread_cond_broadcast(&p->job_done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

kt__pool *kt__pool_create(const kt__backend *be, int threads) {
  kt__pool *p = kt__xcalloc(1, sizeof *p);
  p->be = be;
  p->nthreads = threads > 0 ? threads : 1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work_ready, NULL);
  pthread_cond_init(&p->job_done, NULL);
  p->threads = kt__xcalloc((size_t)p->nthreads, sizeof *p->threads);
  for (int i = 0; i < p->nthreads; i++) pthread_create(&p->threads[i], NULL, thread_main, p);
  return p;
}

void kt__pool_submit(kt__pool *p, kt__compile_job *job) {
  job->status = KT__ST_PENDING;
  pthread_mutex_lock(&p->mu);
  list_push(&p->queued, job);
  pthread_cond_signal(&p->work_ready);
  pthread_mutex_unlock(&p->mu);
}

kt__compile_job *kt__pool_wait(kt__pool *p) {
  pthread_mutex_lock(&p->mu);
  while (p->done.len == 0 && (p->queued.len > 0 || p->running > 0)) pthread_cond_wait(&p->job_done, &p->mu);
  kt__compile_job *j = list_pop(&p->done);
  pthread_mutex_unlock(&p->mu);
  return j;
}

int kt__pool_pending(const kt__pool *p) {
  kt__pool *mp = (kt__pool *)p;
  pthread_mutex_lock(&mp->mu);
  int n = p->queued.len + p->running + p->done.len;
  pthread_mutex_unlock(&mp->mu);
  return n;
}

double kt__pool_busy_seconds(const kt__pool *p) {
  kt__pool *mp = (kt__pool *)p;
  pthread_mutex_lock(&mp->mu);
  double s = p->busy_s;
  pthread_mutex_unlock(&mp->mu);
  return s;
}

void kt__pool_cancel_queued(kt__pool *p) {
  pthread_mutex_lock(&p->mu);
  kt__compile_job *j;
  while ((j = list_pop(&p->queued)) != NULL) list_push(&p->done, j);
  pthread_cond_broadcast(&p->job_done);
  pthread_mutex_unlock(&p->mu);
}

void kt__pool_free(kt__pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stopping = true;
  pthread_cond_broadcast(&p->work_ready);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
  kt__compile_job *j;
  while ((j = list_pop(&p->queued)) != NULL || (j = list_pop(&p->done)) != NULL) {
    kt__artifact_free(&j->artifact);
    free(j);
  }
  free(p->queued.items);
  free(p->done.items);
  free(p->threads);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work_ready);
  pthread_cond_destroy(&p->job_done);
  free(p);
}
