# The installed tree stands alone: the source tree is copied and built
# (the installed targets only), installed into a prefix with a Python
# package installed against it from that copy, then the prefix is moved and
# the copy removed. From the moved prefix: `ktune tune --check` (a check
# compiled against the installed <ktune.h>), a shared program built with
# its ktune.pc and a static one with its ktune-static.pc (no libktune.so
# among what it needs, readelf and ldd say), both tuning on a miss (the
# static one through the ktune-tuner of the `ktune` on PATH, and it says so
# once when there is none), and the Python package (ktune.tune, a launch
# that tunes).
. "$(dirname "$0")/common.bash"
command -v pkg-config >/dev/null || { echo "skipped: no pkg-config"; exit 77; }
PY=${KTUNE_PYTHON:-python3}
SRC=$(pwd)
COPY="$TMP/source"
mkdir -p "$COPY" "$TMP/work"
# The tree as git has it (tracked files and new ones), else all but build folders.
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$SRC" ls-files -z -co --exclude-standard | (cd "$SRC" && xargs -0 cp --parents -t "$COPY" 2>/dev/null)
else
  tar -C "$SRC" --exclude='./build*' -cf - . | tar -C "$COPY" -xf -
fi
[ -f "$COPY/CMakeLists.txt" ] || { fail "copying the source tree"; finish; }
# Build type None (no -O flags): compiling is most of this test's time, and nothing it tunes needs speed.
cmake -S "$COPY" -B "$COPY/build" -DCMAKE_BUILD_TYPE=None -DKTUNE_MPI=OFF >"$TMP/build.log" 2>&1 &&
  cmake --build "$COPY/build" -j"$(nproc)" --target ktune ktune_shared ktune_static ktune-tuner >>"$TMP/build.log" 2>&1 &&
  cmake --install "$COPY/build" --prefix "$TMP/prefix" >>"$TMP/build.log" 2>&1 ||
  { tail -30 "$TMP/build.log" >&2; fail "building and installing the copy"; finish; }
LIBDIR=$(cd "$TMP/prefix" && dirname "$(find . -name libktune.so | head -1)")
"$PY" -m venv "$TMP/venv" >"$TMP/venv.log" 2>&1 &&
  KTUNE_LIBRARY="$TMP/prefix/$LIBDIR/libktune.so" PIP_NO_INDEX=1 "$TMP/venv/bin/python" -m pip install -q \
    --no-build-isolation --no-deps --disable-pip-version-check "$COPY/python" >>"$TMP/venv.log" 2>&1 ||
  { tail -30 "$TMP/venv.log" >&2; fail "pip install of the package against the prefix"; }
cp "$COPY/tests/install/scale.c" "$TMP/work/"
mv "$TMP/prefix" "$TMP/moved"
rm -rf "$COPY"
P="$TMP/moved"
cd "$TMP/work" || exit 1
export PATH="$P/bin:/usr/bin:/bin" PKG_CONFIG_PATH="$P/$LIBDIR/pkgconfig" KTUNE_PRINT_AUTOTUNING=1
unset KTUNE_HELPER

# ktune tune --check: the check includes <ktune.h>, found in the moved prefix.
cat >twice.c <<'K'
// @autotune(U in [1, 2])
// @kernel twice(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 256)
void twice(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
K
cat >check.c <<'K'
#include <ktune.h>
int doubled(const kt_check_args *a) {
  const float *x = a->tensors[0].data, *y = a->tensors[1].data;
  for (uint64_t i = 0; i < a->tensors[1].count; i++)
    if (y[i] != 2 * x[i]) return 0;
  return 1;
}
K
run_status 0 ktune tune twice.c --check check.c:doubled --no-db --quiet
expect_contains "$TMP/out" "U=" "ktune tune --check from the moved prefix"

# The programs, built with the moved prefix's ktune.pc.
cflags=$(pkg-config --cflags ktune) libdir=$(pkg-config --variable=libdir ktune)
# shellcheck disable=SC2086
cc $cflags scale.c -o scale_shared $(pkg-config --libs ktune) -Wl,-rpath,"$libdir" 2>cc.log ||
  { cat cc.log >&2; fail "the shared program"; }
# The static program with the README's line as it is written (ktune-static.pc).
# shellcheck disable=SC2046
cc scale.c -o scale_static $(pkg-config --cflags --libs ktune-static) 2>cc.log || { cat cc.log >&2; fail "the static program"; }
readelf -d scale_static >readelf.txt 2>&1 || fail "readelf -d scale_static"
expect_contains readelf.txt "(NEEDED)" "readelf lists the static program's shared libraries"
grep -q 'libktune\.so' readelf.txt && fail "the static program needs libktune.so: $(grep libktune readelf.txt)"
ldd scale_static >ldd.txt 2>&1
grep -q 'libktune' ldd.txt && fail "ldd finds libktune in the static program: $(grep libktune ldd.txt)"
run_status 0 ./scale_shared
expect_contains "$TMP/err" "key \[N=64\]: tuned " "the shared program tunes (libexec/ktune-tuner beside its library)"
run_status 0 ./scale_static
expect_contains "$TMP/err" "key \[N=64\]: tuned " "the static program tunes (the ktune-tuner of the ktune on PATH)"
PATH=/usr/bin:/bin run_status 0 ./scale_static
expect_contains "$TMP/err" "ktune: kt_launch cannot tune: no ktune-tuner beside" "no ktune on PATH: said"
expect_eq "$(grep -c 'kt_launch cannot tune' "$TMP/err")" 1 "... once"

# The Python package, against the moved library (pkg-config finds it).
run_status 0 "$TMP/venv/bin/python" - <<'PYTHON'
import array, ktune
src = open("twice.c").read()
r = ktune.tune(source=src, no_db=True, budget=2)
assert r.winner is not None and r.sizes == {"N": 256}, r
k = ktune.load(source=src, no_db=True, budget=2)
x = array.array("f", range(256)); y = array.array("f", [0.0] * 256)
k(x, y)
assert list(y) == [2.0 * v for v in range(256)]
print("python ok", ktune.library_path)
PYTHON
expect_contains "$TMP/out" "python ok $P/" "the Python package runs on the moved library"
finish
