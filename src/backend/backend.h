/* The backend interface: one const table per backend, listed in the
 * registry (KT__BACKENDS below). The table says what the core needs to know
 * of a backend (its language, its file extensions, what it can do, whether
 * this build can use it); the core calls backends only through the kt__be_*
 * wrappers in backend.c, never through the table directly.
 *
 * Process rule: the tuner process never initialises a GPU driver (a forked
 * worker could not use it). Everything marked WORKER below runs inside the
 * device worker process (src/device/worker.c) during a tuning, and in the
 * application's process when kt_launch loads and runs a configuration
 * (src/runtime/runtime.c); `compile` runs in the tuner process, in several
 * threads at once, and must be thread-safe. */
#ifndef KT_BACKEND_H
#define KT_BACKEND_H

#include <stdatomic.h>

#include "../bincache/bincache.h"
#include "../lang/decl.h"

typedef struct kt__device_info {
  char backend[16]; /* "cpu", "opencl", "cuda" */
  int index;        /* among this backend's devices */
  char name[256];   /* "NVIDIA H200", "pthread-haswell", ... */
  char vendor[128];
  char arch[64]; /* "sm_90", "x86_64-znver3", OpenCL device version */
  uint64_t memory_bytes;
  char driver_version[64];     /* driver / OpenCL platform version */
  char toolchain_version[128]; /* NVRTC, cc --version, OpenCL C version */
  int max_threads_per_block;   /* 0: no limit (CPU) */
  uint64_t max_shared_bytes;   /* per block, opt-in maximum; 0: n/a */
  int compute_units;
  uint64_t l2_bytes;      /* last-level cache to flush between timed runs */
  double peak_gflops;     /* fp32 peak; 0 when unknown */
  double peak_gbps;       /* memory bandwidth peak; 0 when unknown */
  bool host_cpu;          /* kernels run on the host's own cores (CPU backend, a CPU
                                OpenCL device): compiling while timing would disturb
                                the timings, so the tuner alternates the two */
  char no_readings[256];  /* a GPU whose clocks, throttling, power and temperature
                            cannot be read (NVML missing): why; "" otherwise */
  char no_energy[256];    /* a device whose energy cannot be read (no NVML energy
                            counter, no RAPL, OpenCL): why; "" otherwise */
  double energy_window_s; /* the shortest span of energy-counter reads that
                             tells a configuration's energy (the counter moves
                             in steps); 0: no counter */
} kt__device_info;

/* One configuration to build. */
typedef struct kt__build {
  const kt__file *file;
  const kt__kernel_decl *decl;
  const char *const *names; /* -DNAME=VALUE for each (tuned and cluster names) */
  const int64_t *values;
  int n;
  const kt__device_info *device;
  const char *workdir; /* private directory (mode 0700) for outputs */
  const char *tag;     /* unique file stem inside workdir for this build */
  double timeout_s;
  /* Set (non-zero) when the tuner abandons this build: a compile that can
   * stop early (stops_on_cancel) then returns PENDING soon. May be NULL. */
  const atomic_int *cancel;
  /* The binary cache (bincache.h) compile and load look in before building
   * and store into after; NULL or off: every build compiles. */
  const kt__bincache *bincache;
  /* Where load tells how the cache served a build it made (backends that
   * build at load); may be NULL. compile tells it in kt__artifact. */
  kt__bin_use *load_use;
  /* Where load tells that its build failed for the machine's reason, not
   * the configuration's (as kt__artifact.environment); may be NULL. */
  bool *load_environment;
} kt__build;

/* What compile produced: a file in workdir (shared object, cubin, ...). */
typedef struct kt__artifact {
  char *path; /* NULL when the backend compiles at load time */
  char *log;  /* compiler output (first lines kept on failure); may be NULL */
  double seconds;
  kt__bin_use cache_use; /* how the binary cache served this compile */
  char *not_cached;      /* why the cache was on but could not keep this build
                            (an include it cannot hash), or NULL */
  bool environment;      /* the failure is the machine's, not the configuration's: a full disk, no file
                            descriptors left, a missing or killed compiler (docs/FAULTS.md) */
} kt__artifact;
void kt__artifact_free(kt__artifact *a);
/* What a compiler prints when the machine, not the source, stopped it (a full
 * disk, a quota, no descriptors, a read-only file system, no memory). */
bool kt__log_says_environment(const char *log);
/* Whether a failed write of a build's own file (errno ERR) is the machine's:
 * the configuration decides nothing about where or whether ktune can write. */
bool kt__errno_is_environment(int err);

/* One kernel argument on the device. */
typedef struct kt__arg {
  void *buf; /* device buffer handle for tensors; NULL for scalars */
  unsigned char scalar[8];
  size_t size; /* scalar size in bytes (tensors: the buffer size) */
  bool is_tensor;
} kt__arg;

/* A TMA tensor map argument (CUDA), evaluated by launch/tensormap.c: what
 * cuTensorMapEncodeTiled is given, but for the address, which is tensor
 * argument TENSOR's buffer at launch time. Dimensions innermost first. */
typedef struct kt__tensormap_spec {
  int param;  /* the tensor map's argument */
  int tensor; /* the argument whose buffer it maps */
  kt__dtype type;
  int rank;            /* 1 to 5 */
  uint64_t dims[5];    /* elements */
  uint64_t strides[4]; /* bytes from one index of dims[i + 1] to the next */
  uint32_t box[5];     /* the tile one copy brings, elements */
  uint32_t swizzle;    /* the shared-memory swizzle span in bytes: 0, 32, 64 or 128 */
} kt__tensormap_spec;

typedef struct kt__launch {
  const kt__arg *args;
  int nargs;
  /* The tensor map arguments, built by the backend from the buffers in
   * ARGS (which hold nothing for them). */
  kt__tensormap_spec tensormaps[KT__MAX_TENSORMAPS];
  int ntensormaps;
  uint64_t grid[3], block[3]; /* 1 where not given */
  uint64_t cluster[3];        /* 0 0 0: no cluster launch */
  uint64_t shared_bytes;      /* dynamic shared memory per block */
  void *stream;               /* kt_launch: the caller's CUstream / cl_command_queue;
                                 NULL: the backend's own, and run() waits for the kernel */
} kt__launch;

/* What a comparison on the device found: the elements outside tolerance,
 * the lowest index among them, and that element of the output as its raw
 * bytes (the only part of the output copied back). */
typedef struct kt__device_mismatch {
  uint64_t count;
  uint64_t first; /* valid when count > 0 */
  unsigned char got[8];
} kt__device_mismatch;

/* Slices start at multiples of this (OpenCL sub-buffers need the device's
 * base address alignment, 128 bytes on most). */
enum { KT__SLICE_ALIGN = 4096 };

typedef struct kt__backend {
  const char *name; /* what --backend takes; the results key's backend */
  /* The language its kernels are written in, and the file extensions that
   * select this backend (NULL-terminated). The first extension is the one
   * messages suggest, and without its dot kt_kernel_load_string's LANG. */
  kt__lang lang;
  const char *extensions[4];
  /* Why this build cannot use the backend (built without its headers), or
   * NULL. The entries below may then all be NULL: the wrappers fail
   * list_devices, open and compile with this reason (KT_NOBACKEND), and
   * nothing else is reached without an open device. */
  const char *unavailable;
  /* Kernels are host code running in the process that loads them (the CPU
   * backend): the worker then checks after each run that the kernel left
   * the process as it found it (device/procstate.h); kt_launch's buffers
   * are the caller's host memory, which a tuning can read, and opening the
   * device in the application's process initialises no driver
   * (runtime/runtime.c). */
  bool runs_host_code;
  /* There is no compile: load builds each configuration, in the worker that
   * owns the device context (OpenCL). The tuner then asks for prebuilds and
   * goes batch by batch, so that a batch is built on all cores at once. */
  bool builds_at_load;
  /* With builds_at_load: the built programs a worker keeps (0: no bound).
   * prebuild fills at most half of them, so that the recently loaded ones
   * stay, and the tuner's batches are no larger than that half. */
  int programs_kept;
  /* Where a binding's arrays for its kernels are (kt_kernel_memory):
   * KT_MEMORY_HOST (0) unless kt_launch takes pointers that array libraries
   * hand out themselves (CUDA device pointers). */
  kt_memory_kind memory;
  /* What each timing method is called in a result's `measurement`, indexed
   * by kt_timing: [KT_TIMING_EVENTS] is how `time` times launches made one
   * by one ("events": device events around them; "profiling": the kernels'
   * own profiling events, summed; "clock": the host's clock), and
   * [KT_TIMING_GRAPH] "graph" where `time` can replay the launches from a
   * graph, else NULL (the tuner then never asks for one). */
  const char *timings[3];
  /* The driver libraries (sonames, NULL-terminated) after whose loading a
   * process can no longer fork children that use the device: the CUDA
   * driver, which NVRTC loads too, and the OpenCL ICD loader, whose
   * platforms keep threads and driver state a child does not inherit whole.
   * A tuner that holds one spawns its zygote from a fresh image
   * (device/zygote.h). Set whether or not this build can use the backend:
   * an application may load the driver itself. */
  const char *drivers[3];
  /* WORKER: lists devices (at most MAX) into OUT. */
  int (*list_devices)(kt__device_info *out, int max, int *count, kt__errbuf *eb);
  /* TUNER (threads): compile one configuration; NULL with builds_at_load.
   * Returns a kt__status: OK, or COMPILE with the log in a->log. */
  kt__status (*compile)(const kt__build *b, kt__artifact *a, kt__errbuf *eb);
  /* compile returns within a fraction of a second once b->cancel is set
   * (the C compiler is a child process, killed); false when it cannot be
   * interrupted (NVRTC runs in the calling thread until it is done). */
  bool stops_on_cancel;
  /* What besides the source, the -D values, the kernel's name and the
   * device's identity decides a binary (the compiler's command words and
   * flags), appended to OUT for the binary cache's key (binkey.h); NULL:
   * its builds are never cached. */
  void (*binary_flags)(const kt__build *b, kt__sbuf *out);
  /* The files compile writes, as suffixes of <workdir>/<tag> (the first is
   * the artifact's path; the others are kept beside it when they exist):
   * what a binary cache entry holds. Backends that build at load keep the
   * device's program binary instead. */
  const char *artifact_parts[3];
  /* WORKER: open device INDEX; fills INFO. KT_OK or a kt_err. */
  int (*open)(int index, void **state, kt__device_info *info, kt__errbuf *eb);
  void (*close)(void *state);
  /* kt_launch, optional: opens on the application's own device context
   * NATIVE (a cl_context) and DEVICE (a cl_device_id; NULL: the context's
   * first), so that what load builds works with the caller's buffers and
   * queues. Closed with close. NULL: the backend cannot share a context. */
  int (*adopt)(void *native, void *device, void **state, kt__device_info *info, kt__errbuf *eb);
  /* WORKER: loads (or builds) the configuration; *fn is the launchable.
   * Returns OK, COMPILE (build failed, log in eb) or RUNTIME. */
  kt__status (*load)(void *state, const kt__build *b, const kt__artifact *a, void **fn, kt__errbuf *eb);
  void (*unload)(void *state, void *fn);
  /* WORKER: resource checks before launch (threads per block, registers,
   * shared memory). OK or CONSTRAINT with the reason; may be NULL. */
  kt__status (*check)(void *state, void *fn, const kt__launch *l, kt__errbuf *eb);
  /* WORKER: device memory. */
  int (*alloc)(void *state, size_t bytes, void **buf, kt__errbuf *eb);
  void (*release)(void *state, void *buf);
  int (*upload)(void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb);
  int (*download)(void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb);
  /* WORKER: one launch, completed before return unless l->stream is set
   * (kt_launch's caller's stream). OK, RUNTIME (error name in eb) or
   * CONSTRAINT (launch refused for resources). */
  kt__status (*run)(void *state, void *fn, const kt__launch *l, kt__errbuf *eb);
  /* WORKER: N back-to-back launches timed by method HOW (KT_TIMING_EVENTS,
   * or KT_TIMING_GRAPH where timings[KT_TIMING_GRAPH] is set); *seconds is
   * their total device time. READING (may be NULL) gets what the device
   * reports of its clocks, throttling, power and temperature just after,
   * and with ENERGY the energy over the launches. Each read of the energy
   * counter costs (NVML's took 3.0 ms at the median, 15 ms at worst, on an
   * H100 with driver 580: bench/nvml_call_cost.c), so it is asked for only
   * where the energy can be known (kt__measure). */
  kt__status (*time)(void *state, void *fn, const kt__launch *l, int n, kt_timing how, bool energy, double *seconds,
                     kt__reading *reading, kt__errbuf *eb);
  /* kt_launch under KT_MISS_ONLINE, optional: one launch as run makes it
   * (on l->stream, the caller's, else the backend's own), timed by device
   * events recorded around it on that stream; waits for the end event (so
   * for the caller's earlier work too) and sets *SECONDS to the launch's
   * device time. NULL: kt__be_run_timed times run by the host's clock,
   * after waiting for the stream's earlier work. */
  kt__status (*run_timed)(void *state, void *fn, const kt__launch *l, double *seconds, kt__errbuf *eb);
  /* WORKER: evicts the device's caches (may be NULL). Not timed. */
  void (*flush_cache)(void *state);
  /* WORKER, optional (may be NULL): builds the N configurations B ahead of
   * their loads, on several threads, for backends that compile at load
   * time (OpenCL). Nothing is reported here: each later load reports its
   * own build's outcome, failures included. */
  void (*prebuild)(void *state, const kt__build *b, int n);
  /* WORKER, optional: sets every element of BUF (BYTES long) to PATTERN
   * (1, 2 or 4 bytes) on the device, so that poisoning an output costs no
   * transfer. KT_NOTFOUND when it cannot; the caller then uploads. */
  int (*fill)(void *state, void *buf, size_t bytes, const void *pattern, size_t pattern_size, kt__errbuf *eb);
  /* WORKER, optional: a handle to BYTES of buffer BUF from OFFSET on (a
   * multiple of KT__SLICE_ALIGN), usable wherever a buffer is: a kernel
   * argument, upload, download, fill. Released with unslice before BUF.
   * The worker keeps guard zones around every tensor with it; NULL: the
   * backend has no guard zones. */
  int (*slice)(void *state, void *buf, size_t offset, size_t bytes, void **out, kt__errbuf *eb);
  void (*unslice)(void *state, void *slice);
  /* WORKER, optional: *SAME tells whether BYTES of device buffers A and B
   * are equal, compared on the device, and COPY copies device to device:
   * the worker then checks inputs against a pristine device copy instead of
   * downloading them. NULL: the worker compares on the host. */
  int (*equal)(void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb);
  int (*copy)(void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb);
  /* WORKER, optional: compares COUNT elements of type T of device buffers
   * GOT and WANT with kt__compare's rule (verify.h: |got - want| <= atol +
   * rtol * |want|, NaN only against NaN), on the device, with the kernel of
   * compare_kernel.h. KT_NOTFOUND when this device cannot (no double
   * precision, the kernel does not build: EB says why): the worker then
   * downloads the output and compares on the host. */
  int (*compare)(void *state, kt__dtype t, void *got, void *want, uint64_t count, double atol, double rtol,
                 kt__device_mismatch *m, kt__errbuf *eb);
  /* WORKER, optional with compare: writes into device buffer BUF the
   * decoys (verify.h, kt__decoy, bit for bit) of COUNT elements of type T
   * of device buffer REF, with the kernel of compare_kernel.h. KT_NOTFOUND
   * when this device cannot (as compare): the worker makes them on the host. */
  int (*decoy)(void *state, kt__dtype t, void *buf, void *ref, uint64_t count, kt__errbuf *eb);
  /* WORKER (and kt_launch), optional: copies BYTES from HOST into the
   * symbol NAME of loaded configuration FN (a CUDA __constant__ array, a C
   * global): @constant data. OK; COMPILE when FN has no such symbol or its
   * size is not BYTES (the message says which); RUNTIME when the copy
   * fails. NULL: the backend has no such symbols, which the parser refuses
   * for its language. */
  kt__status (*set_constant)(void *state, void *fn, const char *name, const void *host, size_t bytes, kt__errbuf *eb);
  /* WORKER, optional: page-locks host memory that is copied often (the
   * worker's scratch, which every check downloads into) so transfers run
   * at full speed. A hint. */
  void (*pin_host)(void *state, void *host, size_t bytes);
  /* WORKER, optional with pin_host: undoes it before HOST is freed (a worker
   * kept between tunings frees its scratch). */
  void (*unpin_host)(void *state, void *host);
  /* WORKER, optional: builds now what the checks on the device will need
   * (CUDA: the comparison kernel, an NVRTC build of about 0.02 s), called
   * after the worker's hello, while the tuner prepares its first request
   * or a spawned worker waits to be bound. A hint: what fails here fails
   * again, and is said, at its first use. */
  void (*prepare_checks)(void *state);
  /* kt_launch, optional: waits until the work enqueued on STREAM (the
   * caller's CUstream / cl_command_queue, not NULL) is done, so that a copy
   * of the caller's buffers sees what its earlier kernels wrote. NULL: the
   * backend's download already waits for it (the CPU has no queue). */
  int (*wait)(void *state, void *stream, kt__errbuf *eb);
  /* kt_launch, optional: makes BYTES of the caller's device buffer BUF
   * openable by a process on the same device (*OUT), copying nothing.
   * KT_NOTFOUND when this memory cannot be shared (a stream-ordered pool's,
   * the VMM API's without a shareable handle): the caller then copies it
   * through host memory. The buffer must stay allocated and unchanged until
   * the other process has copied it. */
  int (*share)(void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb);
  /* WORKER, optional with share: copies SRC (another process's buffer,
   * shared by share) into device buffer DST, on the device, and lets go of
   * SRC again; done when it returns. */
  int (*copy_shared)(void *state, void *dst, const kt__shared_buffer *src, kt__errbuf *eb);
  /* kt_launch, optional: a miss's copy of the caller's N buffers BUFS
   * (BYTES each) without waiting: device-to-device copies into buffers of
   * the backend's own, enqueued on STREAM (NULL: the backend's queue)
   * behind the caller's earlier work, and an event after them, so that the
   * call returns at once and the caller may overwrite its buffers with
   * later work on STREAM. KT_NOMEM when the copies do not fit (the caller
   * then copies synchronously). snapshot_read waits for the copies and
   * downloads copy I into HOST (BYTES[I] long, page-aligned), from any
   * thread, page-locking HOST for the transfer where it can; snapshot_free
   * releases them, from any thread. NULL: the caller copies synchronously
   * (the CPU backend: its buffers are host memory, a memcpy). */
  int (*snapshot)(void *state, void *stream, void *const *bufs, const size_t *bytes, int n, void **snap,
                  kt__errbuf *eb);
  int (*snapshot_read)(void *state, void *snap, int i, void *host, kt__errbuf *eb);
  void (*snapshot_free)(void *state, void *snap);
} kt__backend;

/* The registry: every backend, as its kt_backend_kind (ktune.h) and its
 * table. The order is that of `ktune devices`, and the first backend of a
 * language is the one a file of that language gets when its extension names
 * none. Adding a backend is its file and one line here (docs/CONTRIBUTING.md). */
#define KT__BACKENDS(X)                    \
  X(KT_BACKEND_CPU, kt__backend_cpu)       \
  X(KT_BACKEND_OPENCL, kt__backend_opencl) \
  X(KT_BACKEND_CUDA, kt__backend_cuda)

#define KT__BACKEND_DECLARE(kind, table) extern const kt__backend table;
KT__BACKENDS(KT__BACKEND_DECLARE)
#undef KT__BACKEND_DECLARE

/* The backend of KIND; NULL for KT_BACKEND_AUTO and past the last, so that
 * `for (int k = KT_BACKEND_AUTO + 1; (be = kt__backend_of(k)); k++)` visits
 * them all. */
const kt__backend *kt__backend_of(int kind);
/* The backend one of whose extensions ends PATH; NULL when none. */
const kt__backend *kt__backend_for_path(const char *path);
/* The first backend whose kernels are in LANG. */
const kt__backend *kt__backend_for_lang(kt__lang lang);

/* Wrappers the core uses. */
/* The first of BE's driver libraries this process has loaded, or NULL. */
const char *kt__be_loaded_driver(const kt__backend *be);
int kt__be_list_devices(const kt__backend *be, kt__device_info *out, int max, int *count, kt__errbuf *eb);
kt__status kt__be_compile(const kt__backend *be, const kt__build *b, kt__artifact *a, kt__errbuf *eb);
/* Whether BE has a compile step that writes an artifact (not when it builds
 * at load, nor in a build that cannot use it). */
bool kt__be_compiles(const kt__backend *be);
int kt__be_open(const kt__backend *be, int index, void **state, kt__device_info *info, kt__errbuf *eb);
void kt__be_close(const kt__backend *be, void *state);
/* Whether BE can open on an application's own device context (adopt). */
bool kt__be_can_adopt(const kt__backend *be);
/* KT_INVALID when the backend cannot share the application's context. */
int kt__be_adopt(const kt__backend *be, void *native, void *device, void **state, kt__device_info *info,
                 kt__errbuf *eb);
kt__status kt__be_load(const kt__backend *be, void *state, const kt__build *b, const kt__artifact *a, void **fn,
                       kt__errbuf *eb);
void kt__be_unload(const kt__backend *be, void *state, void *fn);
kt__status kt__be_check(const kt__backend *be, void *state, void *fn, const kt__launch *l, kt__errbuf *eb);
int kt__be_alloc(const kt__backend *be, void *state, size_t bytes, void **buf, kt__errbuf *eb);
void kt__be_release(const kt__backend *be, void *state, void *buf);
int kt__be_upload(const kt__backend *be, void *state, void *buf, const void *host, size_t bytes, kt__errbuf *eb);
int kt__be_download(const kt__backend *be, void *state, void *host, void *buf, size_t bytes, kt__errbuf *eb);
kt__status kt__be_run(const kt__backend *be, void *state, void *fn, const kt__launch *l, kt__errbuf *eb);
/* One launch timed (run_timed above); *METHOD says how ("events" or
 * "clock"), as a stored result's `measurement` names it. */
kt__status kt__be_run_timed(const kt__backend *be, void *state, void *fn, const kt__launch *l, double *seconds,
                            const char **method, kt__errbuf *eb);
kt__status kt__be_time(const kt__backend *be, void *state, void *fn, const kt__launch *l, int n, kt_timing how,
                       bool energy, double *seconds, kt__reading *reading, kt__errbuf *eb);
/* Whether BE can time by method HOW (AUTO: always, as EVENTS where there is
 * no graph). */
bool kt__be_can_time(const kt__backend *be, kt_timing how);
/* The method HOW means on BE: AUTO chooses between events and a graph, so
 * where BE has no graphs it is EVENTS; any other method as it is. */
kt_timing kt__be_timing(const kt__backend *be, kt_timing how);
void kt__be_flush_cache(const kt__backend *be, void *state);
void kt__be_prebuild(const kt__backend *be, void *state, const kt__build *b, int n);
int kt__be_fill(const kt__backend *be, void *state, void *buf, size_t bytes, const void *pattern, size_t pattern_size,
                kt__errbuf *eb);
void kt__be_pin_host(const kt__backend *be, void *state, void *host, size_t bytes);
void kt__be_unpin_host(const kt__backend *be, void *state, void *host);
void kt__be_prepare_checks(const kt__backend *be, void *state);
/* KT_OK at once for a NULL stream or a backend without wait. */
int kt__be_wait(const kt__backend *be, void *state, void *stream, kt__errbuf *eb);
/* KT_NOTFOUND when the backend takes no snapshots (backend.h). */
int kt__be_snapshot(const kt__backend *be, void *state, void *stream, void *const *bufs, const size_t *bytes, int n,
                    void **snap, kt__errbuf *eb);
int kt__be_snapshot_read(const kt__backend *be, void *state, void *snap, int i, void *host, kt__errbuf *eb);
void kt__be_snapshot_free(const kt__backend *be, void *state, void *snap);
/* KT_NOTFOUND when the backend cannot compare or copy on the device. */
int kt__be_equal(const kt__backend *be, void *state, void *a, void *b, size_t bytes, bool *same, kt__errbuf *eb);
int kt__be_copy(const kt__backend *be, void *state, void *dst, void *src, size_t bytes, kt__errbuf *eb);
/* KT_NOTFOUND when the backend cannot share buffers between processes. */
int kt__be_share(const kt__backend *be, void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb);
int kt__be_copy_shared(const kt__backend *be, void *state, void *dst, const kt__shared_buffer *src, kt__errbuf *eb);
kt__status kt__be_set_constant(const kt__backend *be, void *state, void *fn, const char *name, const void *host,
                               size_t bytes, kt__errbuf *eb);
/* KT_NOTFOUND when the backend cannot compare on the device. */
int kt__be_compare(const kt__backend *be, void *state, kt__dtype t, void *got, void *want, uint64_t count, double atol,
                   double rtol, kt__device_mismatch *m, kt__errbuf *eb);
/* KT_NOTFOUND when the backend cannot make decoys on the device. */
int kt__be_decoy(const kt__backend *be, void *state, kt__dtype t, void *buf, void *ref, uint64_t count, kt__errbuf *eb);
/* KT_NOTFOUND when the backend cannot slice. */
int kt__be_slice(const kt__backend *be, void *state, void *buf, size_t offset, size_t bytes, void **out,
                 kt__errbuf *eb);
void kt__be_unslice(const kt__backend *be, void *state, void *slice);

#endif
