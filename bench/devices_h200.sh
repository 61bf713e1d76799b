#!/usr/bin/env bash
# Several devices on the H200 (one GPU): `--device all` behaves as
# `--device 0` (the same device, the same results key, the same winners'
# keys: a run with --device 0 after it measures nothing again); device
# lists naming a GPU the host lacks are exit 2 with the place and the fix;
# two processes compiling one kernel at once compile each configuration
# once between them (the compile lock, through NVRTC). On a host with two
# or more GPUs it also checks that `--device all` deals keys to every GPU.
# Writes OUTDIR/devices.txt (PASS/FAIL lines) and the JSON documents.
#   bench/devices_h200.sh [OUTDIR]     (OUTDIR: $OUT, else ./gpu-out)
set -u
. "$(dirname "$0")/../tests/gpu/checks.bash" # ROOT (the working directory), OUTDIR, WORK
trap 'rm -rf "$WORK"' EXIT
checks_begin devices.txt "--device all, device lists, the compile lock"
export KTUNE_BINARY_CACHE="$WORK/bin"
KERNEL=kernels/cuda/elementwise.cu
DIMS="--dim N=1048576,4194304,16777216"

"$KTUNE" devices --json >"$OUTDIR/devices.json"
gpus=$(py "print(sum(len(b['devices']) for b in d['backends'] if b['backend'] == 'cuda'))" "$OUTDIR/devices.json")
say "CUDA devices: $gpus"

# --device all: three keys, every one on a GPU that exists, a winner each.
# shellcheck disable=SC2086
"$KTUNE" tune $KERNEL $DIMS --device all --db "$WORK/all.db" --json >"$OUTDIR/all.json" 2>"$OUTDIR/all.err"
rc=$?
check "--device all: exit 0" "$rc" "exit $rc"
py "assert [k['sizes'] for k in d['keys']] == ['N=1048576', 'N=4194304', 'N=16777216']" "$OUTDIR/all.json"
check "--device all: the keys in key order" $?
py "assert all(k['winner'] for k in d['keys'])" "$OUTDIR/all.json"
check "--device all: a winner per key" $?
used=$(py "print(sorted(set(k['device']['index'] for k in d['keys'])))" "$OUTDIR/all.json")
if [ "$gpus" -le 1 ]; then
  [ "$used" = "[0]" ]
  check "--device all on one GPU: every key on device 0" $? "$used"
  ! grep -q ' on device ' "$OUTDIR/all.err"
  check "--device all on one GPU: no dealer (the path of --device 0)" $?
else
  [ "$used" = "$(python3 -c "print(list(range(min($gpus, 3))))")" ]
  check "--device all on $gpus GPUs: the keys dealt to the first three" $? "$used"
fi

# --device 0 afterwards: the same results key, so nothing is measured again
# (the default alone runs, as the reference).
# shellcheck disable=SC2086
"$KTUNE" tune $KERNEL $DIMS --device 0 --db "$WORK/all.db" --json --quiet >"$OUTDIR/zero.json" 2>"$OUTDIR/zero.err"
rc=$?
check "--device 0 after --device all: exit 0" "$rc" "exit $rc"
py "assert all(k['reused'] >= len(k['configurations']) - 1 for k in d['keys']), [(k['reused'], len(k['configurations'])) for k in d['keys']]" "$OUTDIR/zero.json"
check "--device 0 after --device all: nothing measured again" $?
a=$(py "print([k['winner']['config'] for k in d['keys']])" "$OUTDIR/all.json")
b=$(py "print([k['winner']['config'] for k in d['keys']])" "$OUTDIR/zero.json")
[ "$a" = "$b" ]
check "--device 0 after --device all: the same winners" $? "$a"

# A GPU the host lacks: exit 2, the option and how to list devices.
"$KTUNE" tune $KERNEL --device "$gpus" --no-db >/dev/null 2>"$WORK/missing.err"
rc=$?
[ "$rc" = 2 ] && grep -q -- "--device $gpus: the cuda backend has $gpus device" "$WORK/missing.err"
check "--device $gpus: exit 2 naming the option" $? "exit $rc: $(head -1 "$WORK/missing.err")"
# shellcheck disable=SC2086
"$KTUNE" tune $KERNEL $DIMS --device "0,$gpus" --no-db >/dev/null 2>"$WORK/list.err"
rc=$?
[ "$rc" = 2 ] && grep -q -- "--device 0,$gpus: the cuda backend has $gpus device" "$WORK/list.err"
check "--device 0,$gpus: exit 2 before any key" $? "exit $rc: $(head -1 "$WORK/list.err")"

# The compile lock: two processes, one kernel, two keys, an empty cache.
export KTUNE_BINARY_CACHE="$WORK/bin-lock"
"$KTUNE" tune $KERNEL --dim N=2097152 --db "$WORK/lock.db" --json --quiet >"$OUTDIR/lock_a.json" 2>"$WORK/a.err" &
pa=$!
"$KTUNE" tune $KERNEL --dim N=8388608 --db "$WORK/lock.db" --json --quiet >"$OUTDIR/lock_b.json" 2>"$WORK/b.err" &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
check "compile lock: both tunings exit 0" $((ra + rb)) "exit $ra, $rb"
python3 - "$OUTDIR/lock_a.json" "$OUTDIR/lock_b.json" <<'PY' | tee -a "$SUMMARY"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
def compiled(d):
    return {json.dumps(c["config"], sort_keys=True) for c in d["configurations"] if c.get("compile") == "compiled"}
both = compiled(a) & compiled(b)
print(f"  compiled: {len(compiled(a))} + {len(compiled(b))}, in both: {len(both)}; "
      f"cached: {a['binary_cache']['cached']} + {b['binary_cache']['cached']}")
sys.exit(1 if both else 0)
PY
check "compile lock: no configuration compiled by both" "${PIPESTATUS[0]}"
say "$FAILED failed"
[ "$FAILED" = 0 ]
