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
