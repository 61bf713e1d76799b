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

/* Counts TR as settled (the time is the report's search progress against
 * wall time) and prints its progress line. */
void kt__progress_settled(kt__tuning *t, kt__trial *tr) {
  tr->done_s = kt__now() - t->started;
  t->done++;
  if (kt__tuning_quiet(t)) return;
  char best[32] = "-";
  if (t->best_s > 0) snprintf(best, sizeof best, "%.4g ms", t->best_s * 1e3);
  if (t->tty) {
    int total = t->planned > t->done ? t->planned : t->done, width = 30;
    int fill = total ? t->done * width / total : width;
    fprintf(stderr, "\r  [%.*s%*s] %d/%d  best %s   ", fill, "##############################", width - fill, "",
            t->done, total, best);
    return;
  }
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  if (tr->status == KT__ST_OK)
    fprintf(stderr, "  [%d] %s: ok %.4g ms%s\n", t->done, cfg.s, tr->stats.median * 1e3, tr->reused ? " (stored)" : "");
  else fprintf(stderr, "  [%d] %s: %s%s\n", t->done, cfg.s, kt__status_name(tr->status), tr->reused ? " (stored)" : "");
  kt__sbuf_free(&cfg);
  if (t->o.show_output && tr->output_bytes) show_output(tr);
}

void kt__progress_end(const kt__tuning *t) {
  if (!kt__tuning_quiet(t) && t->tty) fprintf(stderr, "\n");
}
