# Without a usable CUDA driver (forced here with KTUNE_LIBCUDA, so the test
# means the same on a GPU machine), `--backend cuda` fails plainly: exit 2,
# and the message names the library and why it is missing; `ktune devices`
# still lists the other backends and says why CUDA is not there; `ktune
# space` needs no driver at all.
. "$(dirname "$0")/common.bash"

export KTUNE_LIBCUDA=/nonexistent/libcuda.so.1
run_status 2 "$KTUNE" tune kernels/cuda/elementwise.cu --dim N=4096 --no-db
expect_contains "$TMP/err" "libcuda.so.1" "tune: names the library"
expect_contains "$TMP/err" "not available" "tune: says it is unavailable"

run_status 2 "$KTUNE" tune tests/data/cuda_faulty.cu --backend cuda --dim N=4096 --no-db --json
expect_contains "$TMP/err" "/nonexistent/libcuda.so.1" "tune --json: names the path tried"

run_status 0 "$KTUNE" devices
expect_contains "$TMP/out" "cuda" "devices: mentions cuda"
expect_contains "$TMP/out" "libcuda.so.1" "devices: says why cuda is missing"

run_status 0 "$KTUNE" space kernels/cuda/sgemm.cu
expect_contains "$TMP/out" "TILE_M" "space: works without a driver"
finish
