/* Shared internal vocabulary: error buffers, trial statuses, element types,
 * checked allocation and a growable string. Internal names use the kt__
 * prefix; public ones (ktune.h) use kt_. */
#ifndef KT_COMMON_H
#define KT_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ktune.h"

/* Long error detail travels in one of these, next to a kt_err code. */
typedef struct kt__errbuf {
  char msg[8192];
} kt__errbuf;

/* Sets the message (printf-style) and returns CODE, so that
 * `return kt__err(eb, KT_INVALID, "...")` reads as one step. eb may be NULL.
 * A configuration's status has its own helper, kt__fail, below. */
kt_err kt__err(kt__errbuf *eb, kt_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define KT__RETURN_IF(cond, eb, code, ...)               \
  do {                                                   \
    if (cond) return kt__err((eb), (code), __VA_ARGS__); \
  } while (0)
#define KT__FORWARD(expr)                 \
  do {                                    \
    int kt__rc_ = (expr);                 \
    if (kt__rc_ != KT_OK) return kt__rc_; \
  } while (0)

/* What happened to one configuration. The names are those of the JSON output. */
#define KT__STATUS_MAP(XX)                                            \
  XX(PENDING, "pending")                                              \
  XX(OK, "ok")                                                        \
  XX(COMPILE, "compile")                                              \
  XX(RUNTIME, "runtime")                                              \
  XX(TIMEOUT, "timeout")                                              \
  XX(CORRECTNESS, "correctness")                                      \
  XX(CONSTRAINT, "constraint")                                        \
  XX(INPUT, "input")   /* wrote a tensor declared `in` */             \
  XX(BOUNDS, "bounds") /* wrote outside a tensor (its guard zones) */ \
  XX(STATE, "state")   /* left process state behind (threads, alarms,  \
                              signal handlers, children, cwd, environment) */
typedef enum kt__status {
#define KT__ST_ENUM_(name, text) KT__ST_##name,
  KT__STATUS_MAP(KT__ST_ENUM_)
#undef KT__ST_ENUM_
      KT__ST_COUNT
} kt__status;
const char *kt__status_name(kt__status st);
/* kt__err for a configuration's status: sets the message and returns ST, so
 * that `return kt__fail(eb, KT__ST_RUNTIME, "...")` reads as one step. */
kt__status kt__fail(kt__errbuf *eb, kt__status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kt__status_from_name(const char *name); /* -1 when unknown */

enum { KT__READING_PIDS = 8 };
/* What the device said of itself around one timed sample (NVML on CUDA):
 * read by the backend, gathered over a measurement by src/measure/. A field
 * the device does not report stays at its *_known false. */
typedef struct kt__reading {
  bool clock_known, throttle_known, power_known, temp_known;
  unsigned sm_clock_mhz;
  uint64_t throttle_reasons; /* NVML's clocks-event reasons (a bit mask) */
  double power_w;
  unsigned temp_c;
  /* The energy the device used over the sample (a counter read before the
   * launches and after them: NVML's total energy, RAPL's energy_uj), and the
   * seconds between the two reads. */
  bool energy_known;
  double energy_j, energy_s;
  unsigned max_clock_mhz; /* the SM clock's maximum (0: unknown), what a throttled clock is below */
  /* Other processes computing on the device meanwhile: known only where the
   * device's process list holds this one (PID namespaces apart, it cannot tell);
   * the first KT__READING_PIDS of their process ids. */
  bool others_known;
  int other_processes;
  unsigned other_pids[KT__READING_PIDS];
} kt__reading;

/* Element types of @kernel parameters. */
#define KT__DTYPE_MAP(XX) \
  XX(F16, "f16", 2)       \
  XX(BF16, "bf16", 2)     \
  XX(F32, "f32", 4)       \
  XX(F64, "f64", 8)       \
  XX(I8, "i8", 1)         \
  XX(U8, "u8", 1)         \
  XX(I32, "i32", 4)       \
  XX(U32, "u32", 4)       \
  XX(I64, "i64", 8)       \
  XX(U64, "u64", 8)
typedef enum kt__dtype {
#define KT__DT_ENUM_(name, text, size) KT__DT_##name,
  KT__DTYPE_MAP(KT__DT_ENUM_)
#undef KT__DT_ENUM_
      KT__DT_COUNT
} kt__dtype;
const char *kt__dtype_name(kt__dtype t);
size_t kt__dtype_size(kt__dtype t);
int kt__dtype_from_name(const char *name); /* -1 when unknown */
bool kt__dtype_is_float(kt__dtype t);

/* Checked allocation: abort with a message on exhaustion (the tuner cannot
 * continue sensibly), and refuse multiplications that overflow. */
void *kt__xmalloc(size_t n);
void *kt__xcalloc(size_t count, size_t size);
void *kt__xrealloc(void *p, size_t n);
void *kt__xreallocarray(void *p, size_t count, size_t size);
char *kt__xstrdup(const char *s);
char *kt__xstrndup(const char *s, size_t n);
/* a*b and a+b for sizes; false on overflow. */
bool kt__mul_u64(uint64_t a, uint64_t b, uint64_t *out);
bool kt__add_u64(uint64_t a, uint64_t b, uint64_t *out);

/* A growable, always NUL-terminated string. */
typedef struct kt__sbuf {
  char *s;
  size_t len, cap;
} kt__sbuf;
void kt__sbuf_printf(kt__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kt__sbuf_vprintf(kt__sbuf *b, const char *fmt, va_list ap);
void kt__sbuf_append(kt__sbuf *b, const char *s, size_t n);
void kt__sbuf_json_string(kt__sbuf *b, const char *s); /* quoted, escaped */
void kt__sbuf_free(kt__sbuf *b);

/* A span of a device buffer that another process on the same device can
 * open (a CUDA IPC handle of its allocation, and where the span starts in
 * it): how kt_launch hands a blocking miss's tuning the caller's tensors
 * without a copy through host memory (backend.h, share and copy_shared).
 * SET 0: none. */
typedef struct kt__shared_buffer {
  unsigned char handle[64];
  uint64_t offset, bytes;
  int32_t set, pad_;
} kt__shared_buffer;
/* How a worker's failure to copy a shared buffer begins (worker.c): the
 * application then tunes the miss again with its tensors copied through
 * host memory (runtime.c), the handle's later misses too. */
#define KT__SHARED_COPY_FAILED "cannot copy a tensor shared by the application"

/* Set by kt_interrupt() (signal handlers); long loops poll it. */
extern volatile int kt__interrupted;

/* Monotonic seconds. */
double kt__now(void);
/* KTUNE_TRACE=1: one stderr line per step of a tuning, "ktune-trace SECONDS
 * PID what", with monotonic seconds comparable across the tuner and its
 * worker, to see where a run's time goes. Nothing when unset. */
void kt__trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether KTUNE_TRACE is on: lets a caller skip building what only a trace
 * line would show (on kt_launch's path, say). */
bool kt__tracing(void);
/* Where kt__trace writes: stderr, except in a device worker, whose stderr
 * is captured as its kernels' output. */
extern int kt__trace_fd;
/* With KTUNE_PRINT_AUTOTUNING set (and not "0"), one line on stderr for a
 * tuning or a kt_launch fallback: kernel, key, what happened, the time it
 * took and the configuration chosen. */
void kt__print_autotuning(const char *kernel, const char *key, const char *how, double secs, const char *config);
/* Number of online CPU cores (at least 1). */
int kt__ncores(void);

#endif
