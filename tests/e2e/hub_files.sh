# bench/hub_files.sh copies the benchmark hub's T4 files that search may be
# developed on, renamed KERNEL_GPU.json.gz, and leaves out the held-out GPUs'
# (A6000, MI250X, W7800: issue 32) and every file that is not a T4 one; a
# folder that is no clone of the hub is refused with status 2. The hub here
# is a small git repository made like the real one's layout.
. "$(dirname "$0")/common.bash"
hub="$TMP/hub"
put() { mkdir -p "$hub/$(dirname "$1")" && printf '%s' "$2" >"$hub/$1"; }
put cachefiles/convolution_milo/A100_T4.json.gz a100
put cachefiles/convolution_milo/A100.json.gz not-t4
put cachefiles/convolution_milo/A6000_T4.json.gz held-out
put cachefiles/dedispersion_milo/MI250X_T4.json.gz held-out
put cachefiles/dedispersion_milo/W7800_T4.json.gz held-out
put currently_unused/cachefiles/pnpoly/RTX_3090_T4.json.gz pnpoly
put kernels/convolution_milo.json kernel
git -C "$hub" init -q && git -C "$hub" add -A &&
  git -C "$hub" -c user.name=t -c user.email=t@t commit -qm hub || fail "could not make the test's hub"
run_status 0 bench/hub_files.sh "$hub" "$TMP/copied" HEAD
expect_eq "$(cat "$TMP/copied/convolution_A100.json.gz" 2>/dev/null)" a100 "the A100 convolution file"
expect_eq "$(cat "$TMP/copied/pnpoly_RTX_3090.json.gz" 2>/dev/null)" pnpoly "a currently_unused file"
expect_eq "$(ls "$TMP/copied" | tr '\n' ' ')" "convolution_A100.json.gz pnpoly_RTX_3090.json.gz " "what was copied"
{ ls "$TMP/copied"; cat "$TMP/out" "$TMP/err"; } | grep -qi -e a6000 -e mi250x -e w7800 &&
  fail "a held-out GPU's file was copied or named"
run_status 2 bench/hub_files.sh "$TMP" "$TMP/copied2" HEAD
expect_contains "$TMP/err" "holds no commit HEAD" "a folder that is no clone"
[ -e "$TMP/copied2" ] && fail "a refused run made its destination"
finish
