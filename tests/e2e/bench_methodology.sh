# bench/methodology scores repeats another tool made (-x, the way Kernel
# Tuner's strategies are scored beside ktune's, docs/SEARCH.md): repeats it
# wrote itself with -t and reads back score as the replay did; a repeat's
# best made worse scores lower; a missing file is an error. Builds the bench
# program as bench/methodology.sh does (bench/build_replay_tool.sh).
. "$(dirname "$0")/common.bash"
F=tests/data/t4/convolution_A4000.json.gz
bench/build_replay_tool.sh methodology "$TMP/methodology" || { fail "bench/methodology does not build"; finish; }
score() { sed -n "s/^| $1 | \([-0-9.]*\) |.*/\1/p" "$TMP/out"; }

mkdir "$TMP/tr"
run_status 0 "$TMP/methodology" -r 5 -s 1 -S ils -t "$TMP/tr" $F
replayed=$(score ils)
[ -n "$replayed" ] || fail "no score of the replay: $(cat "$TMP/out")"
[ -s "$TMP/tr/ils_convolution_A4000.tsv" ] || fail "-t wrote no repeats"
run_status 0 "$TMP/methodology" -S ils -x "$TMP/tr" $F
expect_eq "$(score ils)" "$replayed" "the repeats read back score as replayed"

# The same repeats with every best so far 1.5 times slower: a worse curve.
awk '{ printf "%s %s %s\n", $1, $2, ($3 == "nan" ? "nan" : $3 * 1.5) }' "$TMP/tr/ils_convolution_A4000.tsv" \
  >"$TMP/tr/slower_convolution_A4000.tsv"
run_status 0 "$TMP/methodology" -S slower -x "$TMP/tr" $F
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]) - 0.1)" "$(score slower)" "$replayed" ||
  fail "slower repeats: $(score slower), not below $replayed"

run_status 1 "$TMP/methodology" -S absent -x "$TMP/tr" $F
expect_contains "$TMP/err" "absent_convolution_A4000.tsv: cannot read repeats" "a missing file is named"
finish
