/* What an array given to a kernel is, read from C without copying: its
 * address, extents, element type, memory and layout. The C twin of
 * _arrays.py, for the extension's per-call path: the same routes in the same
 * order (a PyTorch tensor, __cuda_array_interface__, __array_interface__,
 * DLPack, the buffer protocol) and never more permissive than it. A route
 * that cannot read an array says so (0) with no Python error set: the caller
 * then hands the call to the checked Python path, which says what is wrong. */
#ifndef KTUNE_LAUNCH_ARRAYS_H
#define KTUNE_LAUNCH_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX < 0x03090000
#define PyObject_Vectorcall _PyObject_Vectorcall
#endif

enum { KTX_MAX_RANK = 16 }; /* a higher rank goes to the Python path */

typedef enum ktx_memory { KTX_HOST, KTX_CUDA, KTX_OTHER } ktx_memory;

/* What from_torch reads of a tensor, in this order. */
enum {
  KTX_TORCH_DTYPE,
  KTX_TORCH_GET_DEVICE,
  KTX_TORCH_IS_CONTIGUOUS,
  KTX_TORCH_DATA_PTR,
  KTX_TORCH_SHAPE,
  KTX_TORCH_N
};

/* The array types of the libraries imported now (owned references, NULL
 * when the library is not imported): the fast routes. */
typedef struct ktx_types {
  PyObject *torch_tensor; /* torch.Tensor */
  /* Per KTX_TORCH_*: torch.Tensor's own descriptor of it (a C method, a
   * data descriptor), called directly on a tensor of exactly that type:
   * what the attribute lookup would find, without the lookup. NULL: looked
   * up per call. */
  PyObject *torch_attr[KTX_TORCH_N];
  PyObject *ndarray; /* numpy.ndarray: read through the buffer protocol */
} ktx_types;

/* Sets TYPES' torch.Tensor (None: torch not imported) with its descriptors. */
void ktx_types_set_torch(ktx_types *types, PyObject *tensor);
void ktx_types_clear(ktx_types *types);

/* What one tensor parameter accepts. */
typedef struct ktx_want {
  const char *dtype;     /* ktune's name: "f32" */
  PyObject *torch_dtype; /* torch.float32 (owned), or NULL */
} ktx_want;

typedef struct ktx_view {
  uintptr_t ptr;
  int ndim;
  int64_t shape[KTX_MAX_RANK];
  int dtype_ok; /* the element type is the one wanted */
  ktx_memory memory;
  int device; /* CUDA device index; -1 on the host */
  int contiguous, readonly;
  int is_torch;     /* the stream is PyTorch's current one */
  int is_cupy;      /* ... CuPy's */
  int64_t stream;   /* what __cuda_array_interface__ says; 0: nothing */
  Py_buffer buffer; /* held while the address is used (buffer protocol) */
  int has_buffer;
  PyObject *keep; /* a DLPack capsule, held likewise */
} ktx_view;

/* Reads A as an array of WANT's type. 1: V is filled (release it with
 * ktx_view_release); 0: not read (no error set). */
int ktx_view_read(PyObject *a, const ktx_types *types, const ktx_want *want, ktx_view *v);
void ktx_view_release(ktx_view *v);

#endif
