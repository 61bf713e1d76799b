# The README's main command (make tune -> scripts/tune-demo.sh) picks the
# backend from `ktune devices --json`: a GPU through CUDA, else an OpenCL
# device that is not the host CPU, else the CPU kernel.
. "$(dirname "$0")/common.bash"
fake="$TMP/ktune"
# A stand-in that answers `devices --json` from $DEVICES and prints the tune command.
cat >"$fake" <<'SH'
#!/bin/sh
if [ "$1" = devices ]; then cat "$DEVICES"; else echo "$@"; fi
SH
chmod +x "$fake"
dev() { printf '{"backends": [%s]}' "$1" >"$TMP/devices.json"; }
cpu='{"backend": "cpu", "available": true, "devices": [{"index": 0, "host_cpu": true}]}'
pocl='{"backend": "opencl", "available": true, "devices": [{"index": 0, "host_cpu": true}]}'
nvocl='{"backend": "opencl", "available": true, "devices": [{"index": 0, "host_cpu": true}, {"index": 1, "host_cpu": false}]}'
nocuda='{"backend": "cuda", "available": false, "devices": []}'
cuda='{"backend": "cuda", "available": true, "devices": [{"index": 0, "host_cpu": false}]}'
export DEVICES="$TMP/devices.json"
dev "$cpu, $pocl, $nocuda"
expect_contains <(sh scripts/tune-demo.sh "$fake") "kernels/c/matmul.c" "CPU when OpenCL is only the host CPU"
dev "$cpu, $nvocl, $nocuda"
expect_contains <(sh scripts/tune-demo.sh "$fake") "kernels/opencl/matmul.cl --backend opencl --device 1" "a GPU's OpenCL device"
dev "$cpu, $nvocl, $cuda"
expect_contains <(sh scripts/tune-demo.sh "$fake") "kernels/cuda/sgemm.cu --device 0" "CUDA first"
# And the real binary on this machine answers something the script can read.
expect_contains <(sh -c "DEVICES=; '$KTUNE' devices --json") '"backend": "cpu"' "devices --json"
finish
