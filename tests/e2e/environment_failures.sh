# The machine's failures are not the configuration's (issue 26 item 3): a
# compiler that stops on a full disk ("No space left on device", as cc1
# says when TMPDIR fills) or that is missing stops the tuning with an error
# and exit status not 0, stores no failure for that configuration, and the
# next run, with space again, builds and measures it. A full disk is
# simulated by a compiler wrapper (no root, no tmpfs in CI).
. "$(dirname "$0")/common.bash"

cat >"$TMP/k.c" <<'SRC'
// @autotune(U in [1, 2], B in [1, 2])
// @kernel sc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 2000)
void sc(const float *x, float *y, int n) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = (float)B * x[i + u] / (float)B;
}
SRC
# The disk fills when the U=2 configurations are built.
cat >"$TMP/fullcc" <<'SH'
#!/bin/sh
case " $* " in *" -DU=2 "*) echo "cc1: fatal error: error writing to /tmp/ccAbc.s: No space left on device" >&2; exit 1;; esac
exec cc "$@"
SH
chmod +x "$TMP/fullcc"

CC="$TMP/fullcc" "$KTUNE" tune "$TMP/k.c" --quiet >"$TMP/out" 2>"$TMP/err"
st=$?
[ $st -ne 0 ] || fail "a full disk ended the tuning with exit status 0"
expect_contains "$TMP/err" "the machine, not the configuration, failed building U=2" "the machine's failure named"
expect_contains "$TMP/err" "No space left on device" "the compiler's words kept"
run_status 0 "$KTUNE" cache export --kernel sc
expect_eq "$(json "$TMP/out" "sorted({r['status'] for k in d['keys'] for r in k['results']})")" "['ok']" \
  "no compile failure stored"
expect_eq "$(json "$TMP/out" "[k['winner'] for k in d['keys']]")" "[None]" "no winner crowned from a partial run"

# With space again the U=2 configurations are built and measured.
run_status 0 "$KTUNE" tune "$TMP/k.c" --quiet --json
run_status 0 "$KTUNE" cache export --kernel sc
expect_eq "$(json "$TMP/out" "sorted(r['config'] for k in d['keys'] for r in k['results'] if r['status'] == 'ok')")" \
  "['U=1 B=1', 'U=1 B=2', 'U=2 B=1', 'U=2 B=2']" "the next run measures what the full disk stopped"

# A missing compiler is the machine's too: nothing stored.
CC=/nonexistent/cc "$KTUNE" tune "$TMP/k.c" --dim N=300 --quiet >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] || fail "a missing compiler ended with exit status 0"
expect_contains "$TMP/err" "cannot run the C compiler" "missing compiler named"
run_status 1 "$KTUNE" cache export --kernel sc --key N=300 # not even its key
finish
