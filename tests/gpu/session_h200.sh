#!/usr/bin/env bash
# Several H200 scripts in one device call, each with its own time limit, with
# everything they write gathered into two files (the device tool brings back
# at most 8 files):
#
#   tests/gpu/session_h200.sh [SECONDS:]SCRIPT... (OUTDIR: $OUT, else ./gpu-out)
#
# e.g. tests/gpu/session_h200.sh 120:tests/gpu/miss_h200.sh 200:bench/miss_cost_h200.sh
# Builds ktune once first (scripts/h200_build.sh --tests), which the scripts'
# own calls of scripts/h200_build.sh then reuse (KTUNE_H200_BUILT). Each script gets OUTDIR/NAME/ (its path
# with / as _) as its
# output folder and SECONDS (default 120) before it is stopped. OUTDIR gets
# summary.txt (each script's exit status, time and the last lines it
# printed) and results.tar.gz (every script's folder and whole log).
# Exit status: the number of scripts that failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${OUT:-$ROOT/gpu-out}
WORK=$(mktemp -d)
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
# "-dirty": the files differ from that commit (on the device machine the copy's git can
# lag behind the files it was sent with: then name the tree from where it was sent).
{ echo "session_h200: $(date -u +%FT%TZ) commit $(git describe --always --dirty 2>/dev/null || echo unknown)"; nvidia-smi -L 2>/dev/null; } >"$SUMMARY"
t0=$(date +%s)
KTUNE_H200_BUILT=$(scripts/h200_build.sh --tests "$ROOT/build-h200" 2>"$WORK/build.log" | tail -1)
echo "build: $KTUNE_H200_BUILT in $(($(date +%s) - t0)) s" >>"$SUMMARY"
export KTUNE_H200_BUILT # the scripts' own builds reuse it (scripts/h200_build.sh)
FAILED=0
for spec in "$@"; do
  limit=120 script=$spec
  case $spec in [0-9]*:*) limit=${spec%%:*} script=${spec#*:} ;; esac
  name=$(echo "${script%.sh}" | tr / _) # tests/gpu/miss_h200.sh and bench/miss_cost_h200.sh apart
  mkdir -p "$WORK/$name"
  t0=$(date +%s)
  OUT="$WORK/$name" timeout -k 5 "$limit" bash "$script" "$WORK/$name" >"$WORK/$name/log.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || FAILED=$((FAILED + 1))
  {
    echo "=== $script: exit $rc in $(($(date +%s) - t0)) s (limit $limit s)"
    for f in "$WORK/$name"/*.txt; do
      [ "$(basename "$f")" = log.txt ] && continue
      [ -f "$f" ] && { echo "--- $(basename "$f")"; head -c 6000 "$f"; echo; }
    done
    echo "--- log.txt (last 25 lines)"
    tail -n 25 "$WORK/$name/log.txt"
  } >>"$SUMMARY"
done
tar -czf "$OUTDIR/results.tar.gz" -C "$WORK" .
cat "$SUMMARY"
exit $FAILED
