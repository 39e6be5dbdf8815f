"""benchmarks/bench_trainer.py: how its end-to-end rows name and run their precision."""

from __future__ import annotations

import pytest
from helpers.scripts import load_benchmark

pytest.importorskip("torch")
bench = load_benchmark("bench_trainer")


def test_a_row_with_its_own_precision_runs_in_that_precision_only():
    options = "--hidden 128 128 --precision fp32".split()
    assert bench.precisions_of(options, ["fp32", "bf16"]) == ["fp32"]
    assert bench.without_precision(options) == ["--hidden", "128", "128"]


def test_a_row_without_a_precision_runs_in_each_of_the_precisions():
    assert bench.precisions_of(["--hidden", "128"], ["fp32", "bf16"]) == ["fp32", "bf16"]
    assert bench.without_precision(["--hidden", "128"]) == ["--hidden", "128"]
