# `--json` reports where the run's time went: the wall-clock phases
# (setup, reference, search, finalists, teardown) add up to the wall, and the
# busy figures are consistent with them.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune kernels/c/transpose.c --dim R=256 --dim C=256 --autotune "TILE_R=16" --json --quiet \
  --db "$TMP/t.db"
cp "$TMP/out" "$TMP/t.json"
t='d["timeline"]'
expect_eq "$(json "$TMP/t.json" "sorted($t['phases_s'])")" \
  "['finalists', 'reference', 'search', 'setup', 'teardown']" "phase names"
expect_eq "$(json "$TMP/t.json" "all(v >= 0 for v in $t['phases_s'].values())")" True "phases are not negative"
expect_eq "$(json "$TMP/t.json" "abs(sum($t['phases_s'].values()) - $t['wall_s']) <= 0.02 * $t['wall_s'] + 1e-3")" True \
  "phases add up to the wall"
expect_eq "$(json "$TMP/t.json" "abs($t['phases_s']['setup'] - $t['setup_s']) < 1e-5")" True "setup is the setup phase"
expect_eq "$(json "$TMP/t.json" "$t['phases_s']['search'] > 0 and $t['phases_s']['reference'] > 0")" True \
  "the reference and the search took time"
expect_eq "$(json "$TMP/t.json" "$t['device_busy_s'] <= $t['wall_s'] and $t['compile_busy_s'] > 0")" True \
  "busy figures"
# KTUNE_TRACE=1 tells each step on stderr, from the tuner and from its worker.
KTUNE_TRACE=1 "$KTUNE" tune kernels/c/transpose.c --dim R=64 --dim C=64 --autotune "TILE_R=16" --quiet \
  --db "$TMP/trace.db" >/dev/null 2>"$TMP/trace"
expect_contains "$TMP/trace" "^ktune-trace [0-9.]* [0-9]* setup: worker started" "trace of the tuner"
expect_contains "$TMP/trace" "^ktune-trace [0-9.]* [0-9]* worker: device open" "trace of the worker"
expect_contains "$TMP/trace" "teardown: tensors freed" "trace to the end"
"$KTUNE" tune kernels/c/transpose.c --dim R=64 --dim C=64 --autotune "TILE_R=16" --quiet --db "$TMP/trace2.db" \
  >/dev/null 2>"$TMP/notrace"
grep -q ktune-trace "$TMP/notrace" && fail "trace lines without KTUNE_TRACE"
finish
