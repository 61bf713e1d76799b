/* T1 files translated into ktune's annotations (t1.h, docs/T1.md). */
#include "t1.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lang/decl.h"
#include "../lang/diag.h"
#include "../lang/expr.h"

enum { MAX_PARAMS = 128, MAX_VALUES = 4096 };

typedef struct tparam {
  const char *name;
  int64_t *values; /* the Default first */
  int count;
} tparam;

typedef struct translation {
  const char *path; /* the T1 file, for messages */
  json_object *doc, *spec;
  tparam params[MAX_PARAMS];
  int nparams;
  const char *names[MAX_PARAMS];
  int64_t *values[MAX_PARAMS];
  int counts[MAX_PARAMS];
  char *where[MAX_PARAMS]; /* the Conditions, translated */
  int nwhere;
  int64_t problem[3]; /* ProblemSize */
  int nproblem;
  kt__sbuf notes, ann;
  kt__lang lang;
  kt__errbuf *eb;
} translation;

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
  json_object *v = get(o, key);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void note(translation *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(translation *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kt__sbuf_printf(&t->notes, "%s: note: ", t->path);
  kt__sbuf_vprintf(&t->notes, fmt, ap);
  kt__sbuf_printf(&t->notes, "\n");
  va_end(ap);
}

static int error(translation *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int error(translation *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char msg[1500];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return kt__err(t->eb, KT_INVALID, "%s: error: %s", t->path, msg);
}

/* A Python expression of the file as ktune's; NULL with a note or error by the caller. */
static char *expr(translation *t, const char *python, char why[256]) {
  return kt__t1_expr(python, t->names, t->values, t->counts, t->nparams, why);
}

/* --- tuning parameters ------------------------------------------------------ */

/* Values -> "[" INT { "," INT } "]" | [ "list(" ] "range(" INT [ "," INT [ "," INT ] ] ")" [ ")" ] */
static int parse_values(const char *text, int64_t *out, int max) {
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  bool listed = strncmp(p, "list(", 5) == 0;
  if (listed) p += 5;
  if (strncmp(p, "range(", 6) == 0) {
    long long a[3] = {0, 0, 1};
    int n = 0;
    p += 6;
    for (char *end; n < 3; n++, p = end + 1) {
      a[n] = strtoll(p, &end, 10);
      if (end == p) return -1;
      while (isspace((unsigned char)*end)) end++;
      if (*end == ')') {
        n++;
        break;
      }
      if (*end != ',') return -1;
    }
    long long lo = n == 1 ? 0 : a[0], hi = n == 1 ? a[0] : a[1], step = n == 3 ? a[2] : 1;
    int count = 0;
    for (long long v = lo; step > 0 ? v < hi : v > hi; v += step)
      if (step == 0 || count == max) return -1;
      else out[count++] = v;
    return count;
  }
  if (*p++ != '[') return -1;
  int count = 0;
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (*p == ']') return count;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) {
      if (strncmp(p, "True", 4) == 0) v = 1, end = (char *)p + 4;
      else if (strncmp(p, "False", 5) == 0) v = 0, end = (char *)p + 5;
      else return -1;
    }
    if (*end == '.' || *end == 'e' || count == max) return -1;
    out[count++] = v;
    p = end;
    while (isspace((unsigned char)*p)) p++;
    if (*p == ',') p++;
    else if (*p != ']') return -1;
  }
}

/* The Default first: ktune's default configuration is the first choices. */
static void default_first(translation *t, tparam *q, json_object *def) {
  if (!def) return;
  int64_t d = json_object_get_int64(def);
  for (int i = 0; i < q->count; i++)
    if (q->values[i] == d) {
      memmove(q->values + 1, q->values, (size_t)i * sizeof *q->values);
      q->values[0] = d;
      return;
    }
  note(t, "%s: the Default %lld is not among its Values; ktune's default is the first value, %lld", q->name,
       (long long)d, (long long)q->values[0]);
}

/* OpenCL C's access qualifiers and address spaces: a -D of one of them
 * breaks the platform's own headers. */
static bool opencl_keyword(const char *name) {
  static const char *const words[] = {"read_only", "write_only", "read_write", "global", "local",
                                      "constant",  "private",    "kernel",     NULL};
  for (int i = 0; words[i]; i++)
    if (strcmp(words[i], name) == 0) return true;
  return false;
}

static int read_param(translation *t, json_object *o) {
  const char *name = get_str(o, "Name"), *type = get_str(o, "Type"), *values = get_str(o, "Values");
  if (!name || !values) return error(t, "a TuningParameter without a Name or Values");
  if (t->lang == KT__LANG_OPENCL && opencl_keyword(name))
    return error(t,
                 "tuning parameter %s is an OpenCL C keyword: -D%s=VALUE breaks the OpenCL headers; rename it "
                 "(in the T1 file and the kernel)",
                 name, name);
  if (type && strcmp(type, "int") != 0 && strcmp(type, "bool") != 0)
    return error(t, "tuning parameter %s is of Type %s; ktune's choices are integers (Type int)", name, type);
  if (t->nparams == MAX_PARAMS) return error(t, "more than %d tuning parameters", MAX_PARAMS);
  tparam *q = &t->params[t->nparams];
  q->name = name;
  q->values = kt__xcalloc(MAX_VALUES, sizeof *q->values);
  q->count = parse_values(values, q->values, MAX_VALUES);
  if (q->count < 1)
    return error(t, "tuning parameter %s: Values \"%s\" is not a list of integers or a range(...)", name, values);
  default_first(t, q, get(o, "Default"));
  t->names[t->nparams] = name, t->values[t->nparams] = q->values, t->counts[t->nparams] = q->count;
  t->nparams++;
  return KT_OK;
}

static int read_params(translation *t) {
  json_object *list = get(get(t->doc, "ConfigurationSpace"), "TuningParameters");
  if (!list || !json_object_is_type(list, json_type_array)) return error(t, "no ConfigurationSpace.TuningParameters");
  for (size_t i = 0; i < json_object_array_length(list); i++)
    KT__FORWARD(read_param(t, json_object_array_get_idx(list, i)));
  return KT_OK;
}

/* @autotune(NAME in {DEFAULT, ...}, ...): braces keep the list exactly. */
static void write_autotune(translation *t) {
  kt__sbuf_printf(&t->ann, "// @autotune(");
  for (int i = 0; i < t->nparams; i++) {
    const tparam *q = &t->params[i];
    kt__sbuf_printf(&t->ann, "%s%s in %s", i ? ", " : "", q->name, q->count == 1 ? "[" : "{");
    for (int j = 0; j < q->count; j++) kt__sbuf_printf(&t->ann, "%s%lld", j ? ", " : "", (long long)q->values[j]);
    kt__sbuf_printf(&t->ann, "%s", q->count == 1 ? "]" : "}");
  }
  kt__sbuf_printf(&t->ann, ")\n");
}

/* Conditions -> @where: one each; one that has no integer meaning is left
 * out (its configurations are then tried, and fail or run), and named. */
static void read_conditions(translation *t) {
  json_object *list = get(get(t->doc, "ConfigurationSpace"), "Conditions");
  for (size_t i = 0; list && i < json_object_array_length(list) && t->nwhere < MAX_PARAMS; i++) {
    const char *py = get_str(json_object_array_get_idx(list, i), "Expression");
    char why[256];
    char *e = py ? expr(t, py, why) : NULL;
    if (e) t->where[t->nwhere++] = e;
    else note(t, "Condition \"%s\" is left out: %s", py ? py : "(not a string)", py ? why : "no Expression");
  }
}

static void write_where(translation *t) {
  for (int i = 0; i < t->nwhere; i++) kt__sbuf_printf(&t->ann, "// @where(%s)\n", t->where[i]);
}

/* Whether the configuration that takes value PICK[i] of each parameter
 * satisfies every Condition (at the file's ProblemSize). */
static bool satisfies(translation *t, kt__expr *const *where, const int *pick) {
  const char *names[MAX_PARAMS + 3];
  int64_t values[MAX_PARAMS + 3];
  int n = 0;
  for (int i = 0; i < t->nparams; i++) names[n] = t->names[i], values[n++] = t->values[i][pick[i]];
  static const char *const ps[] = {"PROBLEM_SIZE_X", "PROBLEM_SIZE_Y", "PROBLEM_SIZE_Z"};
  for (int d = 0; d < t->nproblem; d++) names[n] = ps[d], values[n++] = t->problem[d];
  kt__env env = {names, values, n, NULL};
  for (int w = 0; w < t->nwhere; w++) {
    int64_t v = 0;
    kt__eval_error err;
    if (!where[w] || kt__expr_eval(where[w], &env, &v, &err) != 0 || !v) return false;
  }
  return true;
}

/* ktune's default (the reference) must satisfy the restrictions; Kernel
 * Tuner's Default need not (the hub's dedispersion Default does not). Then
 * the first valid configuration in the space's order, searched a bounded
 * while, becomes the default, and a note says so. */
static void valid_default(translation *t) {
  kt__expr *where[MAX_PARAMS] = {0};
  kt__diag d;
  kt__diag_init(&d, NULL);
  for (int w = 0; w < t->nwhere; w++) where[w] = kt__expr_parse_text(t->where[w], (kt__loc){1, 1}, &d);
  kt__diag_free(&d);
  int pick[MAX_PARAMS] = {0};
  bool found = satisfies(t, where, pick);
  for (long tries = 0; !found && tries < 1000000; tries++) {
    int i = t->nparams - 1; /* the last name moves fastest */
    while (i >= 0 && ++pick[i] == t->counts[i]) pick[i--] = 0;
    if (i < 0) break;
    found = satisfies(t, where, pick);
  }
  for (int w = 0; w < t->nwhere; w++) kt__expr_free(where[w]);
  bool moved = false;
  for (int i = 0; i < t->nparams; i++) moved |= pick[i] != 0;
  if (!found || !moved) return; /* valid as written, or none found: the parser then says so */
  kt__sbuf cfg = {0};
  for (int i = 0; i < t->nparams; i++) {
    int64_t *v = t->values[i], chosen = v[pick[i]];
    memmove(v + 1, v, (size_t)pick[i] * sizeof *v);
    v[0] = chosen;
    kt__sbuf_printf(&cfg, "%s%s=%lld", i ? " " : "", t->names[i], (long long)chosen);
  }
  note(t, "the Defaults violate the Conditions; ktune's default (its reference) is the first valid configuration, %s",
       cfg.s);
  kt__sbuf_free(&cfg);
}

/* --- launch shape -------------------------------------------------------------- */

static bool tuned(const translation *t, const char *name) {
  for (int i = 0; i < t->nparams; i++)
    if (strcmp(t->names[i], name) == 0) return true;
  return false;
}

/* @dims(PROBLEM_SIZE_X = ..., ...): the ProblemSize, runtime sizes that
 * --dim can change. */
static void read_problem(translation *t) {
  json_object *ps = get(t->spec, "ProblemSize");
  int n = ps && json_object_is_type(ps, json_type_array) ? (int)json_object_array_length(ps) : 0;
  for (int d = 0; d < n && d < 3; d++)
    t->problem[t->nproblem++] = json_object_get_int64(json_object_array_get_idx(ps, (size_t)d));
}

static int write_dims(translation *t, int *ndims) {
  json_object *ps = get(t->spec, "ProblemSize");
  *ndims = ps && json_object_is_type(ps, json_type_array) ? (int)json_object_array_length(ps) : 0;
  if (*ndims < 1 || *ndims > 3) return error(t, "KernelSpecification.ProblemSize must list 1 to 3 sizes");
  kt__sbuf_printf(&t->ann, "// @dims(");
  for (int d = 0; d < *ndims; d++) {
    json_object *v = json_object_array_get_idx(ps, (size_t)d);
    if (!json_object_is_type(v, json_type_int))
      return error(t, "ProblemSize[%d] is not an integer (a size given by an expression is not mapped)", d);
    kt__sbuf_printf(&t->ann, "%sPROBLEM_SIZE_%c = %lld", d ? ", " : "", "XYZ"[d], (long long)json_object_get_int64(v));
  }
  kt__sbuf_printf(&t->ann, ")\n");
  return KT_OK;
}

/* The thread block: LocalSize when given, else Kernel Tuner's default
 * (block_size_x/y/z when tuned, else 256, 1, 1). */
static int block_dim(translation *t, int d, kt__sbuf *out) {
  static const char *const keys[] = {"X", "Y", "Z"}, *const names[] = {"block_size_x", "block_size_y", "block_size_z"};
  const char *local = get_str(get(t->spec, "LocalSize"), keys[d]);
  char why[256];
  char *e = local ? expr(t, local, why) : NULL;
  if (local && !e) return error(t, "LocalSize.%s \"%s\": %s", keys[d], local, why);
  kt__sbuf_printf(out, "%s%s", d ? ", " : "", e ? e : tuned(t, names[d]) ? names[d] : d ? "1" : "256");
  free(e);
  return KT_OK;
}

/* The grid: the problem size divided by the product of the GridDiv names,
 * rounded up, as Kernel Tuner computes it (GlobalSize is not read). */
static int grid_dim(translation *t, int d, int ndims, kt__sbuf *out) {
  static const char *const keys[] = {"GridDivX", "GridDivY", "GridDivZ"}, *const names[] = {"block_size_x",
                                                                                            "block_size_y",
                                                                                            "block_size_z"};
  if (d >= ndims) {
    kt__sbuf_printf(out, ", 1");
    return KT_OK;
  }
  json_object *div = get(t->spec, keys[d]);
  kt__sbuf prod = {0};
  for (size_t i = 0; div && i < json_object_array_length(div); i++) {
    const char *py = json_object_get_string(json_object_array_get_idx(div, i));
    char why[256];
    char *e = py ? expr(t, py, why) : NULL;
    if (!e) {
      kt__sbuf_free(&prod);
      return error(t, "%s entry \"%s\": %s", keys[d], py ? py : "?", py ? why : "not a string");
    }
    kt__sbuf_printf(&prod, "%s(%s)", prod.len ? " * " : "", e);
    free(e);
  }
  if (!div) kt__sbuf_printf(&prod, "%s", tuned(t, names[d]) ? names[d] : d ? "1" : "256");
  kt__sbuf_printf(out, "%scdiv(PROBLEM_SIZE_%c, %s)", d ? ", " : "", "XYZ"[d], prod.len ? prod.s : "1");
  kt__sbuf_free(&prod);
  return KT_OK;
}

static int write_launch(translation *t) {
  int ndims;
  KT__FORWARD(write_dims(t, &ndims));
  kt__sbuf grid = {0}, block = {0};
  int rc = KT_OK;
  for (int d = 0; d < 3 && rc == KT_OK; d++) rc = grid_dim(t, d, ndims, &grid);
  for (int d = 0; d < 3 && rc == KT_OK; d++) rc = block_dim(t, d, &block);
  if (rc == KT_OK && t->lang != KT__LANG_C) kt__sbuf_printf(&t->ann, "// @grid(%s)\n// @block(%s)\n", grid.s, block.s);
  kt__sbuf_free(&grid);
  kt__sbuf_free(&block);
  if (get(t->spec, "GlobalSize"))
    note(t, "GlobalSize is not read: the grid is ProblemSize over the GridDiv products, as Kernel Tuner computes it");
  json_object *shared = get(t->spec, "SharedMemory");
  if (shared && json_object_get_int64(shared) > 0)
    kt__sbuf_printf(&t->ann, "// @shared(%lld)\n", (long long)json_object_get_int64(shared));
  return rc;
}

/* --- arguments -------------------------------------------------------------------- */

static const char *dtype_of(const char *t1) {
  static const char *const map[][2] = {{"float", "f32"},  {"float32", "f32"}, {"double", "f64"}, {"float64", "f64"},
                                       {"half", "f16"},   {"float16", "f16"}, {"int", "i32"},    {"int32", "i32"},
                                       {"uint32", "u32"}, {"int64", "i64"},   {"uint64", "u64"}, {"long", "i64"},
                                       {"int8", "i8"},    {"char", "i8"},     {"uint8", "u8"},   {"uchar", "u8"},
                                       {"bool", "u8"},    {"int16", NULL},    {NULL, NULL}};
  for (int i = 0; t1 && map[i][0]; i++)
    if (strcmp(map[i][0], t1) == 0) return map[i][1];
  return NULL;
}

/* = init: Random, Constant 0 or 1, BinaryFile (raw, of the argument's type). */
static void write_init(translation *t, json_object *a, const char *name, const char *type, kt__sbuf *out) {
  const char *fill = get_str(a, "FillType");
  json_object *value = get(a, "FillValue");
  if (!fill || strcmp(fill, "Random") == 0) {
    kt__sbuf_printf(out, " = random");
  } else if (strcmp(fill, "Constant") == 0 && value) {
    double v = json_object_get_double(value);
    if (v == 0 || v == 1) kt__sbuf_printf(out, " = %s", v == 0 ? "zeros" : "ones");
    else
      note(t,
           "argument %s: FillValue %g is not mapped (ktune fills with zeros, ones, iota, random or a file); "
           "it gets random data",
           name, v);
  } else if (strcmp(fill, "BinaryFile") == 0 && (get_str(a, "DataSource") || get_str(a, "FillValue"))) {
    const char *src = get_str(a, "DataSource") ? get_str(a, "DataSource") : get_str(a, "FillValue");
    kt__sbuf_printf(out, " = file(\"%s\", %s)", src, type);
  } else {
    note(t, "argument %s: FillType %s is not mapped; it gets random data", name, fill);
  }
}

static const char *mode_of(json_object *a) {
  const char *access = get_str(a, "AccessType");
  if (!access) return "";
  return strcmp(access, "ReadOnly") == 0 ? "in " : strcmp(access, "WriteOnly") == 0 ? "out " : "inout ";
}

static bool is_constant(json_object *a) {
  const char *m = get_str(a, "MemType");
  return m && strcmp(m, "Constant") == 0;
}

/* One argument as a @kernel parameter called CNAME (the C function's name
 * for it), or as a @constant (CNAME NULL). */
static int write_argument(translation *t, json_object *a, const char *cname, kt__sbuf *out) {
  const char *name = get_str(a, "Name") ? get_str(a, "Name") : "?", *mem = get_str(a, "MemoryType");
  const char *type = dtype_of(get_str(a, "Type"));
  if (!type) return error(t, "argument %s: Type %s is not mapped", name, get_str(a, "Type"));
  const char *label = cname ? cname : name;
  if (mem && strcmp(mem, "Scalar") == 0) {
    json_object *v = get(a, "FillValue");
    double x = v ? json_object_get_double(v) : 0;
    if (x != (double)(int64_t)x || type[0] == 'f')
      return error(t, "scalar argument %s (%s %g): ktune's scalars are integers", name, type, x);
    kt__sbuf_printf(out, "%s: %s = %lld", label, type, (long long)x);
    return KT_OK;
  }
  json_object *size = get(a, "Size");
  char why[256] = "";
  char *count = NULL;
  if (size && json_object_is_type(size, json_type_int)) count = kt__xstrdup(json_object_get_string(size));
  else if (size && json_object_is_type(size, json_type_string)) count = expr(t, json_object_get_string(size), why);
  if (!count) return error(t, "argument %s: Size %s: %s", name, size ? json_object_get_string(size) : "missing", why);
  kt__sbuf_printf(out, "%s: %stensor<%s>[%s]", label, cname ? mode_of(a) : "", type, count);
  free(count);
  write_init(t, a, label, type, out);
  return KT_OK;
}

/* The C function's parameter names, in order: what @kernel must call them. */
static int c_param_names(const char *src, const char *fn, char **names, int max, const char **def) {
  size_t n = strlen(fn);
  for (const char *p = strstr(src, fn); p; p = strstr(p + 1, fn)) {
    if ((p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) || (isalnum((unsigned char)p[n]) || p[n] == '_'))
      continue;
    const char *q = p + n;
    while (isspace((unsigned char)*q)) q++;
    if (*q != '(') continue;
    const char *close = strchr(q, ')');
    const char *after = close ? close + 1 : NULL;
    while (after && isspace((unsigned char)*after)) after++;
    if (!after || *after != '{') continue; /* a declaration or a call */
    *def = p;
    int count = 0;
    for (const char *s = q + 1; s < close && count < max;) {
      const char *e = s;
      while (e < close && *e != ',') e++;
      const char *last = e;
      while (last > s && (isspace((unsigned char)last[-1]) || last[-1] == ']' || last[-1] == '[' ||
                          isdigit((unsigned char)last[-1]) || last[-1] == '*'))
        last--;
      const char *first = last;
      while (first > s && (isalnum((unsigned char)first[-1]) || first[-1] == '_')) first--;
      if (first < last) names[count++] = kt__xstrndup(first, (size_t)(last - first));
      s = e + 1;
    }
    return count;
  }
  return -1;
}

/* The source declares NAME as a symbol the host can fill. */
static bool declares_symbol(const char *src, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(src, name); p; p = strstr(p + 1, name)) {
    const char *line = p;
    while (line > src && line[-1] != '\n') line--;
    if ((isalnum((unsigned char)p[n]) || p[n] == '_') || (p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
      continue;
    char head[256];
    snprintf(head, sizeof head, "%.*s", (int)(p - line < 255 ? p - line : 255), line);
    if (strstr(head, "__constant__") || strstr(head, "__device__")) return true;
  }
  return false;
}

/* @kernel NAME(params) and @constant(...): arguments by position against
 * the C function; MemType Constant ones fill a symbol as well (Kernel
 * Tuner's cmem_args) when the source declares one of that name. */
static int write_arguments(translation *t, const char *src, const char **def) {
  const char *fn = get_str(t->spec, "KernelName");
  json_object *args = get(t->spec, "Arguments");
  int nargs = args ? (int)json_object_array_length(args) : 0, nconst = 0;
  for (int i = 0; i < nargs; i++) nconst += is_constant(json_object_array_get_idx(args, i));
  char *cnames[MAX_PARAMS];
  int nc = c_param_names(src, fn, cnames, MAX_PARAMS, def);
  if (nc < 0) return error(t, "the kernel file has no definition of %s (KernelName)", fn);
  bool constants_passed = nc == nargs;
  int rc = KT_OK;
  if (!constants_passed && nc != nargs - nconst)
    rc =
        error(t, "%s takes %d parameters, but Arguments lists %d (%d of them MemType Constant)", fn, nc, nargs, nconst);
  kt__sbuf params = {0}, consts = {0};
  for (int i = 0, c = 0; rc == KT_OK && i < nargs; i++) {
    json_object *a = json_object_array_get_idx(args, i);
    bool symbol = is_constant(a) && t->lang != KT__LANG_OPENCL && declares_symbol(src, get_str(a, "Name"));
    if (symbol) {
      if (consts.len) kt__sbuf_printf(&consts, ", ");
      rc = write_argument(t, a, NULL, &consts);
    }
    if (rc == KT_OK && (constants_passed || !is_constant(a))) {
      if (params.len) kt__sbuf_printf(&params, ", ");
      rc = write_argument(t, a, cnames[c++], &params);
      if (symbol)
        note(t, "argument %s fills both the parameter %s and the symbol %s, from separate random data",
             get_str(a, "Name"), cnames[c - 1], get_str(a, "Name"));
    } else if (rc == KT_OK && is_constant(a) && !symbol) {
      note(t, "argument %s is MemType Constant, but the kernel file declares no __constant__ %s; it is not passed",
           get_str(a, "Name"), get_str(a, "Name"));
    }
  }
  if (rc == KT_OK && consts.len) kt__sbuf_printf(&t->ann, "// @constant(%s)\n", consts.s);
  if (rc == KT_OK) kt__sbuf_printf(&t->ann, "// @kernel %s(%s)\n", fn, params.s ? params.s : "");
  kt__sbuf_free(&params);
  kt__sbuf_free(&consts);
  for (int i = 0; i < nc; i++) free(cnames[i]);
  return rc;
}

/* --- files ----------------------------------------------------------------------- */

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? kt__xstrndup(path, (size_t)(slash - path)) : kt__xstrdup(".");
}

static bool exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* KernelFile as given, else beside the T1 file, else one folder up (Kernel
 * Tuner's order). */
static char *find_kernel_file(const char *t1_path, const char *file) {
  if (file[0] == '/' || exists(file)) return exists(file) ? kt__xstrdup(file) : NULL;
  char *dir = dir_of(t1_path);
  kt__sbuf a = {0}, b = {0};
  kt__sbuf_printf(&a, "%s/%s", dir, file);
  kt__sbuf_printf(&b, "%s/../%s", dir, file);
  free(dir);
  char *found = exists(a.s) ? kt__xstrdup(a.s) : exists(b.s) ? kt__xstrdup(b.s) : NULL;
  kt__sbuf_free(&a);
  kt__sbuf_free(&b);
  return found;
}

static int language(translation *t, kt__t1 *out) {
  const char *lang = get_str(t->spec, "Language");
  static const char *const map[][3] = {{"CUDA", "cu", "c"}, {"OpenCL", "cl", "o"}, {"C", "c", "C"}};
  for (int i = 0; lang && i < 3; i++)
    if (strcmp(map[i][0], lang) == 0) {
      out->lang = kt__xstrdup(map[i][1]);
      t->lang = i == 0 ? KT__LANG_CUDA : i == 1 ? KT__LANG_OPENCL : KT__LANG_C;
      return KT_OK;
    }
  return error(t, "Language %s is not one ktune runs (CUDA, OpenCL or C)", lang ? lang : "(missing)");
}

static void note_unread(translation *t) {
  json_object *opts = get(t->spec, "CompilerOptions");
  for (size_t i = 0; opts && i < json_object_array_length(opts); i++)
    note(t, "CompilerOptions \"%s\" is not passed: ktune compiles with its own options (docs/CUDA.md)",
         json_object_get_string(json_object_array_get_idx(opts, i)));
  if (get(t->doc, "Budget")) note(t, "Budget is not read: give ktune tune --budget");
  if (get(t->doc, "Search")) note(t, "Search is not read: give ktune tune --strategy");
  if (get(t->spec, "Device")) note(t, "Device is not read: give ktune tune --device");
}

/* The annotations go directly above the line where the kernel's
 * definition starts (the line before, when the name begins its line). */
static char *insert_annotations(const char *src, const char *def, const char *ann) {
  const char *line = def;
  while (line > src && line[-1] != '\n') line--;
  bool name_first = true;
  for (const char *p = line; p < def; p++) name_first &= isspace((unsigned char)*p) != 0;
  if (name_first && line > src) {
    line--;
    while (line > src && line[-1] != '\n') line--;
  }
  kt__sbuf s = {0};
  kt__sbuf_printf(&s, "%.*s%s%s", (int)(line - src), src, ann, line);
  return s.s;
}

static int translate(translation *t, kt__t1 *out) {
  t->spec = get(t->doc, "KernelSpecification");
  const char *name = get_str(t->spec, "KernelName"), *file = get_str(t->spec, "KernelFile");
  if (!t->spec || !name || !file)
    return error(t, "not a T1 file: no KernelSpecification with KernelName and KernelFile");
  KT__FORWARD(language(t, out));
  out->kernel_name = kt__xstrdup(name);
  out->kernel_path = find_kernel_file(t->path, file);
  if (!out->kernel_path)
    return error(t, "KernelFile %s is not found (as given, beside the T1 file, or one folder up)", file);
  kt__source src;
  KT__FORWARD(kt__source_read(out->kernel_path, &src, t->eb));
  int rc = read_params(t);
  if (rc == KT_OK) {
    read_conditions(t);
    read_problem(t);
    valid_default(t);
    write_autotune(t);
    write_where(t);
    rc = write_launch(t);
  }
  const char *def = NULL;
  if (rc == KT_OK) rc = write_arguments(t, src.text, &def);
  if (rc == KT_OK) {
    note_unread(t);
    out->annotations = kt__xstrdup(t->ann.s);
    out->source = insert_annotations(src.text, def, t->ann.s);
  }
  kt__source_free(&src);
  return rc;
}

int kt__t1_translate(const char *t1_path, kt__t1 *out, kt__errbuf *eb) {
  memset(out, 0, sizeof *out);
  translation t = {.path = t1_path, .eb = eb};
  kt__source text;
  KT__FORWARD(kt__source_read(t1_path, &text, eb));
  enum json_tokener_error jerr = json_tokener_success;
  t.doc = json_tokener_parse_verbose(text.text, &jerr);
  kt__source_free(&text);
  int rc = t.doc ? translate(&t, out)
                 : kt__err(eb, KT_INVALID, "%s: error: not JSON (%s)", t1_path, json_tokener_error_desc(jerr));
  out->notes = kt__xstrdup(t.notes.s ? t.notes.s : "");
  kt__sbuf_free(&t.notes);
  kt__sbuf_free(&t.ann);
  for (int i = 0; i < t.nparams; i++) free(t.params[i].values);
  for (int i = 0; i < t.nwhere; i++) free(t.where[i]);
  json_object_put(t.doc);
  if (rc != KT_OK) {
    char *notes = out->notes;
    out->notes = NULL;
    kt__t1_free(out);
    out->notes = notes;
  }
  return rc;
}

void kt__t1_free(kt__t1 *t) {
  free(t->kernel_path);
  free(t->kernel_name);
  free(t->lang);
  free(t->source);
  free(t->annotations);
  free(t->notes);
  memset(t, 0, sizeof *t);
}
