# Edges a person meets: a FIFO given as FILE is
# refused at once instead of blocking; file names and kernel output that are
# not UTF-8 keep --json valid; throughput is printed in the unit that gives
# readable digits; a timeout message names the limit that applied;
# annotations follow C's syntax (a byte-order mark, @-text in strings and
# comments in function bodies).
. "$(dirname "$0")/common.bash"
valid_json() { python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" 2>/dev/null || fail "$2: stdout is not JSON"; }

mkfifo "$TMP/pipe.c"
start=$(date +%s)
timeout 20 "$KTUNE" tune "$TMP/pipe.c" --no-db --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_eq "$rc" 2 "a FIFO as FILE"
expect_contains "$TMP/err" "not a regular file (a FIFO)" "what the FIFO is"
[ $(($(date +%s) - start)) -lt 5 ] || fail "refusing the FIFO took too long"

name=$(printf 'bad\377\376name.c')
cat >"$TMP/$name" <<'K'
#include <stdio.h>
// @autotune(V in [1, 2])
// @kernel f(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 100000)
// @flops(2 * N)
void f(const float *x, float *y, int n) {
  printf("bytes \377\376 that are not UTF-8\n");
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
K
run_status 0 "$KTUNE" tune "$TMP/$name" --no-db --quiet --json
valid_json "$TMP/out" "a file name and kernel output that are not UTF-8"
expect_eq "$(json "$TMP/out" "'\ufffd' in d['file'] and '\ufffd' in d['configurations'][0]['output']")" True \
  "invalid bytes become U+FFFD"

run_status 0 "$KTUNE" tune "$TMP/$name" --no-db --quiet
grep -q "[0-9] [kMGT]FLOP/s" "$TMP/out" || fail "no FLOP/s figure: $(cat "$TMP/out")"
grep -q " 0\.[0-9]* [kMGT]FLOP/s" "$TMP/out" && fail "a figure below 1 in its unit: $(grep FLOP "$TMP/out")"

cat >"$TMP/hang.c" <<'K'
// @autotune(V in [0, 1])
// @kernel h(y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 4)
void h(float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = 1;
  if (V == 1)
    for (volatile int spin = 0;; spin++) {
    }
}
K
run_status 0 "$KTUNE" tune "$TMP/hang.c" --no-db --quiet --json --timeout 1
expect_eq "$(json "$TMP/out" "[c['message'] for c in d['configurations'] if c['config']['V'] == 1][0].startswith('exceeded 3 s: the run timeout of 1 s plus 2 s')")" True "the timeout message"

# Item 2: the annotations are the comment lines above the kernel, after a
# byte-order mark; @-text in a string continued over lines, and prose or
# commented-out attributes inside a function body, are not annotations.
printf '\357\273\277' >"$TMP/syntax.c"
cat >>"$TMP/syntax.c" <<'K'
// @autotune(V in [1, 2])
// @kernel f(y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 16)
void f(float *y, int n) {
  static const char *doc = "\
// @autotune(W in [1, 4])";
  // @dims(N = 8) was too small
  /* @where(V > 1) tried: slower */
  for (int i = 0; i < n; i++) y[i] = (float)V + (doc[0] == '/' ? 0.0f : 1.0f) - V;
}
K
run_status 0 "$KTUNE" tune "$TMP/syntax.c" --no-db --quiet --json
expect_eq "$(json "$TMP/out" "sorted(c['config']['V'] for c in d['configurations'])")" "[1, 2]" \
  "the space of the annotations above the kernel, and only those"
finish
