#!/bin/sh
# The Python package's tests (python/tests, pytest), as a user would meet
# the package: `pip install ./python` into a virtual environment under
# BUILD (setup.py builds libktune there with CMake; nothing system-wide is
# touched), then pytest. Its last line is pytest's summary ("N passed ...");
# the exit status is pytest's. scripts/run-tests.sh adds its counts to the
# suite's, and CTest runs it as python.pytest.
#
#   scripts/python-tests.sh [BUILD] [PYTEST ARGS...]
# KTUNE_PYTHON picks the interpreter (default: the first python3 with numpy,
# pytest, setuptools and wheel; scripts/deps.sh installs Debian's).
set -eu
build=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "python-tests: no build folder ${1:-build}" >&2; exit 2; }
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
py=${KTUNE_PYTHON:-}
if [ -z "$py" ]; then
  for c in /usr/bin/python3 python3; do
    if "$c" -c "import numpy, pytest, setuptools, venv, wheel" 2>/dev/null; then py=$c; break; fi
  done
fi
if [ -z "$py" ]; then
  echo "python-tests: no python3 with numpy, pytest, setuptools and venv: run scripts/deps.sh" \
    "(python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv), or set KTUNE_PYTHON" >&2
  exit 2
fi
venv=$build/python-venv
# --system-site-packages: the interpreter's numpy and pytest, no download.
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
# --no-build-isolation: setuptools from the interpreter, so that no network is needed.
# KTUNE_WERROR: the C extension ktune._launch built with -Werror, so that a
# warning leaves it unbuilt and the tests of the extension fail.
KTUNE_WERROR=1 "$venv/bin/python" -m pip install --no-build-isolation --no-deps --no-cache-dir --disable-pip-version-check -q \
  "$root/python"
cd "$root/python/tests"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
