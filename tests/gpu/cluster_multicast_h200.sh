#!/usr/bin/env bash
# gemm_wgmma.cu's @cluster stage on the H200: TMA multicast of B's tile over
# a cluster of CLUSTER_X blocks. For each shape, torch makes random bf16
# inputs and the fp32-accumulated reference (bench/gemm_wgmma_ref.py); ktune
# pins the @autotune names to a configuration (the winners of earlier runs,
# docs/BENCHMARKS.md) but TILES_PER_BLOCK, which it tunes (1 and 4 tiles a
# block), and runs its @cluster stage at both: CLUSTER_X=1, 2 and 4, each
# verified against torch's product (--expect) and timed. Prints a line per
# shape, configuration and TILES_PER_BLOCK (each CLUSTER_X's status and time,
# the speedups of 2 and 4 blocks over 1), PASS, or FAIL where a configuration
# was not ok (4
# may be absent: @where leaves it out where the row tiles do not fill it). Run from the repository root with .carry
# carried; OUT (or $1) gets the JSON of every tuning.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUT=${1:-${OUT:-$ROOT/build-cluster}}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/cluster_multicast.XXXXXX)
trap 'rm -rf "$W"' EXIT
KTUNE=$(bash scripts/h200_build.sh "$W/build" 2>"$W/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL build"; tail -30 "$W/build.log"; exit 1; }
K=${KERNEL:-kernels/cuda/gemm_wgmma.cu} # KERNEL: a variant of it
FAILS=0
# shape; then the @autotune configurations to try its cluster stage on
while read -r m n k cfgs; do
  [[ "$m $n $k" =~ ${ONLY:-.} ]] || continue # ONLY: a regular expression of the shapes to run
  python3 bench/gemm_wgmma_ref.py data "$W" "$m" "$n" "$k" || { echo "FAIL data $m $n $k"; exit 1; }
  for cfg in ${cfgs//;/ }; do
    pins=${cfg//,/ }
    tag="${m}x${n}x${k}_${cfg//[=,]/_}"
    timeout 120 "$KTUNE" tune "$K" --dim M="$m" --dim N="$n" --dim K="$k" --input a="$W/a.bin:bf16" \
      --input b="$W/b.bin:bf16" --expect c="$W/c.bin:bf16" --autotune "$pins" --no-db --json \
      >"$OUT/$tag.json" 2>"$OUT/$tag.err"
    rc=$?
    lines=$(python3 - "$OUT/$tag.json" "$m" "$n" "$k" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m, n, k = map(int, sys.argv[2:5])
by = {}
for c in r["configurations"]:
    by[(c["config"]["TILES_PER_BLOCK"], c["config"].get("CLUSTER_X", 1))] = c
w = (r.get("winner") or {}).get("config", {})
for tiles in (1, 4):
    out, ok, secs = [], True, {}
    for x in (1, 2, 4):
        c = by.get((tiles, x), {})
        st, s = c.get("status", "absent"), c.get("median_s")
        secs[x] = s
        ok &= st == "ok" or (x == 4 and st == "absent")
        out.append(f"CLUSTER_X={x} {st} " + (f"{s * 1e3:.4f} ms {2 * m * n * k / s / 1e12:.1f} TFLOP/s" if s else "-"))
    ratio = " ".join(f"{secs[1] / secs[x]:.3f}" if secs[1] and secs[x] else "-" for x in (2, 4))
    print(("PASS" if ok else "FAIL") + f" | TILES_PER_BLOCK={tiles} | {' | '.join(out)} | speedup of 2 and 4 over 1: {ratio}"
          f" | winner TILES_PER_BLOCK={w.get('TILES_PER_BLOCK')} CLUSTER_X={w.get('CLUSTER_X')}")
PY
)
    while read -r line; do
      echo "$m $n $k $cfg (exit $rc): $line"
      case $line in PASS*) ;; *) FAILS=$((FAILS + 1)); tail -5 "$OUT/$tag.err" ;; esac
    done <<<"$lines"
  done
done <<'SHAPES'
4096 4096 4096 BN=256,WG_M=64,CONSUMERS=2,STAGES=4,GROUP_M=8;BN=128,WG_M=64,CONSUMERS=2,STAGES=6,GROUP_M=8;BN=64,WG_M=64,CONSUMERS=1,STAGES=6,GROUP_M=8
256 768 1024 BN=64,WG_M=64,CONSUMERS=2,STAGES=4,GROUP_M=1;BN=128,WG_M=128,CONSUMERS=1,STAGES=4,GROUP_M=8
128 14336 4096 BN=128,WG_M=64,CONSUMERS=1,STAGES=6,GROUP_M=1
512 4096 4096 BN=128,WG_M=128,CONSUMERS=1,STAGES=5,GROUP_M=8
2048 4096 14336 BN=256,WG_M=64,CONSUMERS=2,STAGES=4,GROUP_M=16
8192 14336 4096 BN=256,WG_M=64,CONSUMERS=2,STAGES=4,GROUP_M=8
SHAPES
echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
