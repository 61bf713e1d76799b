# Helpers for the end-to-end tests: sourced, with the ktune binary as $1.
set -u
KTUNE=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export KTUNE_DB="$TMP/results.db"
# Each test its own binary cache: none reaches the user's, and none
# finds binaries another test compiled.
export KTUNE_BINARY_CACHE="$TMP/binaries"
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# json FILE EXPR: evaluates a Python expression over the document `d`.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
expect_contains() { grep -q -- "$2" "$1" || { fail "$3: '$2' not in output:"; cat "$1" >&2; }; }
# run_status EXPECTED CMD...: runs, checks the exit status, keeps stdout/stderr.
run_status() {
  want=$1; shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  got=$?
  [ "$got" = "$want" ] || { fail "exit $got (want $want): $*"; cat "$TMP/err" >&2; }
}
finish() { [ "$fails" -eq 0 ] && echo "ok" || { echo "$fails failures"; exit 1; }; }

# Wall-clock limits hold on a machine SLOWDOWN times slower than a quiet one
# (KTUNE_TEST_SLOWDOWN, default 10: other jobs on both cores, a sanitized
# build). A promise about work ("within a second") is checked on CPU time
# (cpu_now), which load hardly changes, and on wall-clock time times
# SLOWDOWN, which still catches a wait; a test keeps that scaled limit below
# what its broken behaviour would take (a 30 s compiler, a 40 s launch).
SLOWDOWN=${KTUNE_TEST_SLOWDOWN:-10}
case $SLOWDOWN in
'' | *[!0-9]* | 0*) echo "KTUNE_TEST_SLOWDOWN=$SLOWDOWN: expected a whole number from 1 (how many times slower than a quiet machine)" >&2; exit 2 ;;
esac
# wait_for SECONDS CMD...: runs CMD every 0.05 s until it succeeds (status 0)
# or SECONDS x SLOWDOWN have passed (status 1): waiting for an event (a file,
# a trace line, a stored result) instead of sleeping a fixed time.
wait_for() {
  local end=$(($(date +%s%N) + $1 * SLOWDOWN * 1000000000))
  shift
  until "$@"; do
    [ "$(date +%s%N)" -lt "$end" ] || return 1
    sleep 0.05
  done
}
# cpu_now: sets CPU_MS to the CPU time (user + system, ms) of every child of
# this shell that has ended so far (bash's `times`, which counts their own
# waited-for children too: the worker, the compilers). Not in $(...): a
# subshell's `times` starts from zero.
cpu_now() {
  times >"$TMP/times"
  CPU_MS=$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$TMP/times")
}
