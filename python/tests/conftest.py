"""Fixtures of the Python tests: the repository's root, a fresh results
database per test, and whether PoCL's OpenCL device is here."""

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))


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
