/* Data files a tensor is filled from or compared with: NumPy .npy files
 * (format versions 1, 2 and 3, little-endian, C order) and raw binary files
 * of a stated element type. The header is read and checked on its own, so
 * that a wrong file is refused before anything runs; the data is read into
 * the tensor later. */
#ifndef KT_DATA_DATAFILE_H
#define KT_DATA_DATAFILE_H

#include "../common.h"

enum { KT__DATA_MAX_DIMS = 32 };

/* Where a tensor's data comes from: PATH NULL when from nowhere. RAW: a raw
 * binary file of TYPE, else a .npy file (whose header gives the type). */
typedef struct kt__data_source {
  char *path;
  bool raw;
  kt__dtype type;
  int line, col; /* where @kernel's file("...") names it; 0: given by the caller */
} kt__data_source;

/* What a file holds: its element type, shape (a raw file is one dimension
 * of bytes / element size) and where the data starts. */
typedef struct kt__data_header {
  kt__dtype type;
  uint64_t shape[KT__DATA_MAX_DIMS];
  int ndims;
  uint64_t count;
  uint64_t offset;
  bool raw;
} kt__data_header;

/* Parses SPEC, "PATH" (.npy) or "PATH:TYPE" (raw binary of TYPE, e.g.
 * "x.bin:f32"), into SRC; a ":suffix" that is no type stays part of the path. */
void kt__data_source_parse(const char *spec, kt__data_source *src);
void kt__data_source_free(kt__data_source *src);
/* Reads the header of SRC's file. KT_INVALID (KT_IO for an unreadable file)
 * with a message naming the file and what is wrong: no such file, not a
 * .npy file, big-endian or Fortran order, a type ktune has no name for, a
 * raw file whose length is no whole number of elements. */
int kt__data_header_read(const kt__data_source *src, kt__data_header *h, kt__errbuf *eb);
/* Writes "(2, 3)" for the shape of H. */
void kt__data_shape_text(const uint64_t *shape, int ndims, kt__sbuf *out);
/* Reads BYTES bytes of data from SRC at H's offset into BUF (exactly what
 * the header promised, else KT_IO). */
int kt__data_read(const kt__data_source *src, const kt__data_header *h, void *buf, size_t bytes, kt__errbuf *eb);

#endif
