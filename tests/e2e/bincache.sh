# The binary cache (docs/STORE.md, "The binary cache"): a second key of a
# tuned kernel compiles nothing, on the CPU backend and on OpenCL (PoCL); an
# edited header is a new key; a corrupted, truncated or foreign entry is
# rebuilt and the tuning stays right; two tunings at once share the cache;
# the size limit evicts; --no-binary-cache, KTUNE_BINARY_CACHE=off and
# `ktune cache clear --binaries`.
. "$(dirname "$0")/common.bash"
BIN=$KTUNE_BINARY_CACHE

cat >"$TMP/scale.h" <<'EOF2'
#define FACTOR 3.0f
EOF2
cat >"$TMP/scale.c" <<'EOF2'
#include <stddef.h>
#include "scale.h"
// @autotune(U in [1, 8], B in [1, 2])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 20000)
void scale(const float *x, float *y, int n) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = FACTOR * (float)B * x[i + u] / (float)B;
}
EOF2
CONFIGS=8

# tune_key N [FLAGS...]: tunes scale.c at size N into $TMP/t.json, checks
# that every configuration verified.
tune_key() {
  n=$1; shift
  run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N="$n" --json --quiet "$@"
  cp "$TMP/out" "$TMP/t.json"
  expect_eq "$(json "$TMP/t.json" "sorted(set(c['status'] for c in d['configurations']))")" "['ok']" \
    "N=$n: every configuration ok"
  expect_eq "$(json "$TMP/t.json" "len(d['configurations'])")" $CONFIGS "N=$n: every configuration tried"
}
counts() { json "$TMP/t.json" "'%d %d %d' % tuple(d['binary_cache'][k] for k in ('cached', 'compiled', 'rebuilt'))"; }
entries() { find "$BIN" -name '*.ktbin' | wc -l; }

# A first key compiles and stores every configuration; a second compiles none.
tune_key 20000
expect_eq "$(counts)" "0 $CONFIGS 0" "first key: all compiled"
expect_eq "$(json "$TMP/t.json" "d['binary_cache']['path']")" "$BIN" "the cache's folder"
expect_eq "$(entries)" $CONFIGS "one entry per configuration"
tune_key 30000
expect_eq "$(counts)" "$CONFIGS 0 0" "second key: nothing compiled"
expect_eq "$(json "$TMP/t.json" "set(c['compile'] for c in d['configurations'])")" "{'cached'}" \
  "second key: every configuration's compile is 'cached'"
run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=30001 --quiet
expect_contains "$TMP/out" "binary cache: $CONFIGS cached, 0 compiled" "the table's line"

# An edited header is a new key: everything compiles again.
echo '#define FACTOR 2.0f' >"$TMP/scale.h"
tune_key 40000
expect_eq "$(counts)" "0 $CONFIGS 0" "edited include: all compiled"

# Three damaged entries: a flipped payload byte, a truncated file, a foreign
# file. Each is rebuilt (and removed first), the tuning is right.
set -- $(ls -t "$BIN"/*.ktbin | head -3)
python3 - "$1" "$2" "$3" <<'EOF2'
import sys
flip, cut, foreign = sys.argv[1:4]
b = bytearray(open(flip, "rb").read()); b[len(b) // 2] ^= 0xFF; open(flip, "wb").write(b)
b = open(cut, "rb").read(); open(cut, "wb").write(b[: len(b) - 7])
open(foreign, "wb").write(b"not a ktune binary" * 20)
EOF2
tune_key 50000
expect_eq "$(counts)" "$((CONFIGS - 3)) 0 3" "damaged entries rebuilt"
expect_eq "$(json "$TMP/t.json" "d['winner']['status']")" ok "winner after rebuilding"
tune_key 60000
expect_eq "$(counts)" "$CONFIGS 0 0" "rebuilt entries serve the next key"

# The cache trusts only its owner (issue 26 item 4): an entry others can
# write, or another user owns, is never loaded (rebuilt instead); a folder
# others can write, another user's folder, or a path that is a file is
# refused, exit 2, saying why and how to fix it.
set -- $(ls -t "$BIN"/*.ktbin | head -2)
chmod 666 "$1"
[ "$(id -u)" = 0 ] && chown nobody "$2" || chmod 606 "$2"
tune_key 65000
expect_eq "$(counts)" "$((CONFIGS - 2)) 0 2" "entries others can write or own are rebuilt"
chmod 777 "$BIN"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --quiet
expect_contains "$TMP/err" "can be written by every user (mode 777)" "world-writable folder refused"
expect_contains "$TMP/err" "chmod go-w" "the fix is named"
chmod 700 "$BIN"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$TMP/theirs" && chown nobody "$TMP/theirs" && chmod 700 "$TMP/theirs"
  run_status 2 env KTUNE_BINARY_CACHE="$TMP/theirs" "$KTUNE" tune "$TMP/scale.c" --quiet
  expect_contains "$TMP/err" "belongs to user" "another user's folder refused"
fi
: >"$TMP/a_file"
run_status 2 env KTUNE_BINARY_CACHE="$TMP/a_file" "$KTUNE" tune "$TMP/scale.c" --quiet
expect_contains "$TMP/err" "is not a folder" "a file as the cache refused"

# A quoted include the cache cannot hash (not beside the file: the compiler
# finds it among the system's headers) keeps the kernel's builds out of the
# cache, and the tuning says why.
sed 's|#include "scale.h"|#include "scale.h"\n#include "math.h"|' "$TMP/scale.c" >"$TMP/scale_math.c"
for n in 1000 2000; do
  run_status 0 "$KTUNE" tune "$TMP/scale_math.c" --dim N=$n --json --quiet
  cp "$TMP/out" "$TMP/t.json"
  expect_eq "$(counts)" "0 $CONFIGS 0" "an include not beside the file: N=$n compiles"
done
expect_eq "$(json "$TMP/t.json" "'math.h' in d['binary_cache']['not_cached']")" True "not_cached names the include"

# Off: nothing cached or stored.
tune_key 70000 --no-binary-cache
expect_eq "$(counts)" "0 $CONFIGS 0" "--no-binary-cache compiles"
expect_eq "$(json "$TMP/t.json" "d['binary_cache']['path']")" None "--no-binary-cache: no folder"
KTUNE_BINARY_CACHE=off tune_key 70001
expect_eq "$(counts)" "0 $CONFIGS 0" "KTUNE_BINARY_CACHE=off compiles"

# Two tunings at once on a fresh cache (each its own database): both right,
# no temporary file left, and every entry they wrote serves a third key.
export KTUNE_BINARY_CACHE="$TMP/shared"
for i in 1 2; do
  KTUNE_DB="$TMP/db$i.db" "$KTUNE" tune "$TMP/scale.c" --dim N=8000$i --json --quiet >"$TMP/c$i.json" 2>"$TMP/c$i.err" &
done
wait %1 || fail "concurrent tuning 1 failed: $(cat "$TMP/c1.err")"
wait %2 || fail "concurrent tuning 2 failed: $(cat "$TMP/c2.err")"
for i in 1 2; do
  expect_eq "$(json "$TMP/c$i.json" "sorted(set(c['status'] for c in d['configurations']))")" "['ok']" \
    "concurrent tuning $i: every configuration ok"
done
expect_eq "$(find "$TMP/shared" -name '.tmp-*' | wc -l)" 0 "no temporary file left"
tune_key 80003
expect_eq "$(counts)" "$CONFIGS 0 0" "after concurrent tunings: a third key compiles nothing"

# The size limit: three entries' worth keeps at most three.
one=$(stat -c %s "$(ls "$TMP/shared"/*.ktbin | head -1)")
export KTUNE_BINARY_CACHE="$TMP/small"
KTUNE_BINARY_CACHE_MAX=$((3 * one + one / 2)) tune_key 90000
[ "$(find "$TMP/small" -name '*.ktbin' | wc -l)" -le 3 ] || fail "the size limit did not evict"
[ "$(du -sb "$TMP/small" | cut -f1)" -le $((3 * one + one / 2 + 4096)) ] || fail "over the size limit"
run_status 2 env KTUNE_BINARY_CACHE_MAX=lots "$KTUNE" tune "$TMP/scale.c" --quiet
expect_contains "$TMP/err" "KTUNE_BINARY_CACHE_MAX=lots" "a malformed limit is named"

# cache clear --binaries empties the folder; the results stay.
export KTUNE_BINARY_CACHE="$TMP/shared"
run_status 0 "$KTUNE" cache clear --binaries
expect_contains "$TMP/out" "removed $CONFIGS compiled binaries" "clear --binaries"
expect_eq "$(find "$TMP/shared" -name '*.ktbin' | wc -l)" 0 "cleared"
run_status 0 "$KTUNE" cache list --kernel scale
expect_contains "$TMP/out" "scale" "results kept"
run_status 2 "$KTUNE" cache list --binaries

# OpenCL (PoCL, as in tests/e2e/opencl_tune.sh): program binaries, the same way.
cat >"$TMP/add.cl" <<'EOF2'
// @autotune(ITEMS in [1, 8])
// @kernel add(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid((N + 64 * ITEMS - 1) / (64 * ITEMS))
// @block(64)
// @dims(N = 4096)
__kernel void add(__global const float *x, __global float *y, int n) {
for (int k = 0; k < ITEMS; k++) {
  int i = (get_global_id(0) * ITEMS) + k;
  if (i < n) y[i] = x[i] + 1.0f;
}
}
EOF2
for n in 4096 5000; do
  run_status 0 "$KTUNE" tune "$TMP/add.cl" --dim N=$n --json --quiet
  cp "$TMP/out" "$TMP/t.json"
  expect_eq "$(json "$TMP/t.json" "sorted(set(c['status'] for c in d['configurations']))")" "['ok']" \
    "opencl N=$n: every configuration ok"
done
expect_eq "$(counts)" "4 0 0" "opencl second key: nothing built from source"
set -- $(ls -t "$TMP/shared"/*.ktbin | head -1)
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[-5]^=1; open(p,'wb').write(b)" "$1"
run_status 0 "$KTUNE" tune "$TMP/add.cl" --dim N=6000 --json --quiet
cp "$TMP/out" "$TMP/t.json"
expect_eq "$(counts)" "3 0 1" "opencl: a damaged program binary is rebuilt"
expect_eq "$(json "$TMP/t.json" "d['winner']['status']")" ok "opencl winner after rebuilding"
finish
