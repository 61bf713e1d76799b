#!/bin/sh
# Runs the README's test command RUNS times in a row (default 10) while
# stress-ng keeps every core busy, as a busy CI machine or a developer's
# laptop would (issue 26, item 8: a test asserts what is guaranteed, with
# margins that hold under load). Prints one line per run, the run's summary
# ("N passed, N failed") and the names of the tests that failed, and keeps
# each run's whole log under LOGDIR (default a fresh temporary folder):
#   scripts/check-under-load.sh [RUNS] [LOGDIR]
# Exit status 0 only when every run ended with 0 failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-10}
logdir=${2:-$(mktemp -d)}
mkdir -p "$logdir"
command -v stress-ng >/dev/null || { echo "check-under-load: stress-ng is missing (apt-get install stress-ng)" >&2; exit 2; }
cores=$(nproc)
stress-ng --cpu "$cores" --timeout 0 --quiet &
stress=$!
trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null' EXIT INT TERM
echo "check-under-load: $runs runs, stress-ng --cpu $cores (pid $stress), logs in $logdir"
green=0
i=1
while [ "$i" -le "$runs" ]; do
  log="$logdir/run$i.log"
  start=$(date +%s)
  make -C "$root" check >"$log" 2>&1
  secs=$(($(date +%s) - start))
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  failed=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*\*\*\*.*/\1/p; s/^FAILED \([^ ]*\).*/\1/p' "$log" | tr '\n' ' ')
  echo "run $i/$runs: ${secs}s, load $(cut -d' ' -f1 /proc/loadavg): $summary${failed:+ (failed: $failed)}"
  case "$summary" in *" 0 failed") green=$((green + 1)) ;; esac
  i=$((i + 1))
done
echo "check-under-load: $green of $runs runs green"
[ "$green" -eq "$runs" ]
