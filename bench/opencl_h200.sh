#!/bin/bash
# Tunes the shipped OpenCL kernels on an NVIDIA GPU (the H200) through
# NVIDIA's OpenCL platform, and writes what it finds to $OUT:
#   summary.txt    one paragraph per kernel: winner, speed-up, statuses
#   devices.txt    `ktune devices` with only NVIDIA's OpenCL driver registered
#   matmul.json reduce.json transpose.json faulty.json   `ktune tune --json`
#   build.log tune.log   the build's and the tuner's messages
#
# Run on the device machine, from the repository root:
#   bench/opencl_h200.sh
# It needs there: a C compiler (the build is scripts/h200_build.sh: CMake, else
# cc directly); the development files of sqlite3, json-c and zlib; CL/cl.h;
# and the OpenCL ICD loader libOpenCL.so.1. Whatever the machine lacks can travel
# as Debian packages: on a machine with network access run
#   bench/opencl_h200.sh --fetch-debs .carry/debs
# and name .carry in the device tool's `carry` (it is git-ignored); this
# script unpacks them under a private prefix, never into /.
#
# Environment: OUT (default ./opencl-h200-out), KTUNE_DEBS (default .carry/debs),
# KTUNE_NVIDIA_OPENCL (the vendor library), KTUNE_OPENCL_DEVICE (default 0),
# MATMUL_BUDGET REDUCE_BUDGET TRANSPOSE_BUDGET (seconds or configurations),
# RUN_FAULTY=0 to skip the fault-injection kernel. The defaults take about
# 7 minutes with the build, inside one 10-minute device command.
set -u

DEBS_WANTED="libsqlite3-dev libsqlite3-0 libjson-c-dev libjson-c5 zlib1g-dev opencl-c-headers ocl-icd-libopencl1"

if [ "${1:-}" = "--fetch-debs" ]; then
  dir=${2:?usage: $0 --fetch-debs DIR}
  mkdir -p "$dir" && cd "$dir" && exec apt-get download $DEBS_WANTED
fi

ROOT=$(pwd)
OUT=${OUT:-$ROOT/opencl-h200-out}
DEBS=${KTUNE_DEBS:-$ROOT/.carry/debs}
NV_OCL=${KTUNE_NVIDIA_OPENCL:-/usr/local/nvidia/lib64/libnvidia-opencl.so.1}
DEV=${KTUNE_OPENCL_DEVICE:-0}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

# --- dependencies -------------------------------------------------------------

PREFIX="$WORK/prefix"
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
unpack_debs() {
  ls "$DEBS"/*.deb >/dev/null 2>&1 || return 0
  mkdir -p "$PREFIX"
  for d in "$DEBS"/*.deb; do dpkg -x "$d" "$PREFIX" || say "warning: could not unpack $d"; done
  lib="$PREFIX/usr/lib/$MULTIARCH"
  export CPATH="$PREFIX/usr/include:$PREFIX/usr/include/$MULTIARCH${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$lib/pkgconfig:$PREFIX/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export CMAKE_PREFIX_PATH="$PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  say "unpacked $(ls "$DEBS"/*.deb | wc -l) Debian packages from $DEBS under a private prefix"
}

# The ICD loader: the system's, the carried one, or the CUDA toolkit's.
find_loader() {
  for d in "$PREFIX/usr/lib/$MULTIARCH" /usr/lib/"$MULTIARCH" /usr/lib64 /usr/local/cuda/lib64 \
    /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64; do
    if [ -e "$d/libOpenCL.so.1" ]; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      say "OpenCL ICD loader: $d/libOpenCL.so.1"
      return 0
    fi
  done
  ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1 ' && { say "OpenCL ICD loader: from ldconfig"; return 0; }
  say "error: no OpenCL ICD loader (libOpenCL.so.1); carry ocl-icd-libopencl1 (see --fetch-debs)"
  return 1
}

# Only NVIDIA's platform is registered, so device 0 is the GPU.
register_nvidia() {
  [ -e "$NV_OCL" ] || { say "error: $NV_OCL not found (set KTUNE_NVIDIA_OPENCL)"; return 1; }
  mkdir -p "$WORK/icd"
  echo "$NV_OCL" >"$WORK/icd/nvidia.icd"
  export OCL_ICD_VENDORS="$WORK/icd"      # ocl-icd and the Khronos loader: a directory of .icd files
  export OCL_ICD_FILENAMES="$NV_OCL"      # the Khronos loader's explicit list
  export LD_LIBRARY_PATH="$(dirname "$NV_OCL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# --- build ----------------------------------------------------------------------

# scripts/h200_build.sh finds what unpack_debs provides through the environment
# (CPATH, LIBRARY_PATH, PKG_CONFIG_PATH, CMAKE_PREFIX_PATH).
build() {
  KTUNE=$("$ROOT/scripts/h200_build.sh" "$WORK/build" 2>>"$OUT/build.log" | tail -1)
  cat "$WORK/build/build.log" >>"$OUT/build.log" 2>/dev/null
  [ -x "$KTUNE" ]
}

# --- tuning ----------------------------------------------------------------------

# tune NAME FILE BUDGET [FLAGS...]: one kernel on the GPU, JSON into $OUT.
tune() {
  name=$1 file=$2 budget=$3
  shift 3
  echo "== $name: ktune tune $file --budget $budget $*" >>"$OUT/tune.log"
  timeout 420 "$KTUNE" tune "$file" --backend opencl --device "$DEV" --budget "$budget" --json --quiet \
    --db "$WORK/results.db" "$@" >"$OUT/$name.json" 2>>"$OUT/tune.log"
  rc=$?
  say ""
  say "== $name (exit $rc): $file --budget $budget $*"
  summarize "$OUT/$name.json" | tee -a "$SUMMARY"
}

summarize() {
  python3 - "$1" <<'EOF'
import collections, json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  no JSON result ({e})"); sys.exit(0)
cs = d.get("configurations", [])
print(f"  device: {d['device']['name']} ({d['device'].get('driver', '')})")
print(f"  sizes {d.get('sizes')}; space {d.get('space_size')}, valid {d.get('valid_size')}, "
      f"tried {len(cs)} with {d.get('strategy')}")
print("  statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(collections.Counter(c['status'] for c in cs).items())))
w, df = d.get("winner"), d.get("default")
def line(tag, c, tf, gb):
    if not c: return
    perf = " ".join(x for x in [f"{tf:.3f} TFLOP/s" if tf else "", f"{gb:.1f} GB/s" if gb else ""] if x)
    cfg = " ".join(f"{k}={v}" for k, v in c["config"].items())
    print(f"  {tag}: {cfg}  median {c.get('median_s', 0) * 1e3:.4f} ms  {perf}")
line("winner ", w, d.get("winner_tflops"), d.get("winner_gbps"))
line("default", df, d.get("default_tflops"), d.get("default_gbps"))
if d.get("speedup_over_default"): print(f"  speed-up over the default: {d['speedup_over_default']:.2f}x")
for c in cs:
    if c["status"] != "ok":
        cfg = " ".join(f"{k}={v}" for k, v in c["config"].items())
        msg = (c.get("message") or "").splitlines()
        print(f"    {c['status']:<11} {cfg}: {msg[0][:160] if msg else ''}")
EOF
}

main() {
  say "ktune OpenCL on NVIDIA, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /' | tee -a "$SUMMARY"
  unpack_debs
  find_loader || return 1
  register_nvidia || return 1
  if build; then say "built $KTUNE"; else
    say "error: the build failed; see build.log"
    tail -n 30 "$OUT/build.log"
    return 1
  fi
  "$KTUNE" devices >"$OUT/devices.txt" 2>&1
  cat "$OUT/devices.txt" | tee -a "$SUMMARY"
  grep -q -A1 '^opencl:' "$OUT/devices.txt" && ! grep -q '^opencl: not available' "$OUT/devices.txt" ||
    { say "error: no OpenCL device"; return 1; }

  tune matmul kernels/opencl/matmul.cl "${MATMUL_BUDGET:-200s}" --timeout 60 --dim M=4096 --dim N=4096 --dim K=4096
  tune reduce kernels/opencl/reduce.cl "${REDUCE_BUDGET:-60s}" --timeout 60 --dim N=67108864
  tune transpose kernels/opencl/transpose.cl "${TRANSPOSE_BUDGET:-90s}" --timeout 60 --dim M=8192 --dim N=8192
  if [ "${RUN_FAULTY:-1}" = 1 ]; then
    # The hang costs its 10 s timeout. On a GPU the out-of-bounds write
    # (VARIANT 7) is a device fault, after which the context is unusable.
    tune faulty tests/data/opencl_faulty.cl 9 --timeout 10
  fi
}

main
