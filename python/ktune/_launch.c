/* ktune._launch: the per-call path of k(x, y, z, **scalars) in C.
 *
 * Launcher is the base type of ktune.Kernel when this extension is built:
 * calling a kernel is its tp_call. Per call it reads every array
 * (_launch_arrays.c), checks it against the parameter prepared once at
 * ktune.load (_setup), binds the scalars, finds the shape's sizes
 * (_launch_shapes.c; worked out by libktune the first time), gets the
 * current stream, releases the GIL and calls kt_launch. Nothing is cached
 * per array: ids are reused once an array is freed.
 *
 * Where a check fails, or an argument is of a kind read nowhere here, the
 * call is handed to Kernel._call, the checked Python path: one source for
 * every error message, and the two paths cannot disagree about what an error
 * says. A call handed over that passes there launches through
 * _launch_raw, under the same lock as the calls launched here (a read
 * lock: launches run side by side, kt_launch is safe in any thread; only
 * detaching the kernel waits for them).
 *
 * libktune's functions come from the library that ctypes loaded (its dlopen
 * handle): one library in the process, found as _lib.py says. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <ktune.h>

#include "_launch_arrays.h"
#include "_launch_shapes.h"

enum { KTX_MAX_PARAMS = 64 };                /* a kernel with more is launched through ctypes */
static const uintptr_t cu_stream_legacy = 1; /* CUDA's legacy default stream: never NULL, which would wait */

typedef struct tensor_param {
  int index, ndims, writes;
  char dtype[8];
  ktx_want want;
} tensor_param;

typedef struct scalar_param {
  int index, has_value;
  char dtype[8];
} scalar_param;

/* The libktune functions used here, typed by ktune.h. */
typedef struct ktx_api {
  __typeof__(kt_launch) *launch;
  __typeof__(kt_launch_host) *launch_host;
  __typeof__(kt_kernel_sizes_from_shapes) *sizes_from_shapes;
  __typeof__(kt_kernel_scalar_value) *scalar_value;
  __typeof__(kt_signals_catch) *signals_catch;
  __typeof__(kt_signals_release) *signals_release;
} ktx_api;

typedef struct launcher {
  PyObject_HEAD kt_kernel *kernel; /* NULL: not set up, or closed */
  ktx_api api;
  int cuda, device; /* memory the arrays must be in */
  int ntensors, nscalars, nsizes;
  tensor_param tensors[KTX_MAX_PARAMS];
  scalar_param scalars[KTX_MAX_PARAMS];
  int ranks[KTX_MAX_PARAMS]; /* per parameter, as kt_kernel_sizes_from_shapes takes them */
  int nparams;
  PyObject *keywords; /* name -> scalar slot j (j >= 0) or size i (-i - 1) */
  ktx_types types;
  PyObject *torch_stream; /* torch._C._cuda_getCurrentRawStream, or NULL */
  ktx_shapes shapes;
  /* Launches hold it for reading, detach for writing: no launch runs on a
   * destroyed kernel. */
  pthread_rwlock_t kernel_lock;
  int lock_made;
  Py_ssize_t launches, handed_over;
} launcher;

/* ---- scalars ------------------------------------------------------------ */

/* VALUE as DTYPE's C type into OUT (8 bytes), as _pack_scalar packs it. 0:
 * it does not fit (the Python path says so). */
static int pack_float(const char *dtype, PyObject *value, void *out) {
  PyObject *f = PyNumber_Float(value);
  if (!f) return 0;
  double d = PyFloat_AS_DOUBLE(f);
  Py_DECREF(f);
  if (!strcmp(dtype, "f64")) {
    memcpy(out, &d, sizeof d);
    return 1;
  }
  float x = (float)d;
  if (isinf(x) && !isinf(d)) return 0;
  if (!strcmp(dtype, "f32")) {
    memcpy(out, &x, sizeof x);
    return 1;
  }
  if (!strcmp(dtype, "bf16")) { /* the top half of the f32 */
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint16_t top = (uint16_t)(bits >> 16);
    memcpy(out, &top, sizeof top);
    return 1;
  }
#if PY_VERSION_HEX >= 0x030B0000
  if (!strcmp(dtype, "f16")) return PyFloat_Pack2(d, out, PY_LITTLE_ENDIAN) == 0;
#endif
  return 0;
}

static int pack_int(const char *dtype, PyObject *value, void *out) {
  if (PyFloat_Check(value) || !PyIndex_Check(value)) return 0;
  PyObject *n = PyNumber_Index(value);
  if (!n) return 0;
  int size = atoi(dtype + 1) / 8, ok = 1;
  if (dtype[0] == 'u') {
    unsigned long long v = PyLong_AsUnsignedLongLong(n);
    ok = !PyErr_Occurred() && (size == 8 || v < (1ull << (8 * size)));
    memcpy(out, &v, (size_t)size); /* little-endian hosts: the low bytes */
  } else {
    long long v = PyLong_AsLongLong(n);
    long long lim = size == 8 ? 0 : 1ll << (8 * size - 1);
    ok = !PyErr_Occurred() && (size == 8 || (v >= -lim && v < lim));
    memcpy(out, &v, (size_t)size);
  }
  Py_DECREF(n);
  return ok;
}

static int pack_scalar(const scalar_param *p, PyObject *value, uint64_t *out) {
  *out = 0;
  int ok = p->dtype[0] == 'f' || p->dtype[0] == 'b' ? pack_float(p->dtype, value, out) : pack_int(p->dtype, value, out);
  PyErr_Clear();
  return ok;
}

/* ---- one call's arguments -------------------------------------------------- */

typedef struct call {
  ktx_view views[KTX_MAX_PARAMS];
  int nviews;
  uint64_t given[KTX_MAX_PARAMS]; /* per scalar slot */
  unsigned char has_given[KTX_MAX_PARAMS];
  int64_t key[KTX_MAX_PARAMS * KTX_MAX_RANK + KTX_MAX_PARAMS];
  int keylen;
} call;

static void call_release(call *c) {
  for (int i = 0; i < c->nviews; i++) ktx_view_release(&c->views[i]);
  c->nviews = 0;
}

/* Tensor I's array read and checked, its extents appended to the key. */
static int read_tensor(launcher *self, call *c, int i, PyObject *a) {
  const tensor_param *p = &self->tensors[i];
  ktx_view *v = &c->views[i];
  if (!ktx_view_read(a, &self->types, &p->want, v)) return 0;
  c->nviews = i + 1;
  ktx_memory memory = self->cuda ? KTX_CUDA : KTX_HOST;
  if (!v->dtype_ok || v->memory != memory || (self->cuda && v->device != self->device) || !v->contiguous ||
      (v->readonly && p->writes) || v->ndim != p->ndims)
    return 0;
  memcpy(c->key + c->keylen, v->shape, (size_t)v->ndim * sizeof *v->shape);
  c->keylen += v->ndim;
  return 1;
}

/* The keywords: scalars (packed into C) and sizes (into the key). */
static int read_keywords(launcher *self, call *c, PyObject *kwargs) {
  int64_t *sizes = c->key + c->keylen;
  memset(sizes, 0, (size_t)self->nsizes * sizeof *sizes);
  c->keylen += self->nsizes;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (kwargs && PyDict_Next(kwargs, &pos, &key, &value)) {
    PyObject *slot = PyDict_GetItemWithError(self->keywords, key);
    if (!slot) return 0;
    long j = PyLong_AsLong(slot);
    if (j >= 0) {
      if (c->has_given[j] || !pack_scalar(&self->scalars[j], value, &c->given[j])) return 0;
      c->has_given[j] = 1;
    } else {
      if (!PyLong_Check(value) || PyBool_Check(value)) return 0;
      long long n = PyLong_AsLongLong(value);
      if (n <= 0) return 0; /* also -1 with an overflow error, cleared by the caller */
      sizes[-j - 1] = n;
    }
  }
  return 1;
}

static int read_call(launcher *self, call *c, PyObject *args, PyObject *kwargs) {
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < self->ntensors || nargs > self->ntensors + self->nscalars) return 0;
  for (int i = 0; i < self->ntensors; i++)
    if (!read_tensor(self, c, i, PyTuple_GET_ITEM(args, i))) return 0;
  for (int j = 0; j < nargs - self->ntensors; j++) {
    if (!pack_scalar(&self->scalars[j], PyTuple_GET_ITEM(args, self->ntensors + j), &c->given[j])) return 0;
    c->has_given[j] = 1;
  }
  return read_keywords(self, c, kwargs);
}

/* ---- shapes ------------------------------------------------------------ */

/* The sizes and bound scalars of a shape seen for the first time, from
 * libktune; NULL when it refuses the shapes (the Python path says why). */
static ktx_shape *new_shape(launcher *self, call *c) {
  const int64_t *rows[KTX_MAX_PARAMS] = {0};
  for (int i = 0; i < self->ntensors; i++) rows[self->tensors[i].index] = c->views[i].shape;
  int64_t sizes[KTX_MAX_PARAMS];
  memcpy(sizes, c->key + c->keylen - self->nsizes, (size_t)self->nsizes * sizeof *sizes);
  if (self->api.sizes_from_shapes(self->kernel, self->ranks, rows, sizes) != 0) return NULL;
  uint64_t bound[KTX_MAX_PARAMS] = {0};
  for (int j = 0; j < self->nscalars; j++)
    if (self->scalars[j].has_value && self->api.scalar_value(self->kernel, self->scalars[j].index, sizes, &bound[j]))
      return NULL;
  ktx_shape *s = ktx_shapes_add(&self->shapes, c->key);
  if (!s) return NULL;
  memcpy(s->sizes, sizes, (size_t)self->nsizes * sizeof *sizes);
  for (int j = 0; j < self->nscalars; j++) {
    s->bound[j] = bound[j];
    s->has_bound[j] = (unsigned char)self->scalars[j].has_value;
  }
  return s;
}

/* kt_launch's argument array: tensors' addresses, scalars' values' addresses. */
static int fill_argv(launcher *self, call *c, ktx_shape *s, void **argv, uint64_t *values) {
  memset(argv, 0, (size_t)self->nparams * sizeof *argv); /* tensor maps' slots */
  for (int i = 0; i < self->ntensors; i++) argv[self->tensors[i].index] = (void *)c->views[i].ptr;
  for (int j = 0; j < self->nscalars; j++) {
    if (!c->has_given[j] && !s->has_bound[j]) return 0; /* no value: the Python path asks for one */
    values[j] = c->has_given[j] ? c->given[j] : s->bound[j];
    argv[self->scalars[j].index] = &values[j];
  }
  return 1;
}

/* ---- the stream -------------------------------------------------------- */

static uintptr_t stream_from(PyObject *r) {
  uintptr_t s = 0;
  if (r && PyLong_Check(r)) s = (uintptr_t)PyLong_AsUnsignedLongLong(r);
  Py_XDECREF(r);
  if (PyErr_Occurred()) return 0;
  return s;
}

/* torch._C._cuda_getCurrentRawStream(DEVICE), called without a tuple. */
static uintptr_t torch_stream(PyObject *fn, int device) {
  PyObject *d = PyLong_FromLong(device);
  if (!d) return 0;
  Py_INCREF(fn); /* another thread may set new types while FN runs */
  PyObject *r = PyObject_Vectorcall(fn, &d, 1, NULL);
  Py_DECREF(fn);
  Py_DECREF(d);
  return stream_from(r);
}

static uintptr_t cupy_stream(void) {
  PyObject *cupy = PyImport_ImportModule("cupy");
  PyObject *cuda = cupy ? PyObject_GetAttrString(cupy, "cuda") : NULL;
  PyObject *st = cuda ? PyObject_CallMethod(cuda, "get_current_stream", NULL) : NULL;
  Py_XDECREF(cupy);
  Py_XDECREF(cuda);
  PyObject *ptr = st ? PyObject_GetAttrString(st, "ptr") : NULL;
  Py_XDECREF(st);
  return stream_from(ptr);
}

/* The stream of the first array whose library says one (_Kernel._stream):
 * PyTorch's or CuPy's current stream, else __cuda_array_interface__'s,
 * else the legacy default stream. 0 with an error set when a library's
 * call raised. */
static uintptr_t current_stream(launcher *self, call *c) {
  for (int i = 0; i < self->ntensors; i++) {
    const ktx_view *v = &c->views[i];
    uintptr_t s = 0;
    if (v->is_torch && self->torch_stream) s = torch_stream(self->torch_stream, v->device);
    else if (v->is_cupy) s = cupy_stream();
    else if (v->stream > 0) return (uintptr_t)v->stream;
    else continue;
    if (PyErr_Occurred()) return 0;
    return s ? s : cu_stream_legacy;
  }
  return cu_stream_legacy;
}

/* ---- launching --------------------------------------------------------- */

/* One launch with the GIL released. The first launch of a shape may tune:
 * SIGINT then stops the tuning, and becomes KeyboardInterrupt here. -1
 * with an exception set when a signal came. */
static int launch_locked(launcher *self, const int64_t *sizes, void *const *argv, void *stream, int first, int *rc) {
  if (first) self->api.signals_catch();
  Py_BEGIN_ALLOW_THREADS;
  pthread_rwlock_rdlock(&self->kernel_lock);
  *rc = !self->kernel ? KT_INVALID
        : self->cuda  ? self->api.launch(self->kernel, sizes, argv, stream)
                      : self->api.launch_host(self->kernel, sizes, argv);
  pthread_rwlock_unlock(&self->kernel_lock);
  Py_END_ALLOW_THREADS;
  if (first) {
    self->api.signals_release(); /* raises the signal caught meanwhile again, for Python's handler */
    if (PyErr_CheckSignals() < 0) return -1;
  }
  return 0;
}

/* Kernel._ctx.check(rc): the exception that carries ktune's message. */
static PyObject *raise_for(PyObject *self, int rc) {
  PyObject *ctx = PyObject_GetAttrString(self, "_ctx");
  PyObject *r = ctx ? PyObject_CallMethod(ctx, "check", "i", rc) : NULL;
  Py_XDECREF(ctx);
  if (!r) return NULL;
  Py_DECREF(r);
  return PyErr_Format(PyExc_SystemError, "ktune: kt_launch returned %d without an error", rc);
}

static PyObject *hand_over(launcher *self, PyObject *args, PyObject *kwargs) {
  self->handed_over++;
  PyObject *fn = PyObject_GetAttrString((PyObject *)self, "_call");
  if (!fn) return NULL;
  PyObject *kw = kwargs ? kwargs : PyDict_New();
  PyObject *r = kw ? PyObject_CallFunctionObjArgs(fn, args, kw, NULL) : NULL;
  if (!kwargs) Py_XDECREF(kw);
  Py_DECREF(fn);
  return r;
}

/* Launches the call read into C. *HANDED set: the call goes to the Python
 * path instead (a shape libktune refuses, a scalar without a value). */
static PyObject *launch_call(launcher *self, call *c, int *handed) {
  ktx_shape *s = ktx_shapes_find(&self->shapes, c->key);
  if (!s) s = new_shape(self, c);
  void *argv[KTX_MAX_PARAMS];
  uint64_t values[KTX_MAX_PARAMS];
  uintptr_t stream = 0;
  if (!s || !fill_argv(self, c, s, argv, values)) {
    *handed = 1;
    return NULL;
  }
  if (self->cuda && !(stream = current_stream(self, c))) return NULL;
  int rc, first = !s->launched;
  if (launch_locked(self, s->sizes, argv, (void *)stream, first, &rc) < 0) return NULL;
  if (rc != 0) return raise_for((PyObject *)self, rc);
  s->launched = 1;
  self->launches++;
  Py_RETURN_NONE;
}

static PyObject *launcher_call(PyObject *obj, PyObject *args, PyObject *kwargs) {
  launcher *self = (launcher *)obj;
  if (!self->kernel) return hand_over(self, args, kwargs);
  call c;
  c.nviews = c.keylen = 0;
  memset(c.has_given, 0, sizeof c.has_given);
  int handed = !read_call(self, &c, args, kwargs);
  PyObject *r = handed ? NULL : launch_call(self, &c, &handed);
  call_release(&c); /* before the Python path reads the arrays again */
  if (!handed) return r;
  PyErr_Clear();
  return hand_over(self, args, kwargs);
}

/* ---- set up from Python ------------------------------------------------ */

static int resolve_api(ktx_api *api, void *lib) {
  struct {
    void **slot;
    const char *name;
  } fns[] = {{(void **)&api->launch, "kt_launch"},
             {(void **)&api->launch_host, "kt_launch_host"},
             {(void **)&api->sizes_from_shapes, "kt_kernel_sizes_from_shapes"},
             {(void **)&api->scalar_value, "kt_kernel_scalar_value"},
             {(void **)&api->signals_catch, "kt_signals_catch"},
             {(void **)&api->signals_release, "kt_signals_release"}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    *fns[i].slot = dlsym(lib, fns[i].name);
    if (!*fns[i].slot) {
      PyErr_Format(PyExc_ImportError, "ktune._launch: libktune has no %s", fns[i].name);
      return 0;
    }
  }
  return 1;
}

static int copy_dtype(char *dst, PyObject *s) {
  const char *d = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
  if (!d || strlen(d) >= 8) {
    PyErr_SetString(PyExc_ValueError, "ktune._launch: bad dtype");
    return 0;
  }
  strcpy(dst, d);
  return 1;
}

static int add_keyword(PyObject *keywords, PyObject *name, long slot) {
  PyObject *v = PyLong_FromLong(slot);
  int ok = v && PyDict_SetItem(keywords, name, v) == 0;
  Py_XDECREF(v);
  return ok;
}

/* 0 <= V < END, else a ValueError naming WHAT. */
static int in_range(int v, int end, const char *what) {
  if (v >= 0 && v < end) return 1;
  PyErr_Format(PyExc_ValueError, "ktune._launch: %s %d is out of range (at most %d)", what, v, end - 1);
  return 0;
}

/* NPARAMS: all of them; tensors: (index, ndims, writes, dtype, name);
 * scalars: (index, dtype, has_value, name); sizes: the size names. The
 * parameters in neither (tensor maps, which kt_launch builds) get NULL. */
static int setup_params(launcher *self, int nparams, PyObject *tensors, PyObject *scalars, PyObject *sizes) {
  self->ntensors = (int)PyTuple_GET_SIZE(tensors);
  self->nscalars = (int)PyTuple_GET_SIZE(scalars);
  self->nsizes = (int)PyTuple_GET_SIZE(sizes);
  self->nparams = nparams;
  if (self->nparams > KTX_MAX_PARAMS || self->nsizes > KTX_MAX_PARAMS ||
      self->ntensors + self->nscalars > self->nparams) {
    PyErr_Format(PyExc_ValueError, "ktune._launch: more than %d parameters or sizes", KTX_MAX_PARAMS);
    return 0;
  }
  Py_CLEAR(self->keywords);
  self->keywords = PyDict_New();
  if (!self->keywords) return 0;
  PyObject *params = PySet_New(NULL);
  if (!params) return 0;
  int keylen = 0, ok = 1;
  for (int i = 0; ok && i < self->ntensors; i++) {
    tensor_param *p = &self->tensors[i];
    PyObject *dtype, *name;
    ok = PyArg_ParseTuple(PyTuple_GET_ITEM(tensors, i), "iipUU", &p->index, &p->ndims, &p->writes, &dtype, &name) &&
         in_range(p->index, self->nparams, "parameter index") && in_range(p->ndims, KTX_MAX_RANK + 1, "rank") &&
         copy_dtype(p->dtype, dtype) && PySet_Add(params, name) == 0;
    if (!ok) break;
    p->want.dtype = p->dtype;
    self->ranks[p->index] = p->ndims;
    keylen += p->ndims;
  }
  for (int j = 0; ok && j < self->nscalars; j++) {
    scalar_param *p = &self->scalars[j];
    PyObject *dtype, *name;
    ok = PyArg_ParseTuple(PyTuple_GET_ITEM(scalars, j), "iUpU", &p->index, &dtype, &p->has_value, &name) &&
         in_range(p->index, self->nparams, "parameter index") && copy_dtype(p->dtype, dtype) &&
         PySet_Add(params, name) == 0 && add_keyword(self->keywords, name, j);
    if (ok) self->ranks[p->index] = 0;
  }
  for (int i = 0; ok && i < self->nsizes; i++) {
    PyObject *name = PyTuple_GET_ITEM(sizes, i);
    int is_param = PySet_Contains(params, name);
    ok = is_param >= 0 && (is_param || add_keyword(self->keywords, name, -i - 1));
  }
  Py_DECREF(params);
  if (ok) {
    ktx_shapes_free(&self->shapes);
    ktx_shapes_init(&self->shapes, keylen + self->nsizes, self->nsizes, self->nscalars);
  }
  return ok;
}

static PyObject *launcher_setup(PyObject *obj, PyObject *args) {
  launcher *self = (launcher *)obj;
  unsigned long long lib, kernel;
  int cuda, device, nparams;
  PyObject *tensors, *scalars, *sizes;
  if (!PyArg_ParseTuple(args, "KKpiiO!O!O!", &lib, &kernel, &cuda, &device, &nparams, &PyTuple_Type, &tensors,
                        &PyTuple_Type, &scalars, &PyTuple_Type, &sizes))
    return NULL;
  if (!lib || !kernel) return PyErr_Format(PyExc_ValueError, "ktune._launch: no library or kernel handle");
  self->kernel = NULL;
  if (!resolve_api(&self->api, (void *)(uintptr_t)lib) || !setup_params(self, nparams, tensors, scalars, sizes))
    return NULL;
  self->cuda = cuda;
  self->device = device;
  self->kernel = (kt_kernel *)(uintptr_t)kernel;
  Py_RETURN_NONE;
}

static void clear_types(launcher *self) {
  ktx_types_clear(&self->types);
  Py_CLEAR(self->torch_stream);
  for (int i = 0; i < self->ntensors; i++) Py_CLEAR(self->tensors[i].want.torch_dtype);
}

static PyObject *none_to_null(PyObject *o) {
  if (o == Py_None) return NULL;
  Py_INCREF(o);
  return o;
}

/* The libraries' types imported now: (torch.Tensor, numpy.ndarray, the
 * torch dtype of each tensor parameter, the raw current-stream function). */
static PyObject *launcher_set_types(PyObject *obj, PyObject *args) {
  launcher *self = (launcher *)obj;
  PyObject *tensor, *ndarray, *dtypes, *stream;
  if (!PyArg_ParseTuple(args, "OOO!O", &tensor, &ndarray, &PyTuple_Type, &dtypes, &stream)) return NULL;
  if (PyTuple_GET_SIZE(dtypes) != self->ntensors) return PyErr_Format(PyExc_ValueError, "ktune._launch: dtypes");
  if ((tensor != Py_None && !PyType_Check(tensor)) || (ndarray != Py_None && !PyType_Check(ndarray)))
    return PyErr_Format(PyExc_TypeError, "ktune._launch: array types must be types");
  clear_types(self);
  ktx_types_set_torch(&self->types, tensor);
  self->types.ndarray = none_to_null(ndarray);
  self->torch_stream = none_to_null(stream);
  for (int i = 0; i < self->ntensors; i++)
    self->tensors[i].want.torch_dtype = none_to_null(PyTuple_GET_ITEM(dtypes, i));
  Py_RETURN_NONE;
}

/* Before kt_kernel_destroy: no launch is running or starts after this. */
static PyObject *launcher_detach(PyObject *obj, PyObject *unused) {
  launcher *self = (launcher *)obj;
  Py_BEGIN_ALLOW_THREADS;
  pthread_rwlock_wrlock(&self->kernel_lock);
  self->kernel = NULL;
  pthread_rwlock_unlock(&self->kernel_lock);
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

/* The Python path's launch (Kernel._launch): kt_launch on a ctypes sizes
 * array and argument array given by address, under this lock. */
static PyObject *launcher_launch_raw(PyObject *obj, PyObject *args) {
  launcher *self = (launcher *)obj;
  unsigned long long sizes, argv, stream;
  int first, rc;
  if (!PyArg_ParseTuple(args, "KKKp", &sizes, &argv, &stream, &first)) return NULL;
  if (launch_locked(self, (const int64_t *)(uintptr_t)sizes, (void *const *)(uintptr_t)argv, (void *)(uintptr_t)stream,
                    first, &rc) < 0)
    return NULL;
  return PyLong_FromLong(rc);
}

static PyObject *launcher_counts(PyObject *obj, void *unused) {
  launcher *self = (launcher *)obj;
  return Py_BuildValue("{s:n,s:n}", "launched", self->launches, "handed_over", self->handed_over);
}

static PyObject *launcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  launcher *self = (launcher *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  if (pthread_rwlock_init(&self->kernel_lock, NULL) != 0) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->lock_made = 1;
  return (PyObject *)self;
}

static void launcher_dealloc(PyObject *obj) {
  launcher *self = (launcher *)obj;
  clear_types(self);
  Py_CLEAR(self->keywords);
  ktx_shapes_free(&self->shapes);
  if (self->lock_made) pthread_rwlock_destroy(&self->kernel_lock);
  Py_TYPE(obj)->tp_free(obj);
}

static PyMethodDef launcher_methods[] = {
    {"_ext_setup", launcher_setup, METH_VARARGS, "Prepares the per-call path (ktune.load)."},
    {"_ext_set_types", launcher_set_types, METH_VARARGS, "The array types of the libraries imported now."},
    {"_ext_detach", launcher_detach, METH_NOARGS, "Stops launching (before the kernel is freed)."},
    {"_launch_raw", launcher_launch_raw, METH_VARARGS, "kt_launch under the launch lock (the Python path)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef launcher_getset[] = {
    {"_launch_counts", launcher_counts, NULL, "Calls launched here and calls handed to the Python path.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject launcher_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ktune._launch.Launcher",
    .tp_basicsize = sizeof(launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C per-call path of a ktune.Kernel (its base type when the extension is built).",
    .tp_new = launcher_new,
    .tp_dealloc = launcher_dealloc,
    .tp_call = launcher_call,
    .tp_methods = launcher_methods,
    .tp_getset = launcher_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ktune._launch",
    .m_doc = "ktune's per-call path in C (see ktune.launch_path).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__launch(void) {
  if (PyType_Ready(&launcher_type) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&launcher_type);
  if (PyModule_AddObject(m, "Launcher", (PyObject *)&launcher_type) < 0) {
    Py_DECREF(&launcher_type);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
