#!/bin/bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined,
# the library compiled with the same sanitizers) and runs each for a bounded
# time, starting from the seed corpus in tests/fuzz/corpus/<target>.
#
#   tests/fuzz/run.sh [TARGET...]       default: every target
#   KTUNE_FUZZ_SECONDS=60               time per target
#   KTUNE_FUZZ_BUILD=build-fuzz         build directory
#   KTUNE_FUZZ_JOBS=1                   parallel fuzzing processes per target
#   KTUNE_FUZZ_SEED=1                   libFuzzer's seed (0: a fresh one each run)
#
# New corpus entries go to tests/fuzz/corpus-out/<target> (git-ignored).
# A crash stops the run with the input saved under $BUILD/artifacts/<target>/;
# copy it to tests/fuzz/regressions/<target>/ (CTest replays those in every
# build) and fix the bug. Ends with one line per target: runs, seconds, status.
set -u
cd "$(dirname "$0")/../.."
SECONDS_EACH=${KTUNE_FUZZ_SECONDS:-60}
BUILD=${KTUNE_FUZZ_BUILD:-build-fuzz}
JOBS=${KTUNE_FUZZ_JOBS:-1}
# A fixed seed makes a run repeatable (CI uses 1); 0 asks libFuzzer for a new one.
SEED=${KTUNE_FUZZ_SEED:-1}
CC=${KTUNE_FUZZ_CC:-clang}
ALL="parse expr args import replay"
TARGETS=${*:-$ALL}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"

command -v "$CC" >/dev/null || { echo "run.sh: $CC not found (apt-get install clang)" >&2; exit 2; }
mkdir -p "$BUILD"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
  >"$BUILD/probe.c"
"$CC" -fsanitize=fuzzer "$BUILD/probe.c" -o "$BUILD/probe" 2>/dev/null ||
  { echo "run.sh: $CC cannot link libFuzzer (apt-get install libclang-rt-14-dev)" >&2; exit 2; }

# The library, every source, compiled with the fuzzing instrumentation.
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="$SAN -fsanitize=fuzzer-no-link" >"$BUILD.cmake.log" 2>&1 ||
  { cat "$BUILD.cmake.log" >&2; exit 2; }
cmake --build "$BUILD" -j"$(nproc)" --target ktune_static >"$BUILD.build.log" 2>&1 ||
  { tail -30 "$BUILD.build.log" >&2; exit 2; }
LIBS="$(pkg-config --libs sqlite3 json-c zlib) -lpthread -ldl -lm"
for t in $TARGETS; do
  "$CC" $SAN -fsanitize=fuzzer -Iinclude -Isrc -o "$BUILD/fuzz_$t" \
    "tests/fuzz/fuzz_$t.c" tests/fuzz/common.c "$BUILD/libktune.a" $LIBS || exit 2
done

summary=""
status=0
for t in $TARGETS; do
  out="tests/fuzz/corpus-out/$t"
  art="$BUILD/artifacts/$t/"
  mkdir -p "$out" "$art"
  log="$BUILD/fuzz_$t.log"
  case $t in import | replay) dict=tests/fuzz/json.dict ;; *) dict=tests/fuzz/parse.dict ;; esac
  # Seeds and regressions are read (git keeps no empty folder: a target may
  # have no regressions yet); new finds go to OUT.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD/fuzz_$t" -seed="$SEED" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    $([ "$JOBS" -gt 1 ] && echo "-fork=$JOBS") -print_final_stats=1 -artifact_prefix="$art" -dict="$dict" \
    "$out" "tests/fuzz/corpus/$t" $([ -d "tests/fuzz/regressions/$t" ] && echo "tests/fuzz/regressions/$t") >"$log" 2>&1
  rc=$?
  # -fork mode reports the total as "#N DONE"; a single process, in its stats.
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  [ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  took=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -oE 'in [0-9]+' | grep -oE '[0-9]+' | tail -1)
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5 >&2
  fi
  summary="$summary$(printf '%-8s %10s runs %5s s  %s' "$t" "$runs" "${took:-$SECONDS_EACH}" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "CRASH (see $log)")")\n"
done
printf "%b" "$summary"
exit $status
