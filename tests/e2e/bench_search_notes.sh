# What docs/SEARCH.md's figures of search trials and of a space's parts are
# reproduced with stays runnable: every patch of bench/search_trials/ still
# applies to the tree, five of them build and, without their variables, replay
# exactly as the default does; bench/space_parts.py counts a shipped space;
# bench/strategies -t traces every evaluation without changing the replay, and
# space_parts.py --trace accounts for every traced repeat and names where the
# misses ended.
. "$(dirname "$0")/common.bash"
root=$(pwd)
mkdir -p "$TMP/tree"
cp -r include src bench "$TMP/tree/"
for p in bench/search_trials/*.patch; do
  (cd "$TMP/tree" && patch -s -p1 --dry-run <"$root/$p") >"$TMP/patch.err" 2>&1 || {
    fail "$p no longer applies:"
    cat "$TMP/patch.err" >&2
  }
done
args="-r 3 -s 1 -b 40 -S forest_align -v tests/data/t4/convolution_A4000.json.gz"
bench/build_replay_tool.sh strategies "$TMP/strategies" || fail "bench/strategies.c does not build"
# shellcheck disable=SC2086
"$TMP/strategies" $args >"$TMP/default.md" 2>/dev/null
# shellcheck disable=SC2086
bench/search_trials/run.sh random_start.patch $args >"$TMP/trial.md" 2>/dev/null || fail "search_trials/run.sh failed"
grep -q '^| forest_align | 40 |' "$TMP/default.md" || fail "no replay row from bench/strategies"
cmp -s "$TMP/default.md" "$TMP/trial.md" || fail "random_start.patch without KT_INIT replays differently from the default"
# shellcheck disable=SC2086
bench/search_trials/run.sh escapes.patch $args >"$TMP/escapes.md" 2>/dev/null || fail "search_trials/run.sh escapes.patch failed"
cmp -s "$TMP/default.md" "$TMP/escapes.md" || fail "escapes.patch without its variables replays differently from the default"
# shellcheck disable=SC2086
bench/search_trials/run.sh joint_limit.patch $args >"$TMP/joint.md" 2>/dev/null || fail "search_trials/run.sh joint_limit.patch failed"
cmp -s "$TMP/default.md" "$TMP/joint.md" || fail "joint_limit.patch without KT_JOINT replays differently from the default"
# shellcheck disable=SC2086
bench/search_trials/run.sh coverage.patch $args >"$TMP/coverage.md" 2>/dev/null || fail "search_trials/run.sh coverage.patch failed"
cmp -s "$TMP/default.md" "$TMP/coverage.md" || fail "coverage.patch without its variables replays differently from the default"
# shellcheck disable=SC2086
bench/search_trials/run.sh unseen_parts.patch $args >"$TMP/unseen.md" 2>/dev/null || fail "search_trials/run.sh unseen_parts.patch failed"
cmp -s "$TMP/default.md" "$TMP/unseen.md" || fail "unseen_parts.patch without KT_UP replays differently from the default"
# misses.sh sums the per-seed lines: seed 1 alone is the -v line of the same replay.
bench/search_trials/misses.sh - forest_align 1 tests/data/t4/convolution_A4000.json.gz >"$TMP/misses" ||
  fail "search_trials/misses.sh failed"
"$TMP/strategies" -r 50 -s 1 -b 100 -S forest_align -v tests/data/t4/convolution_A4000.json.gz 2>"$TMP/seed1" >/dev/null
expect_eq "$(cat "$TMP/misses")" "$(awk '{printf "%s: mean %.4f, %d repeats under 0.80\n", $1, $5, $11}' "$TMP/seed1")" \
  "misses.sh's sum over one seed"
# grid.sh counts as misses.sh does, for each variant (a setting nothing reads replays as the default).
printf 'default\nunread KT_NOTHING=1\n' >"$TMP/variants"
bench/search_trials/grid.sh "$TMP/strategies" "$TMP/variants" 1 "$TMP/grid" tests/data/t4/convolution_A4000.json.gz >/dev/null ||
  fail "search_trials/grid.sh failed"
for v in default unread; do
  expect_eq "$(sed -n "s/^$v //p" "$TMP/grid/summary.txt")" "$(sed 's/$/ (1 seeds)/' "$TMP/misses")" "grid.sh's $v line"
done
python3 bench/space_parts.py tests/data/t4/convolution_A4000.json.gz >"$TMP/parts" || fail "space_parts.py failed"
expect_contains "$TMP/parts" "4362 recorded, 4201 run, 28 at or above 0.80" "the space's counts"
expect_contains "$TMP/parts" "part 1,4,0,0,0 holds 8 of the 28" "the part that holds the most"
# --names: a row per short name and value (4 + 4 + 2 + 2 + 2), and at the part's own values
# the best with the part's other names is the part's best.
python3 bench/space_parts.py tests/data/t4/convolution_A4000.json.gz --names --top 1000 >"$TMP/names" || fail "space_parts.py --names failed"
part_best=$(sed -n 's/^| 1,4,0,0,0 | [0-9]* | [0-9.]* | \([0-9.]*\) | .*/\1/p' "$TMP/names")
[ "$(grep -c '^| \(tile_size_[xy]\|read_only\|use_padding\|use_shmem\) |' "$TMP/names")" = 14 ] ||
  fail "space_parts.py --names should print 14 rows of values"
for row in "tile_size_x | 1 " "tile_size_y | 4 " "read_only | 0 " "use_padding | 0 " "use_shmem | 0 "; do
  grep -q "^| $row| [0-9.]* | [0-9.]* | ${part_best:-none} |\$" "$TMP/names" ||
    fail "space_parts.py --names: $row at the part's value should reach the part's best (${part_best:-none})"
done
expect_contains "$TMP/names" "| use_padding | 1 | 0.400 | 0.797 | - |" "a value the part never takes beside its other names"
# --climb: by median every part climbs to one; by best two ends share the 96 starts.
python3 bench/space_parts.py tests/data/t4/convolution_A4000.json.gz --climb >"$TMP/climb" || fail "space_parts.py --climb failed"
expect_contains "$TMP/climb" "climbing by median, from the 96 parts: 1,4,0,0,1 (median 0.660, best 0.809) from 96" "the climb by median"
expect_contains "$TMP/climb" "climbing by best, from the 96 parts: 2,4,0,0,0 (median 0.311, best 1.000) from 65; 4,4,1,0,1 (median 0.496, best 0.806) from 31" "the climb by best"
# shellcheck disable=SC2086
"$TMP/strategies" $args -t "$TMP/trace" >"$TMP/traced.md" 2>"$TMP/traced.err" || fail "strategies -t failed"
cmp -s "$TMP/default.md" "$TMP/traced.md" || fail "a traced replay differs from the untraced one"
[ "$(grep -vc '^#' "$TMP/trace")" = 120 ] || fail "the trace should hold 3 repeats of 40 evaluations"
expect_contains "$TMP/trace" "# convolution_A4000.json.gz names block_size_x" "the trace's names line"
# The mean of each repeat's best traced fraction is the replay's mean.
traced_mean=$(awk '!/^#/ {if ($6 > b[$4]) b[$4] = $6} END {for (r in b) s += b[r]; printf "%.6f", s / 3}' "$TMP/trace")
replay_mean=$(sed -n 's/.* mean \([0-9.]*\) .*/\1/p' "$TMP/traced.err")
awk -v t="$traced_mean" -v r="$replay_mean" 'BEGIN {d = t - r; exit !(r != "" && d < 0.0001 && d > -0.0001)}' ||
  fail "the trace's mean of best fractions ($traced_mean) is not the replay's mean (${replay_mean:-none})"
python3 bench/space_parts.py tests/data/t4/convolution_A4000.json.gz --trace "$TMP/trace" >"$TMP/parts_traced" ||
  fail "space_parts.py --trace failed"
counted=$(sed -n 's/^forest_align, 40 evaluations: \([0-9]*\) repeats.*/\1/p' "$TMP/parts_traced" | awk '{s += $1} END {print s}')
[ "$counted" = 3 ] || fail "space_parts.py --trace accounted for ${counted:-no} repeats, not 3"
# Parts sampled per repeat: at least one, at most the 40 evaluations, and the trace's own count.
parts=$(sed -n 's/^forest_align, 40 evaluations: \([0-9.]*\) parts sampled per repeat (mean)$/\1/p' "$TMP/parts_traced")
names=$(sed -n 's/^# convolution_A4000.json.gz names //p' "$TMP/trace")
want=$(awk -v names="$names" 'BEGIN {n = split(names, nm); for (i = 1; i <= n; i++) if (nm[i] ~ /^(tile_size_[xy]|read_only|use_padding|use_shmem)$/) keep[i] = 1}
  !/^#/ {k = $4; for (i = 1; i <= n; i++) if (keep[i]) k = k "," $(6 + i); if (!(k in seen)) {seen[k] = 1; c++}}
  END {printf "%.1f", c / 3}' "$TMP/trace")
expect_eq "${parts:-none}" "$want" "space_parts.py --trace's parts sampled per repeat"
# With a goal none reaches, every repeat misses, and the end it names is one repeat's best.
python3 bench/space_parts.py tests/data/t4/convolution_A4000.json.gz --goal 0.999 --trace "$TMP/trace" >"$TMP/ends" ||
  fail "space_parts.py --trace --goal 0.999 failed"
expect_contains "$TMP/ends" "3 repeats under 1.00" "every repeat under the goal"
end=$(sed -n 's/^forest_align, 40 evaluations: [1-3] of the 3 repeats under 1.00 ended on .* (\([0-9.]*\))$/\1/p' "$TMP/ends")
awk '!/^#/ {if ($6 > b[$4]) b[$4] = $6} END {for (r in b) printf "%.4f\n", b[r]}' "$TMP/trace" | grep -qx "${end:-none}" ||
  fail "space_parts.py --trace named no repeat's end (${end:-no line})"
finish
