/* A kernel's real data: tensors filled from files (file("...") in @kernel,
 * kt_kernel_set_input), expected outputs (kt_kernel_set_expect), the
 * author's check (kt_kernel_set_check) and the @reference kernel. What can
 * be checked without the sizes is checked when it is given; shapes are
 * checked when the sizes are known (kt_tune). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../hash.h"
#include "../lang/expr.h"
#include "context.h"

/* ---- @kernel's file("...") and @reference ------------------------------ */

/* PATH relative to the folder of the kernel's source file (as given), unless
 * absolute. */
static char *beside_source(const kt_kernel *k, const char *path) {
  const char *src = k->file->src.path, *slash = src ? strrchr(src, '/') : NULL;
  if (path[0] == '/' || !slash) return kt__xstrdup(path);
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "%.*s/%s", (int)(slash - src), src, path);
  return b.s;
}

static bool same_param(const kt__param *a, const kt__param *b) {
  if (strcmp(a->name, b->name) != 0 || a->is_tensor != b->is_tensor || a->type != b->type || a->mode != b->mode ||
      a->ndims != b->ndims)
    return false;
  for (int d = 0; d < a->ndims; d++) {
    kt__sbuf x = {0}, y = {0};
    kt__expr_print(a->dims[d], &x);
    kt__expr_print(b->dims[d], &y);
    bool same = strcmp(x.s ? x.s : "", y.s ? y.s : "") == 0;
    kt__sbuf_free(&x);
    kt__sbuf_free(&y);
    if (!same) return false;
  }
  return true;
}

/* The reference kernel runs on the same buffers: the same parameters, in
 * the same order, with the same types, modes and shapes. */
static int find_reference(kt_kernel *k) {
  const kt__kernel_decl *d = k->decl;
  const char *path = k->file->src.path;
  kt__errbuf *eb = &k->ctx->err;
  const kt__kernel_decl *r = NULL;
  for (int i = 0; i < k->file->nkernels; i++)
    if (strcmp(k->file->kernels[i].name, d->reference) == 0) r = &k->file->kernels[i];
  KT__RETURN_IF(!r, eb, KT_INVALID,
                "%s:%d:%d: error: @reference(%s): no kernel %s is annotated in this file (annotate the reference "
                "with its own @kernel, with the same parameters)",
                path, d->reference_loc.line, d->reference_loc.col, d->reference, d->reference);
  KT__RETURN_IF(r == d, eb, KT_INVALID, "%s:%d:%d: error: @reference(%s) names the kernel itself", path,
                d->reference_loc.line, d->reference_loc.col, d->reference);
  KT__RETURN_IF(r->nparams != d->nparams, eb, KT_INVALID,
                "%s:%d:%d: error: @reference(%s): %s has %d parameters and %s %d; the reference runs on the same "
                "arguments, so declare the same parameters",
                path, d->reference_loc.line, d->reference_loc.col, d->reference, r->name, r->nparams, d->name,
                d->nparams);
  for (int i = 0; i < d->nparams; i++)
    KT__RETURN_IF(!same_param(&r->params[i], &d->params[i]), eb, KT_INVALID,
                  "%s:%d:%d: error: @reference(%s): parameter %d differs (%s of %s against %s of %s): the "
                  "reference runs on the same arguments, so declare them alike (name, type, mode, shape)",
                  path, r->params[i].loc.line, r->params[i].loc.col, d->reference, i + 1, r->params[i].name, r->name,
                  d->params[i].name, d->name);
  for (int i = 0; i < r->nsizes; i++)
    KT__RETURN_IF(kt__decl_size_index(d, r->sizes[i]) < 0, eb, KT_INVALID,
                  "%s: error: @reference(%s): the reference uses runtime size %s, which %s does not have", path,
                  d->reference, r->sizes[i], d->name);
  k->reference = r;
  return KT_OK;
}

/* ---- the results key ---------------------------------------------------- */

static void describe_source(const char *what, const char *name, const kt__data_source *src, kt__sbuf *b) {
  struct stat st;
  char *real = realpath(src->path, NULL);
  bool known = stat(src->path, &st) == 0;
  kt__sbuf_printf(b, "\n%s %s=%s:%s size %lld mtime %lld.%09ld", what, name, real ? real : src->path,
                  src->raw ? kt__dtype_name(src->type) : "npy", known ? (long long)st.st_size : -1LL,
                  known ? (long long)st.st_mtim.tv_sec : 0LL, known ? st.st_mtim.tv_nsec : 0L);
  free(real);
}

/* Results measured on other data, or judged by another reference, are not
 * this tuning's: the key's source hash covers the source text and, when
 * there are any, the data files (path, size, modification time), the
 * expected outputs and the check. Without them it is the source's own hash,
 * which kt_launch's lookups share. */
static void rehash(kt_kernel *k) {
  kt__sbuf b = {0};
  kt__sbuf_append(&b, k->file->src.text, k->file->src.len);
  size_t plain = b.len;
  for (int i = 0; i < k->decl->nparams; i++) {
    if (k->inputs[i].path) describe_source("input", k->decl->params[i].name, &k->inputs[i], &b);
    if (k->expects[i].path) describe_source("expect", k->decl->params[i].name, &k->expects[i], &b);
  }
  if (k->check_path) {
    kt__data_source c = {.path = k->check_path};
    describe_source("check", k->check_fn, &c, &b);
  }
  kt__hash_text(b.s ? b.s : "", b.len > plain ? b.len : plain, k->source_hash);
  kt__sbuf_free(&b);
}

int kt__kernel_data_init(kt_kernel *k) {
  const kt__kernel_decl *d = k->decl;
  size_t n = (size_t)(d->nparams ? d->nparams : 1);
  k->inputs = kt__xcalloc(n, sizeof *k->inputs);
  k->expects = kt__xcalloc(n, sizeof *k->expects);
  for (int i = 0; i < d->nparams; i++) {
    const kt__param *p = &d->params[i];
    if (p->init != KT__INIT_FILE) continue;
    k->inputs[i] =
        (kt__data_source){beside_source(k, p->file), p->file_raw, p->file_type, p->file_loc.line, p->file_loc.col};
  }
  if (d->check && !k->backend->runs_host_code)
    return kt__err(&k->ctx->err, KT_INVALID,
                   "%s:%d:%d: error: @check(%s) names a C function of the kernel's own file, which only the cpu "
                   "backend compiles as host code; put the check in a C file and pass %s FILE.c:%s",
                   k->file->src.path, d->check_loc.line, d->check_loc.col, d->check, k->ctx->opts.labels.check,
                   d->check);
  rehash(k);
  return d->reference ? find_reference(k) : KT_OK;
}

void kt__kernel_data_free(kt_kernel *k) {
  for (int i = 0; k->inputs && i < k->decl->nparams; i++) {
    kt__data_source_free(&k->inputs[i]);
    kt__data_source_free(&k->expects[i]);
  }
  free(k->inputs);
  free(k->expects);
  free(k->check_path);
  free(k->check_fn);
}

bool kt__kernel_has_files(const kt_kernel *k) {
  for (int i = 0; i < k->decl->nparams; i++)
    if (k->inputs[i].path || k->expects[i].path) return true;
  return false;
}

/* ---- kt_kernel_set_input, kt_kernel_set_expect -------------------------- */

static void declared_text(const kt__param *p, kt__sbuf *out) {
  kt__sbuf_printf(out, "%s: tensor<%s>[", p->name, kt__dtype_name(p->type));
  for (int d = 0; d < p->ndims; d++) {
    if (d) kt__sbuf_append(out, ", ", 2);
    kt__expr_print(p->dims[d], out);
  }
  kt__sbuf_append(out, "]", 1);
}

/* Where a message about SRC starts: "file:line:col: error: tensor x:" for
 * @kernel's file("..."), else "LABEL NAME=PATH:". */
static void source_label(const kt_kernel *k, const kt__param *p, const kt__data_source *src, const char *label,
                         kt__sbuf *out) {
  if (src->line)
    kt__sbuf_printf(out, "%s:%d:%d: error: file(\"%s\") of %s:", k->file->src.path, src->line, src->col, p->file,
                    p->name);
  else
    kt__sbuf_printf(out, "%s %s=%s%s%s:", label, p->name, src->path, src->raw ? ":" : "",
                    src->raw ? kt__dtype_name(src->type) : "");
}

/* NumPy's name of type T, for advice. */
static const char *numpy_name(kt__dtype t) {
  static const char *const names[][2] = {{"f16", "float16"}, {"f32", "float32"}, {"f64", "float64"},
                                         {"i8", "int8"},     {"u8", "uint8"},    {"i32", "int32"},
                                         {"u32", "uint32"},  {"i64", "int64"},   {"u64", "uint64"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i][0], kt__dtype_name(t)) == 0) return names[i][1];
  return kt__dtype_name(t);
}

/* The element type of SRC's file against the declaration of P. */
static int check_type(const kt_kernel *k, const kt__param *p, const kt__data_header *h, const char *where,
                      kt__errbuf *eb) {
  if (h->type == p->type) return KT_OK;
  kt__sbuf decl = {0}, shape = {0};
  declared_text(p, &decl);
  kt__data_shape_text(h->shape, h->ndims, &shape);
  kt__err(eb, KT_INVALID,
          "%s the file holds %s elements (shape %s) but %s of kernel %s is declared %s; save the data as %s "
          "(numpy: a.astype(numpy.%s)) or declare the tensor's type as the file's",
          where, kt__dtype_name(h->type), shape.s, p->name, k->decl->name, decl.s, kt__dtype_name(p->type),
          numpy_name(p->type));
  kt__sbuf_free(&decl);
  kt__sbuf_free(&shape);
  return KT_INVALID;
}

/* Splits "NAME=PATH[:TYPE]" and finds tensor NAME; WANT_OUTPUT: expected
 * contents are for outputs, initial contents for inputs. */
static int data_spec(kt_kernel *k, const char *spec, bool want_output, const char *label, int *param,
                     kt__data_source *src) {
  kt__errbuf *eb = &k->ctx->err;
  kt__config_item it;
  KT__RETURN_IF(!spec || !kt__config_split(spec, &it), eb, KT_INVALID,
                "%s \"%s\": expected NAME=PATH (a .npy file) or NAME=PATH:TYPE (raw binary, e.g. x=x.bin:f32)", label,
                spec ? spec : "");
  char *name = kt__xstrndup(it.text, it.name_len);
  const kt__kernel_decl *d = k->decl;
  int i = 0;
  while (i < d->nparams && strcmp(d->params[i].name, name) != 0) i++;
  kt__sbuf tensors = {0};
  for (int j = 0; j < d->nparams; j++)
    if (d->params[j].is_tensor && (d->params[j].mode != KT__MODE_IN) == want_output)
      kt__sbuf_printf(&tensors, "%s%s", tensors.len ? ", " : "", d->params[j].name);
  int rc = KT_OK;
  if (i == d->nparams || !d->params[i].is_tensor)
    rc = kt__err(eb, KT_INVALID, "%s %s: kernel %s has no tensor %s; its %s tensors: %s", label, spec, d->name, name,
                 want_output ? "output" : "input", tensors.s ? tensors.s : "none");
  else if (want_output && d->params[i].mode == KT__MODE_IN)
    rc = kt__err(eb, KT_INVALID,
                 "%s %s: %s is an input of kernel %s (declared in); expected contents are for its "
                 "outputs: %s",
                 label, spec, name, d->name, tensors.s ? tensors.s : "none");
  else if (!want_output && d->params[i].mode == KT__MODE_OUT)
    rc = kt__err(eb, KT_INVALID,
                 "%s %s: %s is an output of kernel %s (declared out), which the kernel writes; give its "
                 "expected content with %s %s=PATH instead",
                 label, spec, name, d->name, k->ctx->opts.labels.expect, name);
  else if (d->params[i].shape_tuned)
    rc = kt__err(eb, KT_INVALID,
                 "%s %s: the shape of %s depends on tuned names, so no one file can fill or match it; the "
                 "author's check judges such a tensor",
                 label, spec, name);
  kt__sbuf_free(&tensors);
  free(name);
  if (rc != KT_OK) return rc;
  kt__data_source_parse(it.value, src);
  kt__data_header h;
  kt__sbuf where = {0};
  source_label(k, &d->params[i], src, label, &where);
  rc = kt__data_header_read(src, &h, eb);
  if (rc != KT_OK) {
    char msg[sizeof eb->msg];
    snprintf(msg, sizeof msg, "%s", eb->msg);
    kt__err(eb, rc, "%s %s", where.s, msg);
  } else {
    rc = check_type(k, &d->params[i], &h, where.s, eb);
  }
  kt__sbuf_free(&where);
  if (rc != KT_OK) {
    kt__data_source_free(src);
    return rc;
  }
  *param = i;
  return KT_OK;
}

static int set_source(kt_kernel *k, const char *spec, bool output, const char *label, kt__data_source *table) {
  int i;
  kt__data_source src;
  KT__FORWARD(data_spec(k, spec, output, label, &i, &src));
  kt__data_source_free(&table[i]);
  table[i] = src;
  rehash(k);
  return KT_OK;
}

int kt_kernel_set_input(kt_kernel *k, const char *spec) {
  return set_source(k, spec, false, k->ctx->opts.labels.input, k->inputs);
}

int kt_kernel_set_expect(kt_kernel *k, const char *spec) {
  return set_source(k, spec, true, k->ctx->opts.labels.expect, k->expects);
}

static bool is_identifier(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
  return true;
}

int kt_kernel_set_check(kt_kernel *k, const char *spec) {
  const char *label = k->ctx->opts.labels.check;
  kt__errbuf *eb = &k->ctx->err;
  const char *colon = spec ? strrchr(spec, ':') : NULL;
  KT__RETURN_IF(!colon || colon == spec || !is_identifier(colon + 1), eb, KT_INVALID,
                "%s \"%s\": expected FILE.c:FUNCTION, e.g. %s checks.c:check_sum", label, spec ? spec : "", label);
  char *path = kt__xstrndup(spec, (size_t)(colon - spec));
  FILE *f = fopen(path, "rbe");
  if (!f) {
    kt__err(eb, KT_INVALID, "%s %s: cannot read %s: %s", label, spec, path, strerror(errno));
    free(path);
    return KT_INVALID;
  }
  fclose(f);
  free(k->check_path);
  free(k->check_fn);
  k->check_path = path;
  k->check_fn = kt__xstrdup(colon + 1);
  rehash(k);
  return KT_OK;
}

/* ---- sizes from files, shapes against files ----------------------------- */

typedef struct unbound_names {
  const kt__kernel_decl *d;
  const bool *bound;
  int count, which;
} unbound_names;

static void count_unbound(void *ud, const char *name, kt__loc at) {
  (void)at;
  unbound_names *u = ud;
  int i = kt__decl_size_index(u->d, name);
  if (i < 0 || u->bound[i] || i == u->which) return;
  if (u->count++ == 0) u->which = i;
}

static bool eval_at(const kt__kernel_decl *d, const kt__expr *e, int64_t *values, int which, int64_t v, int64_t *out) {
  values[which] = v;
  kt__env env = {(const char *const *)d->sizes, values, d->nsizes, NULL};
  kt__eval_error ee;
  return kt__expr_eval(e, &env, out, &ee) == 0;
}

/* The value of the one unbound size in E that makes E equal TARGET, E
 * taken as growing with it (N, N + 1, 2 * N, N * K with K known): the
 * smallest value that reaches TARGET, which must then hit it exactly. */
static bool solve(const kt__kernel_decl *d, const kt__expr *e, int64_t *values, int which, uint64_t target,
                  int64_t *out) {
  int64_t lo = 1, hi = (int64_t)1 << 48, got;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (eval_at(d, e, values, which, mid, &got) && got >= 0 && (uint64_t)got >= target) hi = mid;
    else lo = mid + 1;
  }
  *out = lo;
  return eval_at(d, e, values, which, lo, &got) && got >= 0 && (uint64_t)got == target;
}

/* Binds what dimension DIM of tensor P leaves unbound from the file's
 * extent there, when one size is missing from it. */
static int bind_dim(const kt_kernel *k, const kt__param *p, int dim, uint64_t extent, const kt__data_source *src,
                    int64_t *values, bool *bound, kt__errbuf *eb) {
  const kt__kernel_decl *d = k->decl;
  unbound_names u = {d, bound, 0, -1};
  kt__expr_visit_names(p->dims[dim], count_unbound, &u);
  if (u.count != 1) return KT_OK; /* none to bind, or more than one file dimension can tell */
  int64_t v;
  if (solve(d, p->dims[dim], values, u.which, extent, &v) && v > 0) {
    values[u.which] = v;
    bound[u.which] = true;
    return KT_OK;
  }
  kt__sbuf where = {0}, text = {0};
  source_label(k, p, src, k->ctx->opts.labels.input, &where);
  kt__expr_print(p->dims[dim], &text);
  kt__err(eb, KT_INVALID,
          "%s the file's dimension %d is %" PRIu64 ", which no value of %s makes of %s's dimension %d (%s); give %s "
          "with %s %s=VALUE or fix the file",
          where.s, dim + 1, extent, d->sizes[u.which], p->name, dim + 1, text.s, d->sizes[u.which],
          k->ctx->opts.labels.size, d->sizes[u.which]);
  kt__sbuf_free(&where);
  kt__sbuf_free(&text);
  return KT_INVALID;
}

static int bind_from(kt_kernel *k, int i, const kt__data_source *src, int64_t *values, bool *bound, kt__errbuf *eb) {
  const kt__param *p = &k->decl->params[i];
  kt__data_header h;
  int rc = kt__data_header_read(src, &h, eb);
  if (rc != KT_OK) {
    kt__sbuf where = {0};
    char msg[sizeof eb->msg];
    snprintf(msg, sizeof msg, "%s", eb->msg);
    source_label(k, p, src, src == &k->expects[i] ? k->ctx->opts.labels.expect : k->ctx->opts.labels.input, &where);
    kt__err(eb, rc, "%s %s", where.s, msg);
    kt__sbuf_free(&where);
    return rc;
  }
  /* A raw file is one run of elements: it tells a one-dimensional shape. */
  if (h.ndims != p->ndims) return KT_OK; /* refused with both shapes once the sizes are known */
  for (int dim = 0; dim < p->ndims; dim++) KT__FORWARD(bind_dim(k, p, dim, h.shape[dim], src, values, bound, eb));
  return KT_OK;
}

int kt__kernel_bind_file_sizes(kt_kernel *k, int64_t *values, bool *bound, kt__errbuf *eb) {
  for (int i = 0; i < k->decl->nparams; i++) {
    if (k->inputs[i].path) KT__FORWARD(bind_from(k, i, &k->inputs[i], values, bound, eb));
    if (k->expects[i].path) KT__FORWARD(bind_from(k, i, &k->expects[i], values, bound, eb));
  }
  return KT_OK;
}

static bool same_shape(const kt__data_header *h, const uint64_t *shape, int ndims) {
  uint64_t count = 1;
  for (int d = 0; d < ndims; d++) count *= shape[d];
  if (h->raw) return h->count == count;
  if (h->ndims != ndims) return false;
  for (int d = 0; d < ndims; d++)
    if (h->shape[d] != shape[d]) return false;
  return true;
}

int kt__kernel_check_file(const kt_kernel *k, int i, const kt__data_source *src, const uint64_t *shape, int ndims,
                          const char *label, kt__errbuf *eb) {
  const kt__param *p = &k->decl->params[i];
  kt__data_header h;
  kt__sbuf where = {0};
  source_label(k, p, src, label, &where);
  int rc = kt__data_header_read(src, &h, eb);
  if (rc == KT_OK && h.type != p->type) rc = check_type(k, p, &h, where.s, eb);
  else if (rc == KT_OK && !same_shape(&h, shape, ndims)) {
    kt__sbuf decl = {0}, want = {0}, got = {0};
    declared_text(p, &decl);
    kt__data_shape_text(shape, ndims, &want);
    kt__data_shape_text(h.shape, h.ndims, &got);
    rc = kt__err(eb, KT_INVALID,
                 "%s the file holds %s %s%s, but %s is declared %s, which is %s with these sizes; give the sizes "
                 "with %s NAME=VALUE or a file of that shape",
                 where.s, kt__dtype_name(h.type), h.raw ? "elements: " : "of shape ", got.s, p->name, decl.s, want.s,
                 k->ctx->opts.labels.size);
    kt__sbuf_free(&decl);
    kt__sbuf_free(&want);
    kt__sbuf_free(&got);
  } else if (rc != KT_OK) {
    char msg[sizeof eb->msg];
    snprintf(msg, sizeof msg, "%s", eb->msg);
    kt__err(eb, rc, "%s %s", where.s, msg);
  }
  kt__sbuf_free(&where);
  return rc;
}
