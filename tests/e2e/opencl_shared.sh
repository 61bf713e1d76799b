# @shared on OpenCL: the kernel's trailing __local pointer (not declared in
# @kernel) receives the dynamic local memory, and tuning verifies.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/opencl_shared.cl --no-db --quiet --json
expect_eq "$(json "$TMP/out" "sorted(c['status'] for c in d['configurations'])")" "['ok', 'ok', 'ok']" "every block size verified"
finish
