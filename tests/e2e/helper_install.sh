# The tuning helper found with no configuration: installed (cmake --install
# into a temporary prefix), examples/launch_matmul.c linked against the
# installed shared library tunes on a miss through the installed
# libexec/ktune-tuner, found from the library's own path (dladdr), with
# KTUNE_HELPER unset; pointing KTUNE_HELPER at nothing falls back and says so.
. "$(dirname "$0")/common.bash"
BUILD=$(dirname "$KTUNE")
unset KTUNE_HELPER
cmake --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "install"; }
LIB=$(dirname "$(find "$TMP/prefix" -name 'libktune.so' | head -1)")
[ -x "$TMP/prefix/libexec/ktune-tuner" ] || fail "no libexec/ktune-tuner installed"
# A sanitizer build's library needs its flags in the program too.
FLAGS=""
[ "$(sed -n 's/^KTUNE_SANITIZE:BOOL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)" = ON ] && FLAGS="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc $FLAGS -std=c11 -D_GNU_SOURCE -I"$TMP/prefix/include" examples/launch_matmul.c -L"$LIB" -lktune -lm \
  -Wl,-rpath,"$LIB" -o "$TMP/app" 2>"$TMP/cc.log" || { cat "$TMP/cc.log"; fail "cannot link against the installed library"; }
export KTUNE_PRINT_AUTOTUNING=1
run_status 0 "$TMP/app" kernels/c/matmul.c
expect_contains "$TMP/out" "all results match the reference" "installed: correct"
expect_contains "$TMP/err" "key \[M=96 K=64 N=128\]: tuned " "installed: the miss tunes through libexec/ktune-tuner"
KTUNE_DB="$TMP/other.db" KTUNE_HELPER="$TMP/nowhere" run_status 0 "$TMP/app" kernels/c/matmul.c
expect_contains "$TMP/out" "all results match the reference" "no helper: still correct"
expect_contains "$TMP/err" "default configuration (cannot tune: the tuning helper $TMP/nowhere could not start" \
  "no helper: the fallback says why"
finish
