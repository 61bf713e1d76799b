/* The author's check: a function that judges a configuration's outputs in
 * place of the comparison with the reference (ktune.h, kt_check_fn). It is
 * a library callback (kt_tune_options.check), or a C function compiled
 * into a shared object by the tuner (--check FILE.c:FN, @check(FN) in a
 * cpu kernel's file) and loaded by the device worker, where the data is. */
#ifndef KT_CHECK_H
#define KT_CHECK_H

#include "../lang/decl.h"

typedef struct kt__check {
  kt_check_fn fn; /* the callback, or after kt__check_load the compiled function */
  void *user;
  char *object; /* the compiled shared object; NULL for a callback */
  char *symbol; /* the function's name in it */
  char *source; /* for messages: "checks.c:fn" */
  void *handle; /* dlopen's, in the worker */
} kt__check;

/* Compiles SOURCE (a C file that includes <ktune.h>) into WORKDIR, for
 * SYMBOL. FLAGS: extra compiler words (NFLAGS), e.g. a kernel's defaults as
 * -D flags. KT_INVALID with the compiler's messages on failure. */
int kt__check_build(const char *source, const char *symbol, const char *const *flags, int nflags, const char *workdir,
                    double timeout_s, kt__check *out, kt__errbuf *eb);
/* In the worker: opens the object and finds the function (a no-op for a
 * callback). KT_INVALID naming the file and function when it cannot. */
int kt__check_load(kt__check *c, kt__errbuf *eb);
void kt__check_free(kt__check *c);

#endif
