# One compile per configuration across processes (docs/DESIGN.md, "The
# compile lock"): two ktune processes tuning two keys of one kernel at once,
# with an empty binary cache and a compiler that takes a second, compile each
# configuration once between them; the other loads the binary. Without the
# lock both would compile everything (their compiles overlap by design).
. "$(dirname "$0")/common.bash"
cat >"$TMP/k.c" <<'EOF2'
// @autotune(U in [1, 8])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
void scale(const float *x, float *y, int n) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = 2.0f * x[i + u];
}
EOF2
# A compiler that logs each compile (not --version) and takes a second.
cat >"$TMP/cc" <<EOF2
#!/bin/sh
case "\$*" in
*--version*) exec cc "\$@" ;;
esac
echo "\$\$ \$*" | grep -oE -- '-DU=[0-9]+' >>"$TMP/compiles"
sleep 1
exec cc "\$@"
EOF2
chmod +x "$TMP/cc"
: >"$TMP/compiles"
CC="$TMP/cc" "$KTUNE" tune "$TMP/k.c" --dim N=1000 --db "$TMP/r.db" --json --quiet >"$TMP/a.json" 2>"$TMP/a.err" &
a=$!
CC="$TMP/cc" "$KTUNE" tune "$TMP/k.c" --dim N=2000 --db "$TMP/r.db" --json --quiet >"$TMP/b.json" 2>"$TMP/b.err" &
b=$!
wait $a || fail "the first tuning: exit $?: $(cat "$TMP/a.err")"
wait $b || fail "the second tuning: exit $?: $(cat "$TMP/b.err")"
configs=$(json "$TMP/a.json" "d['valid_size']")
expect_eq "$configs" 4 "the space"
expect_eq "$(sort "$TMP/compiles" | uniq -d)" "" "no configuration compiled twice"
expect_eq "$(wc -l <"$TMP/compiles" | tr -d ' ')" "$configs" "one compile per configuration"
compiled=$(($(json "$TMP/a.json" "d['binary_cache']['compiled']") + $(json "$TMP/b.json" "d['binary_cache']['compiled']")))
cached=$(($(json "$TMP/a.json" "d['binary_cache']['cached']") + $(json "$TMP/b.json" "d['binary_cache']['cached']")))
expect_eq "$compiled" "$configs" "--json: compiled once between the two"
expect_eq "$cached" "$configs" "--json: the other one's loaded"
expect_eq "$(json "$TMP/a.json" "d['winner'] is not None") $(json "$TMP/b.json" "d['winner'] is not None")" \
  "True True" "a winner each"
finish
