#!/usr/bin/env bash
# A blocking miss's first calls, this tree against a base tree, side by side
# in one device call (machines of one kind differ by up to 1.5x in these
# figures from one call to the next, so a change is judged only against a
# base run beside it):
#
#   git archive BASE_COMMIT >.carry/base.tar            (here, before the call)
#   bench/miss_ab_h200.sh [OUTDIR]                      (on the device, .carry carried)
#
# Builds both (scripts/h200_build.sh), then for R in $AB_SIZES (default
# "2048 8192": 16 MB and 256 MB tensors) runs tests/gpu/miss_sizes.c's
# blocking mode ("tune": the first call for key R x R, then for (R - 32) x R
# on the warm helper; "prepared": the same after kt_kernel_prepare, so the
# first key too on a warm helper), fresh database each time, base and this
# tree alternating $ROUNDS times (default 3), after one warm-up run of each
# that fills its binary cache. Each run prints both keys' first calls and the
# winner's kernel time as the application times it with its own events (the
# yardstick for the winners: same process, same data).
# OUTDIR (default $OUT, else ./build-miss-ab) gets results.txt ("result
# NAME VALUE size=R build=base|new mode=M run=N") and table.txt (medians).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${1:-${OUT:-$ROOT/build-miss-ab}}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
RES="$OUT/results.txt"
: >"$LOG"
: >"$RES"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
SIZES=${AB_SIZES:-"2048 8192"}
ROUNDS=${ROUNDS:-3}
BASE_TAR=${BASE_TAR:-$ROOT/.carry/base.tar}
[ -f "$BASE_TAR" ] || { say "no base tree: git archive BASE_COMMIT >.carry/base.tar first"; exit 2; }
CUDA=${CUDA_HOME:-/usr/local/cuda}

# build TREE NAME: ktune and the miss_sizes application of TREE, into /tmp/ab-NAME.
build() {
  local ktune dir
  ktune=$(cd "$1" && env -u KTUNE_H200_BUILT KTUNE_DEPS_DIR="$ROOT/.carry" bash scripts/h200_build.sh "/tmp/ab-$2" \
    2>>"$LOG" | tail -1)
  [ -x "$ktune" ] || { say "build of $2 failed"; tail -30 "/tmp/ab-$2/build.log" | tee -a "$LOG"; return 1; }
  dir=$(dirname "$ktune")
  # shellcheck disable=SC2046
  cc -O2 -std=c11 -D_GNU_SOURCE -DKT_HAVE_MISS_ONLINE -I"$1/include" -I"$CUDA/include" "$1/tests/gpu/miss_sizes.c" \
    "$dir/libktune.a" $(cat "$dir/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o "/tmp/ab-$2/miss_sizes" 2>>"$LOG" ||
    { say "miss_sizes of $2 did not build"; return 1; }
  echo "$dir/ktune-tuner" >"/tmp/ab-$2/helper"
}

rm -rf /tmp/ab-base-tree && mkdir -p /tmp/ab-base-tree && tar -xf "$BASE_TAR" -C /tmp/ab-base-tree
say "miss A/B: this tree $(git describe --always --dirty 2>/dev/null) against the tree of $BASE_TAR," \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
build /tmp/ab-base-tree base || exit 1
build "$ROOT" new || exit 1

FAILED=0
run_app() { # BUILD MODE R RUN
  local db tag="size=$3 build=$1 mode=$2 run=$4"
  db=$(mktemp -u /tmp/ab-XXXXXX.db)
  KTUNE_HELPER=$(cat "/tmp/ab-$1/helper") KTUNE_MISS_TENSORS=device "/tmp/ab-$1/miss_sizes" "$db" "$2" "$3" 0 \
    >"$OUT/app.txt" 2>>"$LOG" || { say "miss_sizes $tag FAILED"; FAILED=$((FAILED + 1)); }
  grep '^result ' "$OUT/app.txt" | sed "s/\$/ $tag/" >>"$RES"
  rm -f "$db" "$db"-*
}
# Each build's binary cache warmed first (the figures are the warm-cache ones).
for b in base new; do run_app "$b" tune "${SIZES%% *}" warmup; done
for r in $SIZES; do
  for i in $(seq 1 "$ROUNDS"); do
    for m in tune prepared; do
      for b in base new; do run_app "$b" "$m" "$r" "$i"; done
    done
  done
done
python3 - "$RES" >"$OUT/table.txt" <<'PY'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6 or f[1] not in ("first_call_first_key_s", "first_call_second_key_s", "winner_kernel_us"):
        continue
    tag = dict(x.split("=", 1) for x in f[-4:])
    if tag["run"] != "warmup":
        v[(int(tag["size"]), tag["mode"], tag["build"], f[1])].append(float(f[2]))
print("R mode build | first key s (median; all) | second key s (median; all) | winner kernel us (median; all)")
for r, m in sorted({k[:2] for k in v}):
    for b in ("base", "new"):
        cells = []
        for name in ("first_call_first_key_s", "first_call_second_key_s", "winner_kernel_us"):
            xs = v.get((r, m, b, name), [])
            cells.append("%.4g (%s)" % (statistics.median(xs), " ".join("%.4g" % x for x in xs)) if xs else "-")
        print(r, m, b, "|", " | ".join(cells))
PY
say "done ($FAILED failed)"
cat "$OUT/table.txt"
exit $FAILED
