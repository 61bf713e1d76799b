# The finalist rounds stop once every other finalist is apart from the leader
# (its fastest sample slower than the leader's slowest) or tied with it (after
# 3 rounds at least): configurations far apart settle early, tied ones too,
# and --json says so (a winner within its noise of the runner-up is a tie in
# --json and the table); a key whose every configuration is stored keeps its
# stored winner without rounds.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/rounds_apart.c --json --quiet --no-db
cp "$TMP/out" "$TMP/apart.json"
r='d["timeline"]["finalist_rounds"]'
expect_eq "$(json "$TMP/apart.json" "${r}['settled'] and 3 <= ${r}['done'] < ${r}['planned'] == 7")" True \
  "rounds far apart settled early: $(json "$TMP/apart.json" "${r}")"
expect_eq "$(json "$TMP/apart.json" "d['winner']['config']['U']")" 8 "the fastest won"
expect_eq "$(json "$TMP/apart.json" "${r}['tied'] or ${r}['kept_stored_winner']")" False "apart is not tied"
expect_eq "$(json "$TMP/apart.json" "(d['winner_within_noise'], d['runner_up']['config']['U'])")" "(False, 4)" \
  "a winner 4x the runner-up is not within its noise"

# On a terminal the bar's "screening best" is the first pass's; its last
# state shows the winner's time, the finalist rounds' median the table and
# --json report, not the screening time.
if command -v script >/dev/null; then
  script -qec "'$KTUNE' tune tests/data/rounds_apart.c --json --no-db >'$TMP/tty.json'" /dev/null | tr '\r' '\n' >"$TMP/tty.err"
  expect_contains "$TMP/tty.err" "screening best" "the bar labels the screening time"
  expect_eq "$(grep -a '\] 4/4' "$TMP/tty.err" | tail -1 | sed 's/ *$//' | sed 's/.*] 4\/4  //')" \
    "$(json "$TMP/tty.json" "'winner %.4g ms' % (d['winner']['final_median_s'] * 1e3)")" "the last bar is the winner's time"
fi

# Finalists tied (the same work whatever U): the rounds stop once the others'
# medians lie within the leader's interquartile range, if that range is at
# most 2% of its median. A loaded machine can be noisier than that in every
# attempt (leader_spread says so): then the tie cannot be shown here.
tied=no noisy=0
for attempt in 1 2 3 4; do
  run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --json --quiet --no-db
  cp "$TMP/out" "$TMP/tied.json"
  if [ "$(json "$TMP/tied.json" "${r}['tied']")" = True ]; then
    tied=yes
    expect_eq "$(json "$TMP/tied.json" "${r}['settled'] and 3 <= ${r}['done'] < ${r}['planned'] and ${r}['leader_spread'] <= 0.02")" \
      True "tied rounds stop early: $(json "$TMP/tied.json" "${r}")"
    # The runner-up tied in the rounds is within the winner's noise: the
    # output calls it a tie, in --json and in the closing table.
    expect_eq "$(json "$TMP/tied.json" "d['winner_within_noise'] and d['runner_up']['config'] != d['winner']['config']")" \
      True "a tie in the rounds is a winner within noise"
    run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --quiet --no-db
    grep -q "finalist rounds: .*within the leader's noise" "$TMP/out" &&
      expect_contains "$TMP/out" "winner tied with #2" "the table calls a tie a tie"
    break
  fi
  [ "$(json "$TMP/tied.json" "${r}['leader_spread'] > 0.02")" = True ] && noisy=$((noisy + 1))
  echo "attempt $attempt not tied: $(json "$TMP/tied.json" "${r}")"
done
if [ $tied = no ]; then
  if [ $noisy = 4 ]; then echo "note: every attempt's leader spread was over 2% (a loaded machine): ties not shown"
  else fail "identical finalists never tied in 4 attempts"; fi
fi

# A key whose every configuration is stored keeps its stored winner: no
# finalist rounds, which over tied finalists would pick another one each
# time. --retry-failed asks for measuring again, and the rounds run.
run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --json --quiet
cp "$TMP/out" "$TMP/first.json"
first=$(json "$TMP/first.json" "d['winner']['config']")
expect_eq "$(json "$TMP/first.json" "${r}['kept_stored_winner'] or ${r}['done'] < 3")" False "a first run runs the rounds"
for again in 1 2; do
  run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --json --quiet
  cp "$TMP/out" "$TMP/again.json"
  expect_eq "$(json "$TMP/again.json" "(${r}['kept_stored_winner'], ${r}['done'], d['reused'] == len(d['configurations']) - 1)")" \
    "(True, 0, True)" "run $again of a stored key: stored winner kept, no rounds, all but the default reused"
  expect_eq "$(json "$TMP/again.json" "d['winner']['config']")" "$first" "run $again of a stored key: the same winner"
done
run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --quiet
expect_contains "$TMP/out" "winner kept from the results database" "the table says the winner was kept"
run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --json --quiet --retry-failed
expect_eq "$(json "$TMP/out" "${r}['kept_stored_winner'] or ${r}['done'] < 3")" False "--retry-failed runs the rounds"
# One configuration measured anew (a stored result removed) is a new
# measurement: the rounds decide again.
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM results WHERE config = 'U=2'\"); c.commit()" "$KTUNE_DB" ||
  fail "could not remove a stored result"
run_status 0 "$KTUNE" tune tests/data/rounds_tied.c --json --quiet
expect_eq "$(json "$TMP/out" "(${r}['kept_stored_winner'], ${r}['done'] >= 3)")" "(False, True)" \
  "a configuration measured anew runs the rounds"
finish
