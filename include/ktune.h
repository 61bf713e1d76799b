/* ktune: a kernel autotuner.
 *
 * A kernel author annotates a CUDA C, OpenCL C or plain C kernel with the
 * compile-time constants worth trying (see README.md and docs/DESIGN.md).
 * This header is the whole public interface: the command line uses nothing
 * else. Handles are opaque; every create has a destroy, and destroy(NULL) is a
 * no-op.
 *
 * Errors, one way everywhere: functions return KT_OK (0) or a negative
 * kt_err, and the message of the last error (what is wrong, where:
 * file:line:col, a compiler log...; and how to fix it) is kt_errmsg(ctx) of
 * the context the call worked on, directly or through a kernel made on it.
 * No call takes a buffer for messages; the calls on a result have nothing to
 * say beyond their code. Messages name the caller's inputs as the context's
 * kt_labels say: in the library's words unless the caller gives its own (a
 * command line: its flags). */
#ifndef KTUNE_H
#define KTUNE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KTUNE_VERSION_MAJOR 0
#define KTUNE_VERSION_MINOR 1
#define KTUNE_VERSION_PATCH 0
#define KTUNE_VERSION_NUMBER (KTUNE_VERSION_MAJOR * 10000 + KTUNE_VERSION_MINOR * 100 + KTUNE_VERSION_PATCH)
#define KTUNE_VERSION_STRING "0.1.0"

/* The library's own version, to compare with KTUNE_VERSION_NUMBER. */
int kt_version_number(void);
const char *kt_version(void);
/* sizeof the public struct NAMEd ("kt_options", "kt_tune_options",
 * "kt_labels", "kt_cache_filter", "kt_param_info"), 0 for another name: a
 * binding that mirrors these structs (the Python package) checks its
 * layout against the library it loaded. */
size_t kt_struct_size(const char *name);

/* Error codes: one table makes the enum, kt_err_name and kt_strerror. */
#define KT_ERRNO_MAP(XX)                             \
  XX(INVALID, -1, "bad input")                       \
  XX(NOVALID, -2, "no valid configuration")          \
  XX(NOBACKEND, -3, "backend or device unavailable") \
  XX(NOMEM, -4, "out of memory")                     \
  XX(IO, -5, "input/output error")                   \
  XX(INTERRUPTED, -6, "interrupted")                 \
  XX(NOTFOUND, -7, "not found")                      \
  XX(STORE, -8, "results database error")            \
  XX(INTERNAL, -9, "internal error")

typedef enum kt_err {
  KT_OK = 0,
#define KT_ERR_ENUM_(name, code, text) KT_##name = code,
  KT_ERRNO_MAP(KT_ERR_ENUM_)
#undef KT_ERR_ENUM_
} kt_err;

const char *kt_err_name(int err);
const char *kt_strerror(int err);

/* The exit status the command line uses for an error: 2 for bad input
 * (KT_INVALID, KT_NOTFOUND, KT_NOBACKEND) and for a results database that
 * cannot be opened or written (KT_STORE: a tuning whose results could not
 * all be stored ends with it, even when it was also interrupted), 130 for
 * KT_INTERRUPTED (SIGINT, SIGTERM, SIGHUP during a tuning), 1 for
 * KT_NOVALID and anything else (KT_IO, KT_NOMEM, KT_INTERNAL). */
int kt_exit_status(int err);

typedef struct kt_context kt_context;
typedef struct kt_kernel kt_kernel;
typedef struct kt_result kt_result;

typedef enum kt_backend_kind {
  KT_BACKEND_AUTO = 0, /* from the file extension: .cu CUDA, .cl OpenCL, .c CPU */
  KT_BACKEND_CPU,
  KT_BACKEND_OPENCL,
  KT_BACKEND_CUDA
} kt_backend_kind;

/* The name of backend KIND, as --backend takes it ("cpu", "opencl", "cuda");
 * NULL for KT_BACKEND_AUTO and past the last kind, so that counting up from
 * KT_BACKEND_AUTO + 1 until NULL lists every backend. */
const char *kt_backend_name(int kind);

/* What to do when kt_launch meets a key with no stored winner. */
typedef enum kt_miss_policy {
  KT_MISS_TUNE = 0,   /* tune now, on a copy of the caller's buffers, in the helper
                        process (ktune-tuner); the call returns once the winner is
                        launched. The helper copies them from where they are (CUDA
                        IPC where the memory allows, on the device; the CPU backend:
                        from the caller's memory), not through host memory; where it
                        cannot, or with KTUNE_MISS_TENSORS=host, through host memory */
  KT_MISS_NEAREST,    /* the stored winner of the nearest size, else default */
  KT_MISS_DEFAULT,    /* the default configuration (first choices) */
  KT_MISS_BACKGROUND, /* launch the nearest stored size's winner (else the default)
                         at once and tune in the helper meanwhile; a later call for
                         the shape launches the winner once it is stored */
  KT_MISS_ONLINE      /* tune through the application's own launches: the helper
                         compiles and verifies the configurations on a copy of the
                         caller's buffers and times none; until they are back, calls
                         launch what KT_MISS_BACKGROUND would. Then each call launches
                         the next verified configuration on the caller's data and
                         stream, timed around that launch (CUDA: events, waiting for
                         them; CPU, OpenCL: the host's clock, after waiting for the
                         stream's earlier work), 5 samples each; the fastest median is
                         adopted and stored as the key's winner (its measurement
                         method "online ..."), and later calls launch it untimed. A
                         configuration that failed verification never runs on the
                         caller's data; one whose launch fails is dropped and the call
                         relaunched with the fallback. A kernel with an inout tensor
                         (which a launch changes in place) follows KT_MISS_BACKGROUND */
} kt_miss_policy;

/* How messages name the caller's inputs. A command line passes its flags
 * ("--dim"), so that an error names the flag to fix; a NULL field takes the
 * library's own word, given after it. The strings must stay valid while the
 * context lives. */
typedef struct kt_labels {
  const char *kernel; /* the NAME of kt_kernel_load_*: "the name" */
  const char *size;   /* kt_kernel_set_size and kt_kernel_set_size_arg: "size" */
  const char *pin;    /* kt_kernel_pin: "pins" */
  const char *db;     /* db_path below: "kt_options.db_path" */
  const char *input;  /* kt_kernel_set_input: "input" */
  const char *expect; /* kt_kernel_set_expect: "expected output" */
  const char *check;  /* kt_kernel_set_check: "check" */
} kt_labels;

/* What a tuning minimises (`--objective`), and which stored winner
 * kt_launch uses: the time per launch, the energy per launch (the device's
 * energy counter over the samples: NVML on CUDA, RAPL on the CPU backend),
 * or their product, the energy-delay product. A winner is stored under its
 * objective (docs/DESIGN.md, "Energy"). */
typedef enum kt_objective {
  KT_OBJECTIVE_TIME,   /* seconds per launch */
  KT_OBJECTIVE_ENERGY, /* joules per launch */
  KT_OBJECTIVE_EDP,    /* joules times seconds per launch */
} kt_objective;

/* Context options. Zero-initialise, then set what you need: every zero field
 * means "the documented default". */
typedef struct kt_options {
  kt_backend_kind backend;
  int device;               /* index among the backend's devices */
  const char *db_path;      /* NULL: $KTUNE_DB, else $XDG_CACHE_HOME/ktune/results.db */
  int no_db;                /* 1: keep nothing on disk */
  int jobs;                 /* compile processes/threads; 0: all cores */
  double compile_timeout_s; /* 0: 60 s */
  double run_timeout_s;     /* 0: 10 s per trial (one verification or one timing) */
  int quiet;                /* 1: no progress output on stderr */
  kt_miss_policy miss_policy;
  /* KT_MISS_TUNE: how kt_launch tunes a new shape (budget, strategy...);
   * NULL: kt_tune's defaults. Must stay valid while the context lives. */
  const struct kt_tune_options *miss_tune;
  uint64_t max_tensor_bytes; /* cap on the tensors of one tuning (one copy each),
                                checked before allocating; 0: half the memory */
  kt_labels labels;          /* how messages name the inputs; zero: the library's words */
  /* The binary cache: compiled configurations kept on disk, so that a new
   * key of a kernel tuned before compiles nothing (README, docs/STORE.md).
   * NULL: $KTUNE_BINARY_CACHE, else $XDG_CACHE_HOME/ktune/binaries, else
   * ~/.cache/ktune/binaries; "off" (here or in the variable) turns it off. */
  const char *binary_cache;
  int no_binary_cache;             /* 1: compile every configuration */
  uint64_t binary_cache_max_bytes; /* 0: $KTUNE_BINARY_CACHE_MAX, else 1 GiB */
  /* OpenCL: the application's own cl_context, and the cl_device_id in it
   * (NULL: the context's first device). kt_launch then builds its programs
   * in that context, so that the caller's cl_mem buffers and command queue
   * (the STREAM of kt_launch) work with them. NULL: a context of ktune's own. */
  void *opencl_context;
  void *opencl_device;
  /* Which stored winner kt_launch launches: the one of this objective's
   * tunings; a miss tunes for it (unless miss_tune says otherwise). 0: time. */
  kt_objective objective;
} kt_options;

/* Zero fields of kt_options take the documented default, unless these
 * environment variables set them (docs/BAD_INPUTS.md, "Limits"):
 * KTUNE_COMPILE_TIMEOUT (seconds), KTUNE_RUN_TIMEOUT (seconds),
 * KTUNE_MAX_TENSOR_MEMORY, KTUNE_BINARY_CACHE_MAX (bytes, or with a K/M/G/T
 * suffix). A malformed
 * value makes kt_context_create return KT_INVALID, with the reason in
 * kt_errmsg (the context is still created, and must be destroyed). */

int kt_context_create(const kt_options *opts, kt_context **out);
void kt_context_destroy(kt_context *ctx);
/* The detail of the last error on this context ("" when none). */
const char *kt_errmsg(const kt_context *ctx);

/* Loads and checks the annotated kernel NAME from a file (NULL name: the only
 * kernel in the file; an error lists them when there are several). */
int kt_kernel_load_file(kt_context *ctx, const char *path, const char *name, kt_kernel **out);
/* The same from a string; LANG is "c", "cl" or "cu"; LABEL names it in messages. */
int kt_kernel_load_string(kt_context *ctx, const char *label, const char *source, const char *lang, const char *name,
                          kt_kernel **out);
/* The kernel a T1 file describes (Kernel Tuner's tune_kernel_T1 format;
 * docs/T1.md): its parameters, restrictions, launch shape and arguments as
 * annotations inserted above the kernel in its KernelFile, then loaded as
 * kt_kernel_load_string does. What the file says that ktune does not map is
 * printed as notes on stderr (unless opts.quiet), the annotations too. */
int kt_kernel_load_t1(kt_context *ctx, const char *t1_path, kt_kernel **out);
void kt_kernel_destroy(kt_kernel *k);
const char *kt_kernel_name(const kt_kernel *k);
/* The backend the kernel runs on, as kt_backend_name names it ("cuda"). */
const char *kt_kernel_backend(const kt_kernel *k);

/* Runtime sizes (undeclared symbolic dims such as M, N, K), in the order
 * kt_launch takes them. */
int kt_kernel_num_sizes(const kt_kernel *k);
const char *kt_kernel_size_name(const kt_kernel *k, int i);
/* Sets a runtime size for tuning/benchmarking ("N=4096" style values from the
 * command line); an unknown name is KT_INVALID. */
int kt_kernel_set_size(kt_kernel *k, const char *name, int64_t value);
/* Parses and applies one "NAME=VALUE" (VALUE an integer expression). */
int kt_kernel_set_size_arg(kt_kernel *k, const char *arg);
/* The sizes of K's results key at the sizes it has now (kt_kernel_set_size,
 * else its data files' shapes, else @dims): its @key sizes, bucketed, as the
 * database keeps them ("M=1024 N=4096"; every size when there is no @key).
 * As kt_cache_filter.sizes it selects exactly this key's rows. KT_INVALID
 * when a size has no value, or BUF (LEN bytes) is too small. */
int kt_kernel_key_sizes(kt_kernel *k, char *buf, size_t len);
/* Pins tuned names: "NAME=VALUE NAME=VALUE ...". An undeclared name is
 * KT_INVALID with the declared names in kt_errmsg. */
int kt_kernel_pin(kt_kernel *k, const char *spec);

/* ---- Real data and references (README, "Tuning on real data") ----
 * SPEC is "NAME=PATH" for a NumPy .npy file (little-endian, C order; its
 * element type and shape must be the tensor's), or "NAME=PATH:TYPE" for a
 * raw binary file of TYPE elements (f32, i32, ...: the tensor's type). A
 * runtime size that kt_kernel_set_size did not give is bound from the file's
 * shape (before @dims). Errors (KT_INVALID, naming the file, the declaration
 * and what differs) come here for what the file's header shows, and from
 * kt_tune for shapes, which need the sizes. */

/* Fills input or inout tensor NAME from a file instead of its @kernel
 * initial value. */
int kt_kernel_set_input(kt_kernel *k, const char *spec);
/* The expected content of output NAME after the kernel ran: the reference
 * for that output, instead of the default configuration's. Outputs without
 * an expected file are then not compared (the default need not run at all). */
int kt_kernel_set_expect(kt_kernel *k, const char *spec);
/* An author's check, "FILE.c:FUNCTION": compiled with $CC into a shared
 * object when tuning starts, and called after each configuration's run as a
 * kt_check_fn (it includes <ktune.h>). It alone decides correctness. */
int kt_kernel_set_check(kt_kernel *k, const char *spec);

/* What a check sees of one tensor, in @kernel order. */
typedef struct kt_check_tensor {
  const char *name;
  const char *type;      /* "f32", "i32", ... */
  int is_output;         /* out or inout */
  const void *data;      /* inputs: their content; outputs: what this configuration wrote */
  const void *reference; /* outputs: the expected content (kt_kernel_set_expect,
                            @reference), else NULL */
  uint64_t count;        /* elements, for this configuration's shape */
  int ndims;
  const uint64_t *shape; /* this configuration's shape, outermost first */
} kt_check_tensor;

typedef struct kt_check_args {
  int ntensors;
  const kt_check_tensor *tensors;
  int nvalues; /* the configuration's tuned names, then the runtime sizes */
  const char *const *names;
  const int64_t *values;
  void *user;          /* kt_tune_options.check_data */
  char *message;       /* where a failing check says why (NUL-terminated) */
  size_t message_size; /* at least 256 */
} kt_check_args;

/* Returns nonzero when the configuration's outputs are right, 0 (with a
 * message) when not. Called in a child of the device worker, where the
 * tensors it is given are read-only: a crash in it, a write to them, a change
 * of directory or an exit stops the tuning as the check's fault (exit status
 * 2 from the command line, KT_INVALID), never the configuration's. */
typedef int (*kt_check_fn)(const kt_check_args *a);

/* Helpers for checks: the tensor called NAME (NULL when none), and the value
 * of a tuned name or runtime size (FALLBACK when none). */
static inline const kt_check_tensor *kt_check_tensor_named(const kt_check_args *a, const char *name) {
  for (int i = 0; i < a->ntensors; i++) {
    const char *p = a->tensors[i].name, *q = name;
    while (*p && *p == *q) p++, q++;
    if (*p == *q) return &a->tensors[i];
  }
  return NULL;
}
static inline int64_t kt_check_value(const kt_check_args *a, const char *name, int64_t fallback) {
  for (int i = 0; i < a->nvalues; i++) {
    const char *p = a->names[i], *q = name;
    while (*p && *p == *q) p++, q++;
    if (*p == *q) return a->values[i];
  }
  return fallback;
}

/* Writes the expanded space (names, choices, sizes before/after @where, the
 * default, as -D flags) as text or as one JSON document. */
int kt_space_print(kt_kernel *k, FILE *out, int json);
/* kt_space_print, then how many of the valid configurations the context's
 * device (kt_options.device of the kernel's backend) can launch: @block's
 * threads within its threads-per-block limit, @shared within its shared
 * memory (one more line, or one more JSON document). */
int kt_space_print_device(kt_kernel *k, FILE *out, int json);

/* Lists backends and devices as text or JSON. */
int kt_devices_print(kt_context *ctx, FILE *out, int json);
/* How many devices the kernel's backend has (those `ktune devices` lists
 * for it, indices 0..*COUNT-1), listed from a short-lived child process.
 * KT_NOBACKEND with the reason when the backend cannot list them. */
int kt_kernel_device_count(kt_kernel *k, int *count);

/* How a GPU configuration is timed (`--timing`). A kernel shorter than the
 * cost of launching it, timed by events around launches made one by one,
 * measures the launches: GRAPH captures the launches of a sample in a CUDA
 * graph, so that the device runs them back to back. AUTO times the first
 * sample both ways and keeps GRAPH where launch overhead shows (docs/DESIGN.md,
 * "Timing a configuration"). Backends without graphs (CPU, OpenCL) time their
 * one way under AUTO and refuse GRAPH. */
typedef enum kt_timing {
  KT_TIMING_AUTO,   /* chosen per configuration from its first sample */
  KT_TIMING_GRAPH,  /* the launches of a sample replayed from a CUDA graph */
  KT_TIMING_EVENTS, /* device events around launches made one by one */
} kt_timing;

typedef struct kt_tune_options {
  const char *strategy;   /* NULL: exhaustive when it fits the budget, else the best one */
  long budget_configs;    /* configurations besides the default (always run, never counted); 0: no limit */
  double budget_s;        /* 0: no time limit */
  uint64_t seed;          /* 0: the default seed, 42 */
  int no_cache;           /* 1: measure again what the database already holds */
  int finalists;          /* configurations re-timed in interleaved rounds; 0: 5 */
  int rounds;             /* interleaved rounds; 0: 7 */
  int bench_only;         /* 1: time only the pinned configuration (unpinned names
                           at their defaults) beside the default; no search */
  int show_output;        /* 1: progress lines on stderr include what each
                           configuration printed (always in the result's JSON) */
  int retry_failed;       /* 1: measure again the failures the database holds
                           (those not the kernel's own doing always are) */
  kt_check_fn check;      /* an author's check (see kt_check_fn), instead of the
                           comparison with the reference; overrides
                           kt_kernel_set_check and @check */
  void *check_data;       /* handed to CHECK as kt_check_args.user */
  kt_timing timing;       /* how each configuration is timed; 0: KT_TIMING_AUTO */
  kt_objective objective; /* what the winner minimises; 0: KT_OBJECTIVE_TIME. A device
                             that reports no energy refuses the other two (KT_INVALID) */
} kt_tune_options;

/* Tunes the kernel for its current sizes and pins. KT_NOVALID when no
 * configuration survived; the result is still returned for reporting. A
 * default configuration that violates @where is KT_INVALID, and pins that
 * leave no configuration @where allows are KT_NOVALID: both are found before
 * anything runs, and *out is then NULL. */
int kt_tune(kt_kernel *k, const kt_tune_options *opts, kt_result **out);
void kt_result_destroy(kt_result *r);

int kt_result_print_table(const kt_result *r, FILE *out);
int kt_result_print_json(const kt_result *r, FILE *out);
/* The winner's value of a tuned name, or KT_NOTFOUND. */
int kt_result_winner_value(const kt_result *r, const char *name, int64_t *value);
/* The winner's median time in seconds (negative when there is no winner). */
double kt_result_winner_seconds(const kt_result *r);

/* Asks a tuning in progress to stop soon, keeping what it measured.
 * Async-signal-safe: meant for SIGINT/SIGTERM handlers. */
void kt_interrupt(void);

/* Launches the kernel with the stored winner for these sizes (in
 * kt_kernel_size_name order) on the caller's ARGS: device pointers for
 * tensors (host pointers on the CPU backend), pointers to values for scalars,
 * in @kernel order. STREAM is a CUstream / cl_command_queue / NULL: with a
 * stream the launch is asynchronous on it; with NULL it completes before
 * return. On a miss the context's kt_miss_policy applies: a tuning runs in
 * the helper process ktune-tuner (beside the library, or $KTUNE_HELPER),
 * never in this one, on a copy of the caller's in and inout tensors taken
 * once the work queued on STREAM is done; the caller's buffers are written
 * only by the final launch. A helper that cannot start or dies leaves the
 * miss on the nearest stored size (else the default), and the
 * KTUNE_PRINT_AUTOTUNING line says why. A shape seen before costs one table
 * lookup: no allocation, parsing, database access or lock. Any thread may
 * call it on one kernel handle at once, for new shapes too: one thread at a
 * time makes a new shape's entry, and the others missing it wait for that
 * one's (a hit takes no lock). */
int kt_launch(kt_kernel *k, const int64_t *sizes, void *const *args, void *stream);

/* kt_launch's SIZES (kt_kernel_size_name order) from N sizes given by name,
 * in any order: NAMES[i] is VALUES[i] ({"M", "N", "K"} for the shipped
 * matmul, which kt_launch takes as M, K, N). Every runtime size is given
 * once: an unknown or repeated name, a missing size or a value below 1 is
 * KT_INVALID, with kt_errmsg naming it and the kernel's order. */
int kt_kernel_sizes_by_name(kt_kernel *k, int n, const char *const *names, const int64_t *values, int64_t *sizes);

/* Does now, once per kernel handle, the work every kt_launch miss of K needs
 * whatever its sizes, so that the first call pays none of it: opens the
 * device in this process (or adopts kt_options.opencl_context), opens the
 * results database and, unless the miss policy is KT_MISS_TUNE, loads the
 * default configuration (what a miss falls back to when nothing is stored;
 * compiled here unless the binary cache holds it). Under KT_MISS_TUNE and
 * KT_MISS_BACKGROUND (and KT_MISS_ONLINE) it also starts the tuning helper, which opens its
 * device and waits for the first miss (KTUNE_HELPER_IDLE_S from then; it
 * leaves when the application ends), and a thread that will wait for it,
 * so that the first miss pays no process start, device open or thread
 * creation. A KT_MISS_BACKGROUND first call then only launches the
 * fallback and enqueues the copy of the caller's tensors. Call it from a thread that launches (on
 * CUDA, the context is made current there). Optional: kt_launch does the
 * same on the first miss otherwise. */
int kt_kernel_prepare(kt_kernel *k);

/* ---- Calling a kernel on a binding's arrays (the Python package) ----
 * What a caller that holds arrays with shapes (NumPy, PyTorch) needs to build
 * kt_launch's arguments without knowing the annotation language: each
 * parameter's kind, element type and rank; the runtime sizes read from the
 * tensors' shapes; the scalars the @kernel line binds. */

typedef enum kt_param_mode {
  KT_PARAM_SCALAR = 0, /* a value, passed by address */
  KT_PARAM_IN,         /* a tensor the kernel only reads */
  KT_PARAM_OUT,        /* a tensor the kernel writes */
  KT_PARAM_INOUT,      /* a tensor the kernel reads and writes */
  KT_PARAM_TENSORMAP   /* a TMA tensor map (CUDA), built by kt_launch from its tensor (whose dtype it has): its
                          args slot is ignored */
} kt_param_mode;

typedef struct kt_param_info {
  const char *name; /* as @kernel writes it */
  kt_param_mode mode;
  const char *dtype; /* element type: "f16", "bf16", "f32", "f64", "i8", "u8", "i32", "u32", "i64", "u64" */
  int elem_size;     /* bytes of one element (of the value, for a scalar) */
  int ndims;         /* a tensor's rank (0 for a scalar or a tensor map) */
  int has_value;     /* a scalar bound by an expression (n: i32 = N): kt_kernel_scalar_value gives it */
} kt_param_info;

/* The @kernel parameters, in order; KT_INVALID for an index out of range. */
int kt_kernel_num_params(const kt_kernel *k);
int kt_kernel_param(const kt_kernel *k, int i, kt_param_info *out);
/* The runtime sizes (kt_kernel_size_name order) that the tensors' shapes
 * give: tensor parameter i has RANKS[i] extents SHAPES[i], outermost first
 * (scalars: anything; NULL). A rank other than the declared one is an error;
 * a dimension written as a bare size
 * name binds that size; every dimension is then evaluated and must equal the
 * array's. SIZES[j] > 0 on entry is a size given by the caller (a size no
 * shape determines) and is checked like the rest; 0 means "read it from the
 * shapes". KT_INVALID, with kt_errmsg naming the parameter, the dimension,
 * what it was and what was expected, on any mismatch or a size left unbound. */
int kt_kernel_sizes_from_shapes(kt_kernel *k, const int *ranks, const int64_t *const *shapes, int64_t *sizes);

/* The value of scalar parameter I that its @kernel expression gives at these
 * SIZES, written to VALUE as the parameter's C type (elem_size bytes, at most
 * 8). KT_NOTFOUND for a scalar without an expression (the caller gives it),
 * KT_INVALID when the expression cannot be evaluated (it names a tuned name,
 * overflows the type), with the reason in kt_errmsg. */
int kt_kernel_scalar_value(kt_kernel *k, int i, const int64_t *sizes, void *value);

/* kt_launch for tensors in host memory on any backend: on one whose kernels
 * run on the host (CPU) it is kt_launch; on a device it copies every tensor
 * to a device buffer of its own, launches, waits, and copies the out and
 * inout tensors back (so a NumPy array can be tuned and launched on an
 * OpenCL device, whose buffers belong to a context the API keeps to itself).
 * Each tensor's bytes follow from its @kernel shape at SIZES. */
int kt_launch_host(kt_kernel *k, const int64_t *sizes, void *const *args);

/* Where a binding's arrays for a kernel must be, and so how it launches
 * them. The backend decides: a binding asks this, not the backend's name. */
typedef enum kt_memory_kind {
  KT_MEMORY_HOST = 0, /* host memory, launched with kt_launch_host (the CPU backend; OpenCL, whose
                         buffers belong to a context a binding does not hold) */
  KT_MEMORY_CUDA      /* CUDA device memory on the kernel's device (__cuda_array_interface__, DLPack),
                         launched with kt_launch on a CUDA stream */
} kt_memory_kind;
kt_memory_kind kt_kernel_memory(const kt_kernel *k);

/* For callers whose own signal handlers cannot call kt_interrupt while a
 * ktune call blocks (Python runs its handlers between bytecodes only): from
 * kt_signals_catch until the matching kt_signals_release, SIGINT, SIGTERM and
 * SIGHUP call kt_interrupt(). Calls nest (and are thread-safe): the handlers
 * are installed by the first catch and the previous ones restored by the last
 * release, which then raises the first signal caught meanwhile again, so
 * that the caller's own handler sees it (Python: KeyboardInterrupt) once the
 * tuning has stopped cleanly. kt_signals_release returns that signal (0 for
 * none; always 0 from an inner release). KT_IO when sigaction fails. */
int kt_signals_catch(void);
int kt_signals_release(void);

/* ---- The results database, for `ktune cache ...` ----
 * The database is the context's kt_options.db_path (NULL: $KTUNE_DB, else
 * $XDG_CACHE_HOME/ktune/results.db, else ~/.cache/ktune/results.db); no_db
 * does not apply to these commands. On error they return KT_INVALID (bad
 * argument or input file), KT_NOTFOUND (nothing matched where something
 * must) or KT_STORE (the database), with a one-paragraph message in
 * kt_errmsg(ctx). Reading commands never create a database: a missing file
 * reads as an empty one. */

/* Which stored tunings a command applies to; zero-initialise (or pass NULL)
 * for all. */
typedef struct kt_cache_filter {
  const char *kernel; /* exact kernel name */
  const char *device; /* case-insensitive part of the device name, or a backend name */
  const char *sizes;  /* "N=4096 M=512": each must be among the key's sizes */
} kt_cache_filter;

/* The path the database has (db_path, else the default) into BUF. */
int kt_cache_path(kt_context *ctx, char *buf, size_t len);
/* One line (or one JSON object) per stored key: kernel, device, sizes,
 * results measured and valid, the winner and its time. */
int kt_cache_list(kt_context *ctx, const kt_cache_filter *f, int json, FILE *out);
/* FORMAT "table" (NULL): every result of each matching key, fastest first.
 * "defines": the winner as a C header of #define lines; "dflags": the winner
 * as -DNAME=VALUE flags on one line; both need exactly one matching key with
 * a winner (else KT_NOTFOUND or KT_INVALID listing the candidates).
 * "json" and "csv": as kt_cache_export's. A filter that matches no stored key
 * is KT_NOTFOUND in every format but json, with a message naming it. */
int kt_cache_show(kt_context *ctx, const kt_cache_filter *f, const char *format, FILE *out);
/* FORMAT "json" (NULL): ktune's own document, read back by kt_cache_import.
 * "t4": the FAIR benchmark hub's T4 results format (schema 1.0.0) for one
 * key (KT_INVALID when the filter matches several). "csv": a header, then a
 * row per stored result: kernel, backend, device, sizes, a column per
 * configuration name (empty where a configuration has none), status, winner
 * (1/0), median_s, min_s, max_s, stddev_s, samples, compile_s, message,
 * timestamp; quoted as RFC 4180 where a field needs it. */
int kt_cache_export(kt_context *ctx, const kt_cache_filter *f, const char *format, FILE *out);
/* Merges a kt_cache_export json file (PATH "-": stdin) into the database; of
 * two records of the same configuration the newer is kept. A summary line
 * goes to OUT (may be NULL). */
int kt_cache_import(kt_context *ctx, const char *path, FILE *out);
/* Deletes the matching keys with their results and winners; a summary line
 * goes to OUT (may be NULL). */
int kt_cache_clear(kt_context *ctx, const kt_cache_filter *f, FILE *out);

/* The binary cache's folder (kt_options.binary_cache, else the default)
 * into BUF; KT_NOTFOUND when the cache is off. */
int kt_binary_cache_path(kt_context *ctx, char *buf, size_t len);
/* Removes every compiled binary the cache holds; a summary line goes to OUT
 * (may be NULL). A missing folder is an empty cache. */
int kt_binary_cache_clear(kt_context *ctx, FILE *out);

/* Search strategies (docs/SEARCH.md): their names, NULL-terminated, and a
 * one-line summary of each (NULL for an unknown name). */
const char *const *kt_strategy_names(void);
const char *kt_strategy_summary(const char *name);
/* The strategy kt_tune uses when none is named: "exhaustive" when the valid
 * space (VALID_SPACE_SIZE; UINT64_MAX when not counted) fits the budget of
 * BUDGET configurations (0: unlimited), else the strategy that did best in
 * the replay evaluation of docs/SEARCH.md. */
const char *kt_default_strategy(uint64_t valid_space_size, long budget);
/* Replays search on an exhaustively measured space: PATH is a T4 results
 * file (gzip or plain JSON). REPEATS simulated tunings of at most BUDGET
 * configurations each (0: no limit), seeds derived from SEED, with STRATEGY
 * (NULL: kt_default_strategy's choice for this space and budget). Writes the
 * mean and spread of t_opt / t_best_found as text, or as one JSON object
 * (key "fraction_of_optimum") when JSON is 1. WARM names NWARM other T4
 * files of the same kernel (other devices): each repeat evaluates their
 * fastest configurations first, as kt_tune's warm start does with winners
 * stored for other devices. Errors: KT_IO, KT_INVALID (bad file, unknown
 * strategy), with the detail in kt_errmsg(ctx); the context's options do not
 * matter. */
int kt_replay(kt_context *ctx, const char *path, const char *strategy, long budget, int repeats, uint64_t seed,
              const char *const *warm, int nwarm, int json, FILE *out);
/* As kt_replay with a budget of SECONDS of recorded time instead of a count
 * (`ktune replay --budget 60s`): each evaluation spends what it cost when
 * the file was recorded (the sum of its T4 "times": compilation, runtimes,
 * framework, search_algorithm, validation), a repeat ends before the first
 * evaluation that would end past the budget, and the strategy is told each
 * cost and the time left, as kt_tune tells it under a time budget. With no
 * STRATEGY, the one kt_tune picks for a time budget. The output adds the
 * mean seconds spent ("seconds_mean" in JSON, with "budget_s"). KT_INVALID
 * also when SECONDS is not positive or the file records no times. */
int kt_replay_seconds(kt_context *ctx, const char *path, const char *strategy, double seconds, int repeats,
                      uint64_t seed, const char *const *warm, int nwarm, int json, FILE *out);

/* ---- Reports: one self-contained HTML page (inline SVG and CSS, no
 * script, nothing fetched) of the times, failures, each tuned name's effect,
 * the search's progress, the winner against the default, the fastest
 * configurations and the timeline, per key, and the winners across shapes
 * and devices. Each writes PATH whole or not at all (a temporary file beside
 * it, renamed when complete). Errors: KT_INVALID (a path that cannot be
 * written, or a write that failed there), and as the source each reads
 * from; the detail is in kt_errmsg(ctx). */

/* Whether a report can be written at PATH, before the work that makes it
 * (a tuning, a replay): KT_OK, or KT_INVALID saying why not. */
int kt_report_check(kt_context *ctx, const char *path);
/* The stored tunings F matches (NULL: all) in the context's database (as
 * kt_cache_list finds it). KT_NOTFOUND when there is no database, it is
 * empty or nothing matches; KT_STORE when it is not a ktune database. */
int kt_report(kt_context *ctx, const kt_cache_filter *f, const char *path);
/* The tuning R (from kt_tune), with its search's progress and timeline. */
int kt_result_report(kt_context *ctx, const kt_result *r, const char *path);
/* A replay over the T4 results file RESULTS, as kt_replay takes it: the
 * recorded space and the mean progress of every strategy beside random
 * search's (REPEATS replays of BUDGET evaluations each, per strategy). */
int kt_replay_report(kt_context *ctx, const char *results, long budget, int repeats, uint64_t seed,
                     const char *const *warm, int nwarm, const char *path);

#ifdef __cplusplus
}
#endif
#endif
