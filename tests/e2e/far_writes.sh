# Guard zones on both sides of a tensor, sized for the common stride bugs:
# writes 8 KiB, 64 KiB and 1 MiB before the start of a 1 MiB output, and
# 64 KiB past its end, are `bounds` (they were `ok` and won); on the CPU
# backend a write further out lands in pages that fault (`runtime`).
. "$(dirname "$0")/common.bash"
status() { json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
message() { json "$TMP/out" "[c.get('message', '') for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }

run_status 0 "$KTUNE" tune tests/data/far_writes.c --json --quiet --no-db
expect_eq "$(status 0)" ok "VARIANT=0 (default)"
for v in 1 2 3 4; do expect_eq "$(status $v)" bounds "VARIANT=$v (a far write)"; done
expect_eq "$(status 5)" ok "VARIANT=5"
expect_eq "$(status 6)" runtime "VARIANT=6 (past the guard zone: a fence page)"
expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT']")" 5 "winner"
case "$(message 1)" in *"before its start"*"y[-2048]"*) ;; *) fail "8 KiB message: $(message 1)" ;; esac
case "$(message 3)" in *"before its start"*"y[-262144]"*) ;; *) fail "1 MiB message: $(message 3)" ;; esac
case "$(message 4)" in *"past its end"*"y[278527]"*) ;; *) fail "past the end message: $(message 4)" ;; esac

if "$KTUNE" devices 2>/dev/null | grep -q '^opencl'; then
  run_status 0 "$KTUNE" tune tests/data/opencl_far_writes.cl --json --quiet --no-db
  for v in 1 2 3; do expect_eq "$(status $v)" bounds "OpenCL VARIANT=$v (a far write)"; done
  expect_eq "$(json "$TMP/out" "d['winner']['config']['VARIANT'] in (0, 4)")" True "OpenCL winner is a correct one"
fi
finish
