# ktune(1) says what `ktune COMMAND --help` says: its SYNOPSIS, COMMANDS and
# OPTIONS are the output of `ktune help --man`, printed from the same table
# (cli/options.c) as every command's --help; scripts/update-manpage.sh
# writes them in. The page is valid roff as far as man can tell when man is
# installed, and carries the program's version.
. "$(dirname "$0")/common.bash"
PAGE=docs/ktune.1
"$KTUNE" help --man >"$TMP/sections" || fail "ktune help --man exited $?"
awk '/^\.\\" BEGIN ktune help --man$/ {on = 1; next} /^\.\\" END ktune help --man$/ {on = 0} on' "$PAGE" >"$TMP/page"
[ -s "$TMP/page" ] || fail "$PAGE has no generated block between its BEGIN and END lines"
diff -u "$TMP/page" "$TMP/sections" >"$TMP/diff" ||
  { fail "$PAGE differs from \`ktune help --man\` (run scripts/update-manpage.sh build/ktune):"; head -40 "$TMP/diff" >&2; }
# Every option a command's --help lists has its entry on the page.
for opt in $("$KTUNE" help tune | grep -oE '^  (-[a-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
  grep -q "^\\\\fB$(printf %s "$opt" | sed 's/-/\\\\-/g')\\\\fR" "$PAGE" || fail "$opt of ktune tune --help is not on $PAGE"
done
# The version on the page is the program's.
version=$("$KTUNE" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
grep -q "^\.TH KTUNE 1 .*\"ktune $version\"" "$PAGE" || fail "$PAGE's .TH does not say ktune $version"
if command -v man >/dev/null 2>&1; then
  MANWIDTH=100 man -l "$PAGE" >"$TMP/rendered" 2>"$TMP/man_err" || fail "man -l $PAGE failed: $(cat "$TMP/man_err")"
  [ ! -s "$TMP/man_err" ] || fail "man -l $PAGE warned: $(cat "$TMP/man_err")"
  grep -q "ktune - a kernel autotuner" "$TMP/rendered" || fail "the rendered page lacks its NAME line"
  grep -q -- "--budget N|Ns" "$TMP/rendered" || fail "the rendered page lacks --budget"
fi
finish
