#!/usr/bin/env bash
# What does a shape sweep save? 8 sgemm keys in one `ktune tune` run
# (--sizes) against 8 separate runs, on the H200. Each side starts from an empty results
# database and an empty binary cache; the separate runs get a fresh binary
# cache each (what 8 runs without the shared cache cost). Writes
# OUTDIR/sweep.txt (walls, compile busy, measured phases) and the JSON.
#   bench/sweep_h200.sh [OUTDIR]     (OUTDIR: $OUT, else ./gpu-out)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
WORK=$(mktemp -d)
KTUNE=$(scripts/h200_build.sh "$WORK/build" 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; exit 1; }
SUM="$OUTDIR/sweep.txt"
echo "sgemm: 8 keys in one run against 8 runs, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" | tee "$SUM"
: >"$WORK/sizes"
for s in 1024 1536 2048 2560 3072 3584 4096 2048x4096; do
  case $s in *x*) echo "M=${s%x*} N=${s#*x} K=${s%x*}" ;; *) echo "M=$s N=$s K=$s" ;; esac >>"$WORK/sizes"
done
now() { date +%s.%N; }
t0=$(now)
KTUNE_BINARY_CACHE="$WORK/bin-batch" "$KTUNE" tune kernels/cuda/sgemm.cu --sizes "$WORK/sizes" --db "$WORK/batch.db" \
  --json >"$OUTDIR/batch.json" 2>"$WORK/batch.err"
rc=$?
batch=$(python3 -c "print(round($(now) - $t0, 2))")
echo "batch: exit $rc, wall $batch s" | tee -a "$SUM"
python3 - "$OUTDIR/batch.json" <<'PY' | tee -a "$SUM"
import json, sys
d = json.load(open(sys.argv[1]))
keys = d.get("keys", [d])
for k in keys:
    t = k["timeline"]; p = t.get("phases_s", {})
    print(f"  {k['sizes']:<24} wall {t['wall_s']:.2f} s  compile busy {t['compile_busy_s']:.2f} s  "
          f"compiled {k.get('binary_cache', {}).get('compiled')}  search+finalists {p.get('search', 0) + p.get('finalists', 0):.2f} s  "
          f"winner {k['winner']['config'] if k.get('winner') else None}")
print(f"  measurement (search + finalists) summed over keys: {sum(k['timeline']['phases_s'].get('search', 0) + k['timeline']['phases_s'].get('finalists', 0) for k in keys):.2f} s")
PY
t0=$(now)
i=0
while read -r line; do
  i=$((i + 1))
  dims=""
  for kv in $line; do dims="$dims --dim $kv"; done
  # shellcheck disable=SC2086
  KTUNE_BINARY_CACHE="$WORK/bin-sep$i" "$KTUNE" tune kernels/cuda/sgemm.cu $dims --db "$WORK/sep.db" --json \
    >"$WORK/sep$i.json" 2>>"$WORK/sep.err"
done <"$WORK/sizes"
sep=$(python3 -c "print(round($(now) - $t0, 2))")
echo "8 separate runs (each its own binary cache): wall $sep s" | tee -a "$SUM"
python3 - "$WORK" <<'PY' | tee -a "$SUM"
import json, sys, glob
walls = []
for f in sorted(glob.glob(sys.argv[1] + "/sep*.json")):
    d = json.load(open(f)); walls.append(d["timeline"]["wall_s"])
print(f"  first separate run (compile + measure of one key): {walls[0]:.2f} s; walls {', '.join(f'{w:.2f}' for w in walls)}")
PY
echo "ratio separate / batch: $(python3 -c "print(round($sep / $batch, 2))")" | tee -a "$SUM"
