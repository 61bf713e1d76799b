/* .npy and raw binary data files. The .npy header is a Python dict literal,
 * {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, after a magic
 * string, a version and the header's length; only the three keys matter,
 * read by name so that their order and spacing do not. */
#include "datafile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { NPY_HEADER_MAX = 1 << 20 }; /* far beyond any real header (a shape of 32 numbers) */

void kt__data_source_parse(const char *spec, kt__data_source *src) {
  *src = (kt__data_source){0};
  const char *colon = strrchr(spec, ':');
  int type = colon ? kt__dtype_from_name(colon + 1) : -1;
  if (type >= 0) {
    src->path = kt__xstrndup(spec, (size_t)(colon - spec));
    src->raw = true;
    src->type = (kt__dtype)type;
  } else {
    src->path = kt__xstrdup(spec);
  }
}

void kt__data_source_free(kt__data_source *src) {
  free(src->path);
  *src = (kt__data_source){0};
}

void kt__data_shape_text(const uint64_t *shape, int ndims, kt__sbuf *out) {
  kt__sbuf_append(out, "(", 1);
  for (int i = 0; i < ndims; i++) kt__sbuf_printf(out, "%s%" PRIu64, i ? ", " : "", shape[i]);
  kt__sbuf_append(out, ndims == 1 ? ",)" : ")", ndims == 1 ? 2 : 1);
}

/* NumPy's little-endian descr for each ktune type ('|' for single bytes). */
static const struct {
  const char *descr;
  kt__dtype type;
} npy_types[] = {
    {"f2", KT__DT_F16}, {"f4", KT__DT_F32}, {"f8", KT__DT_F64}, {"i1", KT__DT_I8},  {"u1", KT__DT_U8},
    {"i4", KT__DT_I32}, {"u4", KT__DT_U32}, {"i8", KT__DT_I64}, {"u8", KT__DT_U64},
};

static int npy_type(const char *path, const char *descr, kt__dtype *out, kt__errbuf *eb) {
  char order = descr[0];
  KT__RETURN_IF(order == '>', eb, KT_INVALID,
                "%s: the data is big-endian ('%s'); ktune reads little-endian files: save it with "
                "numpy.save(path, a.astype(a.dtype.newbyteorder('<')))",
                path, descr);
  const char *bare = order == '<' || order == '|' || order == '=' ? descr + 1 : descr;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (strcmp(bare, npy_types[i].descr) == 0) {
      *out = npy_types[i].type;
      return KT_OK;
    }
  return kt__err(eb, KT_INVALID,
                 "%s: element type '%s' has no ktune type (those read from .npy: f16 f32 f64 i8 u8 i32 u32 i64 "
                 "u64; for bf16 and others give a raw file: --input NAME=PATH:bf16)",
                 path, descr);
}

/* The text after KEY's colon in the header dict, or NULL. */
static const char *dict_value(const char *header, const char *key) {
  char quoted[2][32];
  snprintf(quoted[0], sizeof quoted[0], "'%s'", key);
  snprintf(quoted[1], sizeof quoted[1], "\"%s\"", key);
  for (int q = 0; q < 2; q++) {
    const char *p = strstr(header, quoted[q]);
    if (!p) continue;
    p += strlen(quoted[q]);
    while (isspace((unsigned char)*p)) p++;
    if (*p != ':') return NULL;
    p++;
    while (isspace((unsigned char)*p)) p++;
    return p;
  }
  return NULL;
}

/* shape -> "(" [ INT { "," INT } [ "," ] ] ")" */
static int parse_shape(const char *path, const char *p, kt__data_header *h, kt__errbuf *eb) {
  KT__RETURN_IF(!p || *p != '(', eb, KT_INVALID, "%s: the .npy header has no 'shape' tuple", path);
  p++;
  h->ndims = 0;
  h->count = 1;
  for (;;) {
    while (isspace((unsigned char)*p) || *p == ',') p++;
    if (*p == ')') return KT_OK;
    KT__RETURN_IF(!isdigit((unsigned char)*p), eb, KT_INVALID, "%s: the .npy header's shape is malformed", path);
    KT__RETURN_IF(h->ndims == KT__DATA_MAX_DIMS, eb, KT_INVALID, "%s: more than %d dimensions", path,
                  KT__DATA_MAX_DIMS);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    KT__RETURN_IF(errno == ERANGE || !kt__mul_u64(h->count, v, &h->count), eb, KT_INVALID,
                  "%s: the shape's element count overflows 64 bits", path);
    h->shape[h->ndims++] = v;
    p = end;
  }
}

static int parse_header(const char *path, const char *header, kt__data_header *h, kt__errbuf *eb) {
  const char *descr = dict_value(header, "descr");
  KT__RETURN_IF(!descr || (*descr != '\'' && *descr != '"'), eb, KT_INVALID,
                "%s: the .npy header has no 'descr' string (a structured dtype?); ktune reads arrays of one "
                "numeric type",
                path);
  const char *close = strchr(descr + 1, *descr);
  KT__RETURN_IF(!close || close - descr > 16, eb, KT_INVALID, "%s: the .npy header's 'descr' is malformed", path);
  char type[20];
  snprintf(type, sizeof type, "%.*s", (int)(close - descr - 1), descr + 1);
  KT__FORWARD(npy_type(path, type, &h->type, eb));
  const char *fortran = dict_value(header, "fortran_order");
  KT__RETURN_IF(fortran && strncmp(fortran, "True", 4) == 0, eb, KT_INVALID,
                "%s: the array is in Fortran (column-major) order; ktune reads C order: save "
                "numpy.ascontiguousarray(a) instead",
                path);
  KT__RETURN_IF(!fortran || strncmp(fortran, "False", 5) != 0, eb, KT_INVALID,
                "%s: the .npy header has no 'fortran_order'", path);
  return parse_shape(path, dict_value(header, "shape"), h, eb);
}

static uint32_t little_endian(const unsigned char *b, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

/* Magic "\x93NUMPY", major and minor version, the header's length (2 bytes
 * in version 1, 4 in versions 2 and 3), the header. */
static int read_npy_header(FILE *f, const char *path, kt__data_header *h, kt__errbuf *eb) {
  unsigned char pre[12];
  size_t got = fread(pre, 1, 10, f);
  KT__RETURN_IF(got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0, eb, KT_INVALID,
                "%s: not a .npy file (no \\x93NUMPY magic); for raw binary data give its element type: "
                "PATH:f32 (or file(\"PATH\", f32) in @kernel)",
                path);
  int major = pre[6];
  KT__RETURN_IF(major < 1 || major > 3, eb, KT_INVALID, "%s: .npy format version %d.%d; ktune reads 1, 2 and 3", path,
                major, pre[7]);
  uint32_t len = little_endian(pre + 8, 2);
  uint64_t start = 10;
  if (major >= 2) {
    KT__RETURN_IF(fread(pre + 10, 1, 2, f) != 2, eb, KT_INVALID, "%s: the .npy header is cut short", path);
    len = little_endian(pre + 8, 4);
    start = 12;
  }
  KT__RETURN_IF(len > NPY_HEADER_MAX, eb, KT_INVALID, "%s: a .npy header of %" PRIu32 " bytes is not believable", path,
                len);
  char *header = kt__xmalloc((size_t)len + 1);
  bool whole = fread(header, 1, len, f) == len;
  header[whole ? len : 0] = 0;
  int rc =
      whole ? parse_header(path, header, h, eb) : kt__err(eb, KT_INVALID, "%s: the .npy header is cut short", path);
  free(header);
  h->offset = start + len;
  return rc;
}

static int check_length(const kt__data_source *src, const kt__data_header *h, uint64_t file_bytes, kt__errbuf *eb) {
  uint64_t data = file_bytes - (file_bytes >= h->offset ? h->offset : file_bytes), want;
  KT__RETURN_IF(!kt__mul_u64(h->count, kt__dtype_size(h->type), &want), eb, KT_INVALID,
                "%s: the data's size overflows 64 bits", src->path);
  KT__RETURN_IF(data != want, eb, KT_INVALID,
                "%s: the header promises %" PRIu64 " bytes of data (%" PRIu64
                " %s elements) but the file holds %" PRIu64 " after it",
                src->path, want, h->count, kt__dtype_name(h->type), data);
  return KT_OK;
}

int kt__data_header_read(const kt__data_source *src, kt__data_header *h, kt__errbuf *eb) {
  *h = (kt__data_header){0};
  struct stat st;
  KT__RETURN_IF(stat(src->path, &st) != 0, eb, KT_INVALID, "cannot read %s: %s", src->path, strerror(errno));
  KT__RETURN_IF(!S_ISREG(st.st_mode), eb, KT_INVALID, "%s is not a regular file", src->path);
  if (src->raw) {
    size_t size = kt__dtype_size(src->type);
    KT__RETURN_IF((uint64_t)st.st_size % size != 0, eb, KT_INVALID,
                  "%s: %lld bytes are no whole number of %s elements (%zu bytes each)", src->path,
                  (long long)st.st_size, kt__dtype_name(src->type), size);
    *h = (kt__data_header){.type = src->type, .ndims = 1, .count = (uint64_t)st.st_size / size, .raw = true};
    h->shape[0] = h->count;
    return KT_OK;
  }
  FILE *f = fopen(src->path, "rbe");
  KT__RETURN_IF(!f, eb, KT_IO, "cannot open %s: %s", src->path, strerror(errno));
  int rc = read_npy_header(f, src->path, h, eb);
  fclose(f);
  return rc == KT_OK ? check_length(src, h, (uint64_t)st.st_size, eb) : rc;
}

int kt__data_read(const kt__data_source *src, const kt__data_header *h, void *buf, size_t bytes, kt__errbuf *eb) {
  FILE *f = fopen(src->path, "rbe");
  KT__RETURN_IF(!f, eb, KT_IO, "cannot open %s: %s", src->path, strerror(errno));
  bool ok = fseeko(f, (off_t)h->offset, SEEK_SET) == 0 && fread(buf, 1, bytes, f) == bytes;
  int err = errno;
  fclose(f);
  KT__RETURN_IF(!ok, eb, KT_IO, "%s: cannot read %zu bytes of data (the file changed while ktune read it?): %s",
                src->path, bytes, err ? strerror(err) : "cut short");
  return KT_OK;
}
