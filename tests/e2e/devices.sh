# Every device of a host (README, "Every GPU of a host"): on PoCL with two
# OpenCL devices, `--device all` deals the keys of a sweep to both (the
# progress lines and each key's document say which), gives the winners a run
# on one device gives, prints the documents and the tables in key order;
# devices of one model share results (a key measured on device 0 is not
# measured again on device 1), devices of two models get keys of their own
# (two device names in the database); the binary cache compiles each
# configuration once for both; SIGTERM or Ctrl-C stops every key process.
. "$(dirname "$0")/common.bash"
CL=tests/data/devices.cl
TWO="pthread pthread"
POCL_DEVICES="$TWO" "$KTUNE" devices --json >"$TMP/devices.json" 2>/dev/null
n=$(json "$TMP/devices.json" "sum(len(b['devices']) for b in d['backends'] if b['backend'] == 'opencl')" 2>/dev/null)
[ "$n" = 2 ] || { echo "skipped: POCL_DEVICES=\"$TWO\" does not give two OpenCL devices (PoCL missing?)"; exit 77; }

keys_of() { json "$1" "[k['sizes'] for k in d['keys']]"; }
winners() { json "$1" "[' '.join('%s=%s' % kv for kv in sorted(k['winner']['config'].items())) for k in d['keys']]"; }

# Four keys over both devices, given out of size order.
SIZES="N=49152,16384,32768,8192"
POCL_DEVICES="$TWO" run_status 0 "$KTUNE" tune $CL --dim $SIZES --device all --db "$TMP/two.db" --json
cp "$TMP/out" "$TMP/two.json"
cp "$TMP/err" "$TMP/two.err"
expect_eq "$(keys_of "$TMP/two.json")" "['N=49152', 'N=16384', 'N=32768', 'N=8192']" "--device all: the keys in key order"
expect_eq "$(json "$TMP/two.json" "sorted(set(k['device']['index'] for k in d['keys']))")" "[0, 1]" \
  "--device all: both devices measured keys"
expect_eq "$(json "$TMP/two.json" "[k['device']['index'] for k in d['keys']][:2]")" "[0, 1]" \
  "the first two keys start on devices 0 and 1"
expect_contains "$TMP/two.err" "key 1/4: N=49152 on device 0" "the progress: key 1 started on device 0"
expect_contains "$TMP/two.err" "key 2/4: N=16384 on device 1" "the progress: key 2 started on device 1"
expect_contains "$TMP/two.err" "key 2/4: N=16384 ended on device 1 after [0-9.]* s: tuned 3 configurations .*: WORK=1" \
  "the progress: key 2 ended, its winner"
expect_contains "$TMP/two.err" "4 of 4 keys tuned, 4 with a winner" "the closing line"
expect_eq "$(json "$TMP/two.json" "sum(k['binary_cache']['compiled'] for k in d['keys'])")" 3 \
  "each configuration compiled once for both devices"
# The key processes' own progress stays out of the terminal (--quiet), so
# nothing but the dealer's lines and the closing line is there.
bad_lines=$(grep -v -E '^ktune: (key [0-9]+/4: |4 of 4 keys)' "$TMP/two.err")
[ -z "$bad_lines" ] || fail "lines on stderr beside the dealer's: $bad_lines"

# The same keys on one device: the same winners.
POCL_DEVICES="$TWO" run_status 0 "$KTUNE" tune $CL --dim $SIZES --device 0 --db "$TMP/one.db" --json --quiet
expect_eq "$(winners "$TMP/out")" "$(winners "$TMP/two.json")" "the winners of one device"
expect_eq "$(winners "$TMP/two.json")" "['WORK=1', 'WORK=1', 'WORK=1', 'WORK=1']" "the winners"

# Tables in key order too (the keys are stored: the second run measures
# nothing but the default, the reference).
POCL_DEVICES="$TWO" run_status 0 "$KTUNE" tune $CL --dim $SIZES --device 0,1 --db "$TMP/two.db" --quiet
expect_eq "$(grep -oE 'sizes: N=[0-9]+' "$TMP/out" | tr '\n' ' ')" \
  "sizes: N=49152 sizes: N=16384 sizes: N=32768 sizes: N=8192 " "the tables in key order"

# Devices of one model share results: device 1 alone measures nothing that
# device 0 or 1 measured (only the default runs again, as the reference).
POCL_DEVICES="$TWO" run_status 0 "$KTUNE" tune $CL --dim $SIZES --device 1 --db "$TMP/two.db" --json --quiet
expect_eq "$(json "$TMP/out" "[k['reused'] for k in d['keys']]")" "[2, 2, 2, 2]" "one model: results shared"

# Devices of two models: keys of their own, each model's name in the database.
POCL_DEVICES="pthread basic" run_status 0 "$KTUNE" tune $CL --dim N=16384,8192 --device all --db "$TMP/mixed.db" \
  --json --quiet
expect_eq "$(json "$TMP/out" "len(set(k['device']['name'] for k in d['keys']))")" 2 "two models: two device names"
"$KTUNE" cache list --db "$TMP/mixed.db" >"$TMP/list"
expect_contains "$TMP/list" "basic-" "the database: the basic device's key"
expect_contains "$TMP/list" "pthread-" "the database: the pthread device's key"
# A key measured on one model is measured again on the other.
POCL_DEVICES="pthread basic" run_status 0 "$KTUNE" tune $CL --dim N=16384,8192 --device 1,0 --db "$TMP/mixed.db" \
  --json --quiet
expect_eq "$(json "$TMP/out" "[k['reused'] for k in d['keys']]")" "[0, 0]" "two models: nothing shared"

# One key with several devices: one device measures it.
POCL_DEVICES="$TWO" run_status 0 "$KTUNE" tune $CL --dim N=4096 --device all --db "$TMP/single.db" --json
expect_eq "$(json "$TMP/out" "d['device']['index']")" 0 "one key: on the first device"
expect_contains "$TMP/err" "one key: measured on device 0 alone" "one key: it says so"

# Interruption: SIGTERM to the dealer alone, or SIGINT to the whole group
# (Ctrl-C): status 130, and no process of the run is left.
# 3 s x SLOWDOWN (common.bash), but below the dealer's 10 s, whose kill must
# not be needed.
STOP_LIMIT_MS=$((${KTUNE_INTERRUPT_MS:-3000} * SLOWDOWN))
[ "$STOP_LIMIT_MS" -lt 8000 ] || STOP_LIMIT_MS=8000
session_pids() { ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }
# Whether every process of $pids has ended (a zombie has).
all_ended() {
  for p in $pids; do
    case "$(ps -o stat= -p "$p" 2>/dev/null)" in "" | Z*) ;; *) return 1 ;; esac
  done
}
interrupt() {
  name=$1 target=$2 sig=$3
  POCL_DEVICES="$TWO" KTUNE_BINARY_CACHE=off setsid "$KTUNE" tune $CL --dim N=2000000,2100000,2200000 \
    --device all --db "$TMP/$name.db" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  pid=$!
  for _ in $(seq $((100 * SLOWDOWN))); do # both key processes started (their workers too, soon after)
    [ "$(grep -c ' on device ' "$TMP/$name.err")" -ge 2 ] && break
    sleep 0.1
  done
  sleep 1.5
  pids=$(session_pids "$pid")
  [ "$(echo "$pids" | wc -w)" -ge 3 ] || fail "$name: expected key processes beside the dealer, saw: $pids"
  start=$(date +%s%N)
  if [ "$target" = group ]; then kill -s "$sig" -- "-$pid"; else kill -s "$sig" "$pid"; fi
  wait "$pid"
  got=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  if [ "$sig" = KILL ]; then
    # The dealer cannot stop its key processes: each asked for SIGTERM at its
    # parent's death (cli/key_parent.c).
    expect_eq "$got" 137 "$name: exit status"
    wait_for 2 all_ended
  else
    expect_eq "$got" 130 "$name: exit status"
    # Each key process stops within 50 ms of the signal (docs/FAULTS.md); the
    # dealer kills those left after 10 s, which must not be needed.
    [ "$ms" -lt "$STOP_LIMIT_MS" ] || fail "$name: took $ms ms to stop after SIG$sig (limit $STOP_LIMIT_MS)"
    expect_contains "$TMP/$name.err" "interrupted" "$name: says it was interrupted"
    wait_for 1 all_ended
  fi
  for p in $pids; do
    state=$(ps -o stat= -p "$p" 2>/dev/null)
    case "$state" in "" | Z*) ;; *) fail "$name: process $p is still there: $(ps -o pid=,stat=,args= -p "$p")" ;; esac
  done
}
interrupt sigterm dealer TERM
interrupt sigint group INT
interrupt sigkill dealer KILL

# MPI with --device all: each rank keeps a key in flight on each of its
# devices (two ranks x two PoCL devices here), into rank 0's one database.
if command -v mpirun >/dev/null && ! "$KTUNE" --version | grep -q "(no MPI)"; then
  mkdir -p "$TMP/mpitmp"
  POCL_DEVICES="$TWO" TMPDIR="$TMP/mpitmp" run_status 0 timeout 300 mpirun --oversubscribe --allow-run-as-root \
    --mca btl self,tcp --mca btl_tcp_if_include lo --enable-recovery -np 2 \
    "$KTUNE" tune $CL --dim $SIZES --device all --mpi --db "$TMP/mpi.db" --json
  expect_eq "$(keys_of "$TMP/out")" "['N=49152', 'N=16384', 'N=32768', 'N=8192']" "--mpi --device all: every key, in key order"
  expect_eq "$(json "$TMP/out" "sorted(set(k['device']['index'] for k in d['keys']))")" "[0, 1]" \
    "--mpi --device all: both devices of the ranks measured keys"
  expect_eq "$(winners "$TMP/out")" "$(winners "$TMP/two.json")" "--mpi --device all: the winners of one process"
fi
finish
