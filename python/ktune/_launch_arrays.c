/* Reading an array from C: see _launch_arrays.h. Each route mirrors its
 * twin in _arrays.py (from_torch, _from_interface, _from_dlpack,
 * _from_buffer); what a route cannot read is left to that file. */
#include "_launch_arrays.h"

#include <stdlib.h>
#include <string.h>

/* ktune's element type of a NumPy type string without its byte order. */
static const char *typestr_dtype(const char *t) {
  static const char *const map[][2] = {{"f2", "f16"}, {"f4", "f32"}, {"f8", "f64"}, {"i1", "i8"}, {"u1", "u8"},
                                       {"i4", "i32"}, {"u4", "u32"}, {"i8", "i64"}, {"u8", "u64"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(t, map[i][0])) return map[i][1];
  return NULL;
}

/* ... of a buffer-protocol format (native order) and item size. */
static const char *format_dtype(const char *fmt, Py_ssize_t itemsize) {
  static const struct {
    char c;
    Py_ssize_t size;
    const char *dtype;
  } map[] = {{'e', 2, "f16"}, {'f', 4, "f32"}, {'d', 8, "f64"}, {'b', 1, "i8"},  {'B', 1, "u8"},
             {'i', 4, "i32"}, {'I', 4, "u32"}, {'l', 4, "i32"}, {'L', 4, "u32"}, {'l', 8, "i64"},
             {'L', 8, "u64"}, {'q', 8, "i64"}, {'Q', 8, "u64"}};
  if (!fmt) fmt = "B";
  while (*fmt == '@' || *fmt == '=' || *fmt == '<') fmt++;
  if (!fmt[0] || fmt[1]) return NULL;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].c == fmt[0] && map[i].size == itemsize) return map[i].dtype;
  return NULL;
}

/* ... of a DLPack type (code 0 int, 1 uint, 2 float, 4 bfloat). */
static const char *dlpack_dtype(int code, int bits, int lanes) {
  static const struct {
    int code, bits;
    const char *dtype;
  } map[] = {{2, 16, "f16"}, {4, 16, "bf16"}, {2, 32, "f32"}, {2, 64, "f64"}, {0, 8, "i8"},
             {1, 8, "u8"},   {0, 32, "i32"},  {1, 32, "u32"}, {0, 64, "i64"}, {1, 64, "u64"}};
  if (lanes != 1) return NULL;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].code == code && map[i].bits == bits) return map[i].dtype;
  return NULL;
}

static int same_dtype(const char *got, const ktx_want *want) { return got && !strcmp(got, want->dtype); }

/* Row-major without gaps: extents of 1 may have any stride. */
static int c_contiguous(const int64_t *shape, const int64_t *strides, int n, int64_t itemsize) {
  int64_t want = itemsize;
  for (int i = n - 1; i >= 0; i--) {
    if (shape[i] != 1 && strides[i] != want) return 0;
    want *= shape[i];
  }
  return 1;
}

/* An integer sequence (tuple or list) of at most KTX_MAX_RANK items. */
static int read_ints(PyObject *seq, int64_t *out, int *n) {
  if (!PyTuple_Check(seq) && !PyList_Check(seq)) return 0;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  if (len > KTX_MAX_RANK) return 0;
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyLong_Check(item)) return 0;
    out[i] = PyLong_AsLongLong(item);
    if (out[i] == -1 && PyErr_Occurred()) return 0;
  }
  *n = (int)len;
  return 1;
}

static const struct {
  const char *name;
  int is_method;
} torch_attrs[KTX_TORCH_N] = {[KTX_TORCH_DTYPE] = {"dtype", 0},
                              [KTX_TORCH_GET_DEVICE] = {"get_device", 1},
                              [KTX_TORCH_IS_CONTIGUOUS] = {"is_contiguous", 1},
                              [KTX_TORCH_DATA_PTR] = {"data_ptr", 1},
                              [KTX_TORCH_SHAPE] = {"shape", 0}};
static PyObject *torch_names[KTX_TORCH_N]; /* interned */

/* A descriptor that can be called in place of the lookup: a method (a C
 * method or a function) for a method, a data descriptor for an attribute
 * (which the instance's own dict cannot hide). */
static PyObject *direct_descriptor(PyObject *tensor, int i) {
  PyObject *d = PyObject_GetAttr(tensor, torch_names[i]);
  if (!d) return NULL;
  int usable = torch_attrs[i].is_method ? PyObject_TypeCheck(d, &PyMethodDescr_Type) || PyFunction_Check(d)
                                        : Py_TYPE(d)->tp_descr_get && Py_TYPE(d)->tp_descr_set;
  if (usable) return d;
  Py_DECREF(d);
  return NULL;
}

void ktx_types_set_torch(ktx_types *types, PyObject *tensor) {
  Py_CLEAR(types->torch_tensor);
  for (int i = 0; i < KTX_TORCH_N; i++) {
    Py_CLEAR(types->torch_attr[i]);
    if (!torch_names[i]) torch_names[i] = PyUnicode_InternFromString(torch_attrs[i].name);
  }
  if (tensor == Py_None) return;
  Py_INCREF(tensor);
  types->torch_tensor = tensor;
  for (int i = 0; i < KTX_TORCH_N; i++)
    if (torch_names[i]) types->torch_attr[i] = direct_descriptor(tensor, i);
  PyErr_Clear();
}

void ktx_types_clear(ktx_types *types) {
  ktx_types_set_torch(types, Py_None);
  Py_CLEAR(types->ndarray);
}

/* Attribute or method I of tensor A: through the descriptor when A is
 * exactly a torch.Tensor, else looked up. */
static PyObject *torch_read(PyObject *a, const ktx_types *types, int i) {
  PyObject *d = (PyObject *)Py_TYPE(a) == types->torch_tensor ? types->torch_attr[i] : NULL;
  if (d) {
    Py_INCREF(d); /* another thread may set new types while D runs */
    PyObject *r = torch_attrs[i].is_method ? PyObject_Vectorcall(d, &a, 1, NULL)
                                           : Py_TYPE(d)->tp_descr_get(d, a, (PyObject *)Py_TYPE(a));
    Py_DECREF(d);
    return r;
  }
  if (!torch_names[i]) return NULL;
  return torch_attrs[i].is_method ? PyObject_CallMethodObjArgs(a, torch_names[i], NULL)
                                  : PyObject_GetAttr(a, torch_names[i]);
}

/* An int result of torch_read (-2 when it is none). */
static long long torch_int(PyObject *a, const ktx_types *types, int i) {
  PyObject *r = torch_read(a, types, i);
  long long v = r && PyLong_Check(r) ? PyLong_AsLongLong(r) : -2;
  Py_XDECREF(r);
  return PyErr_Occurred() ? -2 : v;
}

/* from_torch: the tensor's own accessors, one call each. */
static int from_torch(PyObject *a, const ktx_types *types, const ktx_want *want, ktx_view *v) {
  PyObject *dtype = torch_read(a, types, KTX_TORCH_DTYPE);
  if (!dtype) return 0;
  v->dtype_ok = want->torch_dtype && dtype == want->torch_dtype;
  Py_DECREF(dtype);
  long long device = torch_int(a, types, KTX_TORCH_GET_DEVICE);
  if (device < -1 || device > INT32_MAX) return 0;
  v->device = (int)device;
  v->memory = v->device >= 0 ? KTX_CUDA : KTX_HOST;
  PyObject *r = torch_read(a, types, KTX_TORCH_IS_CONTIGUOUS);
  if (!r) return 0;
  v->contiguous = r == Py_True;
  Py_DECREF(r);
  r = torch_read(a, types, KTX_TORCH_DATA_PTR);
  if (!r) return 0;
  v->ptr = PyLong_Check(r) ? (uintptr_t)PyLong_AsUnsignedLongLong(r) : 0;
  Py_DECREF(r);
  if (PyErr_Occurred()) return 0;
  PyObject *shape = torch_read(a, types, KTX_TORCH_SHAPE);
  if (!shape) return 0;
  int ok = read_ints(shape, v->shape, &v->ndim);
  Py_DECREF(shape);
  v->readonly = 0;
  v->is_torch = 1;
  return ok;
}

/* _cuda_device_of: a.device.id, else __dlpack_device__'s index, else 0. */
static int cuda_device_of(PyObject *a, int *device) {
  PyObject *dev = PyObject_GetAttrString(a, "device");
  PyErr_Clear();
  PyObject *id = dev ? PyObject_GetAttrString(dev, "id") : NULL;
  PyErr_Clear();
  Py_XDECREF(dev);
  if (id && PyLong_Check(id) && !PyBool_Check(id)) {
    *device = (int)PyLong_AsLong(id);
    Py_DECREF(id);
    return !PyErr_Occurred();
  }
  Py_XDECREF(id);
  if (!PyObject_HasAttrString(a, "__dlpack_device__")) {
    *device = 0;
    return 1;
  }
  PyObject *r = PyObject_CallMethod(a, "__dlpack_device__", NULL);
  int ok = r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) >= 2 && PyLong_Check(PyTuple_GET_ITEM(r, 1));
  if (ok) *device = (int)PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
  Py_XDECREF(r);
  return ok && !PyErr_Occurred();
}

/* The interface's stream: an int above 0, else none. */
static int64_t interface_stream(PyObject *d) {
  PyObject *s = PyDict_GetItemString(d, "stream"); /* borrowed */
  if (!s || !PyLong_Check(s)) return 0;
  long long v = PyLong_AsLongLong(s);
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  return v > 0 ? v : 0;
}

/* The type of A is from the library PREFIX names ("cupy", "torch"). */
static int from_module(PyObject *a, const char *prefix) {
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(a), "__module__");
  if (!mod) return 0;
  const char *name = PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
  int yes = name && !strncmp(name, prefix, strlen(prefix));
  Py_DECREF(mod);
  PyErr_Clear();
  return yes;
}

/* _from_interface: __cuda_array_interface__ or __array_interface__ D. */
static int from_interface(PyObject *a, PyObject *d, ktx_memory memory, const ktx_want *want, ktx_view *v) {
  if (!PyDict_Check(d)) return 0;
  PyObject *typestr = PyDict_GetItemString(d, "typestr");
  PyObject *shape = PyDict_GetItemString(d, "shape");
  PyObject *data = PyDict_GetItemString(d, "data");
  if (!typestr || !PyUnicode_Check(typestr) || !shape || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2)
    return 0;
  const char *t = PyUnicode_AsUTF8(typestr);
  if (!t || !t[0] || !strchr("<|=", t[0])) return 0;
  v->dtype_ok = same_dtype(typestr_dtype(t + 1), want);
  int64_t itemsize = 1;
  if (t[1] && t[2]) {
    char *end;
    long n = strtol(t + 2, &end, 10);
    if (!*end) itemsize = n;
  }
  if (!read_ints(shape, v->shape, &v->ndim)) return 0;
  PyObject *ptr = PyTuple_GET_ITEM(data, 0);
  if (ptr != Py_None && !PyLong_Check(ptr)) return 0;
  v->ptr = ptr == Py_None ? 0 : (uintptr_t)PyLong_AsUnsignedLongLong(ptr);
  if (PyErr_Occurred()) return 0;
  v->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
  PyObject *strides = PyDict_GetItemString(d, "strides");
  v->contiguous = 1;
  if (strides && strides != Py_None) {
    int64_t s[KTX_MAX_RANK];
    int n;
    if (!read_ints(strides, s, &n)) return 0;
    int common = n < v->ndim ? n : v->ndim; /* as zip() pairs them */
    v->contiguous = c_contiguous(v->shape + v->ndim - common, s + n - common, common, itemsize);
  }
  v->memory = memory;
  v->device = -1;
  if (memory == KTX_CUDA) {
    if (!cuda_device_of(a, &v->device)) return 0;
    v->stream = interface_stream(d);
    v->is_cupy = from_module(a, "cupy");
  }
  return 1;
}

/* The DLTensor at the start of a DLManagedTensor (the DLPack ABI). */
typedef struct dl_tensor {
  void *data;
  struct {
    int32_t device_type, device_id;
  } device;
  int32_t ndim;
  struct {
    uint8_t code, bits;
    uint16_t lanes;
  } dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} dl_tensor;

/* _from_dlpack: the capsule is not consumed (its destructor frees the
 * tensor), so it is kept until the launch is done. */
static int from_dlpack(PyObject *a, const ktx_want *want, ktx_view *v) {
  PyObject *capsule = PyObject_CallMethod(a, "__dlpack__", NULL);
  if (!capsule) return 0;
  const dl_tensor *t = PyCapsule_IsValid(capsule, "dltensor") ? PyCapsule_GetPointer(capsule, "dltensor") : NULL;
  if (!t || t->ndim < 0 || t->ndim > KTX_MAX_RANK) {
    Py_DECREF(capsule);
    return 0;
  }
  v->keep = capsule;
  v->ndim = t->ndim;
  for (int i = 0; i < t->ndim; i++) v->shape[i] = t->shape[i];
  v->contiguous = t->strides ? c_contiguous(v->shape, t->strides, t->ndim, 1) : 1; /* strides count elements */
  v->dtype_ok = same_dtype(dlpack_dtype(t->dtype.code, t->dtype.bits, t->dtype.lanes), want);
  int type = t->device.device_type; /* 1 CPU, 3 CUDA pinned host memory, 2 CUDA, 13 CUDA managed */
  v->memory = type == 1 || type == 3 ? KTX_HOST : type == 2 || type == 13 ? KTX_CUDA : KTX_OTHER;
  v->device = v->memory == KTX_CUDA ? t->device.device_id : -1;
  v->ptr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  v->readonly = 0;
  return 1;
}

/* _from_buffer: the exporter's memory itself, read-only or not (a
 * read-only array is refused for a parameter the kernel writes). */
static int from_buffer(PyObject *a, const ktx_want *want, ktx_view *v) {
  if (PyObject_GetBuffer(a, &v->buffer, PyBUF_FULL_RO) != 0) return 0;
  v->has_buffer = 1;
  if (v->buffer.ndim > KTX_MAX_RANK) return 0;
  v->ndim = v->buffer.ndim;
  for (int i = 0; i < v->ndim; i++) v->shape[i] = v->buffer.shape[i];
  v->dtype_ok = same_dtype(format_dtype(v->buffer.format, v->buffer.itemsize), want);
  v->contiguous = PyBuffer_IsContiguous(&v->buffer, 'C');
  v->readonly = v->buffer.readonly;
  v->memory = KTX_HOST;
  v->device = -1;
  v->ptr = (uintptr_t)v->buffer.buf;
  return 1;
}

static PyObject *attr_or_null(PyObject *a, const char *name) {
  PyObject *r = PyObject_GetAttrString(a, name);
  if (!r) PyErr_Clear();
  return r;
}

static int read_any(PyObject *a, const ktx_types *types, const ktx_want *want, ktx_view *v) {
  PyTypeObject *t = Py_TYPE(a);
  if (types->torch_tensor && PyObject_TypeCheck(a, (PyTypeObject *)types->torch_tensor))
    return from_torch(a, types, want, v);
  if (types->ndarray && (PyObject *)t == types->ndarray) return from_buffer(a, want, v);
  /* A library imported after ktune.load: the Python path takes the call
   * (its stream is that library's) and then gives this file its types. */
  if ((!types->torch_tensor && from_module(a, "torch")) || (!types->ndarray && from_module(a, "numpy"))) return 0;
  PyObject *d = attr_or_null(a, "__cuda_array_interface__");
  if (d && d != Py_None) {
    int ok = from_interface(a, d, KTX_CUDA, want, v);
    Py_DECREF(d);
    return ok;
  }
  Py_XDECREF(d);
  d = attr_or_null(a, "__array_interface__");
  if (d && d != Py_None) {
    int ok = from_interface(a, d, KTX_HOST, want, v);
    Py_DECREF(d);
    return ok;
  }
  Py_XDECREF(d);
  if (PyObject_HasAttrString(a, "__dlpack__")) return from_dlpack(a, want, v);
  return from_buffer(a, want, v);
}

int ktx_view_read(PyObject *a, const ktx_types *types, const ktx_want *want, ktx_view *v) {
  memset(v, 0, sizeof *v);
  int ok = read_any(a, types, want, v);
  if (!ok) ktx_view_release(v);
  PyErr_Clear();
  return ok;
}

void ktx_view_release(ktx_view *v) {
  if (v->has_buffer) PyBuffer_Release(&v->buffer);
  v->has_buffer = 0;
  Py_CLEAR(v->keep);
}
