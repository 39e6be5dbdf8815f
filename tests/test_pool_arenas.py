"""benchmarks/pool_arenas.py: which head-to-head it reads from each arena, and what it refuses to pool."""

from __future__ import annotations

import json
import math

import pytest
from helpers.scripts import load_benchmark

pool_arenas = load_benchmark("pool_arenas")
Z95 = load_benchmark("time_to_strength").Z95


def arena(tmp_path, name: str, first: str, diffs: dict[str, float], variant: str = "trjamann", se: float = 0.05):
    """An arena ``--out`` directory whose first agent ``first`` has the head-to-head ``diffs`` (opponent: mean)."""
    rows = [{"a": first, "b": b, "difference": {"mean": m, "low": m - Z95 * se, "high": m + Z95 * se}}
            for b, m in diffs.items()]
    rows.append({"a": "other", "b": first, "difference": {"mean": 9.0, "low": 8.0, "high": 10.0}})
    out = tmp_path / name
    out.mkdir()
    settings = {"agents": [first, *diffs], "variant": variant, "units": 500}
    (out / "result.json").write_text(json.dumps({"settings": settings, "agents": [], "head_to_head": rows}))
    return out


def test_pooling_averages_the_first_agents_margins_over_the_same_opponent(tmp_path):
    one = arena(tmp_path, "s1", "ppo:runs/s1/agent", {"search": 0.1})
    two = arena(tmp_path, "s2", "ppo:runs/s2/agent", {"search": -0.3})
    arenas, total = pool_arenas.pool([one, two / "result.json"])
    assert [row["a"] for _, _, row in arenas] == ["ppo:runs/s1/agent", "ppo:runs/s2/agent"]
    assert total["mean"] == pytest.approx(-0.1)
    assert total["high"] - total["mean"] == pytest.approx(Z95 * 0.05 / math.sqrt(2))
    assert "| **pooled**, 2 arenas | | 1000 | **-0.100" in pool_arenas.markdown(arenas, total)
    assert "| **pooled**, 1 arena | | 500 | **+0.100" in pool_arenas.markdown(*pool_arenas.pool([one]))


def test_an_arena_of_two_opponents_needs_against(tmp_path):
    both = arena(tmp_path, "s1", "ppo:a", {"search": 0.2, "pimc": 0.5})
    with pytest.raises(ValueError, match="no single opponent"):
        pool_arenas.pool([both])
    _, total = pool_arenas.pool([both], against="pimc")
    assert total["mean"] == pytest.approx(0.5)


@pytest.mark.parametrize("other, kind", [({"pimc": 0.1}, "opponents"), ({"search": 0.1}, "variants")])
def test_arenas_of_different_opponents_or_variants_are_refused(tmp_path, other, kind):
    one = arena(tmp_path, "s1", "ppo:a", {"search": 0.1})
    two = arena(tmp_path, "s2", "ppo:b", other, variant="trjamann" if kind == "opponents" else "basic")
    with pytest.raises(ValueError, match=f"different {kind}"):
        pool_arenas.pool([one, two])


def test_a_missing_arena_is_one_error_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        pool_arenas.main([str(tmp_path / "nowhere")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_table_is_written_to_out(tmp_path, capsys):
    one = arena(tmp_path, "s1", "ppo:a", {"search": 0.25})
    pool_arenas.main([str(one), "--out", str(tmp_path / "pooled.md")])
    assert (tmp_path / "pooled.md").read_text() == capsys.readouterr().out
