# A hostile environment: a hang-up stops a tuning like Ctrl-C (status 130,
# results kept, temporary files removed); the temporary folder of a tuner
# killed with SIGKILL is removed by the next run, and nobody else's is; a
# missing, read-only or relative TMPDIR is bad input (exit 2, naming
# TMPDIR); a results database whose folder vanishes or whose disk fills
# during a tuning is reported and the exit status is 2, and no empty
# database file is left behind.
. "$(dirname "$0")/common.bash"
SLOW=tests/data/slow.c
chmod 755 "$TMP" # the read-only case runs ktune as another user when root

# Starts a tuning of slow.c in its own session with TMPDIR $1 and database
# $2 (more options after); sets $pid.
start_slow() {
  tmpdir=$1 db=$2
  shift 2
  TMPDIR="$tmpdir" setsid "$KTUNE" tune $SLOW --db "$db" "$@" >"$TMP/slow.out" 2>"$TMP/slow.err" &
  pid=$!
}
results() {
  "$KTUNE" cache export --db "$1" >"$TMP/export.json" || { echo 0; return; }
  json "$TMP/export.json" "sum(len(k['results']) for k in d['keys'])"
}
# Whether DB holds a result yet: the tuning has its database open and
# writing (the moment to act, not a fixed sleep that a loaded machine outruns).
stored_one() { [ "$(results "$1" 2>/dev/null)" -ge 1 ]; }
# Breaks the environment of the running tuning (session $pid) with the
# command given, while the whole session is stopped: the tuning cannot end
# between the check that it is under way and the break, however loaded the
# machine (a make check under stress-ng saw a tuning end first: exit 0).
while_stopped() {
  kill -STOP -- "-$pid"
  "$@"
  kill -CONT -- "-$pid"
}
# Whether no process of session $1 runs any more (a zombie is init's).
session_ended() {
  for p in $(ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'); do
    case "$(ps -o stat= -p "$p" 2>/dev/null)" in "" | Z*) ;; *) return 1 ;; esac
  done
}
ns=$(stat -L -c %i /proc/self/ns/pid)

# --- SIGHUP, as when the terminal closes: like SIGINT.
mkdir "$TMP/hup.tmp"
start_slow "$TMP/hup.tmp" "$TMP/hup.db" --quiet
wait_for 10 stored_one "$TMP/hup.db" || fail "SIGHUP: nothing stored before the signal"
kill -HUP -- "-$pid"
wait "$pid"
expect_eq "$?" 130 "SIGHUP: exit status"
expect_contains "$TMP/slow.err" "interrupted; the finished measurements are kept" "SIGHUP: says so"
[ -z "$(ls -A "$TMP/hup.tmp")" ] || fail "SIGHUP: left in TMPDIR: $(ls -A "$TMP/hup.tmp")"
[ "$(results "$TMP/hup.db")" -ge 1 ] || fail "SIGHUP: no result kept"

# --- SIGKILL leaves the folder; the next run removes it, and only it.
mkdir "$TMP/kill.tmp"
start_slow "$TMP/kill.tmp" "$TMP/kill.db" --quiet
killed=$pid
wait_for 10 stored_one "$TMP/kill.db" # the tuning well under way, its folder in use
left=$(ls "$TMP/kill.tmp")
case "$left" in "ktune-$ns-$killed-"??????) ;; *) fail "SIGKILL: the tuner's folder is '$left', want ktune-$ns-$killed-XXXXXX" ;; esac
kill -KILL "$pid"
wait "$pid" 2>/dev/null
wait_for 5 session_ended "$killed" # the worker dies with the tuner (PR_SET_PDEATHSIG)
[ -d "$TMP/kill.tmp/$left" ] || fail "SIGKILL: expected the killed tuner's folder to stay behind"
# Folders that must stay: a live process's (this shell), another pid
# namespace's, another user's (when root can make one), a name not ktune's.
keep="ktune-$ns-$$-aaaaaa ktune-1-$killed-bbbbbb notktune-$ns-$killed-cccccc"
for d in $keep; do mkdir "$TMP/kill.tmp/$d" && touch "$TMP/kill.tmp/$d/file"; done
if [ "$(id -u)" = 0 ]; then
  mkdir "$TMP/kill.tmp/ktune-$ns-$killed-dddddd" && chown 65534 "$TMP/kill.tmp/ktune-$ns-$killed-dddddd"
  keep="$keep ktune-$ns-$killed-dddddd"
fi
TMPDIR="$TMP/kill.tmp" run_status 0 "$KTUNE" tune $SLOW --no-db --quiet --autotune "SLOW=2 V=1"
[ -e "$TMP/kill.tmp/$left" ] && fail "SIGKILL: the next run left the dead tuner's folder $left"
for d in $keep; do [ -d "$TMP/kill.tmp/$d" ] || fail "SIGKILL: the next run removed $d, which is not a dead tuner's"; done

# --- TMPDIR missing, relative, read-only: bad input naming TMPDIR.
TMPDIR="$TMP/nonexistent" run_status 2 "$KTUNE" tune $SLOW --no-db --quiet
expect_contains "$TMP/err" "cannot create a private temporary folder in TMPDIR=$TMP/nonexistent: No such file or directory; set TMPDIR to an existing, writable directory" "missing TMPDIR"
TMPDIR=relative/tmp run_status 2 "$KTUNE" tune $SLOW --no-db --quiet
expect_contains "$TMP/err" "TMPDIR=relative/tmp is not an absolute path" "relative TMPDIR"
mkdir -m 555 "$TMP/ro"
as_user=""
[ "$(id -u)" = 0 ] && as_user="setpriv --reuid=65534 --regid=65534 --clear-groups" # root writes anywhere
# --no-binary-cache: the cache folder is root's, which the binary cache refuses to trust as another user
TMPDIR="$TMP/ro" run_status 2 $as_user "$KTUNE" tune $SLOW --no-db --no-binary-cache --quiet
expect_contains "$TMP/err" "cannot create a private temporary folder in TMPDIR=$TMP/ro: Permission denied" "read-only TMPDIR"

# --- The database's folder removed during the tuning. Launches 5 times
# longer than the default's (N=320), so that the tuning still has seconds
# of writes ahead when the folder goes: at N=64 the first stored result
# could be seen only after the last (a make check under stress-ng: exit 0).
mkdir "$TMP/dbdir" "$TMP/vanish.tmp"
start_slow "$TMP/vanish.tmp" "$TMP/dbdir/results.db" --quiet --json --dim N=320
wait_for 10 stored_one "$TMP/dbdir/results.db" || fail "vanished database: nothing stored before it vanished"
while_stopped rm -rf "$TMP/dbdir"
wait "$pid"
expect_eq "$?" 2 "vanished database: exit status"
expect_contains "$TMP/slow.err" "writes to the results database failed" "vanished database: reported"
expect_contains "$TMP/slow.err" "the file was removed or moved while ktune used it" "vanished database: why"
# The best of what was measured before the writes failed: SLOW=2 only when
# the folder went after it was measured (at 1.5 s on a quiet machine, not
# always on a loaded one).
expect_eq "$(json "$TMP/slow.out" "d['winner']['status'] == 'ok' and d['winner']['config'] in
  [c['config'] for c in d['configurations'] if c['status'] == 'ok']")" True "vanished database: the result is still printed"

# --- A file-size limit (ulimit -f): writes fail with EFBIG, not SIGXFSZ.
(ulimit -f 60 && exec "$KTUNE" tune $SLOW --db "$TMP/fsize.db" --quiet) >"$TMP/out" 2>"$TMP/err"
expect_eq "$?" 2 "file-size limit: exit status"
expect_contains "$TMP/err" "writes to the results database failed" "file-size limit: reported"

# --- A full disk (a small tmpfs, where root may mount one).
mkdir "$TMP/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs "$TMP/full" 2>/dev/null; then
  trap 'umount "$TMP/full"; rm -rf "$TMP"' EXIT
  dd if=/dev/zero of="$TMP/full/fill" bs=4k 2>/dev/null # full from the start
  run_status 2 "$KTUNE" tune $SLOW --db "$TMP/full/results.db" --quiet
  expect_contains "$TMP/err" "results database $TMP/full/results.db: opening: database or disk is full (free space on its disk" "full disk at open"
  [ -e "$TMP/full/results.db" ] && fail "full disk at open: left $(ls -l "$TMP/full/results.db")"
  rm "$TMP/full/fill"
  mkdir "$TMP/full.tmp"
  start_slow "$TMP/full.tmp" "$TMP/full/results.db" --quiet --dim N=320
  wait_for 10 stored_one "$TMP/full/results.db" || fail "disk full during the tuning: nothing stored before"
  while_stopped dd if=/dev/zero of="$TMP/full/fill" bs=4k 2>/dev/null # full during the tuning
  wait "$pid"
  expect_eq "$?" 2 "disk full during the tuning: exit status"
  expect_contains "$TMP/slow.err" "database or disk is full" "disk full during the tuning: reported"
  [ -s "$TMP/full/results.db" ] || fail "disk full during the tuning: an empty database file"
else
  echo "note: not root or no tmpfs here: the full-disk case is covered by the file-size limit only"
fi
finish
