# The spawned zygote (docs/DESIGN.md, "A zygote of a fresh image"): with
# KTUNE_ZYGOTE=spawn every device worker is a child of a fresh ktune-tuner
# image, bound to the tuning over its socket, not a fork of the tuner; the
# tuning's outcome is the fork path's: the same status for every
# configuration (and the same winner where one is clearly fastest), on the
# CPU backend (crashes and hangs replace workers, each one bound again), on
# OpenCL (PoCL), with a compiled check and with @reference. No spawned
# zygote is left behind, and a bad KTUNE_ZYGOTE is refused.
. "$(dirname "$0")/common.bash"
statuses() { json "$1" "sorted((str(c['config']), c['status']) for c in d['configurations'])"; }
winner() { json "$1" "d['winner']['config']"; }
bound() { grep -c "worker: bound to" "$TMP/err"; }
# The spawned zygotes run as this test's own link to ktune-tuner, so that
# counting them sees no other test's (ctest runs two at once, and OpenCL
# tunings in a process that loaded OpenCL spawn zygotes too: make check under
# stress-ng counted 2 of another test's).
ln -s "$(dirname "$KTUNE")/ktune-tuner" "$TMP/ktune-tuner"
export KTUNE_HELPER="$TMP/ktune-tuner"
zygotes_left() { pgrep -f "$TMP/ktune-tuner --zygote" | wc -l; }
no_zygote_left() { [ "$(zygotes_left)" -eq 0 ]; }

# same_as_fork NAME ARGS...: tunes ARGS through a forked and a spawned zygote.
same_as_fork() {
  name=$1
  shift
  run_status 0 "$KTUNE" tune "$@" --json --quiet --no-db
  cp "$TMP/out" "$TMP/fork.json"
  KTUNE_ZYGOTE=spawn KTUNE_TRACE=1 run_status 0 "$KTUNE" tune "$@" --json --quiet --no-db
  cp "$TMP/out" "$TMP/spawn.json"
  expect_contains "$TMP/err" "zygote: a fresh image (KTUNE_ZYGOTE=spawn)" "$name: the zygote is a fresh image"
  expect_contains "$TMP/err" "ktune-tuner --zygote" "$name: ... of ktune-tuner"
  expect_eq "$(statuses "$TMP/spawn.json")" "$(statuses "$TMP/fork.json")" "$name: every configuration's status"
  # A worker killed at the end may take a moment to go on a loaded machine;
  # one left behind stays, and the bounded wait sees it.
  wait_for 5 no_zygote_left || fail "$name: no spawned zygote left: $(zygotes_left) still run"
}

same_as_fork "faulty.c" tests/data/faulty.c --timeout 2
expect_eq "$(winner "$TMP/spawn.json")" "$(winner "$TMP/fork.json")" "faulty.c: the winner"
expect_eq "$(json "$TMP/spawn.json" "d['winner']['config']['VARIANT']")" 5 "faulty.c: the fastest correct one wins"
# The first worker, and one after each crash, hang and abort (VARIANT 2, 3, 6).
[ "$(bound)" -ge 4 ] || fail "faulty.c: each replacement worker is bound (bound $(bound) times)"

same_as_fork "opencl_faulty.cl" tests/data/opencl_faulty.cl --timeout 10
expect_eq "$(winner "$TMP/spawn.json")" "$(winner "$TMP/fork.json")" "opencl_faulty.cl: the winner"

# A compiled check travels in the bind (its object, symbol and source).
cat >"$TMP/checked.c" <<'K'
// @autotune(V in [1, 2, 3])
// @check(doubled)
// @kernel twice(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 256)
#include <ktune.h>
#include <stdio.h>
void twice(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = (V == 3 ? 3 : 2) * x[i]; }
int doubled(const kt_check_args *a) {
  const kt_check_tensor *x = kt_check_tensor_named(a, "x"), *y = kt_check_tensor_named(a, "y");
  for (uint64_t i = 0; i < y->count; i++)
    if (((const float *)y->data)[i] != 2 * ((const float *)x->data)[i]) {
      snprintf(a->message, a->message_size, "y[%llu] is not twice x", (unsigned long long)i);
      return 0;
    }
  return 1;
}
K
same_as_fork "@check" "$TMP/checked.c"
expect_eq "$(json "$TMP/spawn.json" "[c['status'] for c in d['configurations'] if c['config']['V'] == 3][0]")" \
  correctness "@check: the spawned worker's check rejects V=3"
expect_contains "$TMP/spawn.json" "y\[0\] is not twice x" "@check: ... with its message"

# @reference: the reference kernel's worker is bound to that kernel.
cat >"$TMP/referenced.c" <<'K'
// @kernel plain(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
void plain(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }
// @autotune(A in [1, 2, 3])
// @reference(plain)
// @kernel fast(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 256)
void fast(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = (A == 3 ? 3 : 2) * x[i]; }
K
same_as_fork "@reference" "$TMP/referenced.c" --kernel fast
expect_contains "$TMP/err" "worker: bound to plain" "@reference: a worker bound to the reference kernel"
expect_eq "$(json "$TMP/spawn.json" "[c['status'] for c in d['configurations'] if c['config']['A'] == 3][0]")" \
  correctness "@reference: A=3 differs from the reference"

# No ktune-tuner where one is needed: an error naming it, before anything runs.
KTUNE_ZYGOTE=spawn KTUNE_HELPER="$TMP/no-such-tuner" run_status 2 "$KTUNE" tune tests/data/faulty.c --quiet
expect_contains "$TMP/err" "ktune: error: cannot start the worker spawner $TMP/no-such-tuner: No such file" \
  "a missing ktune-tuner"
[ -e "$KTUNE_DB" ] && fail "a missing ktune-tuner: the database was created"

KTUNE_ZYGOTE=sometimes run_status 2 "$KTUNE" tune tests/data/faulty.c --no-db --quiet
expect_contains "$TMP/err" "KTUNE_ZYGOTE=sometimes: expected spawn" "a bad KTUNE_ZYGOTE"
finish
