# Sourced by the H200 check scripts (tests/gpu/*_h200.sh, bench/devices_h200.sh):
# one summary file of PASS/FAIL lines, and ktune built once. Sourcing it sets
# ROOT (the repository, where the script then works), OUTDIR (the script's
# first argument, else $OUT, else gpu-out; created) and WORK (a fresh scratch
# folder).
#   checks_begin NAME TITLE     starts $OUTDIR/NAME with TITLE, the host, the
#                               date and the commit; builds ktune into
#                               $WORK/build (scripts/h200_build.sh) as $KTUNE,
#                               or says FAIL and exits 1
#   say TEXT...                 a line on stdout and in the summary
#   check NAME STATUS [DETAIL]  PASS when STATUS is 0, else FAIL (counted in FAILED)
#   py CODE FILE                python3 CODE with FILE's JSON document as d
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
WORK=$(mktemp -d)
mkdir -p "$OUTDIR"
FAILED=0
say() { echo "$*" | tee -a "$SUMMARY"; }
check() {
  if [ "$2" -eq 0 ]; then say "PASS  $1${3:+  ($3)}"; else say "FAIL  $1${3:+  ($3)}"; FAILED=$((FAILED + 1)); fi
}
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $1" "$2" </dev/null; }
checks_begin() {
  SUMMARY="$OUTDIR/$1"
  : >"$SUMMARY"
  say "$2 on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git describe --always --dirty 2>/dev/null || echo '?')"
  KTUNE=$(scripts/h200_build.sh "$WORK/build" 2>"$OUTDIR/build.log" | tail -1)
  [ -x "$KTUNE" ] || { say "FAIL  build (see build.log)"; exit 1; }
}
