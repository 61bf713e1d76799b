"""Scores ktune's replayed repeats with the autotuning_methodology package
itself, to check src/search/methodology.c against the reference:

    bench/methodology.sh DATASET_DIR REPEATS -t TRACES -S random,ils
    python3 bench/methodology_check.py FILE.json[.gz] TRACES/STRATEGY_FILE.tsv

prints the package's window, its random-search curve at a few instants
and the package's score of the same repeats (needs `pip install
autotuning_methodology`, 1.1.0 used for docs/SEARCH.md). The package fits
the strategy's curve with bagged isotonic regressions (random
subsamples), so its score moves a little from run to run."""

import gzip
import shutil
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
from autotuning_methodology.curves import StochasticOptimizationAlgorithm
from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

TIME_KEYS = ["compilation", "runtimes", "framework", "search_algorithm", "validation"]


def plain_json(path: str, folder: str) -> Path:
    """The file uncompressed (the package reads plain JSON)."""
    out = Path(folder) / Path(path).name.replace(".gz", "")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def traces(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(evaluations x repeats) arrays of cumulative seconds and best so far."""
    rows = np.loadtxt(path, ndmin=2)
    repeats = int(rows[:, 0].max()) + 1
    per = [rows[rows[:, 0] == i] for i in range(repeats)]
    n = max(len(p) for p in per)
    time = np.full((n, repeats), np.nan)
    best = np.full((n, repeats), np.nan)
    for i, p in enumerate(per):
        time[: len(p), i] = p[:, 1]
        best[: len(p), i] = p[:, 2]
    return time, best


def nearest_in(values: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Each value as the nearest recorded one (ktune keeps times as floats)."""
    out = np.full_like(values, np.nan)
    ok = ~np.isnan(values)
    i = np.clip(np.searchsorted(dist, values[ok]), 1, len(dist) - 1)
    lower, upper = dist[i - 1], dist[i]
    out[ok] = np.where(np.abs(values[ok] - lower) <= np.abs(upper - values[ok]), lower, upper)
    return out


class Results:
    """The part of a ResultsDescription a curve reads."""

    def __init__(self, time: np.ndarray, best: np.ndarray):
        self.group_name = "ktune"
        self.device_name = "recorded"
        self.application_name = "recorded"
        self.stochastic = True
        self.minimization = True
        n, repeats = time.shape
        fevals = np.tile(np.arange(1, n + 1, dtype=float)[:, None], (1, repeats))
        fevals[np.isnan(time)] = np.nan
        per_key = np.full((len(TIME_KEYS), n, repeats), np.nan)
        self._results = types.SimpleNamespace(
            fevals_results=fevals,
            objective_time_results=time,
            objective_time_results_per_key=per_key,
            objective_performance_best_results=best,
            objective_performance_results_per_key=per_key,
        )

    def get_results(self):
        return self._results


def main() -> None:
    recorded, trace_file = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as folder:
        stats = SearchspaceStatistics("recorded", "recorded", True, TIME_KEYS, ["time"], plain_json(recorded, folder))
    f0, f1, t0, t1 = stats.cutoff_point_fevals_time_start_end(0.01, 0.95)
    print(f"window: evaluations {f0} .. {f1}, {t0:.4f} .. {t1:.4f} s, median cost {stats.total_time_median():.6f} s")
    times = np.linspace(t0, t1, num=1000)
    baseline = RandomSearchCalculatedBaseline(stats)
    random_curve = baseline.get_curve(times, "time")
    for k in (0, 1, 10, 100, 500, 999):
        print(f"random search at {times[k]:.4f} s: {random_curve[k]:.9g}")
    time, best = traces(trace_file)
    best = nearest_in(best, stats.objective_performances_total_sorted)
    curve = StochasticOptimizationAlgorithm(Results(time, best))
    parts = curve.get_curve_over_time(times, dist=stats.objective_performances_total_sorted, confidence_level=0.95)
    strategy_curve = np.concatenate([parts[2], parts[6]]) if parts[5].ndim > 0 else parts[2]
    (standardised,) = baseline.get_standardised_curves(times, [strategy_curve], x_type="time")
    print(f"score: {np.mean(standardised):.4f}")


if __name__ == "__main__":
    main()
