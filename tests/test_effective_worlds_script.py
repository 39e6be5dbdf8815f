"""benchmarks/effective_worlds.py: the same worlds weighted at every temperature, and the table it prints."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.scripts import load_benchmark


@pytest.fixture(scope="module")
def script():
    return load_benchmark("effective_worlds")


def test_flatter_with_temperature_and_table(script, capsys):
    ess, late = script.measure("hornafjardar", deals=1, worlds=4, temperatures=[1, 3, 1e9], seed=1, progress=False)
    assert ess.shape == (late.size, 3) and late.size > 10 and late.any() and not late.all()
    assert ((ess >= 1 - 1e-9) & (ess <= 4 + 1e-9)).all()
    assert (np.diff(ess, axis=1) >= -1e-9).all() and np.allclose(ess[:, 2], 4)
    assert (ess[:, 0] < 4 - 1e-6).any()  # some decisions weight their worlds unevenly
    script.main(["--variants", "basic", "--deals", "1", "--worlds", "2", "--temperatures", "1", "5", "--no-progress"])
    out = capsys.readouterr().out
    assert out.startswith("1 deals per variant") and "| basic | 1 |" in out and "| basic | 5 |" in out


@pytest.mark.parametrize("argv", [["--deals", "0"], ["--temperatures", "1", "0"], ["--variants", "bridge"]])
def test_bad_arguments(script, argv):
    with pytest.raises(SystemExit):
        script.main(argv)
