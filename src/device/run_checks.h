/* A verified run in the device worker and the checks after it (the cases of
 * docs/FAULTS.md, "Buggy and hostile kernels"): process state, guard zones,
 * inputs, an unwritten reference, the outputs compared on the device or the
 * host, the author's check. Each returns the status a configuration gets,
 * with the message in EB. */
#ifndef KT_RUN_CHECKS_H
#define KT_RUN_CHECKS_H

#include "worker_state.h"

/* Before a timed sample: only what the kernel reads after writing it (inout,
 * outputs with an initial value). */
kt__status kt__run_restore_state(kt__worker_state *c, kt__errbuf *eb);

/* The shared inputs and reference read-only in this process, the reference
 * writable while WRITABLE_REFERENCE. */
void kt__run_protect_shared(const kt__argset *a, bool writable_reference);

/* Host-code kernels leave the process as they found it (KT__ST_STATE). */
kt__status kt__run_check_state(kt__worker_state *c, kt__errbuf *eb);

/* Runs the reference FN and keeps its outputs as the shared reference, after
 * checking that it broke no rule and wrote every output. */
kt__status kt__run_reference(kt__worker_state *c, void *fn, const kt__launch *l, kt__errbuf *eb);

/* Runs FN from the initial tensors (timed as a sample into *SECONDS unless
 * SECONDS is NULL) and checks it: the rules of a run, then the outputs
 * against the reference, then the author's check with the configuration's
 * VALUES. */
kt__status kt__run_verified(kt__worker_state *c, void *fn, const kt__launch *l, const int64_t *values, double *seconds,
                            kt__errbuf *eb);

/* After FN's timed runs: what they may have damaged (the process state, the
 * guard zones, the inputs), charged to FN, then one run from restored
 * contents with decoys in its outputs, checked as the verified run is, so
 * that a configuration right only on the runs that are checked (its first,
 * or those from poisoned outputs) does not win on a fake time. */
kt__status kt__run_after_timed(kt__worker_state *c, void *fn, const kt__launch *l, const int64_t *values,
                               kt__errbuf *eb);

#endif
