# Sourced by tests/gpu/python_h200.sh and bench/python_h200.sh:
# python_env WORK OUTDIR builds libktune (bench/h200_build.sh) and makes the
# package importable by $PY, as a user on a machine without PyPI would:
# a virtual environment that sees the system's torch, triton, cupy, numpy,
# and `pip install --no-build-isolation --no-deps ./python` with
# KTUNE_LIBRARY set (nothing built twice, nothing downloaded). Without venv,
# pip, setuptools or wheel there, $PY is python3 with python/ on PYTHONPATH
# (install.log says which).
python_env() {
  local work=$1 out=$2 ktune
  ktune=$(bench/h200_build.sh "$work/build" 2>"$out/build.log" | tail -1)
  [ -x "$ktune" ] || return 1
  export KTUNE_LIBRARY
  KTUNE_LIBRARY="$(cd "$(dirname "$ktune")" && pwd)/libktune.so"
  [ -f "$KTUNE_LIBRARY" ] || return 1
  PY=python3
  if python3 -m venv --system-site-packages "$work/venv" >"$out/install.log" 2>&1 &&
    "$work/venv/bin/python" -m pip install --no-build-isolation --no-deps --no-index ./python >>"$out/install.log" 2>&1; then
    PY="$work/venv/bin/python"
  else
    echo "pip install failed: importing the package from python/ instead" >>"$out/install.log"
    export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  fi
  "$PY" -c "import ktune; print('ktune', ktune.__version__, ktune.library_path)" >>"$out/install.log" 2>&1
}
