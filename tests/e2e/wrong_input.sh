# Wrong input is never silent: an option of another command is an error, a
# misspelled one gets a "did you mean", and a read command asked for what is
# not there (a --db path that does not exist, a kernel nothing was stored
# for) says so with exit status 1 and creates no database.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune kernels/c/matmul.c --dim M=32 --dim N=32 --dim K=32 --budget 2 --quiet
[ -e "$KTUNE_DB" ] || fail "the tuning stored nothing"

# Options that do not apply: exit 2, naming the commands that take them.
run_status 2 "$KTUNE" space kernels/c/matmul.c --budget 10
expect_contains "$TMP/err" "--budget does not apply to \`ktune space\` (it is an option of tune, bench and replay" "space --budget"
run_status 2 "$KTUNE" cache list --format csv
expect_contains "$TMP/err" "--format does not apply to \`ktune cache list\`" "cache list --format"
run_status 2 "$KTUNE" devices --db "$TMP/x.db"
expect_contains "$TMP/err" "--db does not apply to \`ktune devices\`" "devices --db"
run_status 2 "$KTUNE" report --budget 3
expect_contains "$TMP/err" "--budget does not apply to \`ktune report\`" "report --budget"
run_status 2 "$KTUNE" tune kernels/c/matmul.c --repeats 3 --no-db
expect_contains "$TMP/err" "--repeats does not apply to \`ktune tune\` (it is an option of replay" "tune --repeats"

# Misspelled: did you mean.
run_status 2 "$KTUNE" tune kernels/c/matmul.c --budgte 3 --no-db
expect_contains "$TMP/err" "unknown option --budgte; did you mean --budget?" "a misspelled option"
run_status 2 "$KTUNE" cache show --kernle matmul
expect_contains "$TMP/err" "unknown option --kernle; did you mean --kernel?" "a swapped letter"
run_status 2 "$KTUNE" cache shwo
expect_contains "$TMP/err" "cache shwo: unknown verb; did you mean show?" "a misspelled verb"

# Nothing matches: exit 1, named.
run_status 1 "$KTUNE" cache show --kernel nosuch
expect_contains "$TMP/err" "no stored tuning matches kernel nosuch" "cache show of an unknown kernel"
[ -s "$TMP/out" ] && fail "cache show --kernel nosuch printed: $(cat "$TMP/out")"
run_status 0 "$KTUNE" cache show --kernel matmul

# A --db that does not exist: exit 1 for every read command, nothing created.
for cmd in "cache list" "cache show" "cache export" "cache clear" "report"; do
  # shellcheck disable=SC2086 # the cache verbs are two words
  run_status 1 "$KTUNE" $cmd --db "$TMP/typo.db"
  expect_contains "$TMP/err" "no results database at $TMP/typo.db" "$cmd with a mistyped --db"
  [ ! -e "$TMP/typo.db" ] || { fail "$cmd created $TMP/typo.db"; rm -f "$TMP/typo.db"; }
done
finish
