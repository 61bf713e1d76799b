# Sourced by tests/gpu/python_h200.sh and bench/python_call_cost_h200.sh:
# python_env WORK OUTDIR builds libktune (scripts/h200_build.sh) and makes the
# package importable by $PY, as a user on a machine without PyPI would:
# `pip install --no-build-isolation --no-deps --target` of ./python (beside the
# image's own torch, triton, cupy, numpy) with
# KTUNE_LIBRARY set (nothing built twice, nothing downloaded). Without
# pip, setuptools or wheel there, python/ itself goes on PYTHONPATH
# (install.log says which). The C extension ktune._launch (the per-call
# path) needs Python's headers: where it is not built, a WARNING line on
# stdout and in install.log says so and why (the package then launches
# through ctypes, and the scripts' checks and tables show it).
python_env() {
  local work=$1 out=$2 ktune
  ktune=$(scripts/h200_build.sh "$work/build" 2>"$out/build.log" | tail -1)
  [ -x "$ktune" ] || return 1
  export KTUNE_LIBRARY
  KTUNE_LIBRARY="$(cd "$(dirname "$ktune")" && pwd)/libktune.so"
  [ -f "$KTUNE_LIBRARY" ] || return 1
  PY=${KTUNE_PYTHON:-python3} # KTUNE_PYTHON: another interpreter
  # pip --target, not a virtual environment: the image's python3 may find
  # torch, triton and cupy outside its system site (a venv hides user sites).
  if "$PY" -m pip install --no-build-isolation --no-deps --no-index --target "$work/pylib" ./python \
    >"$out/install.log" 2>&1; then
    export PYTHONPATH="$work/pylib${PYTHONPATH:+:$PYTHONPATH}"
  else
    echo "pip install failed: importing the package from python/ instead, its extension built in place" \
      >>"$out/install.log"
    (cd python && "$PY" setup.py build_ext --inplace) >>"$out/install.log" 2>&1
    export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  fi
  "$PY" -c "import ktune; print('ktune', ktune.__version__, ktune.library_path)" >>"$out/install.log" 2>&1
  python_extension_check "$out"
}

# Says loudly when ktune._launch was not built or does not import.
python_extension_check() {
  local out=$1 include path
  include=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null)
  echo "Python headers: $include/Python.h $([ -f "$include/Python.h" ] && echo present || echo MISSING)" >>"$out/install.log"
  path=$("$PY" -c "import ktune; print(ktune.launch_path, '-', ktune.launch_path_reason)" 2>&1 | tail -1)
  echo "launch path: $path" >>"$out/install.log"
  case $path in
  extension*) ;;
  *) echo "WARNING: the C extension ktune._launch is NOT used (launch path: $path; Python.h under $include:" \
    "$([ -f "$include/Python.h" ] && echo present || echo missing)): calls go through ctypes" | tee -a "$out/install.log" ;;
  esac
}
