# The bad-input catalogue (docs/BAD_INPUTS.md), one check per row: each bad
# input exits with status 2 and a message saying what and where, within a
# second, and writes nothing (no database created or changed, nothing left in
# $TMPDIR). The row ids (B01...) must match the table in docs/BAD_INPUTS.md.
. "$(dirname "$0")/common.bash"
BAD=tests/data/bad
LIMIT_MS=${KTUNE_BAD_INPUT_MS:-1000} # sanitizer builds may raise it
DOC=docs/BAD_INPUTS.md
ids=""

# bad ID PATTERN CMD...: runs CMD with a fresh, empty TMPDIR and a database
# path that does not exist yet; checks status 2, PATTERN (grep -E) on stderr,
# the time, that the database was not created and TMPDIR is still empty.
bad() {
  id=$1 pattern=$2
  shift 2
  ids="$ids $id"
  case_dir="$TMP/$id"
  mkdir -p "$case_dir/tmp"
  start=$(date +%s%N)
  TMPDIR="$case_dir/tmp" KTUNE_DB="$case_dir/results.db" "$@" >"$case_dir/out" 2>"$case_dir/err"
  got=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  [ "$got" = 2 ] || fail "$id: exit $got (want 2): $*"
  grep -Eq -- "$pattern" "$case_dir/err" || { fail "$id: stderr lacks /$pattern/:"; cat "$case_dir/err" >&2; }
  [ "$ms" -lt "$LIMIT_MS" ] || fail "$id: took $ms ms (limit $LIMIT_MS): $*"
  [ ! -e "$case_dir/results.db" ] || fail "$id: created the database: $*"
  [ -z "$(ls -A "$case_dir/tmp")" ] || fail "$id: left files in TMPDIR: $(ls -A "$case_dir/tmp")"
  grep -q "^| $id |" "$DOC" || fail "$id: no row in $DOC"
}

tune() { "$KTUNE" tune "$@"; }

# --- annotations: malformed and truncated ---
bad B01 'trunc_list.c:1:24: error: expected .,. or .]. in @autotune' tune $BAD/trunc_list.c
bad B02 'trunc_kernel.c:2:35: error: expected .,. or .\). in @kernel' tune $BAD/trunc_kernel.c
bad B03 "trailing_junk.c:1:26: error: expected .,. or .\\). in @autotune but found 'junk'" tune $BAD/trailing_junk.c
bad B04 'trunc_eof.c:3:13: error: expected an expression but found end of line' tune $BAD/trunc_eof.c
bad B05 'non_integer.c:1:20: error: non-integer value .1.5.' tune $BAD/non_integer.c
bad B06 'empty_list.c:1:19: error: empty list' tune $BAD/empty_list.c
bad B07 'declared_twice.c:1:27: error: A is declared twice' tune $BAD/declared_twice.c
bad B08 "unknown_init.c:2:38: error: unknown initial value 'twos'" tune $BAD/unknown_init.c
bad B09 "unknown_function.c:2:11: error: unknown function 'frob'" tune $BAD/unknown_function.c
bad B10 'dims_not_size.c:3:17: error: @dims names Q, which is not a runtime size' tune $BAD/dims_not_size.c
# --- values out of range, overflow ---
bad B11 'literal_overflow.c:1:23: error: integer literal 99999999999999999999 does not fit in 64 bits' tune $BAD/literal_overflow.c
bad B12 'product_overflow.c:1:[0-9]+: error: the @autotune space overflows 64 bits at P15' tune $BAD/product_overflow.c
bad B13 'mul_overflow.c:3:24: error: @dims\(N\): overflow' tune $BAD/mul_overflow.c
bad B14 'div_zero.c:3:16: error: @dims\(N\): division by zero' tune $BAD/div_zero.c
bad B15 'mod_zero.c:3:16: error: @dims\(N\): modulo by zero' tune $BAD/mod_zero.c
bad B16 'shift_range.c:3:16: error: @dims\(N\): shift by 64 is out of range' tune $BAD/shift_range.c
bad B17 'shift_negative.c:3:16: error: @dims\(N\): shift by -1 is out of range' tune $BAD/shift_negative.c
bad B18 'negative_dims.c:3:10: error: @dims\(N\) is -5; sizes must be positive' tune $BAD/negative_dims.c
# --- size of the input itself ---
bad B19 'deep_nesting.c:3:[0-9]+: error: expression nested too deeply' tune $BAD/deep_nesting.c
bad B20 'long_line.c:3:4: error: annotation line too long \(6012 characters' tune $BAD/long_line.c
bad B21 'binary.c: error: looks like a binary file' tune $BAD/binary.c
# --- the kernel and its signature ---
bad B22 'no_annotations.c: error: no annotated kernel' tune $BAD/no_annotations.c
bad B23 'two_kernels.c: error: several kernels in .*: f, g; choose one with --kernel' tune $BAD/two_kernels.c
bad B24 "ok.c: error: no kernel named 'nosuch' in .*; its kernels: f" tune $BAD/ok.c --kernel nosuch
bad B25 "name_mismatch.c:2:4: error: @kernel names 'g' but no function 'g' follows" tune $BAD/name_mismatch.c
bad B26 'param_mismatch.c:2:4: error: @kernel declares 2 parameters but f\(\) takes 1' tune $BAD/param_mismatch.c
bad B27 "unknown_type.c:2:28: error: unknown type 'f17'" tune $BAD/unknown_type.c
bad B28 'no_size_value.c: error: runtime size N of kernel f has no value' tune $BAD/no_size_value.c
# --- sizes: negative, absurd, too large for memory (refused before allocating) ---
bad B29 '--dim N=-1: sizes must be positive' tune $BAD/ok.c --dim N=-1
bad B30 '--dim N=0: sizes must be positive' tune $BAD/ok.c --dim N=0
bad B31 'ok.c:2:14: error: tensor x: dimension 1 is absurdly large' tune $BAD/ok.c --dim 'N=1<<62'
bad B32 'too_large.c: error: the tensors need .* GB, more than the .* GB allowed' tune $BAD/too_large.c
bad B33 'ok.c: error: the tensors need .* GB, more than' tune $BAD/ok.c --dim 'N=1<<40'
# --- --dim syntax ---
bad B34 '--dim "N": expected NAME=VALUE' tune $BAD/ok.c --dim N
bad B35 '--dim "=3": expected NAME=VALUE' tune $BAD/ok.c --dim =3
bad B36 "--dim:1:1: error: malformed number '3x'" tune $BAD/ok.c --dim N=3x
bad B37 '--dim N=1/0: division by zero' tune $BAD/ok.c --dim N=1/0
bad B38 '--dim N=1<<64: shift by 64 is out of range' tune $BAD/ok.c --dim 'N=1<<64'
bad B39 '--dim:1:1: error: integer literal 9223372036854775808 does not fit in 64 bits' tune $BAD/ok.c --dim N=9223372036854775808
bad B40 'kernel f has no runtime size Q; its sizes are: N' tune $BAD/ok.c --dim Q=3
bad B41 '--dim:1:201: error: expression nested too deeply' tune $BAD/ok.c --dim "N=$(printf '(%.0s' $(seq 300))1"
# --- --autotune syntax ---
bad B42 "bad --autotune item 'A'" tune $BAD/ok.c --autotune A
bad B43 "bad --autotune item 'A=x'" tune $BAD/ok.c --autotune A=x
bad B44 "bad --autotune item 'A=99999999999999999999'" tune $BAD/ok.c --autotune A=99999999999999999999
bad B45 'unknown name B in --autotune; the kernel declares: A' tune $BAD/ok.c --autotune B=1
bad B46 'A is pinned twice in --autotune' tune $BAD/ok.c --autotune "A=1 A=2"
bad B47 'unknown name B in --autotune' "$KTUNE" bench $BAD/ok.c --autotune B=1
# --- the results database ---
mkdir -p "$TMP/dbdir"
bad B48 'results database .*dbdir: opening: unable to open database file' tune $BAD/ok.c --db "$TMP/dbdir"
[ -z "$(ls -A "$TMP/dbdir")" ] || fail "B48: wrote into the directory given as --db"
cp $BAD/garbage.db "$TMP/garbage.db"
bad B49 'garbage.db: opening: file is not a database' tune $BAD/ok.c --db "$TMP/garbage.db"
cmp -s $BAD/garbage.db "$TMP/garbage.db" || fail "B49: the damaged database was changed"
bad B50 'garbage.db: opening: file is not a database' "$KTUNE" cache list --db "$TMP/garbage.db"
bad B51 'garbage.db: not valid JSON' "$KTUNE" cache import $BAD/garbage.db
bad B52 'garbage.json: not valid JSON' "$KTUNE" cache import $BAD/garbage.json
bad B53 'not_export.json: keys\[0\]: "source_hash" is missing' "$KTUNE" cache import $BAD/not_export.json
bad B54 'garbage.db' "$KTUNE" replay $BAD/garbage.db --budget 10
bad B55 'garbage_t4.json' "$KTUNE" replay $BAD/garbage_t4.json --budget 10
bad B72 'garbage_t4.json: results\[0\] has no' "$KTUNE" replay tests/data/t4/convolution_A4000.json.gz --budget 10 \
  --warm $BAD/garbage_t4.json
# --- files and flags ---
bad B56 'missing.c: error: cannot open: No such file or directory' tune $BAD/missing.c
bad B57 'bad: error: is a directory' tune $BAD
bad B58 'unknown option --frob' tune $BAD/ok.c --frob
bad B59 'option --dim needs a value' tune $BAD/ok.c --dim
bad B60 'unknown command frobnicate' "$KTUNE" frobnicate
bad B61 'the cuda backend cannot run this file' tune $BAD/ok.c --backend cuda
bad B62 '--backend xyz: expected cpu, opencl or cuda' tune $BAD/ok.c --backend xyz
bad B63 '--budget lots: expected a number' tune $BAD/ok.c --budget lots
bad B64 '--timeout -1: expected seconds' tune $BAD/ok.c --timeout -1
bad B65 '--strategy nosuch: no such strategy' tune $BAD/ok.c --strategy nosuch
# --- limits from the environment and flags ---
bad B66 'KTUNE_MAX_TENSOR_MEMORY=lots: expected bytes' env KTUNE_MAX_TENSOR_MEMORY=lots "$KTUNE" tune $BAD/ok.c
bad B67 'ok.c: error: the tensors need .* GB, more than the 1.02e-06 GB allowed' \
  env KTUNE_MAX_TENSOR_MEMORY=1K "$KTUNE" tune $BAD/ok.c --dim N=1000
bad B68 'KTUNE_RUN_TIMEOUT=-3: expected seconds' env KTUNE_RUN_TIMEOUT=-3 "$KTUNE" tune $BAD/ok.c
bad B69 '--compile-timeout soon: expected seconds' tune $BAD/ok.c --compile-timeout soon
bad B73 'KTUNE_BINARY_CACHE_MAX=lots: expected bytes' env KTUNE_BINARY_CACHE_MAX=lots "$KTUNE" tune $BAD/ok.c
bad B74 'list: --binaries goes with .cache clear. alone' "$KTUNE" cache list --binaries
# --- sheer numbers ---
bad B70 'too_many_names.c: error: kernel f declares 71 tuned names; ktune handles at most 64' tune $BAD/too_many_names.c
python3 -c "
import sys
k = '// @autotune(A in [1, 2])\n// @kernel k%d(x: out tensor<f32>[N])\n// @dims(N = 4)\nvoid k%d(float *x) { x[0] = A; }\n'
sys.stdout.write(''.join(k % (i, i) for i in range(1100)))" >"$TMP/many_kernels.c"
bad B71 'many_kernels.c:4097:4: error: more than 1024 annotated kernels in one file' tune "$TMP/many_kernels.c" --kernel k3

# Every row of the table has its check.
for id in $(grep -oE '^\| B[0-9]+ \|' "$DOC" | grep -oE 'B[0-9]+'); do
  case " $ids " in *" $id "*) ;; *) fail "$DOC row $id has no check in $0" ;; esac
done
echo "$(echo $ids | wc -w) bad inputs checked"
finish
