# T1 input (Kernel Tuner's tune_kernel_T1 format): the hub's convolution
# T1 file becomes the space the hub measured (4362 valid configurations of
# 10240, as tests/data/t4 records), with what is not mapped named; its
# OpenCL variant tunes on PoCL; and files that cannot run are exit 2, named.
. "$(dirname "$0")/common.bash"
T1=tests/data/t1

run_status 0 "$KTUNE" space --t1 $T1/convolution_T1.json --json
expect_eq "$(json "$TMP/out" "(d['size'], d['valid_size'])")" "(10240, 4362)" "the hub's space, restrictions applied"
expect_eq "$(json "$TMP/out" "d['default']['block_size_y']")" 16 "the Default comes first"
expect_contains "$TMP/err" "note: GlobalSize is not read" "GlobalSize named"
expect_contains "$TMP/err" 'note: CompilerOptions "-std=c++11" is not passed' "CompilerOptions named"
expect_contains "$TMP/err" "@constant(d_filter: tensor<f32>\[15 \* 15\] = random)" "MemType Constant as @constant"
expect_contains "$TMP/err" "@grid(cdiv(PROBLEM_SIZE_X, (block_size_x) \* (tile_size_x))" "GridDivX as @grid"
expect_contains "$TMP/err" "output_image: out tensor<f32>\[PROBLEM_SIZE_X \* PROBLEM_SIZE_Y\] = zeros" \
  "arguments by the C function's names"
"$KTUNE" space --t1 $T1/convolution_T1.json --json --quiet --dim PROBLEM_SIZE_X=512 >"$TMP/small" 2>&1
expect_eq "$(json "$TMP/small" "d['valid_size']")" 4362 "--dim changes the ProblemSize"

# The hub's dedispersion file: a chained comparison, three dimensions, and
# Defaults that violate the file's own Conditions (ktune's default must not).
mkdir -p "$TMP/dd/dedisp_milo" && cp $T1/dedispersion_T1.json "$TMP/dd/"
cat >"$TMP/dd/dedisp_milo/dedispersion.cu.hip" <<'K'
__constant__ float shifts[1];
extern "C" __global__ void dedispersion_kernel(const float *input_samples, float *output_arr, const float *s) {}
K
run_status 0 "$KTUNE" space --t1 "$TMP/dd/dedispersion_T1.json" --json
expect_eq "$(json "$TMP/out" "(d['size'], d['valid_size'])")" "(22272, 11130)" "dedispersion: the hub's space"
expect_contains "$TMP/err" "the Defaults violate the Conditions; ktune's default (its reference) is the first valid" \
  "an invalid Default replaced, and said"
expect_contains "$TMP/err" "@where(( (32 <= block_size_x \* block_size_y) && (block_size_x \* block_size_y <= 1024) ))" \
  "a chained comparison"

run_status 0 "$KTUNE" tune --t1 $T1/convolution_opencl_T1.json --budget 6 --json --quiet --no-db
expect_eq "$(json "$TMP/out" "d['device']['backend']")" opencl "the OpenCL variant runs on OpenCL"
expect_eq "$(json "$TMP/out" "sorted(set(c['status'] for c in d['configurations']))")" "['ok']" "every configuration ok"
expect_eq "$(json "$TMP/out" "len(d['configurations']) >= 6 and d['winner']['status'] == 'ok'")" True "a verified winner"

# What cannot run: exit 2, the reason named.
t1_edit() { # PYTHON applied to the document d of convolution_opencl_T1.json, into $TMP/bad/k_T1.json
  mkdir -p "$TMP/bad" && cp $T1/convolution.cl "$TMP/bad/"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $1; json.dump(d, open(sys.argv[2], 'w'))" \
    $T1/convolution_opencl_T1.json "$TMP/bad/k_T1.json"
}
t1_edit "d['ConfigurationSpace']['TuningParameters'][0]['Type'] = 'float'"
run_status 2 "$KTUNE" space --t1 "$TMP/bad/k_T1.json"
expect_contains "$TMP/err" "tuning parameter block_size_x is of Type float" "a float parameter"
t1_edit "d['ConfigurationSpace']['TuningParameters'][4]['Name'] = 'read_only'"
run_status 2 "$KTUNE" space --t1 "$TMP/bad/k_T1.json"
expect_contains "$TMP/err" "read_only is an OpenCL C keyword" "an OpenCL keyword as a name"
t1_edit "d['KernelSpecification']['KernelFile'] = 'missing.cl'"
run_status 2 "$KTUNE" space --t1 "$TMP/bad/k_T1.json"
expect_contains "$TMP/err" "KernelFile missing.cl is not found" "a missing kernel file"
t1_edit "d['KernelSpecification']['Arguments'].pop()"
run_status 2 "$KTUNE" space --t1 "$TMP/bad/k_T1.json"
expect_contains "$TMP/err" "convolution_kernel takes 3 parameters, but Arguments lists 2" "an argument missing"
echo '{"General": {}' >"$TMP/bad/broken_T1.json"
run_status 2 "$KTUNE" space --t1 "$TMP/bad/broken_T1.json"
expect_contains "$TMP/err" "not JSON" "not JSON"
run_status 2 "$KTUNE" tune $T1/convolution.cl --t1 $T1/convolution_opencl_T1.json
expect_contains "$TMP/err" "give no FILE or --kernel beside it" "--t1 and FILE"

# What does not map but can run: a note, and the rest goes on.
t1_edit "d['ConfigurationSpace']['Conditions'].append({'Expression': 'block_size_x / 16 >= 1'})"
run_status 0 "$KTUNE" space --t1 "$TMP/bad/k_T1.json"
expect_contains "$TMP/err" "note: Condition \"block_size_x / 16 >= 1\" is left out: '/' is true division" \
  "an untranslatable condition named"
finish
