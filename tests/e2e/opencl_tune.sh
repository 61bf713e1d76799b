# The shipped OpenCL kernels tune on the first OpenCL device (PoCL in CI):
# every configuration tried runs and verifies, the winner is verified, and the
# configurations' times differ (the space matters). Also: `ktune devices`
# lists the device, and a missing platform or device index is exit 2.
. "$(dirname "$0")/common.bash"

# tune_ok FILE BUDGET [FLAGS...]: a verified winner, every configuration ok,
# and a spread of at least 1.2x between the slowest and fastest median.
tune_ok() {
  file=$1 budget=$2; shift 2
  run_status 0 "$KTUNE" tune "$file" --backend opencl --budget "$budget" --json --quiet "$@"
  cp "$TMP/out" "$TMP/tune.json"
  expect_eq "$(json "$TMP/tune.json" "d['device']['backend']")" opencl "$file: backend"
  expect_eq "$(json "$TMP/tune.json" "d['winner']['status']")" ok "$file: winner verified"
  expect_eq "$(json "$TMP/tune.json" "sorted(set(c['status'] for c in d['configurations']))")" "['ok']" \
    "$file: every configuration ok"
  expect_eq "$(json "$TMP/tune.json" "len(d['configurations']) >= min($budget, d['valid_size'])")" True \
    "$file: the budget was used"
  expect_eq "$(json "$TMP/tune.json" \
    "max(c['median_s'] for c in d['configurations']) / min(c['median_s'] for c in d['configurations']) > 1.2")" \
    True "$file: configurations differ in time"
}

tune_ok kernels/opencl/matmul.cl 12
tune_ok kernels/opencl/reduce.cl 8
tune_ok kernels/opencl/transpose.cl 10 --dim M=1000 --dim N=1030 # sizes not multiples of any tile

# Pinning all but one name: only that name is searched (TILE_TN=1 would make
# 512 work-items, which @where excludes); the default still runs as reference.
run_status 0 "$KTUNE" tune kernels/opencl/matmul.cl --autotune "TILE_M=32 TILE_N=32 TILE_K=16 TILE_TM=2" \
  --json --quiet --no-db
searched="[c['config'] for c in d['configurations'] if not c.get('default')]"
expect_eq "$(json "$TMP/out" "sorted(c['TILE_TN'] for c in $searched)")" "[2, 4]" "pinned search covers TILE_TN"
expect_eq "$(json "$TMP/out" "set(c['TILE_M'] for c in $searched)")" "{32}" "TILE_M pinned"

run_status 0 "$KTUNE" devices
expect_contains "$TMP/out" "opencl:" "devices lists the backend"
expect_contains "$TMP/out" "--device 0" "devices lists an OpenCL device"

run_status 2 "$KTUNE" tune kernels/opencl/reduce.cl --no-db --device 99
expect_contains "$TMP/err" "no device 99" "bad --device named"

mkdir -p "$TMP/no-icd"
OCL_ICD_VENDORS="$TMP/no-icd" run_status 2 "$KTUNE" tune kernels/opencl/reduce.cl --no-db
expect_contains "$TMP/err" "no platform" "missing platform explained"
finish
