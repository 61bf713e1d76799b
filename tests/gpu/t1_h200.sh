#!/usr/bin/env bash
# T1 input on a real GPU (written for the H200 machine).
# Run from anywhere; it works in the repository root:
#
#   tests/gpu/t1_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Builds ktune with scripts/h200_build.sh (carry .carry), then tunes the hub's
# unchanged tests/data/t1/convolution_T1.json (4096 x 4096, 15 x 15 filter,
# __constant__ d_filter; ktune's own convolution_milo.cu) for 60 s. PASS
# when it ends 0 with a verified winner, and no configuration failed for
# anything but a resource limit (constraint) or a mismatch between the
# filter parameter and d_filter (correctness: the note says they hold
# separate random data, so use_cmem configurations are compared with the
# default's d_filter). The summary line gives the winner, its time and the
# count per status: OUTDIR/t1.txt, the JSON in OUTDIR/t1.json.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin t1.txt "ktune --t1"
export KTUNE_DB="$WORK/results.db"
"$KTUNE" tune --t1 tests/data/t1/convolution_T1.json --budget 60s --json --no-db >"$OUTDIR/t1.json" 2>"$OUTDIR/t1.err"
rc=$?
r=$(python3 -c "
import json, sys, collections
d = json.load(open(sys.argv[1]))
st = collections.Counter(c['status'] for c in d['configurations'])
bad = sum(n for s, n in st.items() if s not in ('ok', 'constraint', 'correctness'))
print(bad, d['winner']['status'], d['winner']['config'], '%.4g ms' % (d['winner']['final_median_s'] * 1e3), dict(st))
" "$OUTDIR/t1.json" 2>&1)
case "$rc $r" in "0 0 ok "*) say "PASS  convolution_T1.json tuned  ($r)"; ok=0 ;; *) say "FAIL  convolution_T1.json  (exit $rc; $r)"; ok=1 ;; esac
rm -rf "$WORK"
exit $ok
