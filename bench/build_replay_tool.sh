#!/bin/sh
# Builds a bench program that replays recorded spaces (bench/NAME.c:
# strategies, methodology) from the sources it needs, so that it builds
# whatever else in the tree is half-built:
#   bench/build_replay_tool.sh NAME OUTPUT
# Used by strategies.sh, methodology.sh, kernel_tuner_methodology.sh and
# tests/e2e/bench_methodology.sh.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: bench/build_replay_tool.sh NAME OUTPUT" >&2; exit 2; }
${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" -o "$2" \
  "$root/bench/$1.c" "$root/src/common.c" "$root/src/envvars.c" "$root/src/config.c" "$root/src/lang/diag.c" \
  "$root/src/lang/expr.c" "$root/src/lang/lexer.c" "$root/src/lang/decl.c" "$root/src/space/"*.c \
  "$root/src/search/"*.c -lz -ljson-c -lm
