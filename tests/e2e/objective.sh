# --objective on the CPU backend, with RAPL faked: a powercap tree of one
# package ($KTUNE_POWERCAP_ROOT) whose counter a helper advances as a
# busy package's would (and wraps at its range). The tuning reports
# joules per launch and watts, ranks by energy, and stores its winner under
# the objective beside the time winner, each found by its own objective.
. "$(dirname "$0")/common.bash"
# Three configurations that compute the same, the larger R the longer.
K="$TMP/spin.c"
cat >"$K" <<'KERNEL'
// @autotune(R in [1, 4, 16])
// @kernel spin(x: in tensor<f32>[N], y: out tensor<f32>[N])
// @dims(N = 256)
void spin(const float *x, float *y) {
  volatile float s = 0;
  for (int r = 0; r < R * 2000; r++) s += (float)r;
  for (int i = 0; i < 256; i++) y[i] = x[i] + 1.0f;
}
KERNEL
PC="$TMP/powercap"
mkdir -p "$PC/intel-rapl:0"
echo 100000000 >"$PC/intel-rapl:0/max_energy_range_uj"
echo 0 >"$PC/intel-rapl:0/energy_uj"
# 10 uJ a step, about 2 steps a millisecond: tens of watts, wrapping
# every few seconds. Written whole (temp + rename) so a read never sees half.
( uj=0; while :; do uj=$(((uj + 10000) % 100000000)); echo $uj >"$PC/c.tmp"; mv "$PC/c.tmp" "$PC/intel-rapl:0/energy_uj"; done ) &
counter=$!
trap 'kill $counter 2>/dev/null; wait $counter 2>/dev/null; rm -rf "$TMP"' EXIT
export KTUNE_POWERCAP_ROOT=$PC

run_status 0 "$KTUNE" tune $K --objective energy --json
cp "$TMP/out" "$TMP/energy.json"
expect_eq "$(json "$TMP/energy.json" 'd["objective"]')" energy "the result says its objective"
expect_eq "$(json "$TMP/energy.json" 'all(c["measurement"]["power_mean_w"] > 0 for c in d["configurations"] if c["status"] == "ok")')" True \
  "every measured configuration has its mean power"
expect_eq "$(json "$TMP/energy.json" 'abs(d["winner_joules_per_launch"] - d["winner_watts"] * d["winner"].get("final_median_s", d["winner"]["median_s"])) < 1e-3 * d["winner_joules_per_launch"] + 1e-12')" True \
  "joules per launch are the mean power times the time (to the printed digits)"
expect_eq "$(json "$TMP/energy.json" 'min((c["measurement"]["energy_per_launch_j"] for c in d["configurations"] if c["status"] == "ok"), default=None) == d["winner"]["measurement"]["energy_per_launch_j"]')" True \
  "the winner spends the least energy"

run_status 0 "$KTUNE" tune $K --objective energy
expect_contains "$TMP/out" "objective energy: ranked by joules per launch" "the table says what it ranks by"
grep -Eq '^  #1 .* [0-9.]+ [mun]?J [0-9]+ W' "$TMP/out" || { fail "the table's rows show J and W:"; cat "$TMP/out" >&2; }

run_status 0 "$KTUNE" tune $K
winners() { python3 -c "import sqlite3,sys; print(' '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT objective FROM winners ORDER BY objective')))" "$KTUNE_DB"; }
expect_eq "$(winners)" "energy time" "a winner per objective"
run_status 0 "$KTUNE" tune $K --objective edp
expect_eq "$(winners)" "edp energy time" "edp's winner beside them"
# A database a time tuning filled first: its samples span too little of the
# counter to tell energy, so an energy tuning measures each configuration
# again instead of ranking unmeasured ones last.
KTUNE_DB="$TMP/time_first.db" run_status 0 "$KTUNE" tune $K
KTUNE_DB="$TMP/time_first.db" run_status 0 "$KTUNE" tune $K --objective energy --json
cp "$TMP/out" "$TMP/time_first.json"
expect_eq "$(json "$TMP/time_first.json" 'all("power_mean_w" in c["measurement"] for c in d["configurations"] if c["status"] == "ok")')" True \
  "after a time tuning, every configuration measured again for its energy"
finish
