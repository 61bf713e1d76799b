# Sourced by tests/gpu/python_h200.sh and bench/python_h200.sh:
# python_env WORK OUTDIR builds libktune (bench/h200_build.sh) and makes the
# package importable by $PY, as a user on a machine without PyPI would:
# `pip install --no-build-isolation --no-deps --target` of ./python (beside the
# image's own torch, triton, cupy, numpy) with
# KTUNE_LIBRARY set (nothing built twice, nothing downloaded). Without
# pip, setuptools or wheel there, python/ itself goes on PYTHONPATH
# (install.log says which).
python_env() {
  local work=$1 out=$2 ktune
  ktune=$(bench/h200_build.sh "$work/build" 2>"$out/build.log" | tail -1)
  [ -x "$ktune" ] || return 1
  export KTUNE_LIBRARY
  KTUNE_LIBRARY="$(cd "$(dirname "$ktune")" && pwd)/libktune.so"
  [ -f "$KTUNE_LIBRARY" ] || return 1
  PY=python3
  # pip --target, not a virtual environment: the image's python3 may find
  # torch, triton and cupy outside its system site (a venv hides user sites).
  if python3 -m pip install --no-build-isolation --no-deps --no-index --target "$work/pylib" ./python \
    >"$out/install.log" 2>&1; then
    export PYTHONPATH="$work/pylib${PYTHONPATH:+:$PYTHONPATH}"
  else
    echo "pip install failed: importing the package from python/ instead" >>"$out/install.log"
    export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  fi
  "$PY" -c "import ktune; print('ktune', ktune.__version__, ktune.library_path)" >>"$out/install.log" 2>&1
}
