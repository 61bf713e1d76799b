#include "dl.h"

#include <dlfcn.h>
#include <string.h>

void *kt__dl_open_any(const char *const *candidates, const char *what, kt__errbuf *eb) {
  kt__sbuf why = {0};
  for (int i = 0; candidates[i]; i++) {
    void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      kt__sbuf_free(&why);
      return lib;
    }
    const char *e = dlerror();
    kt__sbuf_printf(&why, "\n  %s: %s", candidates[i], e ? e : "not found");
  }
  kt__err(eb, KT_NOBACKEND, "%s is not available: none of its libraries could be loaded:%s", what, why.s ? why.s : "");
  kt__sbuf_free(&why);
  return NULL;
}

int kt__dl_resolve(void *lib, const char *what, const char *const *symbols, void **addrs, int n, kt__errbuf *eb) {
  for (int i = 0; i < n; i++) {
    addrs[i] = dlsym(lib, symbols[i]);
    if (!addrs[i])
      return kt__err(eb, KT_NOBACKEND, "%s: the library lacks the function %s (too old a version?)", what, symbols[i]);
  }
  return KT_OK;
}

bool kt__dl_loaded(const char *name) {
  void *lib = dlopen(name, RTLD_LAZY | RTLD_NOLOAD); /* only finds a loaded one */
  if (lib) dlclose(lib);
  return lib != NULL;
}
