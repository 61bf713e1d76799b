/* The public report calls (ktune.h): a source fills a kt__report, which is
 * written whole or not at all. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../handles/context.h"
#include "sources.h"

int kt_report_check(kt_context *ctx, const char *path) {
  kt__errbuf *eb = &ctx->err;
  KT__RETURN_IF(!path || !*path, eb, KT_INVALID, "no report file given (-o FILE or --report FILE)");
  struct stat st;
  KT__RETURN_IF(stat(path, &st) == 0 && S_ISDIR(st.st_mode), eb, KT_INVALID,
                "%s: is a directory; give the report a file name, e.g. %s/report.html", path, path);
  kt__sbuf tmp = {0};
  kt__sbuf_printf(&tmp, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp.s);
  int err = errno;
  if (fd >= 0) close(fd), unlink(tmp.s);
  kt__sbuf_free(&tmp);
  KT__RETURN_IF(fd < 0, eb, KT_INVALID, "%s: cannot write the report there (%s); choose a writable path", path,
                strerror(err));
  return KT_OK;
}

static int write_report(kt_context *ctx, kt__report *r, int rc, const char *path) {
  if (rc == KT_OK) rc = kt__report_write(r, path, &ctx->err);
  kt__report_free(r);
  return rc;
}

int kt_report(kt_context *ctx, const kt_cache_filter *f, const char *path) {
  KT__FORWARD(kt_report_check(ctx, path));
  kt__report r = {0};
  return write_report(ctx, &r, kt__report_from_store(&ctx->opts, f, &r, &ctx->err), path);
}

int kt_result_report(kt_context *ctx, const kt_result *res, const char *path) {
  KT__RETURN_IF(!res, &ctx->err, KT_INVALID, "kt_result_report: no result");
  KT__FORWARD(kt_report_check(ctx, path));
  kt__report r = {0};
  kt__report_from_result(res, &r);
  return write_report(ctx, &r, KT_OK, path);
}

int kt_replay_report(kt_context *ctx, const char *results, long budget, int repeats, uint64_t seed,
                     const char *const *warm, int nwarm, const char *path) {
  KT__FORWARD(kt_report_check(ctx, path));
  kt__report r = {0};
  return write_report(ctx, &r, kt__report_from_replay(results, budget, repeats, seed, warm, nwarm, &r, &ctx->err),
                      path);
}
