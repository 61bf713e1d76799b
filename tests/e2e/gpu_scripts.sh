# The device scripts (tests/gpu/*.sh, bench/*_h200.sh) run only on the GPU
# machine, where a mistake costs device time: here every one must parse, and
# tests/gpu/checks.bash must set what its scripts rely on (ROOT, the working
# directory, OUTDIR from the first argument or $OUT, a fresh WORK) from
# wherever it is sourced.
. "$(dirname "$0")/common.bash"
for f in tests/gpu/*.sh tests/gpu/*.bash bench/*_h200.sh; do
  bash -n "$f" 2>"$TMP/syntax" || { fail "$f does not parse:"; cat "$TMP/syntax" >&2; }
done
# A script beside checks.bash in a copy of the tree, run from elsewhere.
root="$TMP/repo"
mkdir -p "$root/tests/gpu" "$TMP/elsewhere"
cp tests/gpu/checks.bash "$root/tests/gpu/"
probe="$root/tests/gpu/probe.sh"
printf '%s\n' '. "$(dirname "$0")/checks.bash"' 'echo "$ROOT|$PWD|$OUTDIR|$WORK"' >"$probe"
(cd "$TMP/elsewhere" && bash "$probe" "$TMP/out1") >"$TMP/vars" || fail "sourcing checks.bash failed"
IFS='|' read -r r p o w <"$TMP/vars"
expect_eq "$r" "$root" "ROOT"
expect_eq "$p" "$root" "the working directory"
expect_eq "$o" "$TMP/out1" "OUTDIR from the first argument"
[ -d "$TMP/out1" ] || fail "OUTDIR not created"
[ -d "$w" ] && [ -z "$(ls -A "$w")" ] || fail "WORK ($w) is not a fresh empty folder"
rm -rf "$w"
(cd "$TMP/elsewhere" && OUT="$TMP/out2" bash "$probe") >"$TMP/vars" || fail "sourcing checks.bash failed"
IFS='|' read -r r p o w <"$TMP/vars"
expect_eq "$o" "$TMP/out2" "OUTDIR from \$OUT"
rm -rf "$w"
finish
