# The bad-input catalogue (docs/BAD_INPUTS.md), one check per row: each bad
# input exits with status 2 and a message saying what and where, within a
# second of CPU time (and SLOWDOWN seconds of wall-clock time, which a load
# of 10 cannot exceed but a wait for a lock or a timeout does), and writes nothing (no database created or changed, nothing left in
# $TMPDIR). The row ids (B01...) must match the table in docs/BAD_INPUTS.md.
. "$(dirname "$0")/common.bash"
BAD=tests/data/bad
LIMIT_MS=${KTUNE_BAD_INPUT_MS:-1000} # sanitizer builds may raise it
DOC=docs/BAD_INPUTS.md
ids=""

# bad ID PATTERN CMD...: runs CMD with a fresh, empty TMPDIR and a database
# path that does not exist yet; checks status 2, PATTERN (grep -E) on stderr,
# the time, that the database was not created and TMPDIR is still empty.
# WANT=1 before it: a read command that found nothing (exit status 1).
bad() {
  id=$1 pattern=$2
  shift 2
  ids="$ids $id"
  case_dir="$TMP/$id"
  mkdir -p "$case_dir/tmp"
  cpu_now
  cpu_start=$CPU_MS start=$(date +%s%N)
  TMPDIR="$case_dir/tmp" KTUNE_DB="$case_dir/results.db" "$@" >"$case_dir/out" 2>"$case_dir/err"
  got=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  cpu_now
  cpu_ms=$((CPU_MS - cpu_start))
  [ "$got" = "${WANT:-2}" ] || fail "$id: exit $got (want ${WANT:-2}): $*"
  grep -Eq -- "$pattern" "$case_dir/err" || { fail "$id: stderr lacks /$pattern/:"; cat "$case_dir/err" >&2; }
  [ "$cpu_ms" -lt "$LIMIT_MS" ] || fail "$id: took $cpu_ms ms of CPU time (limit $LIMIT_MS): $*"
  [ "$ms" -lt $((LIMIT_MS * SLOWDOWN)) ] || fail "$id: took $ms ms (limit $((LIMIT_MS * SLOWDOWN)): $SLOWDOWN x $LIMIT_MS): $*"
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
bad B190 'ktune: error: --report with --budget 60s: the report plots progress per evaluation' "$KTUNE" replay \
  tests/data/t4/convolution_A4000.json.gz --budget 60s --report "$TMP/timed.html"
[ ! -e "$TMP/timed.html" ] || fail "B190: wrote the report"
bad B191 'no_times_t4.json: no record holds its evaluation times .* give --budget a number of configurations' \
  "$KTUNE" replay $BAD/no_times_t4.json --budget 60s
# --- reports (nothing is left at the output path: bad() sees TMPDIR, this the folder) ---
mkdir -p "$TMP/reports"
WANT=1 bad B92 'no results database at .*nothere.db' "$KTUNE" report --db "$TMP/nothere.db" -o "$TMP/reports/r.html"
echo '{"format": "ktune-results", "format_version": 1, "keys": []}' >"$TMP/empty.json"
"$KTUNE" cache import "$TMP/empty.json" --db "$TMP/empty.db" >/dev/null
WANT=1 bad B93 'empty.db: the database holds no results yet' "$KTUNE" report --db "$TMP/empty.db" -o "$TMP/reports/r.html"
python3 tests/report/gen_results.py 1 20 "$TMP/one.json" >/dev/null
"$KTUNE" cache import "$TMP/one.json" --db "$TMP/one.db" >/dev/null
WANT=1 bad B94 'no stored tuning matches kernel nosuch' "$KTUNE" report --db "$TMP/one.db" --kernel nosuch -o "$TMP/reports/r.html"
WANT=1 bad B143 'one.db: no stored tuning matches kernel f sizes "N=5"' "$KTUNE" cache clear --db "$TMP/one.db" --kernel f --key N=5
bad B144 'key filter "1000": "1000" is no NAME=VALUE' "$KTUNE" cache clear --db "$TMP/one.db" --key 1000
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["keys"][0]["results"][0]["config"]="U=1 B=1 -include /etc/shadow"; json.dump(d,open(sys.argv[2],"w"))' "$TMP/one.json" "$TMP/planted.json"
bad B145 'planted.json: keys\[0\]\.results\[0\]: config "U=1 B=1 -include /etc/shadow": "-include" is no NAME=integer' "$KTUNE" cache import "$TMP/planted.json" --db "$TMP/planted.db"
[ -e "$TMP/planted.db" ] && fail "B145: a refused import left a database"
: >"$TMP/a_file"
bad B146 'the binary cache .*a_file \(KTUNE_BINARY_CACHE or kt_options.binary_cache\) is not a folder' env KTUNE_BINARY_CACHE="$TMP/a_file" "$KTUNE" tune $BAD/ok.c
# Results databases others could have planted winners in (docs/BAD_INPUTS.md B170-B172).
mkdir -m 700 "$TMP/trust" "$TMP/trust/shared"
cp "$TMP/one.db" "$TMP/trust/r.db" && chmod 646 "$TMP/trust/r.db"
bad B170 'the results database .*trust/r.db can be written by every user \(mode 646\).*chmod go-w' "$KTUNE" cache list --db "$TMP/trust/r.db"
cp "$TMP/one.db" "$TMP/trust/shared/r.db" && chmod 770 "$TMP/trust/shared"
bad B172 'folder .*trust/shared can be written by its group \(mode 770\)' "$KTUNE" cache list --db "$TMP/trust/shared/r.db"
if [ "$(id -u)" -eq 0 ]; then
  cp "$TMP/one.db" "$TMP/trust/theirs.db" && chown nobody "$TMP/trust/theirs.db"
  bad B171 'theirs.db belongs to user [0-9]+, not to you \(0\)' "$KTUNE" cache list --db "$TMP/trust/theirs.db"
else
  ids="$ids B171" # another user's file needs root to make; tests/e2e/db_trust.sh says the same as root
fi
# A check that writes a tensor it is given (B173; the other faults: tests/e2e/check_faults.sh).
cat >"$TMP/writes_input.c" <<'SRC'
#include <ktune.h>
int writes_input(const kt_check_args *a) {
  if (kt_check_value(a, "A", 0) == 2) ((float *)kt_check_tensor_named(a, "x")->data)[0] = -1;
  return 1;
}
SRC
bad B173 'the check .*writes_input.c:writes_input wrote the tensor x it is given .*judging A=2: that is the check.s fault' \
  tune $BAD/ok.c --check "$TMP/writes_input.c:writes_input" --db "$TMP/trust/check.db" # found while tuning: A=1's result may be stored
bad B95 'garbage.db: opening: file is not a database' "$KTUNE" report --db "$TMP/garbage.db" -o "$TMP/reports/r.html"
bad B96 'missing/r.html: cannot write the report there' "$KTUNE" report --db "$TMP/one.db" -o "$TMP/missing/r.html"
bad B97 'missing/r.html: cannot write the report there' tune $BAD/ok.c --report "$TMP/missing/r.html"
[ -z "$(ls -A "$TMP/reports")" ] || fail "B92-B97: a report was left: $(ls -A "$TMP/reports")"
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
# --- the tuning helper kt_launch starts, run by hand ---
HELPER=$(dirname "$KTUNE")/ktune-tuner
bad B115 'usage: ktune-tuner --request FD --reply FD --ready FD' "$HELPER"
bad B116 'ktune-tuner: file descriptor 0 holds no tuning request' sh -c '"$1" --request 0 --reply 1 --ready 0 </dev/null' _ "$HELPER"
bad B117 'KTUNE_BINARY_CACHE_MAX=lots: expected bytes' env KTUNE_BINARY_CACHE_MAX=lots "$KTUNE" tune $BAD/ok.c
bad B118 'ktune: error: --binaries does not apply to .ktune cache list. \(it is an option of cache clear' "$KTUNE" cache list --binaries
bad B140 'ktune: error: --budget does not apply to .ktune space. \(it is an option of tune, bench and replay; .ktune space --help. lists' \
  "$KTUNE" space $BAD/ok.c --budget 10
bad B141 'ktune: error: unknown option --budgte; did you mean --budget\?' tune $BAD/ok.c --budgte 10
bad B142 'ktune: error: unknown command tnue; did you mean tune\?' "$KTUNE" tnue $BAD/ok.c
printf 'N=4\nN=8 M\n' >"$TMP/sizes_malformed.txt"
bad B119 "sizes_malformed.txt:2: 'M' is not NAME=VALUE" tune $BAD/ok.c --sizes "$TMP/sizes_malformed.txt"
printf '# two keys\nN=4\n\nN=abc\n' >"$TMP/sizes_value.txt"
bad B120 'sizes_value.txt:4: in this key:' tune $BAD/ok.c --sizes "$TMP/sizes_value.txt"
bad B121 '--dim N=4,,8: item 2 of the list is empty' tune $BAD/ok.c --dim N=4,,8
printf '# nothing\n\n' >"$TMP/sizes_empty.txt"
bad B122 'sizes_empty.txt: no keys in it' tune $BAD/ok.c --sizes "$TMP/sizes_empty.txt"
bad B123 '--report r.html shows one key' tune $BAD/ok.c --dim N=4,8 --report r.html

# --- several devices ---
bad B124 '^ktune: error: --device 7: the cpu backend has 1 device \(0\); .ktune devices. lists them' \
  tune $BAD/ok.c --device 7
bad B125 '^ktune: error: --device 0,0: device 0 is listed twice' tune $BAD/ok.c --device 0,0
bad B126 "^ktune: error: --device 1,x: 'x' \(item 2\) is not a device index" tune $BAD/ok.c --device 1,x
bad B127 '^ktune: error: --device all: .ktune space. counts what fits one device' "$KTUNE" space $BAD/ok.c --device all
bad B128 '^ktune: error: --device 0,7: the cpu backend has 1 device \(0\)' tune $BAD/ok.c --dim N=4,8 --device 0,7
bad B129 '^ktune: error: --device 0,,1: item 2 of the list is empty' tune $BAD/ok.c --device 0,,1
# --- tune --mpi: refused before MPI starts ---
# Each build checks the row it can; the other row is checked by the other
# build (scripts/check-sanitizers.sh builds with -DKTUNE_MPI=OFF).
case "$("$KTUNE" --version)" in
*"(no MPI)"*)
  bad B131 '--mpi: this ktune was built without MPI .*apt-get install openmpi-bin libopenmpi-dev' tune $BAD/ok.c --mpi
  ids="$ids B130" # checked by a build with MPI
  ;;
*)
  bad B130 '--mpi: this process was not started by an MPI launcher .*mpirun -np R ktune tune \.\.\. --mpi' \
    env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK "$KTUNE" tune $BAD/ok.c --mpi
  ids="$ids B131" # checked by the build without MPI
  ;;
esac
bad B132 "--mpi gathers every rank's results into rank 0's database; --no-db leaves it none" tune $BAD/ok.c --mpi --no-db
bad B133 '--mpi: --report r.html would be written by whichever rank tunes the key' tune $BAD/ok.c --mpi --report r.html
bad B134 'ktune: error: --mpi does not apply to .ktune bench. \(it is an option of tune' \
  "$KTUNE" bench $BAD/ok.c --autotune "A=1" --mpi
bad B135 'KTUNE_HELPER_IDLE_S=soon: expected seconds' env KTUNE_HELPER_IDLE_S=soon "$KTUNE" tune $BAD/ok.c
bad B136 'KTUNE_ZYGOTE=sometimes: expected spawn' env KTUNE_ZYGOTE=sometimes "$KTUNE" tune $BAD/ok.c
bad B137 'KTUNE_SAMPLE_S=2ms: expected the seconds a timing sample lasts' env KTUNE_SAMPLE_S=2ms "$KTUNE" tune $BAD/ok.c
bad B137 'KTUNE_SAMPLE_S=5: expected the seconds a timing sample lasts' env KTUNE_SAMPLE_S=5 "$KTUNE" tune $BAD/ok.c
bad B138 'KTUNE_VERIFY_ON=gpu: expected host' env KTUNE_VERIFY_ON=gpu "$KTUNE" tune $BAD/ok.c
bad B192 'KTUNE_MISS_TENSORS=ipc: expected device' env KTUNE_MISS_TENSORS=ipc "$KTUNE" tune $BAD/ok.c
bad B139 '--timing fast: expected auto .chosen per configuration., graph' tune $BAD/ok.c --timing fast
bad B148 'timing by graph: the cpu backend has no graphs .it times by clock.; use auto or events' tune $BAD/ok.c --timing graph
bad B160 '--objective joules: expected time .seconds per launch., energy .joules per launch. or edp' tune $BAD/ok.c --objective joules
# A powercap root that does not exist: no RAPL here, whatever the machine has.
bad B161 'objective energy needs the energy of each launch, but .* reports none: no RAPL energy counter: /nonexistent/powercap does not exist.*--objective time' \
  env KTUNE_POWERCAP_ROOT=/nonexistent/powercap "$KTUNE" tune $BAD/ok.c --objective energy
# --- sheer numbers ---
bad B70 'too_many_names.c: error: kernel f declares 71 tuned names; ktune handles at most 64' tune $BAD/too_many_names.c
python3 -c "
import sys
k = '// @autotune(A in [1, 2])\n// @kernel k%d(x: out tensor<f32>[N])\n// @dims(N = 4)\nvoid k%d(float *x) { x[0] = A; }\n'
sys.stdout.write(''.join(k % (i, i) for i in range(1100)))" >"$TMP/many_kernels.c"
bad B71 'many_kernels.c:4097:4: error: more than 1024 annotated kernels in one file' tune "$TMP/many_kernels.c" --kernel k3

# --- arithmetic that cannot be evaluated ---
bad B73 'where_div_zero.c:3:13: error: @where: division by zero \(A / 0\), whatever the value of A' tune $BAD/where_div_zero.c
bad B74 'where_shift.c:3:14: error: @where: shift by 70 is out of range' tune $BAD/where_shift.c
bad B75 'where_config_div.c:3:13: error: @where: division by zero \(2 / 0\) at the configuration A=2 with the sizes N=4' \
  tune $BAD/where_config_div.c
bad B76 'where_config_div.c:3:13: error: @where: division by zero \(2 / 0\) at the configuration A=2' \
  "$KTUNE" space $BAD/where_config_div.c
bad B77 'scalar_config_div.c:2:56: error: @kernel: division by zero \(4 / 0\) at the configuration A=2' \
  tune $BAD/scalar_config_div.c
bad B78 'grid_config_overflow.c:3:12: error: @grid: overflow: 2 \* 4611686018427387904 does not fit in 64 bits at the configuration A=2' \
  tune $BAD/grid_config_overflow.c
bad B79 'flops_overflow.c:3:13: error: @flops: overflow: 4 \* 4611686018427387904 .* at the configuration A=1' \
  tune $BAD/flops_overflow.c
bad B80 'size_div.c:2:35: error: dimension 1 of tensor x `N / \(N - 4\)`: division by zero \(4 / 0\) with N=4' \
  tune $BAD/size_div.c --dim N=4
bad B81 'chained_comparison.c:3:17: error: chained comparison: C reads 1 < A < 3 as \(1 < A\) < 3' tune $BAD/chained_comparison.c
bad B82 "atol_huge.c:3:19: error: number 1e400 is beyond a double's range \(it would read as infinity\)" tune $BAD/atol_huge.c
bad B83 "rtol_tiny.c:3:19: error: number 1e-400 is below a double's range \(it would read as 0\)" tune $BAD/rtol_tiny.c
# --- names that cannot work ---
bad B84 'name_keyword.c:1:14: error: int cannot be a tuned name: it is a keyword or built-in name of C' tune $BAD/name_keyword.c
bad B85 'name_builtin.cu:1:14: error: blockDim cannot be a tuned name: it is a keyword or built-in name of CUDA C\+\+' \
  tune $BAD/name_builtin.cu
bad B86 "name_kernel.c:1:14: error: f cannot be a tuned name: it is the kernel's own name" tune $BAD/name_kernel.c
bad B87 'name_param.c:1:14: error: n cannot be a tuned name: it is a parameter of f \(line 2\)' tune $BAD/name_param.c
bad B88 "name_generated.c:1:14: error: kt__args cannot be a tuned name: it is a name ktune's generated code uses" \
  tune $BAD/name_generated.c
bad B89 'where_undeclared.c:3:15: error: @where names Q, which is undeclared' tune $BAD/where_undeclared.c
bad B90 'flops_undeclared.c:3:19: error: @flops names K, which is undeclared' tune $BAD/flops_undeclared.c
bad B91 'where_undeclared.c:3:15: error: @where names Q, which is undeclared' tune $BAD/where_undeclared.c --dim Q=3
# --- data files and references ---
NPY="python3 $(dirname "$0")/npy.py"
$NPY array "$TMP/xi.npy" "<i4" 4 1 2 3 4
$NPY array "$TMP/x5.npy" "<f4" 5 1 2 3 4 5
$NPY array "$TMP/xf.npy" "<f4" 4 1 2 3 4 --fortran
$NPY array "$TMP/xb.npy" ">f4" 4 1 2 3 4
$NPY array "$TMP/x4.npy" "<f4" 4 1 2 3 4
printf 'abcdefghij' >"$TMP/x.bin"
bad B98 'the file holds i32 elements \(shape \(4,\)\) but x of kernel f is declared x: tensor<f32>\[N\]' \
  tune $BAD/data.c --input x="$TMP/xi.npy"
bad B99 'the file holds f32 of shape \(5,\), but x is declared x: tensor<f32>\[N\], which is \(4,\)' \
  tune $BAD/data.c --input x="$TMP/x5.npy" --dim N=4
bad B100 'xf.npy: the array is in Fortran \(column-major\) order' tune $BAD/data.c --input x="$TMP/xf.npy"
bad B101 "xb.npy: the data is big-endian \('>f4'\)" tune $BAD/data.c --input x="$TMP/xb.npy"
bad B102 'ok.c: not a .npy file' tune $BAD/data.c --input x=$BAD/ok.c
bad B147 'ktune: error: --input x=a.npy and --input x=b.npy name the same tensor x: give one file per tensor' \
  tune $BAD/data.c --input x=a.npy --input x=b.npy
bad B103 'x.bin: 10 bytes are no whole number of f32 elements' tune $BAD/data.c --input x="$TMP/x.bin:f32"
bad B104 'y is an output of kernel f \(declared out\), which the kernel writes; give its expected content with --expect y=PATH' \
  tune $BAD/data.c --input y="$TMP/x4.npy"
bad B105 'x is an input of kernel f \(declared in\); expected contents are for its outputs: y' \
  tune $BAD/data.c --expect x="$TMP/x4.npy"
bad B106 '--input "x": expected NAME=PATH' tune $BAD/data.c --input x
bad B107 '--check "tests/data/bad/check_broken.c": expected FILE.c:FUNCTION' tune $BAD/data.c --check $BAD/check_broken.c
bad B108 'check_broken.c:broken: error: the check does not compile' tune $BAD/data.c --check $BAD/check_broken.c:broken
bad B109 'reference_unknown.c:2:15: error: @reference\(nope\): no kernel nope is annotated in this file' \
  tune $BAD/reference_unknown.c
bad B110 'tuned_shape.c:2:33: error: the shape of p uses tuned names' tune $BAD/tuned_shape.c
bad B111 'reference_ok.c:5:15: error: both --expect files and @reference\(g\) give the expected outputs' \
  tune $BAD/reference_ok.c --kernel f --expect y="$TMP/x4.npy"
bad B112 'empty_range.c:2:14: error: tensor x: random\(5, 5\) is empty' tune $BAD/empty_range.c
bad B113 'check_cuda.cu:2:11: error: @check\(ok\) names a C function of the kernel.s own file, which only the cpu backend' \
  tune $BAD/check_cuda.cu
bad B114 'file_missing.c:2:39: error: file\("missing.npy"\) of x: cannot read tests/data/bad/missing.npy' \
  tune $BAD/file_missing.c

# Every row of the table has its check.
for id in $(grep -oE '^\| B[0-9]+ \|' "$DOC" | grep -oE 'B[0-9]+'); do
  case " $ids " in *" $id "*) ;; *) fail "$DOC row $id has no check in $0" ;; esac
done
echo "$(echo $ids | wc -w) bad inputs checked"
finish
