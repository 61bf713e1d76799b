/* The author's check, run in a child of the device worker: whatever it does
 * (a crash, a write to the tensors it is given, a change of directory, an
 * exit) stays out of the worker and is told as the check's fault, by name,
 * not as the configuration's (docs/FAULTS.md). In the child every tensor
 * the check is given is read-only (the shared ones are already; the copies
 * of the outputs are protected there), so a write faults at an address that
 * names the tensor. */
#ifndef KT_CHECK_CHILD_H
#define KT_CHECK_CHILD_H

#include <stddef.h>

#include "../check/check.h"

typedef enum kt__check_verdict {
  KT__CHECK_PASSED,
  KT__CHECK_REJECTED, /* ARGS->message says why */
  KT__CHECK_FAULTED   /* the check's own fault: WHY says what it did */
} kt__check_verdict;

/* Calls CHECK on ARGS in a child process. BYTES[k]: the length of tensor k's
 * data (ARGS->tensors[k].data); those of outputs (page-aligned copies) are
 * made read-only in the child. WHY (SIZE bytes) gets the fault. */
kt__check_verdict kt__check_in_child(const kt__check *check, kt_check_args *args, const size_t *bytes, char *why,
                                     size_t size);

#endif
