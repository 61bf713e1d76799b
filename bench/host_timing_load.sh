#!/usr/bin/env bash
# Winners on a loaded host: two ktune builds side by side, each tuning a
# kernel whose configurations do 1, 10 and 100 times the work
# (tests/data/rep.c, tests/e2e/mpi.sh's), six keys a run, while LOAD busy loops compete
# for the cores:
#
#   bench/host_timing_load.sh KTUNE_A KTUNE_B [RUNS] [LOAD]   (defaults 8 and 12)
#
# Prints, per build, how many keys REP=1 (the right answer) won and the
# winners' reported times. The runs of A and B alternate, under the same
# load. Written for the CPU backend's host timings (docs/DESIGN.md, "Host
# timings"): A the wall clock, B the worker's CPU time.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n 2,12p "$0"; exit 2; }
A=$1 B=$2 RUNS=${3:-8} LOAD=${4:-12}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq "$LOAD"); do sh -c 'while :; do :; done' & done
sleep 1
for r in $(seq "$RUNS"); do
  for build in A B; do
    bin=$A
    [ $build = B ] && bin=$B
    "$bin" tune "$ROOT/tests/data/rep.c" --dim N=60000,120000 --dim M=1,2,3 --no-db --json --quiet 2>/dev/null |
      python3 -c "
import json, sys
d = json.load(sys.stdin)
print('$build', ' '.join('%d:%.3f' % (k['winner']['config']['REP'], k['winner']['median_s'] * 1e3) for k in d['keys']))"
  done
done | tee "$WORK/runs.txt"
python3 - "$WORK/runs.txt" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1])]
for build in "AB":
    keys = [k.split(":") for r in rows if r[0] == build for k in r[1:]]
    right = sum(rep == "1" for rep, _ in keys)
    times = sorted(float(t) for _, t in keys)
    print(f"{build}: REP=1 won {right} of {len(keys)} keys; winners' times {times[0]:.3f}-{times[-1]:.3f} ms")
PY
