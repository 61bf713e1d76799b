# The finalist rounds stop once the leader's slowest sample is faster than
# every other finalist's fastest (after 3 rounds at least): configurations
# far apart settle early, and --json says so.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/rounds_apart.c --json --quiet --no-db
cp "$TMP/out" "$TMP/apart.json"
r='d["timeline"]["finalist_rounds"]'
expect_eq "$(json "$TMP/apart.json" "${r}['settled'] and 3 <= ${r}['done'] < ${r}['planned'] == 7")" True \
  "rounds far apart settled early: $(json "$TMP/apart.json" "${r}")"
expect_eq "$(json "$TMP/apart.json" "d['winner']['config']['U']")" 8 "the fastest won"
finish
