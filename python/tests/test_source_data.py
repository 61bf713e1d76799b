"""What Kernel Tuner users reach for first: the kernel as a string
(ktune.load(source=...), ktune.tune(source=...)), the inputs and expected
outputs as arrays (inputs={"x": a}, expect={"y": b}) and the HTML report
(ktune.report, ktune.tune(report=...))."""

import numpy as np
import pytest
from conftest import kernel_path

import ktune

SCALE_SOURCE = open(kernel_path("tests/kernels/scale.c"), encoding="utf-8").read()

# The same y = a * x in OpenCL C: lang= picks the language (and so the backend).
SCALE_CL = """
// @autotune(ITEMS in [1, 2])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid((N + 64 * ITEMS - 1) / (64 * ITEMS))
// @block(64)
// @dims(N = 1024)
__kernel void scale(__global const float *x, __global float *y, int n) {
  for (int j = 0; j < ITEMS; j++) {
    int i = get_global_id(0) * ITEMS + j;
    if (i < n) y[i] = 2 * x[i];
  }
}
"""


def test_load_source_runs_the_string_kernel(db):
    k = ktune.load(source=SCALE_SOURCE, lang="c", db=db, budget=2)
    assert k.name == "scale" and k.backend == "cpu" and k.path == "<source>"
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    k(x, y)
    assert np.array_equal(y, 2 * x)


def test_source_lang_defaults_to_c_and_picks_the_backend(db, has_opencl):
    assert ktune.load(source=SCALE_SOURCE, db=db).backend == "cpu"
    if has_opencl:
        assert ktune.load(source=SCALE_CL, lang="cl", db=db).backend == "opencl"


def test_tune_source(db):
    r = ktune.tune(source=SCALE_SOURCE, lang="c", dims={"N": 512}, db=db)
    assert r.kernel == "scale" and r.sizes == {"N": 512}
    assert {c.values["UNROLL"] for c in r.configurations} == {1, 2, 4, 8}
    assert r.winner is not None and r.winner.status == "ok"


def test_kernel_from_source_tunes_from_its_source(db):
    k = ktune.load(source=SCALE_SOURCE, db=db)
    r = k.tune(dims={"N": 128}, budget=2)
    assert r.kernel == "scale" and r.sizes == {"N": 128}


def test_path_or_source_not_both_nor_neither(db):
    with pytest.raises(ktune.InvalidInput, match="one of them"):
        ktune.load(kernel_path("tests/kernels/scale.c"), source=SCALE_SOURCE)
    with pytest.raises(ktune.InvalidInput, match="one of them"):
        ktune.tune(db=db)
    with pytest.raises(ktune.InvalidInput, match="lang='cu' goes with source="):
        ktune.load(kernel_path("tests/kernels/scale.c"), lang="cu")
    with pytest.raises(ktune.InvalidInput, match='unknown kernel language "fortran"'):
        ktune.load(source=SCALE_SOURCE, lang="fortran")


def test_a_bad_annotation_in_source_names_the_line(db):
    with pytest.raises(ktune.InvalidInput, match=r"<source>:\d+:\d+: error"):
        ktune.load(source="// @kernel f(x: in tensor<f99>[N])\nvoid f(float *x) {}\n", db=db)


def test_inputs_and_expect_as_arrays_bind_the_sizes(db):
    x = np.random.default_rng(1).random(777, dtype=np.float32)
    r = ktune.tune(source=SCALE_SOURCE, inputs={"x": x}, expect={"y": 2 * x}, db=db)
    assert r.sizes == {"N": 777}  # from the array's shape, not @dims
    assert all(c.status == "ok" for c in r.configurations)


def test_expect_is_the_reference_every_configuration_meets(db):
    x = np.ones(256, dtype=np.float32)
    with pytest.raises(ktune.NoValidConfiguration) as e:
        ktune.tune(source=SCALE_SOURCE, inputs={"x": x}, expect={"y": 3 * x}, db=db)
    assert {c.status for c in e.value.result.configurations} == {"correctness"}


def test_array_of_the_wrong_type_or_name_is_refused(db):
    with pytest.raises(ktune.InvalidInput, match="f64|float64|f32"):
        ktune.tune(source=SCALE_SOURCE, inputs={"x": np.ones(64)}, db=db)
    with pytest.raises(ktune.InvalidInput, match="nosuch"):
        ktune.tune(source=SCALE_SOURCE, inputs={"nosuch": np.ones(64, np.float32)}, db=db)
    with pytest.raises(ktune.InvalidInput, match="expected a dict"):
        ktune.tune(source=SCALE_SOURCE, inputs=[np.ones(64, np.float32)], db=db)


def test_report_of_the_database_and_of_a_tuning(db, tmp_path):
    with pytest.raises(ktune.NotFound):
        ktune.report(tmp_path / "none.html", db=db)  # nothing stored yet
    assert not (tmp_path / "none.html").exists()
    tuning = tmp_path / "tuning.html"
    ktune.tune(source=SCALE_SOURCE, dims={"N": 256}, db=db, report=tuning)
    assert tuning.read_text().lstrip().lower().startswith("<!doctype html")
    stored = ktune.report(tmp_path / "stored.html", kernel="scale", db=db)
    assert stored == str(tmp_path / "stored.html")
    text = (tmp_path / "stored.html").read_text()
    assert "scale" in text and "<svg" in text
    with pytest.raises(ktune.NotFound):
        ktune.report(tmp_path / "other.html", kernel="nosuch", db=db)
