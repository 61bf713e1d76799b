# The results database trusts only its owner (issue 26 item 4): its winners
# are launched by kt_launch and warm-start tunings, so a database file or a
# folder that others can write, or that another user owns, is refused (exit
# 2, why and how to fix). A database this user cannot write (a chmod 444
# file, a folder of root's) is still listed and shown (issue 26 item 7).
. "$(dirname "$0")/common.bash"

cat >"$TMP/k.c" <<'SRC'
// @autotune(U in [1, 2])
// @kernel sc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 500)
void sc(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i] * U / U;
}
SRC
mkdir -m 700 "$TMP/mine"
run_status 0 "$KTUNE" tune "$TMP/k.c" --quiet --db "$TMP/mine/r.db"

# A file others can write.
chmod 646 "$TMP/mine/r.db"
run_status 2 "$KTUNE" tune "$TMP/k.c" --quiet --db "$TMP/mine/r.db"
expect_contains "$TMP/err" "r.db can be written by every user (mode 646)" "a world-writable database refused"
expect_contains "$TMP/err" "chmod go-w" "how to fix it"
run_status 2 "$KTUNE" cache list --db "$TMP/mine/r.db"
chmod 600 "$TMP/mine/r.db"

# A folder its group can write, not sticky; a sticky one (as /tmp) is fine.
chmod 770 "$TMP/mine"
run_status 2 "$KTUNE" cache list --db "$TMP/mine/r.db"
expect_contains "$TMP/err" "folder $TMP/mine can be written by its group (mode 770)" "a group-writable folder refused"
chmod 1777 "$TMP/mine"
run_status 0 "$KTUNE" cache list --db "$TMP/mine/r.db"
chmod 700 "$TMP/mine"

if [ "$(id -u)" = 0 ]; then
  # Another user's database, and one in another user's folder.
  cp "$TMP/mine/r.db" "$TMP/theirs.db" && chown nobody "$TMP/theirs.db"
  run_status 2 "$KTUNE" tune "$TMP/k.c" --quiet --db "$TMP/theirs.db"
  expect_contains "$TMP/err" "theirs.db belongs to user $(id -u nobody), not to you (0)" "another user's database refused"
  mkdir -m 700 "$TMP/their_dir" && chown nobody "$TMP/their_dir"
  run_status 2 "$KTUNE" tune "$TMP/k.c" --quiet --db "$TMP/their_dir/r.db"
  expect_contains "$TMP/err" "folder $TMP/their_dir belongs to user" "another user's folder refused"
  # Read-only, as nobody: the file theirs, but mode 444, in root's folders.
  chmod 711 "$TMP" && mkdir -m 755 "$TMP/ro" && cp "$TMP/mine/r.db" "$TMP/ro/r.db"
  chown nobody "$TMP/ro/r.db" && chmod 444 "$TMP/ro/r.db"
  as="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
  export KTUNE_BINARY_CACHE=off # root's cache folder is not nobody's to trust
else
  mkdir -m 755 "$TMP/ro" && cp "$TMP/mine/r.db" "$TMP/ro/r.db" && chmod 444 "$TMP/ro/r.db" && chmod 555 "$TMP/ro"
  as=""
fi
run_status 0 $as "$KTUNE" cache list --db "$TMP/ro/r.db"
expect_contains "$TMP/out" "1 stored tuning" "a read-only database listed"
run_status 0 $as "$KTUNE" cache show --db "$TMP/ro/r.db" --kernel sc
expect_contains "$TMP/out" "2 results (2 valid)" "a read-only database shown"
expect_eq "$(ls "$TMP/ro")" "r.db" "reading wrote nothing beside it"
run_status 2 $as "$KTUNE" cache clear --db "$TMP/ro/r.db" --kernel sc
chmod 755 "$TMP/ro"
finish
