"""The speed benchmark script runs, writes its JSON and marks missing peers (a smoke test, no timing)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_speed.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_bench_speed_runs_and_writes_json(tmp_path, capsys):
    bench = load_bench()
    out = tmp_path / "speed.json"
    assert bench.main(["--seconds", "0.05", "--repeats", "2", "--only", "(basic)", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| manni engine (basic) |" in table and "| manni AEC env (basic) |" in table
    data = json.loads(out.read_text())
    assert {"python", "numpy", "cpu"} <= set(data["environment"])
    rows = {r["name"]: r for r in data["rows"]}
    assert set(rows) == {"manni AEC env (basic)", "manni engine (basic)"}
    assert all(r["steps_per_s"] > 0 and r["games"] >= 2 for r in rows.values())


def test_missing_peer_is_reported_not_fatal():
    bench = load_bench()

    def missing(choose):
        raise ImportError("No module named 'not_a_peer'", name="not_a_peer")

    rows = bench.run([bench.Bench("absent", missing), bench.Bench("engine", bench.manni_engine("basic"))],
                     seconds=0.02, repeats=1, games=None, seed=0)
    assert rows[0].steps_per_s is None and "not installed" in rows[0].notes
    assert rows[1].steps_per_s > 0
    assert "| absent | – | – |" in bench.to_markdown(rows)


def test_chooser_is_uniform_and_seeded():
    bench = load_bench()
    a, b = bench.Chooser(np.random.default_rng(5)), bench.Chooser(np.random.default_rng(5))
    picks = [a(range(3)) for _ in range(6000)]
    assert picks == [b(range(3)) for _ in range(6000)]
    counts = Counter(picks)
    assert all(1800 < counts[k] < 2200 for k in range(3))
