#!/usr/bin/env bash
# Builds ktune on a machine that may lack development packages (the H200
# machine: no package registry, sqlite3.h missing, maybe json-c's and zlib's
# headers and .so symlinks too). Every script under bench/ and tests/gpu/ that
# runs there builds through this one.
#
#   scripts/h200_build.sh [--tests] [BUILD_DIR]   (default: build-h200 in the repository)
#   scripts/h200_build.sh --prepare               (fills KTUNE_DEPS_DIR; see below)
#
# Prints the path of the built ktune as the last line on stdout. Beside it:
# ktune-tuner (the tuning helper kt_launch starts on a miss; a program linked
# with libktune.a elsewhere finds it through KTUNE_HELPER); libktune.a;
# libktune.so (what the Python package loads: KTUNE_LIBRARY);
# link.txt, the libraries a program linked with libktune.a needs
# (one line of cc arguments); with --tests, the unit-test binaries in tests/
# (tests/test_cuda, ...; one that does not build is reported, not fatal).
# Progress goes to stderr, the compilers' output to BUILD_DIR/build.log. Exit
# status 0 when ktune was built and runs.
#
# What the machine lacks comes from KTUNE_DEPS_DIR (default .carry, git-ignored;
# name it in the device tool's carry list), prepared with --prepare on a
# machine that has the development packages:
#   .carry/include/  sqlite3.h sqlite3ext.h zlib.h zconf.h json-c/*.h
#   .carry/lib/      libsqlite3.so.0 libjson-c.so.5 libz.so.1 (runtime copies)
# Headers and libraries installed on the machine always win over carried ones
# (-idirafter; the runtime libraries are looked up in the system first).
#
# 1. CMake: the normal build; where pkg-config does not know a library,
#    CMakeLists.txt finds it by path (system runtime .so.N, then the carried one).
# 2. If CMake is missing or fails: the same sources compiled with cc directly.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=${KTUNE_DEPS_DIR:-$ROOT/.carry}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

if [ "${1:-}" = "--prepare" ]; then
  set -e
  mkdir -p "$DEPS/include/json-c" "$DEPS/lib"
  cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h /usr/include/zlib.h /usr/include/zconf.h "$DEPS/include/"
  cp /usr/include/json-c/*.h "$DEPS/include/json-c/"
  arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  for l in libsqlite3.so.0 libjson-c.so.5 libz.so.1; do cp -L "/usr/lib/$arch/$l" "$DEPS/lib/"; done
  du -sh "$DEPS" >&2
  exit 0
fi

TESTS=0
if [ "${1:-}" = "--tests" ]; then
  TESTS=1
  shift
fi
BUILD=${1:-$ROOT/build-h200}
# KTUNE_H200_BUILT: a ktune this script built before in this session
# (tests/gpu/session_h200.sh sets it), reused instead of building again.
if [ -n "${KTUNE_H200_BUILT:-}" ] && [ -x "$KTUNE_H200_BUILT" ]; then
  echo "h200_build: reusing $KTUNE_H200_BUILT" >&2
  echo "$KTUNE_H200_BUILT"
  exit 0
fi
JOBS=$(nproc 2>/dev/null || echo 4)
LOG="$BUILD/build.log"
mkdir -p "$BUILD"
: >"$LOG"
note() { echo "h200_build: $*" >&2; echo "== $*" >>"$LOG"; }
UNIT_TESTS=$(cd "$ROOT/tests/unit" && ls test_*.c | sed 's/\.c$//')

# Which of the three headers the compiler finds, with the carried ones as a fallback.
check_headers() {
  local h missing=""
  for h in sqlite3.h json-c/json.h zlib.h; do
    if echo "#include <$h>" | cc -idirafter "$DEPS/include" -E -x c - >/dev/null 2>&1; then :; else missing="$missing $h"; fi
  done
  [ -z "$missing" ] && return 0
  note "missing headers:$missing (carry them under $DEPS/include; see --prepare)"
  return 1
}

# How to link a library: -l when a development copy links, else the full path
# of the system's runtime copy, else of the carried one (with an rpath).
link_flag() {
  local dev=$1 runtime=$2 path
  if echo 'int main(void){return 0;}' | cc -x c - -l"$dev" -o /dev/null >/dev/null 2>&1; then
    echo "-l$dev"
    return
  fi
  path=$(ldconfig -p 2>/dev/null | awk -v n="$runtime" '$1 == n {print $NF; exit}')
  if [ -n "$path" ]; then echo "$path"; return; fi
  if [ -e "$DEPS/lib/$runtime" ]; then echo "$DEPS/lib/$runtime -Wl,-rpath,$DEPS/lib"; return; fi
  echo "-l$dev"
}

link_libs() {
  echo "$(link_flag sqlite3 libsqlite3.so.0) $(link_flag json-c libjson-c.so.5) $(link_flag z libz.so.1) -ldl -lpthread -lm"
}

build_cmake() {
  command -v cmake >/dev/null 2>&1 || { note "no cmake"; return 1; }
  note "CMake build in $BUILD/cmake"
  cmake -S "$ROOT" -B "$BUILD/cmake" -DCMAKE_BUILD_TYPE=Release -DKTUNE_DEPS_DIR="$DEPS" \
    -DCMAKE_C_FLAGS="-idirafter $DEPS/include" >>"$LOG" 2>&1 || return 1
  grep -E "without pkg-config" "$LOG" >&2
  cmake --build "$BUILD/cmake" -j"$JOBS" --target ktune ktune-tuner ktune_static ktune_shared >>"$LOG" 2>&1 || return 1
  KTUNE="$BUILD/cmake/ktune"
  link_libs >"$BUILD/cmake/link.txt"
  # shellcheck disable=SC2086
  [ $TESTS = 1 ] && { cmake --build "$BUILD/cmake" -j"$JOBS" --target $UNIT_TESTS >>"$LOG" 2>&1 ||
    note "not every unit test built (see $LOG)"; }
  return 0
}

build_cc() {
  local obj="$BUILD/cc" cflags libs t
  note "cc build in $obj"
  mkdir -p "$obj/tests"
  rm -f "$obj"/*.o
  cflags="-O2 -g -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Wno-unused-parameter"
  cflags="$cflags -I$ROOT/include -I$ROOT/src -idirafter $DEPS/include -DKTUNE_SOURCE_DIR=\"$ROOT\""
  [ -f "$CUDA_HOME/include/cuda.h" ] && cflags="$cflags -isystem $CUDA_HOME/include -DKTUNE_HAVE_CUDA_H=1"
  if echo '#include <CL/cl.h>' | cc $cflags -E -x c - >/dev/null 2>&1; then
    cflags="$cflags -DKTUNE_HAVE_CL_H=1 -DCL_TARGET_OPENCL_VERSION=120"
  fi
  export cflags obj
  # shellcheck disable=SC2016
  find "$ROOT/src" -name '*.c' | xargs -P "$JOBS" -I{} sh -c \
    'cc $cflags -c "$1" -o "$obj/$(echo "$1" | tr / _).o"' _ {} >>"$LOG" 2>&1 || return 1
  ar rcs "$obj/libktune.a" "$obj"/*.o >>"$LOG" 2>&1 || return 1
  libs=$(link_libs)
  note "libraries: $libs"
  echo "$libs" >"$obj/link.txt"
  # The command line: every cli/ source but the helper's (and MPI's, which needs its compiler wrapper).
  local cli_sources
  cli_sources=$(find "$ROOT/cli" -name '*.c' ! -name ktune_tuner.c ! -name 'mpi*' | sort)
  # shellcheck disable=SC2086
  cc $cflags $cli_sources "$obj/libktune.a" $libs -o "$obj/ktune" >>"$LOG" 2>&1 || return 1
  # shellcheck disable=SC2086
  cc $cflags "$ROOT/cli/ktune_tuner.c" "$obj/libktune.a" $libs -o "$obj/ktune-tuner" >>"$LOG" 2>&1 || return 1
  cc -shared -Wl,-soname,libktune.so.0 "$obj"/*.o $libs -o "$obj/libktune.so" >>"$LOG" 2>&1 || note "no libktune.so"
  KTUNE="$obj/ktune"
  for t in $UNIT_TESTS; do
    [ $TESTS = 1 ] || break
    # shellcheck disable=SC2086
    cc $cflags -I"$ROOT/tests/harness" -DKTUNE_HELPER_PATH=\"$obj/ktune-tuner\" "$ROOT/tests/unit/$t.c" "$ROOT/tests/harness/harness.c" "$obj/libktune.a" \
      $libs -o "$obj/tests/$t" >>"$LOG" 2>&1 || note "cannot build $t"
  done
  return 0
}

KTUNE=""
check_headers
if build_cmake && "$KTUNE" --version >>"$LOG" 2>&1; then
  note "built with CMake: $KTUNE"
elif build_cc && "$KTUNE" --version >>"$LOG" 2>&1; then
  note "built with cc: $KTUNE"
else
  note "the build failed; the end of $LOG:"
  tail -n 40 "$LOG" >&2
  exit 1
fi
echo "$KTUNE"
