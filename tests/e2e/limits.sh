# Limits are overridable (docs/BAD_INPUTS.md, "Limits"): a short run timeout
# from the environment stops a hanging configuration sooner, a short compile
# timeout (flag or environment) stops a slow compiler, and a tensor memory
# cap from the environment is applied before anything is allocated.
. "$(dirname "$0")/common.bash"
# The hanging variant of faulty.c (VARIANT=3) with a 1 s run timeout: the
# configuration is a timeout of 1 + 2 s (twice: it is run again in a fresh
# worker), and the whole tuning is short. The default, timed beside it, is
# outside the pinned space and cannot win: nothing valid, exit 1.
start=$(date +%s)
KTUNE_RUN_TIMEOUT=1 run_status 1 "$KTUNE" bench tests/data/faulty.c --autotune VARIANT=3 --no-db --json --quiet
took=$(($(date +%s) - start))
expect_eq "$(json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT'] == 3][0]")" timeout \
  "the hanging configuration times out"
expect_contains "$TMP/out" "exceeded 3 s" "the timeout is the one set (1 s + 2 s of measurement)"
# 18 s: the two 3 s timeouts and a loaded machine's compiles and starts, below
# the 24 s that the default timeout (10 + 2 s, twice) would take.
[ "$took" -lt 18 ] || fail "KTUNE_RUN_TIMEOUT=1 tuning took $took s"

# A compiler that takes 30 s, stopped after 1 s by flag, then by environment.
printf '#!/bin/sh\ncase "$*" in *--version*) exec cc "$@" ;; esac\nsleep 30\nexec cc "$@"\n' >"$TMP/slowcc"
chmod +x "$TMP/slowcc"
for how in flag env; do
  start=$(date +%s)
  if [ $how = flag ]; then
    CC="$TMP/slowcc" run_status 1 "$KTUNE" tune tests/data/bad/ok.c --no-db --quiet --compile-timeout 1
  else
    CC="$TMP/slowcc" KTUNE_COMPILE_TIMEOUT=1 run_status 1 "$KTUNE" tune tests/data/bad/ok.c --no-db --quiet
  fi
  took=$(($(date +%s) - start))
  expect_contains "$TMP/err" "ran past the 1 s timeout" "compile timeout by $how"
  # 15 s: half of the compiler's 30 s, what a timeout not applied would take.
  [ "$took" -lt 15 ] || fail "compile timeout by $how: took $took s"
done
[ -z "$(pgrep -f "$TMP/slowcc")" ] || fail "a timed-out compiler is still running"

# The memory cap from the environment; the default cap lets the same size run.
KTUNE_MAX_TENSOR_MEMORY=64K run_status 2 "$KTUNE" tune tests/data/bad/ok.c --dim N=100000 --no-db
expect_contains "$TMP/err" "more than the 6.55e-05 GB allowed" "the cap is the one set"
run_status 0 "$KTUNE" tune tests/data/bad/ok.c --dim N=100000 --no-db --quiet
finish
