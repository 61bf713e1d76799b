# Configurations that get the output right but misbehave otherwise (write
# their input, write outside their output, leave threads, timers, signal
# handlers, a changed directory or environment, or a child process behind,
# signal their process group) each get their own status and none wins; the
# child dies with its worker, and the tuner survives the signal.
. "$(dirname "$0")/common.bash"
export HOSTILE_CHILD_PIDS="$TMP/children"
start=$(date +%s)
"$KTUNE" tune tests/data/hostile.c --json --quiet --no-db --timeout 3 | cat >"$TMP/out"
rc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
expect_eq "$rc" 0 "exit status"
[ "$elapsed" -lt 40 ] || fail "the --json reader waited ${elapsed}s (a kernel's child held the pipe)"
status() { json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
message() { json "$TMP/out" "[c.get('message', '') for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
expect_eq "$(status 0)" ok "VARIANT=0 (default)"
expect_eq "$(status 1)" input "VARIANT=1 (writes its input)"
expect_eq "$(status 2)" bounds "VARIANT=2 (past the end)"
expect_eq "$(status 3)" bounds "VARIANT=3 (before the start)"
for v in 4 5 6 7 8 9; do expect_eq "$(status $v)" state "VARIANT=$v (process state)"; done
expect_eq "$(status 10)" runtime "VARIANT=10 (SIGTERM to its group)"
expect_eq "$(status 11)" ok "VARIANT=11"
expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT']")" 11 "winner"
case "$(message 1)" in *"input x"*"x[0]"*) ;; *) fail "input message: $(message 1)" ;; esac
case "$(message 2)" in *"past its end"*"y[100000]"*) ;; *) fail "bounds message: $(message 2)" ;; esac
case "$(message 3)" in *"before its start"*"y[-1]"*) ;; *) fail "bounds message: $(message 3)" ;; esac
case "$(message 4)" in *thread*) ;; *) fail "thread message: $(message 4)" ;; esac
case "$(message 5)" in *timer*) ;; *) fail "alarm message: $(message 5)" ;; esac
case "$(message 6)" in *SIGUSR1*) ;; *) fail "handler message: $(message 6)" ;; esac
[ -s "$TMP/children" ] || fail "the forking configuration did not run"
# Each child of a kernel ends with its worker (a child that lived on sleeps
# for a minute): awaited, 1 s x SLOWDOWN at most, not a fixed 0.5 s.
children_ended() {
  while read -r pid; do kill -0 "$pid" 2>/dev/null && return 1; done <"$TMP/children"
  return 0
}
wait_for 1 children_ended
while read -r pid; do
  kill -0 "$pid" 2>/dev/null && { fail "a kernel's child ($pid) outlived its worker"; kill -9 "$pid"; }
done <"$TMP/children"

# The same on an OpenCL device (PoCL here): a stray write does not fault.
# --timeout 120: none of these hangs, and PoCL builds each kernel inside its
# first run, which passed the default 10 s at a load of 12 (status timeout).
if "$KTUNE" devices 2>/dev/null | grep -q '^opencl'; then
  run_status 0 "$KTUNE" tune tests/data/opencl_hostile.cl --json --quiet --no-db --timeout 120
  expect_eq "$(status 1)" input "OpenCL VARIANT=1 (writes its input)"
  expect_eq "$(status 2)" bounds "OpenCL VARIANT=2 (past the end)"
  expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT'] in (0, 3)")" True "OpenCL winner is a correct one"
fi
finish
