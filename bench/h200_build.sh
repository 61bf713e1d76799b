#!/usr/bin/env bash
# Builds the ktune binary on a machine that may lack development packages
# (the H200 machine: no package registry, sqlite3.h missing, maybe json-c's
# and zlib's headers and .so symlinks too).
#
#   bench/h200_build.sh [BUILD_DIR]      (default: build-h200 in the repository)
#
# Prints the path of the built ktune as the last line on stdout; progress goes
# to stderr, the compilers' output to BUILD_DIR/build.log. Exit status 0 when
# ktune was built and runs.
#
# What the machine lacks comes from KTUNE_DEPS_DIR (default .carry, git-ignored;
# name it in the device tool's carry list), prepared on a machine that has the
# development packages:
#   .carry/include/  sqlite3.h sqlite3ext.h zlib.h zconf.h json-c/*.h
#   .carry/lib/      libsqlite3.so.0 libjson-c.so.5 libz.so.1 (runtime copies)
# (`bench/h200_build.sh --prepare` makes it from this machine's packages.)
# Headers and libraries installed on the machine always win over carried ones
# (-idirafter; the runtime libraries are looked up in the system first).
#
# 1. CMake: the normal build; where pkg-config does not know a library,
#    CMakeLists.txt finds it by path (system runtime .so.N, then the carried one).
# 2. If CMake is missing or fails: the same sources compiled with cc directly.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=${KTUNE_DEPS_DIR:-$ROOT/.carry}

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

BUILD=${1:-$ROOT/build-h200}
JOBS=$(nproc 2>/dev/null || echo 4)
LOG="$BUILD/build.log"
mkdir -p "$BUILD"
: >"$LOG"
note() { echo "h200_build: $*" >&2; echo "== $*" >>"$LOG"; }

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

build_cmake() {
  command -v cmake >/dev/null 2>&1 || { note "no cmake"; return 1; }
  note "CMake build in $BUILD/cmake"
  cmake -S "$ROOT" -B "$BUILD/cmake" -DCMAKE_BUILD_TYPE=Release -DKTUNE_DEPS_DIR="$DEPS" \
    -DCMAKE_C_FLAGS="-idirafter $DEPS/include" >>"$LOG" 2>&1 || return 1
  grep -E "without pkg-config" "$LOG" >&2
  cmake --build "$BUILD/cmake" -j"$JOBS" --target ktune >>"$LOG" 2>&1 || return 1
  KTUNE="$BUILD/cmake/ktune"
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

build_cc() {
  local obj="$BUILD/cc" cflags libs cuda=""
  note "cc build in $obj"
  mkdir -p "$obj"
  rm -f "$obj"/*.o
  [ -f /usr/local/cuda/include/cuda.h ] && cuda="-isystem /usr/local/cuda/include -DKTUNE_HAVE_CUDA_H=1"
  cflags="-O2 -g -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Wno-unused-parameter $cuda"
  cflags="$cflags -I$ROOT/include -I$ROOT/src -idirafter $DEPS/include -DKTUNE_SOURCE_DIR=\"$ROOT\""
  export cflags obj
  # shellcheck disable=SC2016
  find "$ROOT/src" -name '*.c' | xargs -P "$JOBS" -I{} sh -c \
    'cc $cflags -c "$1" -o "$obj/$(echo "$1" | tr / _).o"' _ {} >>"$LOG" 2>&1 || return 1
  libs="$(link_flag sqlite3 libsqlite3.so.0) $(link_flag json-c libjson-c.so.5) $(link_flag z libz.so.1)"
  note "libraries: $libs"
  # shellcheck disable=SC2086
  cc $cflags "$ROOT/cli/ktune.c" "$obj"/*.o $libs -ldl -lpthread -lm -o "$obj/ktune" >>"$LOG" 2>&1 || return 1
  KTUNE="$obj/ktune"
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
