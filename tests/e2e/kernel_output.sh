# What kernels print (C printf to stdout and stderr, OpenCL printf) goes to
# each configuration's "output" in --json, never into ktune's stdout: the
# document stays valid JSON for tune and bench, and --show-output prints it.
. "$(dirname "$0")/common.bash"
valid_json() { python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" 2>/dev/null || fail "$2: stdout is not JSON"; }
output_of() { json "$TMP/out" "[c.get('output', '') for c in d['configurations'] if c['config']['V']==$1][0]"; }

run_status 0 "$KTUNE" tune tests/data/chatty.c --json --quiet --no-db
valid_json "$TMP/out" "tune --json (C)"
case "$(output_of 1)" in *"stdout from V=1"*"stderr from V=1"*) ;; *) fail "V=1's output not kept: $(output_of 1 | head -c 200)" ;; esac
expect_eq "$(json "$TMP/out" "all(c['output_bytes'] >= len(c['output']) > 0 for c in d['configurations'])")" True "output counted"
expect_eq "$(json "$TMP/out" "all(len(c['output']) <= 4096 for c in d['configurations'])")" True "output bounded"

run_status 0 "$KTUNE" bench tests/data/chatty.c --autotune "V=2" --json --quiet --no-db
valid_json "$TMP/out" "bench --json (C)"

run_status 0 "$KTUNE" tune tests/data/chatty.c --no-db --show-output
expect_contains "$TMP/err" "| stdout from V=2" "--show-output"
grep -q "from V=" "$TMP/out" && fail "kernel output reached ktune's stdout"

if "$KTUNE" devices 2>/dev/null | grep -q '^opencl'; then
  run_status 0 "$KTUNE" tune tests/data/opencl_chatty.cl --json --quiet --no-db
  valid_json "$TMP/out" "tune --json (OpenCL)"
  case "$(output_of 2)" in *"opencl printf from V=2"*) ;; *) fail "OpenCL printf not kept: $(output_of 2 | head -c 200)" ;; esac
fi
finish
