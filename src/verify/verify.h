/* Inputs and output checking: seeded fills, poisoning of outputs so that an
 * unwritten element fails, and comparison with tolerances per element type. */
#ifndef KT_VERIFY_H
#define KT_VERIFY_H

#include "../lang/decl.h"

/* Fills COUNT elements per INIT; RANDOM is uniform in [-1, 1) for floats and
 * small integers for integer types, reproducible from SEED. */
void kt__fill(kt__dtype t, void *buf, uint64_t count, kt__init init, uint64_t seed);
/* random(LO, HI): uniform in [LO, HI), LO < HI, both within type T (floats:
 * any real in the range; integers: each integer equally likely). */
void kt__fill_random_in(kt__dtype t, void *buf, uint64_t count, int64_t lo, int64_t hi, uint64_t seed);
/* NaN for float types, a 0xA5 byte pattern for integers. */
void kt__poison(kt__dtype t, void *buf, uint64_t count);
/* The second poison, a 0x5A byte pattern in every type: a reference run
 * that leaves poison behind is run again from this one to tell unwritten
 * elements from computed values that happen to equal the first. */
void kt__poison_alt(kt__dtype t, void *buf, uint64_t count);
void kt__default_tolerance(kt__dtype t, double *atol, double *rtol);
/* A value for each of COUNT elements of REF that is neither REF's within any
 * tolerance nor a poison (floats: never NaN; integers: every byte differs):
 * what an output holds before the run that follows a configuration's timed
 * runs, as a timed run's output holds results, so that a kernel that skips
 * its work where its output is not poison is found out. */
void kt__decoy(kt__dtype t, void *buf, const void *ref, uint64_t count);

typedef struct kt__mismatch {
  uint64_t count;   /* elements outside tolerance */
  uint64_t first;   /* index of the first */
  double got, want; /* at the first */
} kt__mismatch;

/* |got - want| <= atol + rtol * |want| elementwise; NaN never matches except
 * NaN where the reference is NaN too. Returns the mismatch count. */
uint64_t kt__compare(kt__dtype t, const void *got, const void *want, uint64_t count, double atol, double rtol,
                     kt__mismatch *m);

/* kt__compare on up to THREADS threads (large buffers only); the same
 * result, the first mismatch being the lowest index. */
uint64_t kt__compare_parallel(kt__dtype t, const void *got, const void *want, uint64_t count, double atol, double rtol,
                              int threads, kt__mismatch *m);

/* Elements among COUNT whose bits are the poison's (ALT: the second
 * poison's), on up to THREADS threads. */
uint64_t kt__count_poison(kt__dtype t, const void *buf, uint64_t count, bool alt, int threads);
/* Elements that hold the poison in RUN1 and the second poison in RUN2, the
 * outputs of two runs that started from each: written by neither run (a
 * computed value equals one poison by chance, never both). *FIRST: the
 * lowest such index, when any. */
uint64_t kt__count_unwritten(kt__dtype t, const void *run1, const void *run2, uint64_t count, uint64_t *first);

/* Element I of a buffer as a double (for reports and comparison). */
double kt__element(kt__dtype t, const void *buf, uint64_t i);

/* IEEE binary16 and bfloat16 as raw bits: to and from float, rounding to
 * nearest even; NaN stays NaN, overflow becomes infinity. */
float kt__f16_to_f32(uint16_t h);
uint16_t kt__f32_to_f16(float f);
float kt__bf16_to_f32(uint16_t h);
uint16_t kt__f32_to_bf16(float f);

#endif
