# ktune(1) in step with `ktune --help`: every command and option of the usage
# text has an entry (.TP and a bold name) in docs/ktune.1's COMMANDS or
# OPTIONS, and every entry there is in the usage text; the page is valid
# roff as far as man can tell when man is installed.
. "$(dirname "$0")/common.bash"
PAGE=docs/ktune.1
"$KTUNE" --help >"$TMP/help" || fail "ktune --help exited $?"

# The names the usage text gives: commands (the word after "ktune") and options.
grep -oE '^  ktune [a-z-]+' "$TMP/help" | awk '{print $2}' | grep -v '^--' | sort -u >"$TMP/help_commands"
grep -oE -- '--[a-z][a-z0-9-]*' "$TMP/help" | sort -u >"$TMP/help_options"
echo "--help" >>"$TMP/help_options"
sort -u -o "$TMP/help_options" "$TMP/help_options"

# The page's entries: the first word of the line after each .TP, roff's \- undone.
awk '/^\.SH/ {section=$2} prev=="TP" && (section=="COMMANDS" || section=="OPTIONS") {print} {prev=substr($0,2,2)}' \
  "$PAGE" | sed -E 's/\\-/-/g; s/^\.B[IR]? +//; s/"//g' | awk '{print $1}' | sort -u >"$TMP/page_entries"
grep -E '^--' "$TMP/page_entries" >"$TMP/page_options"
grep -vE '^--' "$TMP/page_entries" | sed -E 's/\\fR.*//' >"$TMP/page_commands"

missing=$(comm -23 "$TMP/help_options" "$TMP/page_options")
[ -z "$missing" ] || fail "ktune --help has options docs/ktune.1 does not describe: $missing"
extra=$(comm -13 "$TMP/help_options" "$TMP/page_options")
[ -z "$extra" ] || fail "docs/ktune.1 describes options ktune --help does not have: $extra"
missing=$(comm -23 "$TMP/help_commands" "$TMP/page_commands")
[ -z "$missing" ] || fail "ktune --help has commands docs/ktune.1 does not describe: $missing"
extra=$(comm -13 "$TMP/help_commands" "$TMP/page_commands")
[ -z "$extra" ] || fail "docs/ktune.1 describes commands ktune --help does not have: $extra"
# The version on the page is the program's.
version=$("$KTUNE" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
grep -q "^\.TH KTUNE 1 .*\"ktune $version\"" "$PAGE" || fail "docs/ktune.1's .TH does not say ktune $version"
if command -v man >/dev/null 2>&1; then
  MANWIDTH=100 man -l "$PAGE" >"$TMP/rendered" 2>"$TMP/man_err" || fail "man -l $PAGE failed: $(cat "$TMP/man_err")"
  grep -q "ktune - a kernel autotuner" "$TMP/rendered" || fail "the rendered page lacks its NAME line"
fi
finish
