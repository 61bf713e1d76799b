#!/bin/sh
# The whole project under AddressSanitizer + UndefinedBehaviorSanitizer, in
# its own build directory: builds with -DKTUNE_SANITIZE=ON (warnings as
# errors) and without MPI, runs the test suite there, then checks the tuning path for leaks
# with LeakSanitizer. Forked workers leave with _exit (no leak report), so the
# leak check is about the parent: parsing, the tuner, the pool, the store.
#
#   scripts/check-sanitizers.sh [BUILD_DIR]     default build-asan
#   KTUNE_SANITIZE_CTEST_ARGS="-R lang"         narrows the ctest run
# Exit status 0 when the build, every test and every leak check pass.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-asan}
JOBS=$(nproc 2>/dev/null || echo 2)
# Every error stops the process with a report; leaks make the exit status 23.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=exitcode=23
# Sanitized binaries start and run slower; the catalogue's 1 s limit is for
# ordinary builds.
export KTUNE_BAD_INPUT_MS=${KTUNE_BAD_INPUT_MS:-4000}
# and the report's 2 s for 100,000 results (tests/e2e/report.sh).
export KTUNE_REPORT_LIMIT_S=${KTUNE_REPORT_LIMIT_S:-6}

echo "== build ($BUILD, -DKTUNE_SANITIZE=ON)"
# Without MPI: this build is also the one that checks a build without it
# (tune --mpi says so: tests/e2e/bad_inputs.sh, B131; tests/e2e/mpi.sh skips).
cmake -S . -B "$BUILD" -DKTUNE_SANITIZE=ON -DKTUNE_WERROR=ON -DKTUNE_MPI=OFF >/dev/null || exit 1
cmake --build "$BUILD" -j"$JOBS" >"$BUILD/build.log" 2>&1 || { tail -40 "$BUILD/build.log"; exit 1; }

echo "== tests under ASan+UBSan"
failed=0
# python.pytest is left out: it installs its own (unsanitized) libktune, and
# make check runs it.
# shellcheck disable=SC2086
ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure ${KTUNE_SANITIZE_CTEST_ARGS:--E ^python\.pytest\$} || failed=1

echo "== leak check of the tuning path"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# leak_check NAME CMD...: runs with LeakSanitizer; a report or status 23 fails.
leak_check() {
  name=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 23 ] || grep -q "LeakSanitizer\|AddressSanitizer\|runtime error" "$tmp/err"; then
    echo "FAIL: $name (exit $rc)"
    grep -A30 "Sanitizer\|runtime error" "$tmp/err" | head -60
    failed=1
  else
    echo "ok: $name (exit $rc)"
  fi
}
K=$BUILD/ktune
leak_check "tune faulty.c --no-db" "$K" tune tests/data/faulty.c --no-db --quiet
leak_check "tune matmul.c with a database" "$K" tune kernels/c/matmul.c --dim M=64 --dim N=64 --dim K=64 \
  --budget 6 --db "$tmp/results.db" --quiet
leak_check "tune again (results reused)" "$K" tune kernels/c/matmul.c --dim M=64 --dim N=64 --dim K=64 \
  --budget 6 --db "$tmp/results.db" --quiet --json
# A time budget that runs out with compilers running: they are abandoned.
leak_check "tune with a time budget that runs out" env CC="$PWD/tests/data/sleepy_cc" "$K" tune tests/data/budget.c \
  --budget 3s --no-db --quiet
leak_check "cache export" sh -c "'$K' cache export --db '$tmp/results.db' >'$tmp/export.json'"
leak_check "cache import" "$K" cache import "$tmp/export.json" --db "$tmp/copy.db"
leak_check "bench" "$K" bench kernels/c/matmul.c --autotune "TILE_M=32 TILE_N=64 TILE_K=16 UNROLL=2" \
  --dim M=64 --dim N=64 --dim K=64 --no-db --quiet
leak_check "space" "$K" space kernels/c/stencil.c --json
leak_check "bad input" sh -c "'$K' tune tests/data/bad/product_overflow.c --no-db; [ \$? -eq 2 ]"

[ "$failed" -eq 0 ] && echo "sanitizers: all clean" || echo "sanitizers: FAILED"
exit "$failed"
