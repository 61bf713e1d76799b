# Unwritten is poison, whatever the reference holds (issue 26 item 7): the
# reference computes NaN for y[0] (the very bits of the float poison), and
# the U=2 configuration never writes y[0]. Compared as before, poison NaN
# matched the reference's NaN and U=2 passed; it is now run again from a
# second poison and fails, and U=4, which writes everything, stays ok.
. "$(dirname "$0")/common.bash"

cat >"$TMP/k.c" <<'SRC'
// @autotune(U in [1, 2, 4])
// @kernel nanfirst(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 4096)
#include <math.h>
void nanfirst(const float *x, float *y, int n) {
  for (int i = (U == 2); i < n; i++) y[i] = i == 0 ? NAN : x[i];
}
SRC
run_status 0 "$KTUNE" tune "$TMP/k.c" --json --quiet --no-db
expect_eq "$(json "$TMP/out" "sorted((t['config']['U'], t['status']) for t in d['configurations'])")" \
  "[(1, 'ok'), (2, 'correctness'), (4, 'ok')]" "the configuration that leaves y[0] unwritten fails"
expect_eq "$(json "$TMP/out" "[t['message'] for t in d['configurations'] if t['config']['U'] == 2][0].split(': got')[0]")" \
  "it leaves elements unwritten where its reference holds NaN or the poison's bytes (run again from a second poison, they keep it): y[0]" \
  "it says what it left unwritten"
finish
