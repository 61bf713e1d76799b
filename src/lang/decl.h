/* What the annotations above one kernel declare: the model the parser
 * builds and the rest of ktune reads. Strings and arrays are owned by the
 * enclosing kt__file. */
#ifndef KT_LANG_DECL_H
#define KT_LANG_DECL_H

#include <stdatomic.h>

#include "expr.h"

typedef enum kt__lang { KT__LANG_C, KT__LANG_OPENCL, KT__LANG_CUDA } kt__lang;

/* Tensor map parameters one kernel may take (a GEMM needs two or three). */
enum { KT__MAX_TENSORMAPS = 4 };

typedef enum kt__mode {
  KT__MODE_UNSET, /* resolved from the C signature: const pointer -> IN, else INOUT */
  KT__MODE_IN,
  KT__MODE_OUT,
  KT__MODE_INOUT
} kt__mode;

typedef enum kt__init {
  KT__INIT_RANDOM, /* the default */
  KT__INIT_ZEROS,
  KT__INIT_ONES,
  KT__INIT_IOTA,
  KT__INIT_FILE /* = file("path"): read from a .npy or raw file (kt__param.file) */
} kt__init;

typedef struct kt__param {
  char *name;
  kt__loc loc;
  bool is_tensor;
  kt__dtype type;
  kt__mode mode;   /* tensors only; never UNSET after parsing */
  kt__init init;   /* tensors only */
  bool init_given; /* "= zeros" etc. was written: restored before every run */
  kt__expr **dims; /* tensors: the shape, outermost first */
  int ndims;
  kt__expr *value; /* scalars: the bound expression, or NULL (then the value
                         of the tuned name or runtime size called NAME) */
  /* = random(LO, HI): uniform in [LO, HI) (integer expressions of runtime
   * sizes); both NULL for plain random, whose range is per type. */
  kt__expr *random_lo, *random_hi;
  /* = file("path"[, TYPE]): the path as written (relative to the source
   * file's folder unless absolute); a TYPE makes it raw binary of that type,
   * without one it is a .npy file. */
  char *file;
  kt__loc file_loc;
  bool file_raw;
  kt__dtype file_type;
  /* The shape uses tuned names: the tensor is allocated for the largest
   * configuration, and only an author's check can judge its content. */
  bool shape_tuned;
  /* name: tensormap(TENSOR, box = [...], swizzle = S) (CUDA only): a TMA
   * tensor map of tensor parameter MAP_TENSOR (its index in params), built
   * on the host and passed by value. is_tensor is false; TYPE is the
   * tensor's. BOX is the tile one copy brings, outermost first like a
   * shape; SWIZZLE (NULL: none) the shared-memory swizzle span in bytes.
   * Both may use tuned names and runtime sizes. */
  bool is_tensormap;
  char *map_of; /* the tensor's name as written */
  kt__loc map_of_loc;
  int map_tensor;
  kt__expr **box;
  int nbox;
  kt__expr *swizzle;
} kt__param;

/* One name of @autotune or @cluster with its expanded choices. */
typedef struct kt__tunedim {
  char *name;
  kt__loc loc;
  int64_t *values; /* expanded per the choice rules; values[0] is the default */
  int count;
} kt__tunedim;

/* NAME = expr, as in @dims(N = 1 << 24) or @key(N = pow2). */
typedef struct kt__binding {
  char *name;
  kt__loc loc;
  kt__expr *value; /* NULL in @key when no bucketing is asked */
  char *bucket;    /* @key only: "pow2" style bucketing name, or NULL */
} kt__binding;

/* An attribute ktune does not know: kept and reported as a note. */
typedef struct kt__unknown_attr {
  char *name;
  kt__loc loc;
} kt__unknown_attr;

typedef struct kt__kernel_decl {
  char *name;
  kt__loc loc; /* of @kernel */
  kt__param *params;
  int nparams;
  /* @constant: data the kernel reads from a symbol of its own (a CUDA
   * __constant__ array, a C global), not a parameter. Tensors of mode IN
   * whose shapes are integer expressions without names. */
  kt__param *constants;
  int nconstants;
  kt__tunedim *tune; /* @autotune */
  int ntune;
  kt__tunedim *cluster; /* @cluster */
  int ncluster;
  kt__expr **where;
  int nwhere;
  kt__expr *grid[3], *block[3];
  int ngrid, nblock; /* 0 when absent */
  kt__binding *dims; /* @dims defaults */
  int ndims;
  kt__binding *key; /* @key; has_key false: every runtime size is in the key */
  int nkey;
  bool has_key;
  double atol, rtol; /* @verify; has_verify false: per-type defaults */
  bool has_verify;
  kt__expr *shared, *flops, *bytes; /* NULL when absent */
  kt__unknown_attr *unknown;
  int nunknown;
  /* Symbolic names used in tensor dims, scalar bindings, @grid, @block,
   * @where, @shared, @flops, @bytes that are not tuned names: the runtime
   * sizes, in order of first appearance. */
  char **sizes;
  int nsizes;
  /* The C function that follows the annotations. */
  int sig_line;
  int sig_nparams;
  char **sig_names; /* parameter names as written in C */
  bool *sig_is_pointer;
  bool *sig_is_const; /* const-qualified pointee */
  /* Which of @verify's tolerances were written: @verify(rtol = 1e-2) leaves
   * atol 0 and has_atol false, so a consumer can keep its per-type default. */
  bool has_atol, has_rtol;
  /* @reference(NAME): another kernel of the file, run once with its own
   * defaults, whose outputs are the reference instead of the default's. */
  char *reference;
  kt__loc reference_loc;
  /* @check(NAME): a C function of the same file (CPU kernels) that judges
   * each configuration's outputs (ktune.h, kt_check_fn). */
  char *check;
  kt__loc check_loc;
} kt__kernel_decl;

typedef struct kt__file {
  kt__source src;
  kt__lang lang;
  kt__kernel_decl *kernels;
  int nkernels;
  /* Holders beyond the first (kt__file_retain): a compilation the tuner
   * abandoned may still read the file after its kernel is destroyed. */
  atomic_int extra_holders;
} kt__file;

#endif
