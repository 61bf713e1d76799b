# The machine's failures are not the configuration's on OpenCL too (issue
# 26 item 3): PoCL builds at load, in the device worker, and with its cache
# folder on a full disk (POCL_CACHE_DIR=/dev/full: every write fails) it
# says only "failed to build the program". ktune then builds a program of
# its own; when that fails too, the machine is at fault: the tuning stops
# with exit status not 0, nothing of the configuration is stored, and the
# next run measures it. A configuration whose source does not compile is
# still its own `compile` failure.
. "$(dirname "$0")/common.bash"
"$KTUNE" devices 2>/dev/null | grep -q '^opencl' || { echo "skipped: no OpenCL device (PoCL missing?)"; exit 77; }

cat >"$TMP/k.cl" <<'SRC'
// @autotune(U in [1, 2, 3])
// @kernel sc(x: in tensor<f32>[N], y: out tensor<f32>[N])
// @dims(N = 2048)
// @grid(N)
#if U == 3
#error U=3 is refused by its own source
#endif
__kernel void sc(__global const float *x, __global float *y) { int i = get_global_id(0); y[i] = x[i] * U / U; }
SRC
export POCL_CACHE_DIR="$TMP/pocl"
mkdir -p "$POCL_CACHE_DIR"

POCL_CACHE_DIR=/dev/full "$KTUNE" tune "$TMP/k.cl" --quiet >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] || fail "a compiler that cannot write ended the tuning with exit status 0"
expect_contains "$TMP/err" "the machine, not the configuration, failed building U=1" "the machine's failure named"
expect_contains "$TMP/err" "failed to build the program" "PoCL's words kept"
run_status 1 "$KTUNE" cache export --kernel sc # nothing stored, not even the key

# With the cache folder back, every configuration is measured, and the one
# whose source is wrong is its own compile failure (the probe builds).
run_status 0 "$KTUNE" tune "$TMP/k.cl" --quiet
run_status 0 "$KTUNE" cache export --kernel sc
expect_eq "$(json "$TMP/out" "sorted((r['config'], r['status']) for k in d['keys'] for r in k['results'])")" \
  "[('U=1', 'ok'), ('U=2', 'ok'), ('U=3', 'compile')]" "the next run measures what the full disk stopped"
finish
