# bench/heldout_all.sh (docs/SEARCH.md, "Held-out files") gathers a job per
# strategy and file into tables whose every row is there and whose figures
# are those the bench programs print for the same replay.
. "$(dirname "$0")/common.bash"
bench/build_replay_tool.sh strategies "$TMP/strategies" || fail "bench/strategies does not build"
bench/build_replay_tool.sh methodology "$TMP/methodology" || fail "bench/methodology does not build"
run_status 0 bench/heldout_all.sh "$TMP/strategies" "$TMP/methodology" tests/data/t4 1 "$TMP/h"
t="$TMP/h/tables.md"
[ "$(grep -c '^| [a-z_]* | [0-9]* | [0-9.]* | [0-9.]* | \*\*[0-9.]*\*\* |$' "$t")" = 30 ] ||
  fail "want 30 rows of mean fractions (6 strategies, 5 budgets, 2 files): $(cat "$t")"
[ "$(grep -c '^| [a-z_]* | [0-9.]* ([0-9]*) | [0-9.]* ([0-9]*) |$' "$t")" = 6 ] || fail "want 6 rows of worst repeats"
[ "$(grep -c '^| [a-z_]* | -\{0,1\}[0-9.]* | -\{0,1\}[0-9.]* | \*\*-\{0,1\}[0-9.]*\*\* |$' "$t")" = 6 ] ||
  fail "want 6 rows of scores"
# The same replay from the bench programs directly: the mean fraction at 100
# evaluations and the score, file by file.
"$TMP/strategies" -r 1 -s 1 -b 100 -S forest_align tests/data/t4/convolution_A4000.json.gz >"$TMP/one" 2>/dev/null
want=$(sed -n 's/^| forest_align | 100 | \([0-9.]*\) |.*/\1/p' "$TMP/one")
expect_contains "$t" "| forest_align | 100 | ${want:-none} |" "forest_align's fraction at 100 on convolution_A4000"
"$TMP/methodology" -r 1 -s 1 -S genetic tests/data/t4/*.json.gz >"$TMP/score"
want=$(sed -n 's/^| genetic | \(.*\) | \*\*.*/\1/p' "$TMP/score")
expect_contains "$t" "| genetic | ${want:-none} | **" "genetic's scores"
run_status 2 bench/heldout_all.sh "$TMP/strategies" "$TMP/methodology" "$TMP/none" 1 "$TMP/h2"
expect_contains "$TMP/err" "no T4 results files" "an empty folder is named"
finish
