# @constant data on the CPU backend: globals of the kernel's file are filled
# from their declared values before the kernel runs (a configuration that
# ignores them differs from the reference), and a @constant the kernel's
# file lacks is named (the reference cannot run: exit 1).
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/constant.c --json --quiet --no-db
config() { json "$TMP/out" "[c for c in d['configurations'] if c['config']['VARIANT']==$1][0]$2"; }
expect_eq "$(config 0 "['status']")" ok "VARIANT=0 (reference)"
expect_eq "$(config 1 "['status']")" ok "VARIANT=1 reads the same constants"
expect_eq "$(config 2 "['status']")" correctness "VARIANT=2 ignores w, which holds iota"
expect_contains "$TMP/out" 'y\[1\]: got 1, want' "the constant's values reach the reference (bias 1, w[1] = 1)"
sed 's/^float w\[8\];/static float w[8];/' tests/data/constant.c >"$TMP/hidden.c"
run_status 1 "$KTUNE" tune "$TMP/hidden.c" --quiet --no-db
expect_contains "$TMP/err" "the kernel's file has no global w" "a @constant the file lacks is named"
# From a file: raw binary beside the kernel (w = 0..7 as f32, what iota gave).
python3 -c "import struct; open('$TMP/w.bin', 'wb').write(struct.pack('<8f', *range(8)))"
sed 's/w: tensor<f32>\[8\] = iota/w: tensor<f32>[8] = file("w.bin", f32)/' tests/data/constant.c >"$TMP/from_file.c"
run_status 0 "$KTUNE" tune "$TMP/from_file.c" --json --quiet --no-db
expect_eq "$(json "$TMP/out" "[c['status'] for c in sorted(d['configurations'], key=lambda c: c['config']['VARIANT'])]")" \
  "['ok', 'ok', 'correctness']" "a constant from a raw file"
expect_contains "$TMP/out" 'y\[1\]: got 1, want' "the file's values reach the kernel"
python3 -c "import struct; open('$TMP/w.bin', 'wb').write(struct.pack('<7f', *range(7)))"
run_status 2 "$KTUNE" tune "$TMP/from_file.c" --quiet --no-db
expect_contains "$TMP/err" "@constant w: .*w.bin holds 7 elements of f32; the constant is 8 of f32" "a file of the wrong size"
finish
