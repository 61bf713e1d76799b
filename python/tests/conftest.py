"""Fixtures of the Python tests: the repository's root, a fresh results
database per test, whether PoCL's OpenCL device is here, and the launch path
(the C extension and the ctypes fallback) a test module runs under."""

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
# Wall-clock limits hold on a machine this many times slower than a quiet one
# (KTUNE_TEST_SLOWDOWN, default 10: other jobs on both cores), as in the
# end-to-end tests (tests/e2e/common.bash).
SLOWDOWN = int(os.environ.get("KTUNE_TEST_SLOWDOWN", "10"))


def kernel_path(rel: str) -> str:
    """A kernel of the repository (kernels/...) or of these tests (tests/...)."""
    if rel.startswith("tests/"):
        return os.path.join(HERE, rel[len("tests/"):])
    return os.path.join(ROOT, rel)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "results.db")


@pytest.fixture(scope="session")
def has_opencl():
    import ktune

    return any(b["backend"] == "opencl" and b["available"] for b in ktune.devices()["backends"])


@pytest.fixture(scope="session")
def no_gpu():
    """For tests that give the CUDA backend fake device addresses: they
    expect the launch to fail for want of a driver, and must never reach a
    real GPU."""
    import ktune

    if any(b["backend"] == "cuda" and b["available"] for b in ktune.devices()["backends"]):
        pytest.skip("a CUDA device is here: this test's fake device addresses must not be launched on")


@pytest.fixture(params=["extension", "ctypes"])
def launch_path(request, monkeypatch):
    """Runs the test once per launch path: kernels loaded in it are called
    through the C extension, then through ctypes ($KTUNE_LAUNCH_PATH). The
    extension not being built is a failure here, not a skip: scripts/deps.sh
    installs python3-dev, and a broken extension must not go unnoticed."""
    import ktune

    if request.param == "extension" and ktune.launch_path != "extension":
        pytest.fail(f"ktune.launch_path is {ktune.launch_path!r}: {ktune.launch_path_reason}")
    monkeypatch.setenv("KTUNE_LAUNCH_PATH", request.param)
    return request.param
