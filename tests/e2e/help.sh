# Help for every command: `ktune COMMAND --help`, `-h` and `ktune help
# COMMAND` print the same text, exit 0: the synopsis, what the command does
# and one entry per option that applies to it (what it does, its default).
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" --help
expect_contains "$TMP/out" "ktune help COMMAND" "ktune --help says how to get a command's options"
commands=$(grep -oE '^  ktune [a-z]+( (list|show|export|import|clear))?' "$TMP/out" | sed 's/^  ktune //')
[ "$(echo "$commands" | wc -l)" -ge 11 ] || fail "ktune --help lists too few commands: $commands"
for cmd in $(echo "$commands" | tr ' ' '+'); do
  cmd=$(echo "$cmd" | tr '+' ' ')
  # shellcheck disable=SC2086 # the cache verbs are two words
  run_status 0 "$KTUNE" $cmd --help
  cp "$TMP/out" "$TMP/long"
  head -1 "$TMP/long" | grep -q "^usage: ktune $cmd" || fail "ktune $cmd --help does not open on its usage: $(head -1 "$TMP/long")"
  expect_contains "$TMP/long" "^options:" "ktune $cmd --help lists options"
  expect_contains "$TMP/long" "^  -h, --help " "ktune $cmd --help lists --help"
  # shellcheck disable=SC2086
  run_status 0 "$KTUNE" $cmd -h
  cmp -s "$TMP/out" "$TMP/long" || fail "ktune $cmd -h differs from --help"
  # shellcheck disable=SC2086
  run_status 0 "$KTUNE" help $cmd
  cmp -s "$TMP/out" "$TMP/long" || fail "ktune help $cmd differs from ktune $cmd --help"
done
# Each option entry says what it does; options with a default say it.
run_status 0 "$KTUNE" tune --help
for opt in --budget --strategy --jobs --timeout --compile-timeout --db --seed; do
  grep -A3 -E "^  $opt " "$TMP/out" | grep -q "Default: " || fail "ktune tune --help: $opt gives no default"
done
tr -s ' \n' '  ' <"$TMP/out" >"$TMP/joined"
expect_contains "$TMP/joined" "One of: cpu, opencl, cuda\." "the backends listed from the registry"
expect_contains "$TMP/joined" "ils, forest, forest_align\." "the strategies listed"
# -h anywhere is help, not a file name, and the command does not run.
run_status 0 "$KTUNE" tune kernels/c/matmul.c -h
expect_contains "$TMP/out" "^usage: ktune tune" "tune FILE -h prints help"
[ ! -e "$KTUNE_DB" ] || fail "tune -h tuned"
# The options a command's help lists are the ones it takes: space has no --budget.
run_status 0 "$KTUNE" space --help
grep -q -- "--budget" "$TMP/out" && fail "ktune space --help lists --budget, which space refuses"
run_status 0 "$KTUNE" help cache
[ "$(grep -c '^usage: ktune cache ' "$TMP/out")" = 5 ] || fail "ktune help cache shows the five verbs"
run_status 2 "$KTUNE" help tnue
expect_contains "$TMP/err" 'did you mean `ktune help tune`' "help of a misspelled command"
finish
