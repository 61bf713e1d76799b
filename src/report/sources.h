/* Where a report's data comes from: the results database, a tuning's result
 * or a replay over a recorded space. Each fills an empty kt__report. */
#ifndef KT_REPORT_SOURCES_H
#define KT_REPORT_SOURCES_H

#include "report.h"

/* The keys of O's database that F matches (NULL: all). KT_NOTFOUND when no
 * database exists there, it holds nothing, or nothing matches (saying
 * which); KT_STORE for a database that cannot be read or is not ktune's. */
int kt__report_from_store(const kt_options *o, const kt_cache_filter *f, kt__report *r, kt__errbuf *eb);

/* One key: what the tuning RES measured, in the order its trials settled,
 * with its timeline. */
void kt__report_from_result(const kt_result *res, kt__report *r);

/* One key: the configurations recorded in the T4 file PATH (times there are
 * milliseconds, as the hub's files say), with the progress curve of every
 * strategy (REPEATS replays of BUDGET evaluations each; 0: as many as were
 * recorded) beside random search's. KT_IO, KT_INVALID as kt_replay. */
int kt__report_from_replay(const char *path, long budget, int repeats, uint64_t seed, const char *const *warm,
                           int nwarm, kt__report *r, kt__errbuf *eb);

#endif
