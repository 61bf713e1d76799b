/* What shared memory's pages cost a tuning on a miss (src/runtime/
 * tune_request.c, src/parallel.c, kt__populate): a memfd of MB megabytes
 * (default 256) written from a page-locked-sized source, the pages fresh
 * (allocated and zeroed as they are touched) or existing (written before,
 * mapped anew: a fault per page to fill the page tables), the writing on
 * one thread or on THREADS (default: every core), after filling the page
 * tables by one MADV_POPULATE_WRITE call, by such calls split over the
 * threads, or not at all. Each line: how, seconds to populate, seconds to
 * write, their sum. The median of 3 runs each.
 *
 *   cc -O2 -pthread -o /tmp/shm_pages bench/shm_pages.c && /tmp/shm_pages [MB] [THREADS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct part {
  char *dst;
  const char *src;
  size_t len;
  int populate; /* populate this part, do not copy */
} part;

static void *part_main(void *arg) {
  part *p = arg;
  if (p->populate) madvise(p->dst, p->len, MADV_POPULATE_WRITE);
  else memcpy(p->dst, p->src, p->len);
  return NULL;
}

/* BYTES from SRC into DST (or populated, POPULATE) on THREADS threads, in
 * page-aligned parts. */
static void split(char *dst, const char *src, size_t bytes, int threads, int populate) {
  pthread_t tid[256];
  part parts[256];
  size_t page = (size_t)sysconf(_SC_PAGESIZE), step = (bytes / (size_t)threads + page - 1) / page * page;
  int n = 0;
  for (size_t at = 0; at < bytes && n < 256; at += step, n++) {
    parts[n] = (part){dst + at, src + at, bytes - at < step ? bytes - at : step, populate};
    pthread_create(&tid[n], NULL, part_main, &parts[n]);
  }
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
}

enum { NONE, ONE_CALL, SPLIT };

/* One run: seconds to populate (*POP) and to write (*WRITE). */
static void run(const char *src, size_t bytes, int existing, int populate, int threads, double *pop, double *write) {
  int fd = memfd_create("shm_pages", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) exit(1);
  if (existing) { /* written through another mapping first, as a reused request is */
    char *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED) exit(1);
    memset(w, 1, bytes);
    munmap(w, bytes);
  }
  char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) exit(1);
  double t0 = now();
  if (populate == ONE_CALL) madvise(m, bytes, MADV_POPULATE_WRITE);
  if (populate == SPLIT) split(m, NULL, bytes, threads, 1);
  double t1 = now();
  if (threads > 1) split(m, src, bytes, threads, 0);
  else memcpy(m, src, bytes);
  *pop = t1 - t0, *write = now() - t1;
  munmap(m, bytes);
  close(fd);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 256;
  int cores = (int)sysconf(_SC_NPROCESSORS_ONLN), threads = argc > 2 ? atoi(argv[2]) : cores;
  if (mb == 0 || threads < 1 || threads > 256) {
    fprintf(stderr, "usage: shm_pages [MB] [THREADS 1-256]\n");
    return 2;
  }
  size_t bytes = mb << 20;
  char *src = malloc(bytes);
  if (!src) return 1;
  memset(src, 7, bytes);
  static const char *pages[] = {"fresh", "existing"}, *how[] = {"faults", "one populate call", "populate split"};
  printf("%zu MB, %d threads for the split runs, %d cores\n", mb, threads, cores);
  for (int existing = 0; existing < 2; existing++)
    for (int populate = NONE; populate <= SPLIT; populate++)
      for (int t = 1; t <= threads; t = t == 1 && threads > 1 ? threads : threads + 1) {
        if (populate == SPLIT && t == 1) continue;
        double pop[3], write[3], sum[3];
        for (int r = 0; r < 3; r++)
          run(src, bytes, existing, populate, t, &pop[r], &write[r]), sum[r] = pop[r] + write[r];
        qsort(pop, 3, sizeof *pop, cmp);
        qsort(write, 3, sizeof *write, cmp);
        qsort(sum, 3, sizeof *sum, cmp);
        printf("%-8s pages, %-17s then written on %2d thread%s: populate %.4f s, write %.4f s, total %.4f s\n",
               pages[existing], how[populate], t, t > 1 ? "s" : " ", pop[1], write[1], sum[1]);
      }
  free(src);
  return 0;
}
