"""The package gives the command line: the `ktune` console script and
`python -m ktune` run the ktune program, every subcommand, with its exit
statuses."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "ktune")


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)


@pytest.mark.parametrize("launcher", [[SCRIPT], [sys.executable, "-m", "ktune"]], ids=["script", "module"])
def test_the_command_line_runs(launcher):
    r = run(*launcher, "--version")
    assert r.returncode == 0 and r.stdout.startswith("ktune "), r.stderr
    r = run(*launcher, "tune", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: ktune tune"), r.stderr
    r = run(*launcher, "space", "kernels/c/matmul.c", "--json")
    assert r.returncode == 0 and '"default_flags"' in r.stdout, r.stderr
    r = run(*launcher, "frobnicate")
    assert r.returncode == 2 and "unknown command frobnicate" in r.stderr


def test_the_console_script_tunes(tmp_path):
    db = str(tmp_path / "r.db")
    r = run(SCRIPT, "tune", "kernels/c/matmul.c", "--dim", "M=16", "--dim", "N=16", "--dim", "K=16", "--budget",
            "2", "--db", db, "--quiet")
    assert r.returncode == 0, r.stderr
    r = run(SCRIPT, "cache", "show", "--kernel", "matmul", "--db", db, "--format", "csv")
    assert r.returncode == 0 and r.stdout.startswith("kernel,backend,device,sizes,"), r.stderr
