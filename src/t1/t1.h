/* The community's T1 input format (Kernel Tuner's tune_kernel_T1, the
 * benchmark hub's *_T1.json): a JSON description of a kernel, its tuning
 * parameters, restrictions, launch shape and arguments, translated into
 * ktune's annotations above the kernel in its own source (docs/T1.md).
 *
 * The translation is text to text: the result is parsed and checked like any
 * annotated kernel, so a T1 file gets the same checks and messages. What the
 * T1 file says that ktune cannot express is named in the notes; what makes
 * the kernel impossible to run is an error (KT_INVALID). */
#ifndef KT_T1_H
#define KT_T1_H

#include "../common.h"

typedef struct kt__t1 {
  char *kernel_path; /* KernelFile, found as Kernel Tuner finds it */
  char *kernel_name; /* KernelName */
  char *lang;        /* "cu", "cl" or "c": kt_kernel_load_string's LANG */
  char *source;      /* the kernel file with the annotations inserted above the kernel */
  char *annotations; /* the inserted lines alone (what `ktune` prints) */
  char *notes;       /* one "T1_PATH: note: ..." line per thing not mapped; "" when none */
} kt__t1;

/* Reads T1_PATH and its kernel file into OUT. KT_INVALID (or KT_IO) with
 * "T1_PATH: error: ..." in EB when the file is not T1, names what cannot
 * be mapped, or the kernel cannot be found. */
int kt__t1_translate(const char *t1_path, kt__t1 *out, kt__errbuf *eb);
void kt__t1_free(kt__t1 *t);

/* One Python expression of a T1 file (a Condition, a launch size, an
 * argument's Size) as a ktune expression: `and or not` to `&& || !`, `//`
 * to `/`, chained comparisons split (`a <= b <= c` is `a <= b && b <= c`),
 * ProblemSize[i] to the runtime size PROBLEM_SIZE_X/Y/Z, max(P) and min(P)
 * of a tuning parameter P to the largest and smallest of VALUES[P]. NULL
 * with the reason in WHY when it has no integer meaning (true division,
 * floats, strings, unknown functions). NAMES/VALUES/COUNTS: the tuning
 * parameters. */
char *kt__t1_expr(const char *python, const char *const *names, int64_t *const *values, const int *counts, int n,
                  char why[256]);

#endif
