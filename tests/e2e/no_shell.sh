# No shell, private files: names and paths with spaces, quotes, semicolons
# and $(...) are names, never commands (compilers and workers get argument
# vectors); compiler outputs live in a private (0700) directory under
# $TMPDIR that is gone when ktune exits.
. "$(dirname "$0")/common.bash"
KTUNE=$(realpath "$KTUNE")
odd="$TMP/dir with space; and \"quotes\" \$(touch PWNED_DIR)"
mkdir -p "$odd/tmp dir"
cd "$odd" || exit 1
export TMPDIR="$odd/tmp dir"

# A kernel file and a database whose names a shell would split and run.
for name in 'we ird; "name".c' "x\$(touch PWNED).c" "\`touch PWNED\`;'q'.c" ' lead -ing.c'; do
  cp "$OLDPWD/tests/data/bad/ok.c" "$odd/$name"
  run_status 0 "$KTUNE" tune "$odd/$name" --db "$odd/a b;c \$(touch PWNED_DB).db" --json --quiet
  expect_eq "$(json "$TMP/out" "d['winner']['config']['A']")" 1 "tuned $name"
done
run_status 0 "$KTUNE" cache list --db "$odd/a b;c \$(touch PWNED_DB).db" --json
expect_eq "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))) >= 1)" "$TMP/out")" True \
  "the database with the odd name holds the tunings"
found=$(find "$TMP" "$OLDPWD" -maxdepth 2 -name 'PWNED*' 2>/dev/null)
[ -z "$found" ] || fail "a name was run as a command: $found"

# While a tuning runs, its workdir is private; after, it is gone.
"$KTUNE" tune "$OLDPWD/tests/data/slow.c" --no-db --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq $((50 * SLOWDOWN))); do # 5 s x SLOWDOWN at most
  work=$(find "$TMPDIR" -maxdepth 1 -name 'ktune-*' | head -1)
  [ -n "$work" ] && [ -n "$(ls -A "$work" 2>/dev/null)" ] && break
  sleep 0.1
done
[ -n "$work" ] || fail "no ktune-* workdir seen under TMPDIR"
if [ -n "$work" ]; then
  expect_eq "$(stat -c %a "$work")" 700 "workdir mode"
  others=$(find "$work" -perm /o+w | head -3)
  [ -z "$others" ] || fail "world-writable files in the workdir: $others"
fi
kill -INT "$pid"
wait "$pid"
[ -z "$(ls -A "$TMPDIR")" ] || fail "left in TMPDIR: $(ls -A "$TMPDIR")"

# CC is split into words, not given to a shell: "env VAR=1 cc" is a command
# with arguments; a CC holding shell syntax cannot run anything else.
run_status 0 env CC="env KTUNE_TEST=1 cc" "$KTUNE" tune "$OLDPWD/tests/data/bad/ok.c" --no-db --quiet
env CC="cc; touch PWNED_CC" "$KTUNE" tune "$OLDPWD/tests/data/bad/ok.c" --no-db --quiet >/dev/null 2>&1
[ ! -e PWNED_CC ] && [ ! -e "$OLDPWD/PWNED_CC" ] || fail "CC was run by a shell"
cd "$OLDPWD" || exit 1
finish
