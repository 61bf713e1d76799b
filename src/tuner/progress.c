/* The progress lines of a tuning on stderr: a bar on a terminal, else one
 * line per settled configuration (with --show-output, what it printed). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* --show-output: what the configuration printed, indented under its line. */
static void show_output(const kt__trial *tr) {
  const char *p = tr->output ? tr->output : "";
  while (*p) {
    size_t n = strcspn(p, "\n");
    fprintf(stderr, "      | %.*s\n", (int)n, p);
    p += n + (p[n] == '\n');
  }
  if (tr->output_bytes > strlen(tr->output ? tr->output : ""))
    fprintf(stderr, "      | ... (%llu bytes in all)\n", (unsigned long long)tr->output_bytes);
}

/* One configuration's line: its time, or its status and why. */
static void settled_line(const kt__tuning *t, const kt__trial *tr) {
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  const char *stored = tr->reused ? " (stored)" : "";
  if (tr->status == KT__ST_OK) {
    fprintf(stderr, "  [%d] %s: ok %.4g ms%s\n", t->done, cfg.s, tr->stats.median * 1e3, stored);
  } else {
    char why[KT__WHY_WIDTH + 8];
    kt__trial_why(tr, why, sizeof why);
    fprintf(stderr, "  [%d] %s: %s%s%s%s\n", t->done, cfg.s, kt__status_name(tr->status), stored, *why ? ": " : "",
            why);
  }
  kt__sbuf_free(&cfg);
}

/* The bar on a terminal. BEST is the fastest first-pass (screening)
 * median: the finalist rounds re-time the few best afterwards, and the
 * winner's time is theirs, which the last bar (kt__progress_end) shows. */
static void bar(const kt__tuning *t, const char *label, double seconds) {
  char best[32] = "-";
  if (seconds > 0) snprintf(best, sizeof best, "%.4g ms", seconds * 1e3);
  int total = t->planned > t->done ? t->planned : t->done, width = 30;
  int fill = total ? t->done * width / total : width;
  fprintf(stderr, "\r  [%.*s%*s] %d/%d  %s %s   ", fill, "##############################", width - fill, "", t->done,
          total, label, best);
}

/* Counts TR as settled (the time is the report's search progress against
 * wall time) and prints its progress line: on a terminal the bar, with a
 * failure's line above it. */
void kt__progress_settled(kt__tuning *t, kt__trial *tr) {
  tr->done_s = kt__now() - t->started;
  t->done++;
  if (kt__tuning_quiet(t)) return;
  if (t->tty) {
    if (tr->status != KT__ST_OK) {
      fprintf(stderr, "\r\033[K");
      settled_line(t, tr);
    }
    bar(t, "screening best", t->best_s);
    return;
  }
  settled_line(t, tr);
  if (t->o.show_output && tr->output_bytes) show_output(tr);
}

void kt__progress_end(const kt__tuning *t) {
  if (kt__tuning_quiet(t) || !t->tty) return;
  if (t->r && t->r->winner >= 0) {
    fprintf(stderr, "\r\033[K");
    bar(t, "winner", kt__trial_seconds(&t->r->trials[t->r->winner]));
  }
  fprintf(stderr, "\n");
}
