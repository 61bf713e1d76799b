# Interruption: SIGINT (Ctrl-C, sent to the whole process group as a
# terminal does) or SIGTERM during `ktune tune` stops within a second (times
# SLOWDOWN, common.bash: the broken stops below take 30 s or more) with
# status 130, keeps every finished measurement in the database, kills the
# worker and the compilers, leaves no zombie and no temporary file, and a
# restarted tuning resumes from the database and finds the winner a tuning
# left alone finds.
. "$(dirname "$0")/common.bash"
SLOW=tests/data/slow.c
# N=128 doubles every launch of slow.c (about 4 s a tuning here) for the
# Ctrl-C in the middle of the search: with N=64 the finalist rounds, which
# stop once the winner is apart, let a tuning end before it comes at 2.5 s.
MID="--dim N=128"
# The interruptions land mid-run because compiling takes its time: a binary
# cache filled by the first tuning would let the later ones end before them.
export KTUNE_BINARY_CACHE=off
LIMIT_MS=$((${KTUNE_INTERRUPT_MS:-1000} * SLOWDOWN))

# Every process in the session of PID (the tuner, its worker, compilers).
session_pids() { ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }

# Whether every process of PIDS has ended (a zombie has).
all_ended() {
  for p in $pids; do
    case "$(ps -o stat= -p "$p" 2>/dev/null)" in "" | Z*) ;; *) return 1 ;; esac
  done
}

EXTRA=""
# interrupt NAME SIGNAL EVENT DB [ENV...]: starts a tuning of slow.c in its
# own session with a fresh TMPDIR and its trace on (KTUNE_TRACE), sends
# SIGNAL to its process group once the command EVENT succeeds (the moment the
# case is about: not a fixed wait, which a loaded machine outruns), and
# checks the stop: time, status, TMPDIR, processes.
interrupt() {
  name=$1 sig=$2 event=$3 db=$4
  shift 4
  tmpdir="$TMP/$name.tmp"
  mkdir -p "$tmpdir"
  env TMPDIR="$tmpdir" KTUNE_TRACE=1 "$@" setsid "$KTUNE" tune $SLOW --db "$db" $EXTRA >"$TMP/$name.out" 2>"$TMP/$name.err" &
  pid=$!
  # shellcheck disable=SC2086
  wait_for 30 eval "$event || ! kill -0 $pid 2>/dev/null"
  $event || fail "$name: '$event' did not happen while it ran: $(tail -3 "$TMP/$name.err")"
  pids=$(session_pids "$pid")
  [ "$(echo "$pids" | wc -w)" -ge 2 ] || fail "$name: expected a worker beside the tuner, saw: $pids"
  start=$(date +%s%N)
  kill -s "$sig" -- "-$pid"
  wait "$pid"
  got=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  expect_eq "$got" 130 "$name: exit status"
  [ "$ms" -lt "$LIMIT_MS" ] || fail "$name: took $ms ms to stop after SIG$sig (limit $LIMIT_MS)"
  expect_contains "$TMP/$name.err" "interrupted" "$name: says it was interrupted"
  wait_for 5 all_ended # SIGKILL is delivered asynchronously
  # None runs on; a dead grandchild (a compiler's cc1, killed with its group)
  # is the init process's to reap, but a child of ours must have been reaped.
  for p in $pids; do
    state=$(ps -o stat= -p "$p" 2>/dev/null)
    parent=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
    case "$state" in
    "") ;;
    Z*) case " $(echo $pids) $$ " in *" $parent "*) fail "$name: zombie $p of $parent" ;; esac ;;
    *) fail "$name: process $p is still there: $(ps -o pid=,stat=,args= -p "$p")" ;;
    esac
  done
  [ -z "$(ls -A "$tmpdir")" ] || fail "$name: left in TMPDIR: $(ls -A "$tmpdir")"
}

# results DB: the number of stored results (ok or not) over every key.
results() {
  "$KTUNE" cache export --db "$1" >"$TMP/export.json" || { echo 0; return; }
  json "$TMP/export.json" "sum(len(k['results']) for k in d['keys'])"
}
winner() { json "$1" "' '.join('%s=%s' % kv for kv in sorted(d['winner']['config'].items()))"; }
# won_or_slower FILE CONFIG WHAT: CONFIG (a --json config) won in FILE, or
# FILE's own figures show it measured ok and slower than the winner: on a
# loaded machine slow.c's 4 ms busy waits, preempted, passed the 20 ms ones
# (seen at a load of 11-20, alone and resumed). A run that lost the
# configuration, or measured it faster and chose another, fails.
won_or_slower() {
  expect_eq "$(json "$1" "d['winner']['config'] == $2 or [c['status'] == 'ok' and c['median_s'] > d['winner']['median_s']
    for c in d['configurations'] if c['config'] == $2] == [True]")" True \
    "$3: $(winner "$1") won, and $2 was not measured slower"
}

# The reference answer: a tuning left alone.
run_status 0 "$KTUNE" tune $SLOW $MID --db "$TMP/alone.db" --json --quiet
cp "$TMP/out" "$TMP/alone.json"
won_or_slower "$TMP/alone.json" "{'SLOW': 2, 'V': 1}" "winner of a tuning left alone"

# Ctrl-C in the middle of the search, once the worker has measured four
# configurations (its trace lines: a cheap poll; asking the database took a
# loaded machine longer than the whole tuning): two at least are stored by
# then, and kept (a tuning that ignored the signal would end with status 0).
EXTRA=$MID
four_measured() { [ "$(grep -c 'worker: measured' "$TMP/sigint.err")" -ge 4 ]; }
interrupt sigint INT four_measured "$TMP/resumed.db"
EXTRA=""
kept=$(results "$TMP/resumed.db")
[ "$kept" -ge 2 ] || fail "sigint: only $kept results kept in the database"
"$KTUNE" cache export --db "$TMP/resumed.db" >"$TMP/before.json"
# Restarted: resumes (reuses what was kept) and finds the same winner.
run_status 0 "$KTUNE" tune $SLOW $MID --db "$TMP/resumed.db" --json --quiet
cp "$TMP/out" "$TMP/resumed.json"
# The same winner as the alone run's (or that one measured slower here).
won_or_slower "$TMP/resumed.json" "$(json "$TMP/alone.json" "d['winner']['config']")" "winner after an interrupted run"
reused=$(json "$TMP/resumed.json" "d['reused']")
[ "$reused" -ge "$((kept - 1))" ] || fail "the restarted run reused $reused results, $kept were kept"
# What was kept is not measured again: same records, same timestamps,
# except the finalists, whose interleaved rounds' figures are recorded.
"$KTUNE" cache export --db "$TMP/resumed.db" >"$TMP/after.json"
python3 - "$TMP/before.json" "$TMP/after.json" "$TMP/resumed.json" <<'EOF' || fail "kept results were measured again"
import json, sys
before, after, resumed = (json.load(open(p)) for p in sys.argv[1:4])
finalists = {" ".join("%s=%s" % kv for kv in c["config"].items()) for c in resumed["configurations"]
             if "final_median_s" in c}
# The default configuration is the reference: every run measures it again.
stamp = lambda d: {(r["config"], r["timestamp"]) for k in d["keys"] for r in k["results"]
                   if r["config"] != "SLOW=40 V=1" and r["config"] not in finalists}
missing = stamp(before) - stamp(after)
if missing: print("measured again:", sorted(missing), file=sys.stderr)
sys.exit(1 if missing else 0)
EOF

# SIGTERM while the worker is inside one long run (the default's first
# launch, 40 s, starts once the worker has loaded it): the wait in the tuner
# gives up, the worker is killed; waiting for the launch would take 40 s.
EXTRA="--dim N=64000"
default_loaded() { grep -q "worker: reference loaded" "$TMP/sigterm.err"; }
interrupt sigterm TERM default_loaded "$TMP/term.db"
EXTRA=""

# Ctrl-C while compilers run: a C compiler that takes 30 s is killed (it
# answers --version at once: the worker asks it that when it starts), once
# one has started.
printf '#!/bin/sh\ncase "$*" in *--version*) exec cc "$@" ;; esac\ntouch "%s"\nsleep 30\nexec cc "$@"\n' \
  "$TMP/cc-started" >"$TMP/slowcc"
chmod +x "$TMP/slowcc"
interrupt compiling INT "test -e $TMP/cc-started" "$TMP/compiling.db" CC="$TMP/slowcc"
[ -z "$(pgrep -f "$TMP/slowcc")" ] || fail "compiling: the compiler is still running"
expect_eq "$(results "$TMP/compiling.db")" 0 "compiling: nothing was measured, nothing stored"
finish
