/* The plots of one key (html.c lays them out): each appends one <svg> to B. */
#ifndef KT_REPORT_PLOTS_H
#define KT_REPORT_PLOTS_H

#include "report.h"

/* A key with what its plots share: the points drawn, the counts. */
typedef struct kt__key_view {
  const kt__report_key *k;
  int *sample; /* OK points drawn, fastest first */
  int nsample, nok;
  double tmin, tmax; /* over every OK point */
  int counts[KT__ST_COUNT];
} kt__key_view;

/* MAX_POINTS: the most points one scatter plot draws. */
void kt__key_view_init(kt__key_view *v, const kt__report_key *k, int max_points);
void kt__key_view_free(kt__key_view *v);

void kt__plot_distribution(kt__sbuf *b, const kt__key_view *v);
void kt__plot_statuses(kt__sbuf *b, const kt__key_view *v);
void kt__plot_effect(kt__sbuf *b, const kt__key_view *v, int name);
/* Best so far against evaluations; against wall time when WALL (false when
 * the key's points have no times). */
bool kt__plot_progress(kt__sbuf *b, const kt__key_view *v, bool wall);
void kt__plot_curves(kt__sbuf *b, const kt__key_view *v);
bool kt__plot_winner_default(kt__sbuf *b, const kt__key_view *v);
void kt__plot_timeline(kt__sbuf *b, const kt__key_view *v);
/* The OK points with energy that no other is both faster and cheaper than
 * (the Pareto front of time and energy) into FRONT, fastest first; their count. */
int kt__report_pareto(const kt__report_key *k, int *front);
/* Energy per launch against time per launch, the Pareto front drawn through
 * its points; false (nothing drawn) when no point has energy. */
bool kt__plot_energy(kt__sbuf *b, const kt__key_view *v);

#endif
