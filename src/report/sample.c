/* Thinning a key's points for plotting (sample.h). */
#include "sample.h"

#include <stdlib.h>
#include <string.h>

static const kt__report_key *sort_subject;
static int by_seconds(const void *a, const void *b) {
  double x = sort_subject->points[*(const int *)a].seconds, y = sort_subject->points[*(const int *)b].seconds;
  if (x != y) return x < y ? -1 : 1;
  return *(const int *)a - *(const int *)b;
}

/* The OK points of K into OUT, fastest first (ties in evaluation order). */
static int ranked(const kt__report_key *k, int *out) {
  int n = 0;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK) out[n++] = i;
  sort_subject = k; /* qsort has no user pointer; reports are drawn on one thread */
  qsort(out, (size_t)n, sizeof *out, by_seconds);
  return n;
}

int kt__report_sample(const kt__report_key *k, int max, int *out, int *total) {
  int n = ranked(k, out);
  *total = n;
  if (n <= max || max < 8) return n <= max ? n : max;
  /* The fastest quarter of the budget whole (the points people look for),
   * then evenly spaced ranks of the rest, ending on the slowest; two places
   * are left for the winner and the default. */
  int head = max / 4, keep = head, rest = max - head - 3;
  int *picked = kt__xmalloc((size_t)max * sizeof *picked);
  memcpy(picked, out, (size_t)head * sizeof *picked);
  long last = head - 1;
  for (int j = 0; j <= rest; j++) {
    long pos = head + (long)j * (n - 1 - head) / rest;
    if (pos > last) picked[keep++] = out[pos], last = pos;
  }
  /* The winner and the default are drawn whatever their rank. */
  bool have_winner = false, have_default = false;
  for (int i = 0; i < keep; i++) {
    have_winner |= picked[i] == k->winner;
    have_default |= picked[i] == k->def;
  }
  if (!have_winner && k->winner >= 0 && k->points[k->winner].status == KT__ST_OK && keep < max)
    picked[keep++] = k->winner;
  if (!have_default && k->def >= 0 && k->points[k->def].status == KT__ST_OK && keep < max) picked[keep++] = k->def;
  memcpy(out, picked, (size_t)keep * sizeof *out);
  free(picked);
  return keep;
}
