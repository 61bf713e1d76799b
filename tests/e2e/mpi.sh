# Many hosts through MPI (README, "Many hosts"), on one machine over
# loopback: three ranks tune a batch of keys into rank 0's one database with
# the winners one process finds; rank 0 alone prints, one document for every
# key; a rank killed with SIGKILL mid-run loses only its key in flight,
# which another rank tunes again, and nothing committed is lost; rank 0
# killed leaves its database whole; no process or temporary file is left.
# Skipped (77) only in a build without MPI.
. "$(dirname "$0")/common.bash"
case "$("$KTUNE" --version)" in
*"(no MPI)"*)
  echo "skip: this ktune was built without MPI (configure with Open MPI's development files to run it)"
  exit 77
  ;;
esac
command -v mpirun >/dev/null || {
  fail "ktune was built with MPI but mpirun is not installed (Debian: openmpi-bin)"
  finish
}
REP=tests/data/rep.c # a winner no load can hide
mkdir -p "$TMP/tmp"
export TMPDIR="$TMP/tmp"
export KTUNE_MPI_SILENT_S=3
MPIRUN="mpirun --oversubscribe --allow-run-as-root --mca btl self,tcp --mca btl_tcp_if_include lo --enable-recovery"
KEYS="--dim N=60000,120000 --dim M=1,2,3"
winners() { "$KTUNE" cache list --db "$1" --json | python3 -c "
import json, sys
print(sorted((k['sizes'], k['winner'] and k['winner']['config']) for k in json.load(sys.stdin)['keys']))"; }
# Processes of this test still running (their command line names $TMP).
leftovers() { for p in /proc/[0-9]*; do { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "$TMP/" && echo "${p#/proc/}"; done; }

# One process: the reference winners.
run_status 0 "$KTUNE" tune "$REP" $KEYS --db "$TMP/one.db" --quiet
# Three ranks, one database.
run_status 0 timeout 300 $MPIRUN -np 3 "$KTUNE" tune "$REP" $KEYS --db "$TMP/mpi.db" --mpi --json
expect_eq "$(json "$TMP/out" "len(d['keys'])")" 6 "rank 0 prints one document of every key, the others nothing"
expect_eq "$(json "$TMP/out" "sorted(set(str(k['winner']['config']) for k in d['keys']))")" "[\"{'REP': 1}\"]" \
  "every key's winner in the document"
expect_eq "$(winners "$TMP/mpi.db")" "$(winners "$TMP/one.db")" "three ranks store the winners one process finds"
expect_contains "$TMP/err" "6 of 6 keys tuned on 3 ranks, 6 with a winner" "the closing line"
for r in 1 2; do grep -q "on rank $r\$" "$TMP/err" || fail "rank $r was dealt no key: $(cat "$TMP/err")"; done
[ -z "$(ls -A "$TMP/tmp")" ] || fail "temporary files left: $(ls -A "$TMP/tmp")"
# Again: every key is stored, so no rank measures anything again.
run_status 0 timeout 300 $MPIRUN -np 3 "$KTUNE" tune "$REP" $KEYS --db "$TMP/mpi.db" --mpi --json --quiet
expect_eq "$(json "$TMP/out" "[k['reused'] for k in d['keys']]")" "[2, 2, 2, 2, 2, 2]" \
  "a second run takes every key from rank 0's database"

# rank_pid R: the pid of MPI rank R of this test's run.
rank_pid() {
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" || continue
    cmd=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)
    case "$cmd" in *--mpi*"$TMP/"* | *"$TMP/"*--mpi*) echo "${p#/proc/}" && return ;; esac
  done
}
# kill_rank_mid_key R: waits until rank R tunes a key (has a key process), then SIGKILL
# a moment into it, if the key is still in flight then (CI once saw a fast key end within
# the moment, leaving nothing to deal again): else it waits for the rank's next key, for
# as long as the run goes ($TMP/ranks-ended; was 600 scans of /proc, which at a load of 15
# took over 10 minutes after the run had ended).
no_leftovers() { [ -z "$(leftovers)" ]; }
in_flight() { [ -n "$(cat /proc/"$1"/task/*/children 2>/dev/null)" ]; }
kill_rank_mid_key() {
  until [ -e "$TMP/ranks-ended" ]; do
    pid=$(rank_pid "$1")
    if [ -n "$pid" ] && in_flight "$pid"; then
      sleep 0.1
      if in_flight "$pid"; then
        kill -9 "$pid" && echo "$pid" >"$TMP/killed"
        return
      fi
    fi
    sleep 0.05
  done
}

# Rank 1 killed with SIGKILL while it tunes: its key goes to another rank;
# every key gets its winner; nothing rank 0 committed is lost.
rm -f "$TMP/killed" "$TMP/ranks-ended"
KEYS2="--dim N=300000,400000 --dim M=1,2,3"
kill_rank_mid_key 1 &
killer=$!
run_status 0 timeout 300 $MPIRUN -np 3 "$KTUNE" tune "$REP" $KEYS2 --db "$TMP/kill.db" --mpi --json
touch "$TMP/ranks-ended"
wait "$killer"
[ -s "$TMP/killed" ] || fail "rank 1 was never seen tuning a key"
expect_eq "$(json "$TMP/out" "len(d['keys'])")" 6 "a killed rank: every key in the document"
expect_contains "$TMP/err" "again, on rank" "the killed rank's key was dealt again"
expect_contains "$TMP/err" "6 of 6 keys tuned on 3 ranks, 6 with a winner" "a killed rank: the closing line"
expect_eq "$("$KTUNE" cache list --db "$TMP/kill.db" --json | python3 -c "
import json, sys
print(sorted(set(str(k['winner'] and k['winner']['config']) for k in json.load(sys.stdin)['keys'])), end='')")" "['REP=1']" \
  "a killed rank: every key stored with its winner"
expect_eq "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$TMP/kill.db")" ok \
  "a killed rank: the database is whole"
wait_for 2 no_leftovers # the ranks' processes end on their own: awaited
[ -z "$(leftovers)" ] || fail "processes left after a killed rank: $(leftovers | xargs ps -o pid,args -p)"

# Rank 0 killed with SIGKILL: the database keeps what it committed, the
# other ranks see it gone and end, their key processes with them.
rm -f "$TMP/killed" "$TMP/ranks-ended"
cp "$TMP/mpi.db" "$TMP/zero.db"
kill_rank_mid_key 0 &
killer=$!
timeout 300 $MPIRUN -np 3 "$KTUNE" tune "$REP" --dim N=500000,600000 --dim M=1,2 --db "$TMP/zero.db" --mpi \
  --quiet >"$TMP/out" 2>"$TMP/err"
got=$?
touch "$TMP/ranks-ended"
wait "$killer"
[ -s "$TMP/killed" ] || fail "rank 0 was never seen tuning a key"
[ "$got" = 124 ] && fail "the ranks did not end after rank 0 died"
expect_eq "$(winners "$TMP/zero.db" | grep -c "N=60000 M=1")" 1 "rank 0 killed: what it had committed is kept"
expect_eq "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$TMP/zero.db")" ok \
  "rank 0 killed: the database is whole"
wait_for 2 no_leftovers # the ranks' processes end on their own: awaited
[ -z "$(leftovers)" ] || fail "processes left after rank 0 was killed: $(leftovers | xargs ps -o pid,args -p)"

# Without a launcher, --mpi says how to start it, and starts nothing.
run_status 2 "$KTUNE" tune "$REP" --dim N=1000 --db "$TMP/none.db" --mpi
expect_contains "$TMP/err" "mpirun -np R ktune tune ... --mpi" "without a launcher: the fix"
[ ! -e "$TMP/none.db" ] || fail "without a launcher: a database was created"
finish
