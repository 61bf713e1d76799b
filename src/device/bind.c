/* A kept worker serving another tuning: KT__REQ_RELEASE frees one tuning's
 * buffers and tensors, KT__REQ_BIND rebuilds a setup in the worker from the
 * message protocol.h describes (kt__bind: the source, kernel, sizes,
 * tolerances, workdir, binary cache, the tensors' memfd, the @reference
 * worker's extra names, a compiled check) and makes its buffers. A spawned
 * zygote's workers get every tuning this way. */
#include "bind.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../lang/parser.h"
#include "../proc/socket_io.h"

/* A setup rebuilt in the worker from a kt__bind: what it points at. */
struct kt__bound {
  kt__worker_setup setup;
  kt__file *file;
  int64_t *sizes;
  kt__env size_env;
  kt__argset *args;
  kt__constants *constants;
  char *workdir;
  kt__bincache bincache;
  char **extra_names; /* the @reference kernel's worker's (kt__worker_setup.extra_names) */
  int64_t *extra_values;
  int nextra;
  kt__check check; /* a compiled check's files (the tuner's: never removed here) */
};

void kt__bound_free(kt__bound *b) {
  if (!b) return;
  kt__argset_free(b->args);
  kt__constants_free(b->constants);
  kt__file_free(b->file);
  free(b->sizes);
  free(b->workdir);
  for (int i = 0; i < b->nextra; i++) free(b->extra_names[i]);
  free(b->extra_names);
  free(b->extra_values);
  free(b->check.object);
  free(b->check.symbol);
  free(b->check.source);
  free(b);
}

/* KT__REQ_RELEASE: the setup's buffers and loaded configurations freed, the
 * device and the setup kept. Before the next tuning compiles anything: its
 * compiled files may take the paths of the ones loaded here. */
void kt__worker_release(kt__worker_state *c) {
  /* The scratch buffer stays, page-locked, for the next tuning's setup, and
   * the device buffers, given back to the pool by kt__worker_free_buffers. */
  void *scratch = c->scratch;
  size_t scratch_bytes = c->scratch_bytes;
  bool pinned = c->scratch_pinned;
  c->scratch = NULL;
  c->scratch_pinned = false;
  kt__worker_free_buffers(c);
  kt__worker_state fresh = {.s = c->s,
                            .state = c->state,
                            .info = c->info,
                            .bound = c->bound,
                            .unbound = c->unbound,
                            .scratch = scratch,
                            .scratch_bytes = scratch_bytes,
                            .scratch_pinned = pinned,
                            .pool = c->pool};
  *c = fresh;
}

/* After a release, until the next bind maps new ones: the released
 * tuning's tensors unmapped, the setup left without them (a request to run
 * is then refused, as before a first bind). The worker's mapping is the
 * last one of those pages once the tuner freed its own, and the forked
 * worker's was never unmapped before: a kept worker held every first key's
 * tensors until it ended. Done after the release's reply, while the tuner
 * finishes. */
void kt__worker_drop_tensors(kt__worker_state *c) {
  if (!c->s->args) return;
  if (c->bound) {
    kt__argset_free(c->bound->args);
    c->bound->args = NULL;
    c->bound->setup.args = NULL;
    return;
  }
  /* The forked setup: this process's copy of the tuner's, whose mapping
   * (inherited) is this process's own to unmap. */
  munmap(c->s->args->base, c->s->args->map_bytes);
  c->unbound = *c->s;
  c->unbound.args = NULL;
  c->s = &c->unbound;
}

/* The extra names and values, and the compiled check, that follow the
 * workdir in a bind's bytes (protocol.h, kt__bind) at AT. */
static void extra_make(kt__bound *n, const kt__bind *b, const char *at) {
  n->nextra = b->nextra;
  n->extra_names = kt__xcalloc((size_t)b->nextra + 1, sizeof *n->extra_names);
  n->extra_values = kt__xcalloc((size_t)b->nextra + 1, sizeof *n->extra_values);
  memcpy(n->extra_values, at, (size_t)b->nextra * sizeof *n->extra_values); /* not aligned: copied */
  const char *name = at + (size_t)b->nextra * sizeof(int64_t);
  for (int i = 0; i < b->nextra; i++, name += strlen(name) + 1) n->extra_names[i] = kt__xstrdup(name);
  if (!b->has_check) return;
  const char *object = at + (size_t)b->nextra * sizeof(int64_t) + b->extra_len,
             *symbol = object + b->check_object_len + 1, *source = symbol + b->check_symbol_len + 1;
  n->check = (kt__check){.object = kt__xstrdup(object), .symbol = kt__xstrdup(symbol), .source = kt__xstrdup(source)};
}

/* The setup B and its BYTES describe, over the tensors in MEMFD; the device
 * is the one already open (BACKEND, DEVICE). */
static int bound_make(const kt__bind *b, const char *bytes, int memfd, const kt__worker_setup *was, kt__bound **out,
                      kt__errbuf *eb) {
  kt__bound *n = kt__xcalloc(1, sizeof *n);
  *out = n;
  const int64_t *sizes = (const int64_t *)(const void *)bytes;
  const bool *compared = (const bool *)(bytes + (size_t)b->nsizes * sizeof(int64_t));
  const bool *reference_set = compared + b->ntensors;
  const char *shared = (const char *)(reference_set + b->ntensors);
  const char *path = shared + (b->has_shared ? (size_t)b->ntensors * sizeof(kt__shared_buffer) : 0),
             *source = path + b->path_len + 1, *kernel = source + b->source_len + 1,
             *workdir = kernel + b->kernel_len + 1;
  extra_make(n, b, workdir + b->workdir_len + 1);
  kt__diag d;
  kt__diag_init(&d, NULL);
  n->file = kt__parse_string(path, source, (kt__lang)b->lang, &d);
  if (!n->file) kt__err(eb, KT_INVALID, "the bound kernel does not parse: %s", d.errors.s ? d.errors.s : "?");
  kt__diag_free(&d);
  if (!n->file) return KT_INVALID;
  const kt__kernel_decl *decl = kt__file_kernel(n->file, kernel, "kernel", eb);
  if (!decl) return KT_INVALID;
  KT__RETURN_IF(decl->nsizes != b->nsizes, eb, KT_INTERNAL, "the bound kernel has %d sizes, not %d", decl->nsizes,
                b->nsizes);
  n->sizes = kt__xcalloc((size_t)b->nsizes + 1, sizeof *n->sizes);
  memcpy(n->sizes, sizes, (size_t)b->nsizes * sizeof *n->sizes);
  n->size_env = (kt__env){(const char *const *)decl->sizes, n->sizes, decl->nsizes, NULL};
  KT__FORWARD(
      kt__argset_attach(decl, &n->size_env, memfd, (size_t)b->tensors_offset, compared, reference_set, &n->args, eb));
  KT__RETURN_IF(n->args->ntensors != b->ntensors, eb, KT_INTERNAL, "the bound kernel has %d tensors, not %d",
                n->args->ntensors, b->ntensors);
  for (int k = 0; k < b->ntensors && b->has_shared; k++) /* not aligned: copied */
    memcpy(&n->args->tensors[k].shared, shared + (size_t)k * sizeof(kt__shared_buffer), sizeof(kt__shared_buffer));
  if (b->has_constants) KT__FORWARD(kt__constants_create(decl, path, b->constants_seed, &n->constants, eb));
  n->workdir = kt__xstrdup(workdir);
  n->bincache = b->bincache;
  n->bincache.off_reason = NULL; /* static text of the tuner's image, not of this one */
  n->setup = (kt__worker_setup){.backend = was->backend,
                                .device = was->device,
                                .file = n->file,
                                .decl = decl,
                                .sizes = &n->size_env,
                                .args = n->args,
                                .constants = n->constants,
                                .atol = b->atol,
                                .rtol = b->rtol,
                                .workdir = n->workdir,
                                .bincache = &n->bincache,
                                .constants_seed = b->constants_seed,
                                .extra_names = (const char *const *)n->extra_names,
                                .extra_values = n->extra_values,
                                .nextra = n->nextra,
                                .check = b->has_check ? &n->check : NULL};
  return KT_OK;
}

/* Reads the kt__bind after a KT__REQ_BIND request, and its bytes. */
static char *read_bind(int fd, kt__bind *b) {
  if (kt__recv_all(fd, b, sizeof *b, 0, false, NULL) != KT__RECV_OK) return NULL;
  uint64_t len = (uint64_t)b->nsizes * sizeof(int64_t) + 2 * (uint64_t)b->ntensors +
                 (b->has_shared ? (uint64_t)b->ntensors * sizeof(kt__shared_buffer) : 0) + b->path_len + b->source_len +
                 b->kernel_len + b->workdir_len + 4 + (uint64_t)b->nextra * sizeof(int64_t) + b->extra_len +
                 (b->has_check ? b->check_object_len + b->check_symbol_len + b->check_source_len + 3 : 0);
  if (b->nsizes < 0 || b->ntensors < 0 || b->nextra < 0 || b->nextra > KT__MAX_NAMES || len > ((uint64_t)1 << 31))
    return NULL;
  char *bytes = kt__xmalloc((size_t)len);
  if (kt__recv_all(fd, bytes, (size_t)len, 0, false, NULL) != KT__RECV_OK) {
    free(bytes);
    return NULL;
  }
  bytes[len - 1] = 0;
  return bytes;
}

/* Serves the tuning a KT__REQ_BIND describes from now on: the old setup's
 * buffers go, the device stays open, the new setup's buffers are made. */
int kt__worker_bind(kt__worker_state *c, int fd, int memfd, kt__errbuf *eb) {
  kt__bind b;
  char *bytes = read_bind(fd, &b);
  if (!bytes) return kt__err(eb, KT_INTERNAL, "a bind request came incomplete");
  kt__bound *n = NULL;
  int rc = memfd >= 0 ? bound_make(&b, bytes, memfd, c->s, &n, eb)
                      : kt__err(eb, KT_INTERNAL, "a bind request came without its tensors");
  free(bytes);
  if (rc != KT_OK) {
    kt__bound_free(n);
    return rc;
  }
  kt__trace("worker: bound to %s (its tensors mapped)", n->setup.decl->name);
  kt__worker_release(c);
  kt__bound_free(c->bound);
  kt__trace("worker: the last tuning's setup freed");
  c->s = &n->setup;
  c->bound = n;
  return kt__worker_make_buffers(c, eb);
}
