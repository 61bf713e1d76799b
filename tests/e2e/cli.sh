# Command-line behaviour: space, pinning, errors with exit status 2.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" space kernels/c/matmul.c --json
expect_eq "$(json "$TMP/out" "[x['choices'] for x in d['dims'] if x['name']=='TILE_N'][0]")" "[16, 32, 64, 128, 256]" "doubling choices"
expect_eq "$(json "$TMP/out" "d['default_flags']")" "-DTILE_M=8 -DTILE_N=16 -DTILE_K=16 -DUNROLL=1" "default as flags"
run_status 0 "$KTUNE" space kernels/c/matmul.c --autotune "TILE_M=32"
expect_contains "$TMP/out" "pinned" "pinned name shown"
# `space` takes the pins `tune` takes, @cluster names included.
run_status 0 "$KTUNE" space kernels/cuda/cluster.cu --autotune "CLUSTER_X=2 BLOCK=128" --json
expect_eq "$(json "$TMP/out" "[(x['name'], x['choices'], x['pinned']) for x in d['cluster_dims']]")" \
  "[('CLUSTER_X', [2], True)]" "cluster pin applied"
expect_eq "$(json "$TMP/out" "(d['size'], d['cluster_size'])")" "(4, 1)" "both stages pinned"
run_status 2 "$KTUNE" space kernels/cuda/cluster.cu --autotune "CLUSTER_X=two"
expect_contains "$TMP/err" "cluster.cu: error: kernel cluster_sum: bad --autotune item 'CLUSTER_X=two': expected NAME=VALUE" \
  "bad pin: what, where, how"
run_status 2 "$KTUNE" space kernels/cuda/cluster.cu --autotune "CLUSTER_Y=2"
expect_contains "$TMP/err" "unknown name CLUSTER_Y in --autotune; the kernel declares: BLOCK, ITEMS, CLUSTER_X" \
  "both stages' names listed"
run_status 2 "$KTUNE" tune kernels/c/matmul.c --autotune "TILE_Q=4" --no-db
expect_contains "$TMP/err" "TILE_Q" "unknown pinned name named"
expect_contains "$TMP/err" "TILE_M, TILE_N, TILE_K, UNROLL" "declared names listed"
run_status 2 "$KTUNE" tune kernels/c/nonexistent.c
run_status 2 "$KTUNE" tune kernels/c/matmul.c --dim Q=3 --no-db
expect_contains "$TMP/err" "M, K, N" "runtime sizes listed"
run_status 2 "$KTUNE" tune kernels/c/matmul.c --dim M=abc --no-db
run_status 2 "$KTUNE" tune kernels/c/matmul.c --budget lots --no-db
run_status 2 "$KTUNE" tune kernels/c/matmul.c --backend cuda --no-db
run_status 2 "$KTUNE" frobnicate
run_status 2 "$KTUNE" tune kernels/c/matmul.c --frob
printf '// @autotune(A in [1, 2])\n// @kernel f(x: out tensor<f32>[N])\n// @dims(N = 4)\nvoid f(float *x) { x[0] = A; }\n// @autotune(B in [1, 2])\n// @kernel g(x: out tensor<f32>[N])\n// @dims(N = 4)\nvoid g(float *x) { x[0] = B; }\n' >"$TMP/two.c"
run_status 2 "$KTUNE" space "$TMP/two.c"
expect_contains "$TMP/err" "f, g" "ambiguous kernel lists the kernels"
run_status 0 "$KTUNE" space "$TMP/two.c" --kernel g
printf '// @autotune(A in [1, 2], A in [3])\n// @kernel f(x: out tensor<f32>[N])\nvoid f(float *x) {}\n' >"$TMP/dup.c"
run_status 2 "$KTUNE" space "$TMP/dup.c"
expect_contains "$TMP/err" "dup.c:1:" "error points at the file and line"
run_status 0 "$KTUNE" bench kernels/c/matmul.c --autotune "TILE_M=32 TILE_N=128 TILE_K=64 UNROLL=4" --dim M=128 --dim N=128 --dim K=128 --json --quiet --no-db
expect_eq "$(json "$TMP/out" "len(d['configurations'])")" 2 "bench times the pinned configuration beside the default"
# A pinned value outside the declared choices is tried as given, with a warning.
run_status 0 "$KTUNE" bench kernels/c/matmul.c --autotune "TILE_M=24 TILE_N=16 TILE_K=16 UNROLL=1" --dim M=96 --dim N=64 --dim K=64 --json --no-db
expect_contains "$TMP/err" "warning: TILE_M=24 is not among its declared choices (8, 16, 32, 64); using it anyway" \
  "an undeclared pinned value is named with the choices"
expect_eq "$(json "$TMP/out" "sorted(c['config']['TILE_M'] for c in d['configurations'])")" "[8, 24]" "the undeclared value is the one timed"
# Only a time budget: a search strategy picks what to measure, not index order.
run_status 0 "$KTUNE" tune kernels/c/matmul.c --budget 3s --dim M=64 --dim N=64 --dim K=64 --json --quiet --no-db
expect_eq "$(json "$TMP/out" "d['strategy'] != 'exhaustive' and 'time budget' in d['strategy_reason']")" True "time budget uses a search strategy"
finish
