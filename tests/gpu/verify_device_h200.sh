#!/usr/bin/env bash
# Outputs compared on the device on a real GPU (written
# for the H200 machine). Run from anywhere; it works in the repository root:
#
#   tests/gpu/verify_device_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Builds ktune with scripts/h200_build.sh (carry .carry: `scripts/h200_build.sh
# --prepare` makes it), then, each line PASS or FAIL in OUTDIR/verify_device.txt
# (the JSON documents and traces in OUTDIR/verify_device.tar.gz):
#   1. tests/data/cuda_verify.cu tuned twice, outputs compared on the host
#      (KTUNE_VERIFY_ON=host) and on the device: every configuration gets the
#      same status and the same message (tolerance, NaN, unwritten element,
#      integers, infinity, all wrong), and the trace says the device compared.
#   2. The verification time per configuration (worker_s.verify: the verified
#      run, the checks and the comparison), host against device, on the
#      shipped kernels with the largest outputs: elementwise.cu (256 MiB out)
#      and transpose.cu (256 MiB out), each measured whole; PASS when the
#      device's median is below the host's and the winners' statuses agree.
# Exit status 0 when every check passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin verify_device.txt "ktune verification on the device"
export KTUNE_DB="$WORK/results.db"

# tune NAME WHERE FILE: --json into $WORK/NAME.WHERE.json, the trace beside.
tune() {
  KTUNE_TRACE=1 KTUNE_VERIFY_ON=$2 "$KTUNE" tune "$3" --json --quiet --no-db >"$WORK/$1.$2.json" 2>"$WORK/$1.$2.trace"
}
summary() { # one line per configuration: its values, status and message
  py "print('\n'.join('%s %s %s' % (sorted(c['config'].items()), c['status'], c.get('message', '')) for c in sorted(d['configurations'], key=lambda c: sorted(c['config'].items()))))" "$1"
}

# 1. agreement
tune verify host tests/data/cuda_verify.cu
tune verify device tests/data/cuda_verify.cu
summary "$WORK/verify.host.json" >"$WORK/verify.host.txt" 2>&1
summary "$WORK/verify.device.json" >"$WORK/verify.device.txt" 2>&1
diff "$WORK/verify.host.txt" "$WORK/verify.device.txt" >"$WORK/verify.diff"
check "cuda_verify.cu: the same status and message per configuration on the device as on the host" $? \
  "$(wc -l <"$WORK/verify.device.txt") configurations; diff in verify.diff"
grep -q "outputs compared on the device" "$WORK/verify.device.trace"
check "cuda_verify.cu: the device compared" $? "$(grep -o 'outputs compared on the [a-z]*.*' "$WORK/verify.device.trace" | head -1)"
n=$(grep -c " correctness " "$WORK/verify.device.txt")
[ "$n" = 6 ]; check "cuda_verify.cu: six configurations are correctness failures" $? "$n"

# 2. verification time per configuration, before (host) and after (device)
for k in elementwise transpose; do
  for where in host device; do
    start=$(date +%s.%N)
    tune "$k" "$where" "kernels/cuda/$k.cu"
    echo "$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(date +%s.%N)" "$start")" >"$WORK/$k.$where.wall"
  done
  stats() { py "import statistics as s; v=[c['worker_s']['verify'] for c in d['configurations'] if 'worker_s' in c]; print('%d %.3f %.3f' % (len(v), s.median(v)*1e3, sum(v)))" "$1"; }
  read -r nh mh th <<<"$(stats "$WORK/$k.host.json" 2>/dev/null)"
  read -r nd md td <<<"$(stats "$WORK/$k.device.json" 2>/dev/null)"
  statuses() { py "print(sorted((sorted(c['config'].items()), c['status']) for c in d['configurations']))" "$1"; }
  same=$([ "$(statuses "$WORK/$k.host.json" 2>&1)" = "$(statuses "$WORK/$k.device.json" 2>&1)" ] && echo yes || echo no)
  awk -v h="${mh:-0}" -v d="${md:-1e9}" 'BEGIN { exit !(d < h) }' && [ "$same" = yes ]
  check "$k.cu: verification per configuration, host -> device" $? \
    "median ${mh:-?} -> ${md:-?} ms over ${nh:-?}/${nd:-?} configurations; total ${th:-?} -> ${td:-?} s; wall $(cat "$WORK/$k.host.wall") -> $(cat "$WORK/$k.device.wall") s; statuses alike: $same"
done

tar -czf "$OUTDIR/verify_device.tar.gz" -C "$WORK" --exclude build . 2>/dev/null
say "$FAILED checks failed"
rm -rf "$WORK"
[ "$FAILED" -eq 0 ]
