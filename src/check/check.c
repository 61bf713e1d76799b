/* Building and loading the author's check function. */
#include "check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/cc.h"

int kt__check_build(const char *source, const char *symbol, const char *const *flags, int nflags, const char *workdir,
                    double timeout_s, kt__check *out, kt__errbuf *eb) {
  *out = (kt__check){0};
  static int serial;
  kt__sbuf so = {0}, name = {0};
  kt__sbuf_printf(&so, "%s/check-%ld-%d.so", workdir, (long)getpid(), serial++);
  kt__sbuf_printf(&name, "%s:%s", source, symbol);
  const char *words[70];
  int n = 0;
  words[n++] = "-I";
  words[n++] = kt__cc_ktune_include_dir();
  for (int i = 0; i < nflags && n < 70; i++) words[n++] = flags[i];
  int rc = kt__cc_shared_object(source, so.s, words, n, timeout_s, workdir, eb);
  if (rc != KT_OK) {
    char msg[sizeof eb->msg];
    snprintf(msg, sizeof msg, "%s", eb->msg);
    kt__err(eb, KT_INVALID, "%s: error: the check does not compile: %s", name.s, msg);
    kt__sbuf_free(&so);
    kt__sbuf_free(&name);
    return rc;
  }
  out->object = so.s;
  out->symbol = kt__xstrdup(symbol);
  out->source = name.s;
  return KT_OK;
}

int kt__check_load(kt__check *c, kt__errbuf *eb) {
  if (!c->object || c->fn) return KT_OK;
  c->handle = dlopen(c->object, RTLD_NOW | RTLD_LOCAL);
  KT__RETURN_IF(!c->handle, eb, KT_INVALID, "%s: error: the check cannot be loaded: %s", c->source, dlerror());
  void *sym = dlsym(c->handle, c->symbol);
  KT__RETURN_IF(!sym, eb, KT_INVALID, "%s: error: no function %s in the compiled check (is it static, or misspelled?)",
                c->source, c->symbol);
  /* POSIX guarantees that a function's address survives the round trip
   * through void *, which dlsym relies on. */
  memcpy(&c->fn, &sym, sizeof c->fn);
  return KT_OK;
}

void kt__check_free(kt__check *c) {
  if (c->object) unlink(c->object);
  free(c->object);
  free(c->symbol);
  free(c->source);
  *c = (kt__check){0};
}
