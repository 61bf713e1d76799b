# Launch limits are checked before every launch, on every backend: a
# geometry past 2^64 work-items in all (grid * block over every dimension)
# is a constraint on the CPU and on OpenCL (PoCL), where it used to run a
# wrapped fraction of the work and be reported as wrong outputs, or, as the
# default, make every configuration "ok" at 0.5 us; a work-group past
# CL_DEVICE_MAX_WORK_GROUP_SIZE is a constraint naming that limit. A default
# over a limit fails the tuning: it is the reference.
. "$(dirname "$0")/common.bash"

# check FILE BACKEND: kernel `fill` tunes with its over-limit shapes refused,
# kernel `over` (the default over the limit) fails.
check() {
  file=$1 be=$2
  run_status 0 "$KTUNE" tune "$file" --kernel fill --json --quiet --no-db
  cp "$TMP/out" "$TMP/$be.json"
  config() { json "$TMP/$be.json" "[c for c in d['configurations'] if c['config']['SHAPE']==$1][0]$2"; }
  expect_eq "$(config 0 "['status']")" ok "$be: SHAPE=0 (default)"
  expect_eq "$(config 1 "['status']")" constraint "$be: SHAPE=1 (2^86 work-items)"
  expect_eq "$(config 1 "['message']")" \
    "@grid(64, 1099511627776, 1099511627776) x @block(64, 1, 1) is more than 2^64 work-items, past what any backend can count" \
    "$be: SHAPE=1 names the limit"
  expect_eq "$(json "$TMP/$be.json" "d['winner']['config']['SHAPE'] != 1")" True "$be: winner within the limits"
  run_status 1 "$KTUNE" tune "$file" --kernel over --quiet --no-db
  expect_contains "$TMP/err" "the default configuration (SHAPE=1) failed with status constraint" "$be: default over the limit"
  expect_contains "$TMP/err" "more than 2^64 work-items" "$be: default over the limit, why"
}

check tests/data/launch_limits.c cpu
check tests/data/launch_limits.cl opencl
expect_eq "$(config 2 "['status']")" constraint "opencl: SHAPE=2 (work-group of 8192)"
expect_contains <(config 2 "['message']") "exceeds the device's maximum of [0-9]* (CL_DEVICE_MAX_WORK_GROUP_SIZE)" "opencl: SHAPE=2 names the limit"
expect_eq "$(config 3 "['status']")" ok "opencl: SHAPE=3"
# `ktune space --device N` counts what the device can launch beforehand:
# SHAPE=1 (past 2^64 work-items) and SHAPE=2 (8192 > PoCL's 4096) do not fit.
run_status 0 "$KTUNE" space tests/data/launch_limits.cl --kernel fill --device 0
expect_contains "$TMP/out" "on device 0 (.*): 2 of the 4 valid configurations fit its limits (4096 threads per block" \
  "space --device counts what fits"
run_status 0 "$KTUNE" space tests/data/launch_limits.cl --kernel fill --device 0 --json
expect_eq "$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if l.startswith('{\"device')][0]['valid_on_device'])" "$TMP/out")" 2 \
  "space --device --json"
run_status 2 "$KTUNE" space tests/data/launch_limits.cl --kernel fill --device 7
expect_contains "$TMP/err" "the opencl backend has 1 device" "space --device past the devices"
finish
