# The run after a configuration's timed runs starts from decoys in its
# outputs (docs/FAULTS.md): they are made on the host once per worker and
# tuning, then copied on the device for every later run, not made and
# uploaded again for each configuration and finalist sample (0.2 s a run at
# 256 MB on the H200: docs/BENCHMARKS.md, "Tune on a miss at production
# sizes"), made over the cores (1024 x 1040 elements: more than one part
# of 2^20). The cheats they catch are still caught: e2e.timed_runs.
# A backend with a decoy kernel (OpenCL, CUDA: compare_kernel.h) makes them
# on the device from its copy of the reference instead, never on the host
# (bit for bit the host's: opencl.device_decoys_are_the_hosts_on_every_type),
# also once per worker and tuning (the backend's copy op keeps them).
. "$(dirname "$0")/common.bash"
KTUNE_TRACE=1 run_status 0 "$KTUNE" tune kernels/c/transpose.c --dim R=1024 --dim C=1040 --autotune "TILE_R=16" --quiet --json --db "$TMP/d.db"
cp "$TMP/err" "$TMP/trace"
made=$(grep -c 'worker: decoys of output out made on the host' "$TMP/trace")
workers=$(grep -c 'worker: device open' "$TMP/trace")
measured=$(grep -c 'worker: measured' "$TMP/trace")
expect_eq "$([ "$measured" -gt "$workers" ] && echo yes)" yes "more configurations measured ($measured) than workers ($workers)"
expect_eq "$([ "$made" -ge 1 ] && [ "$made" -le "$workers" ] && echo yes)" yes \
  "decoys made on the host $made times for $workers workers and $measured configurations measured"
expect_eq "$(json "$TMP/out" "sum(c['status'] == 'ok' for c in d['configurations']) > 1")" True "configurations ok"

KTUNE_TRACE=1 run_status 0 "$KTUNE" tune kernels/opencl/transpose.cl --backend opencl --dim M=500 --dim N=520 \
  --budget 4 --quiet --json --db "$TMP/cl.db"
cp "$TMP/err" "$TMP/trace_cl"
on_device=$(grep -c 'worker: decoys of output dst made on the device' "$TMP/trace_cl")
on_host=$(grep -c 'worker: decoys of output dst made on the host' "$TMP/trace_cl")
workers_cl=$(grep -c 'worker: device open' "$TMP/trace_cl")
measured_cl=$(grep -c 'worker: measured' "$TMP/trace_cl")
expect_eq "$([ "$measured_cl" -gt "$workers_cl" ] && echo yes)" yes \
  "OpenCL: more configurations measured ($measured_cl) than workers ($workers_cl)"
expect_eq "$([ "$on_device" -ge 1 ] && [ "$on_device" -le "$workers_cl" ] && echo yes)" yes \
  "OpenCL: decoys made on the device $on_device times for $workers_cl workers and $measured_cl configurations"
expect_eq "$on_host" 0 "OpenCL: decoys made on the host"
expect_eq "$(json "$TMP/out" "d['winner']['status']")" ok "OpenCL: winner verified"
finish
