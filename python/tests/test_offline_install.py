"""The README's offline install line, as written, in a fresh virtual
environment (no system packages: pip and setuptools only, no `wheel`), with
KTUNE_LIBRARY pointing at an already built library: the package installs
with nothing downloaded (python/build_backend.py packs the wheel), and its
`ktune` command, `python -m ktune` and `import ktune` work."""

import os
import re
import subprocess
import sys

import ktune

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_offline_line() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        lines = [ln for ln in f if "pip install --no-build-isolation" in ln and "KTUNE_LIBRARY=" in ln]
    assert lines, "README.md has no offline install line (KTUNE_LIBRARY=... pip install --no-build-isolation ...)"
    return re.search(r"`(KTUNE_LIBRARY=[^`]*)`", lines[0]).group(1)


def test_the_readme_offline_line_works_in_a_fresh_venv(tmp_path):
    line = readme_offline_line()
    venv = tmp_path / "fresh"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    assert subprocess.run([py, "-c", "import wheel"], capture_output=True).returncode != 0, \
        "the fresh venv has `wheel`: this test would not test the build without it"
    # The line names $PWD/build/libktune.so: a checkout whose build/ is the folder of this session's
    # library (a build folder, or the package's own, with the ktune program beside it either way).
    cwd = tmp_path / "checkout"
    cwd.mkdir()
    os.symlink(os.path.dirname(os.path.realpath(ktune.library_path)), cwd / "build")
    os.symlink(os.path.join(REPO, "python"), cwd / "python")
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for cmd in ([str(venv / "bin" / "ktune"), "--version"], [py, "-m", "ktune", "--version"]):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert r.returncode == 0 and r.stdout.startswith("ktune "), r.stderr
    r = subprocess.run([py, "-c", "import ktune; print(ktune.__version__)"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == ktune.__version__, r.stderr
