/* Which points a plot draws when there are too many to draw them all: the
 * fastest, the winner and the default always, the rest at evenly spaced
 * ranks, so that the shape of the distribution stays. Counts and medians
 * are always taken over every point, never over a sample. */
#ifndef KT_REPORT_SAMPLE_H
#define KT_REPORT_SAMPLE_H

#include "report.h"

/* The OK points of K to draw, at most MAX (at least the winner, the default
 * and the fastest when MAX allows), into OUT (K->n entries), fastest first.
 * Returns how many; *TOTAL gets the number of OK points. */
int kt__report_sample(const kt__report_key *k, int max, int *out, int *total);

#endif
