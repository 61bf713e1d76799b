# A worker killed from outside is not the configuration's fault: the run is
# retried once in a fresh worker; killed every time, it is recorded with
# cause "outside" and measured again by the next run. --retry-failed
# measures the kernel's own failures again. What --json says of every
# configuration is what the database keeps, finalists that crash included.
. "$(dirname "$0")/common.bash"
status() { json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
field() { json "$TMP/out" "[c.get('$2') for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
# kill_workers PIDFILE TUNER: SIGKILL every pid written to PIDFILE while it
# is still one of this test's workers (its environment names PIDFILE: a pid
# reused since is left alone), for as long as the tuning TUNER runs; a fixed
# 8 or 14 s missed the retry on a loaded machine, which then slept its 5 s out.
kill_workers() {
  while kill -0 "$2" 2>/dev/null; do
    [ -f "$1" ] && while read -r pid; do
      { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "KILLABLE_PIDS=$1" && kill -9 "$pid" 2>/dev/null
    done <"$1"
    sleep 0.2
  done
}
# The database and the output agree on every configuration's status.
agree() {
  "$KTUNE" cache show --kernel scale --format json >"$TMP/db.json" || fail "cache show"
  python3 - "$TMP/out" "$TMP/db.json" <<'PY' || fail "--json and the database disagree ($1)"
import json, sys
out = json.load(open(sys.argv[1]))
db = json.load(open(sys.argv[2]))
stored = {r["config"]: r["status"] for k in db["keys"] for r in k["results"]}
for c in out["configurations"]:
    name = " ".join(f"{k}={v}" for k, v in c["config"].items())
    if stored.get(name) != c["status"]:
        sys.exit(f"{name}: --json {c['status']}, database {stored.get(name)}")
PY
}

# Killed once: the retry in a fresh worker measures it.
export KILLABLE_PIDS="$TMP/pids" KILLABLE_ONCE="$TMP/once" KILLABLE_LAST="$TMP/last"
"$KTUNE" tune tests/data/killable.c --json --quiet >"$TMP/out" 2>"$TMP/err" &
tuner=$!
kill_workers "$TMP/pids" $tuner
wait $tuner || fail "tuning with a worker killed once: exit $?"
[ -s "$TMP/pids" ] || fail "VARIANT=1 never ran its sleeping branch"
expect_eq "$(status 1)" ok "VARIANT=1 killed once from outside"
expect_eq "$(status 3)" runtime "VARIANT=3 (crashes)"
expect_eq "$(field 3 cause)" None "VARIANT=3 failed by its own doing"
expect_eq "$(status 2)" runtime "VARIANT=2 (crashes in the finalist rounds)"
expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT'] in (0, 1, 4)")" True "winner"
agree "killed once"

# Killed every time: recorded as not its doing, and measured again next time.
rm -f "$TMP/results.db"* "$TMP/pids" "$TMP/last"
unset KILLABLE_ONCE
"$KTUNE" tune tests/data/killable.c --json --quiet >"$TMP/out" 2>"$TMP/err" &
tuner=$!
kill_workers "$TMP/pids" $tuner
wait $tuner || fail "tuning with a worker killed every time: exit $?"
expect_eq "$(status 1)" runtime "VARIANT=1 killed every time"
expect_eq "$(field 1 cause)" outside "VARIANT=1's cause"
case "$(field 1 message)" in *SIGKILL*twice*) ;; *) fail "VARIANT=1's message: $(field 1 message)" ;; esac
agree "killed every time"
"$KTUNE" cache show --kernel scale --format json | grep -q '"cause": "outside"' || fail "cause not stored"
unset KILLABLE_PIDS
run_status 0 "$KTUNE" tune tests/data/killable.c --json --quiet
expect_eq "$(status 1)" ok "VARIANT=1 measured again by the next run"
expect_eq "$(field 1 reused)" None "VARIANT=1 not taken from the database"
expect_eq "$(field 3 reused)" True "VARIANT=3's own failure reused"
run_status 0 "$KTUNE" tune tests/data/killable.c --json --quiet --retry-failed
expect_eq "$(field 3 reused)" None "--retry-failed measures VARIANT=3 again"
expect_eq "$(status 3)" runtime "VARIANT=3 still crashes"
finish
