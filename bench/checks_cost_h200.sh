#!/usr/bin/env bash
# What the checks after every verified run cost (inputs compared,
# guard zones, outputs' process state): `ktune tune` of sgemm.cu (348
# configurations since issue 31 item 4, 174 before: against a BASE that old,
# compare per configuration; two 64 MiB inputs) and elementwise.cu (16), whole, with
# this tree and with BASE (the tree before the checks), alternating, ROUNDS
# times each. From the repository root, with .carry carried:
#
#   BASE=.carry/base bench/checks_cost_h200.sh        (ROUNDS=3 by default)
#
# Prints one line per run (tree, kernel, process wall, the worker's verify
# seconds summed over configurations, winner) and the medians.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
ROUNDS=${ROUNDS:-3}
NEW=$(scripts/h200_build.sh /tmp/checks-new 2>/tmp/checks-new.log | tail -1)
base_build=${BASE:?set BASE to the tree before the change}/scripts/h200_build.sh
[ -x "$base_build" ] || base_build=$BASE/bench/h200_build.sh # a tree from before it moved to scripts/
OLD=$(KTUNE_DEPS_DIR="$ROOT/.carry" "$base_build" /tmp/checks-old 2>/tmp/checks-old.log | tail -1)
[ -x "$NEW" ] && [ -x "$OLD" ] || { echo "build failed: see /tmp/checks-*.log"; exit 1; }
echo "checks cost, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
runs=$(mktemp)
for r in $(seq "$ROUNDS"); do
  for k in sgemm elementwise; do
    for tree in new old; do
      bin=$NEW; [ $tree = old ] && bin=$OLD
      start=$(date +%s.%N)
      "$bin" tune "kernels/cuda/$k.cu" --no-db --json --quiet >/tmp/checks.json 2>/dev/null
      rc=$?
      end=$(date +%s.%N)
      python3 - "$tree" "$k" "$start" "$end" "$rc" /tmp/checks.json <<'PY' | tee -a "$runs"
import json, sys
tree, k, start, end, rc, path = sys.argv[1:]
try:
    d = json.load(open(path))
    verify = sum(c.get("worker_s", {}).get("verify", 0) for c in d["configurations"])
    w = " ".join("%s=%s" % kv for kv in d["winner"]["config"].items())
except Exception as e:
    verify, w = float("nan"), "none (%s)" % e
print("%s %s %.2f %.3f exit=%s %s" % (tree, k, float(end) - float(start), verify, rc, w))
PY
    done
  done
done
python3 - "$runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for k in ("sgemm", "elementwise"):
    for tree in ("new", "old"):
        walls = [float(r[2]) for r in rows if r[0] == tree and r[1] == k]
        ver = [float(r[3]) for r in rows if r[0] == tree and r[1] == k]
        if walls:
            print("median %-11s %-3s wall %.2f s, verify %.3f s over %d runs" % (k, tree, statistics.median(walls), statistics.median(ver), len(walls)))
PY
