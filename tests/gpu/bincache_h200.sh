#!/usr/bin/env bash
# The binary cache on the H200: a second key of a tuned
# CUDA kernel compiles nothing (every cubin comes from the cache), and what
# that saves. Run from anywhere; it works in the repository root:
#
#   tests/gpu/bincache_h200.sh [OUTDIR]    (OUTDIR: $OUT, else ./gpu-out)
#
# Builds ktune with scripts/h200_build.sh (carry .carry: `scripts/h200_build.sh
# --prepare` makes it), then for kernels/cuda/elementwise.cu (16
# configurations) and kernels/cuda/sgemm.cu (measured whole) tunes a first
# key on an empty cache and a second key of the same kernel, and checks,
# each line PASS or FAIL in OUTDIR/bincache.txt (the JSON documents in
# OUTDIR/bincache.tar.gz):
#   1. first key: binary_cache.compiled equals the configurations built,
#      cached 0; every configuration's compile is "compiled";
#   2. second key: compiled 0 (but for the first key's compile failures,
#      which are not cached), cached = the rest, the same statuses;
#   3. a damaged cubin entry (one byte flipped) is rebuilt, the tuning right;
#   4. --no-binary-cache compiles everything again.
# and records the wall time of each tuning (first key, second key, without
# the cache) and the compile busy time, for docs/BENCHMARKS.md.
# Exit status 0 when every check passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin bincache.txt "ktune binary cache"
export KTUNE_DB="$WORK/results.db"
export KTUNE_BINARY_CACHE="$WORK/binaries"

# tune NAME FILE [FLAGS...]: one tuning into $WORK/NAME.json, its wall time
# (seconds, from outside the process) into $WORK/NAME.wall.
tune() {
  name=$1 file=$2; shift 2
  t0=$(date +%s.%N)
  "$KTUNE" tune "$file" --json --quiet "$@" >"$WORK/$name.json" 2>"$WORK/$name.err"
  rc=$?
  echo "$rc $(python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")" \
    >"$WORK/$name.wall"
}
counts() { py "b=d['binary_cache']; print(b['cached'], b['compiled'], b['rebuilt'])" "$WORK/$1.json" 2>/dev/null; }
built() { py "print(sum(1 for c in d['configurations'] if c.get('compile')))" "$WORK/$1.json" 2>/dev/null; }
# Compile failures are not cached (a timeout on a loaded machine is one too):
# a second key compiles those again.
failed_compiles() { py "print(sum(1 for c in d['configurations'] if c['status'] == 'compile'))" "$WORK/$1.json" 2>/dev/null; }
figures() { # the line of figures of tuning NAME
  read -r rc wall <"$WORK/$1.wall"
  py "b=d['binary_cache']; t=d['timeline']; print('wall %.2f s (in-process %.2f s), compile busy %.2f s, %d cached, %d compiled, winner %s' % ($wall, t['wall_s'], t['compile_busy_s'], b['cached'], b['compiled'], d['winner']['status'] if d['winner'] else None))" "$WORK/$1.json" 2>/dev/null
}
statuses() { py "print(sorted(set(c['status'] for c in d['configurations'])))" "$WORK/$1.json" 2>/dev/null; }

one_kernel() { # one_kernel LABEL FILE FIRST_DIMS SECOND_DIMS THIRD_DIMS
  label=$1 file=$2
  tune "$label-first" "$file" $3
  n=$(built "$label-first")
  [ "$(counts "$label-first")" = "0 $n 0" ] && [ "${n:-0}" -gt 0 ]
  check "$label first key: $n configurations compiled, none cached" $? "$(counts "$label-first")"
  say "      $label first key:  $(figures "$label-first")"
  tune "$label-second" "$file" $4
  n2=$(built "$label-second") f=$(failed_compiles "$label-first")
  [ "$(counts "$label-second")" = "$((n2 - f)) $f 0" ] && [ "${n2:-0}" -gt 0 ]
  check "$label second key: nothing compiled but the $f compile failures, $((n2 - f)) cubins from the cache" $? \
    "$(counts "$label-second")"
  [ "$(statuses "$label-second")" = "$(statuses "$label-first")" ]
  check "$label second key: the same statuses as the first" $? "$(statuses "$label-second")"
  say "      $label second key: $(figures "$label-second")"
  entry=$(ls -t "$KTUNE_BINARY_CACHE"/*.ktbin | head -1)
  python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xFF; open(p,'wb').write(b)" "$entry"
  tune "$label-damaged" "$file" $5
  r=$(py "print(d['binary_cache']['rebuilt'], d['winner']['status'])" "$WORK/$label-damaged.json" 2>/dev/null)
  [ "$r" = "1 ok" ]; check "$label: a damaged cubin is rebuilt, the tuning right" $? "$r"
  tune "$label-nocache" "$file" $4 --no-binary-cache --no-cache
  [ "$(py "print(d['binary_cache']['cached'])" "$WORK/$label-nocache.json" 2>/dev/null)" = 0 ]
  check "$label --no-binary-cache: compiles everything" $? "$(counts "$label-nocache")"
  say "      $label second key without the cache: $(figures "$label-nocache")"
}

one_kernel elementwise kernels/cuda/elementwise.cu "--dim N=16777216" "--dim N=33554432" "--dim N=8388608"
one_kernel sgemm kernels/cuda/sgemm.cu "--dim M=2048 --dim N=2048 --dim K=2048" \
  "--dim M=3072 --dim N=2048 --dim K=2048" "--dim M=1024 --dim N=2048 --dim K=2048"

tar -czf "$OUTDIR/bincache.tar.gz" -C "$WORK" $(cd "$WORK" && ls ./*.json ./*.err ./*.wall 2>/dev/null)
say "$FAILED failed"
rm -rf "$WORK"
[ "$FAILED" -eq 0 ]
