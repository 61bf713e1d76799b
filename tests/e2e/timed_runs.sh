# Timed runs are evidence too: configurations right on their verified run
# that cheat on the timed runs (work done only on the first call, @constant
# data zeroed, work skipped where the output is not poison) fail, and damage
# done during the timed runs (an input written, a guard zone written) is
# charged to the configuration that did it, never to the next one in the
# worker. Kernels that accumulate into their outputs are still all `ok`.
. "$(dirname "$0")/common.bash"
status() { json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
message() { json "$TMP/out" "[c.get('message', '') for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }

run_status 0 "$KTUNE" tune tests/data/timed_runs.c --json --quiet --no-db
expect_eq "$(status 0)" ok "VARIANT=0 (default)"
expect_eq "$(status 1)" correctness "VARIANT=1 (works only on its first call)"
expect_eq "$(status 2)" correctness "VARIANT=2 (zeroes its @constant data)"
expect_eq "$(status 3)" input "VARIANT=3 (zeroes its input in the timed runs)"
expect_eq "$(status 4)" bounds "VARIANT=4 (writes past y in the timed runs)"
expect_eq "$(status 5)" ok "VARIANT=5"
expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT']")" 5 "winner"
case "$(message 1)" in *"after its timed runs"*"y[0]"*) ;; *) fail "first-call message: $(message 1)" ;; esac
case "$(message 3)" in *"in its timed runs"*"input x"*) ;; *) fail "input message: $(message 3)" ;; esac
case "$(message 4)" in *"in its timed runs"*"past its end"*"y[20000]"*) ;; *) fail "bounds message: $(message 4)" ;; esac

run_status 0 "$KTUNE" tune tests/data/timed_accumulate.c --json --quiet --no-db
expect_eq "$(status 0)" ok "accumulating VARIANT=0"
expect_eq "$(status 1)" ok "accumulating VARIANT=1"

# The same on an OpenCL device (PoCL here), where a kernel tells the runs
# apart by its output's content.
if "$KTUNE" devices 2>/dev/null | grep -q '^opencl'; then
  run_status 0 "$KTUNE" tune tests/data/opencl_timed_runs.cl --json --quiet --no-db
  expect_eq "$(status 1)" correctness "OpenCL VARIANT=1 (works only where its output is poison)"
  expect_eq "$(status 2)" input "OpenCL VARIANT=2 (zeroes its input in the timed runs)"
  expect_eq "$(status 3)" ok "OpenCL VARIANT=3"
  expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT'] in (0, 3)")" True "OpenCL winner is a correct one"
fi
finish
