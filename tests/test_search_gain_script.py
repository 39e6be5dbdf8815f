"""benchmarks/search_gain.py: every decision counted once per grouping, and the table it prints."""

from __future__ import annotations

import pytest
from helpers.scripts import load_benchmark


@pytest.fixture(scope="module")
def search_gain():
    return load_benchmark("search_gain")


def test_groupings_and_table(search_gain, capsys):
    rows = search_gain.measure("hornafjardar", deals=1, worlds=1, seed=2, progress=False)
    total = len(rows["all"]["all"])
    assert total > 10
    for grouping in ("stage", "role", "seat in trick"):
        assert sum(map(len, rows[grouping].values())) == total
    assert set(rows["seat in trick"]) <= {"1.", "2.", "3."}
    assert sorted(rows["stage"], key=search_gain._natural)[0] == "tricks 1-3"
    search_gain.main(["--variant", "basic", "--deals", "1", "--worlds", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert out.startswith("**basic** · 1 deals") and "| all | all |" in out


def test_bad_arguments(search_gain):
    with pytest.raises(SystemExit):
        search_gain.main(["--deals", "0"])
