"""The duplicate arena: determinism, duplicate structure, statistics, outputs, records, CLI."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from agents.arena import SEATINGS, Interval, run_arena
from agents.commands.arena import write_outputs
from manni_env import make_rules
from manni_env.cli import main
from manni_env.records import read_records, validate_record


def _without_times(result: dict) -> dict:
    """The result dict minus wall-clock time per move, the one figure allowed to differ."""
    out = json.loads(json.dumps(result))
    for agent in out["agents"]:
        del agent["ms_per_move"]
    return out


def test_same_seed_same_result_and_workers_do_not_change_it():
    rules = make_rules("hornafjardar")
    one = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False)
    again = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False)
    two = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False, workers=2)
    assert _without_times(one.to_dict()) == _without_times(again.to_dict())
    assert one.games == again.games == two.games
    expected = _without_times(one.to_dict())
    expected["settings"]["workers"] = 2
    assert _without_times(two.to_dict()) == expected
    other = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=12, progress=False)
    assert [g.score for g in other.games] != [g.score for g in one.games]


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann", "laugarvatn"])
def test_duplicate_structure_and_records(variant, tmp_path):
    path = tmp_path / "games.jsonl"
    result = run_arena(["random", "random", "rule_based"], make_rules(variant), deals=3, seed=5, records=path, progress=False)
    assert len(result.games) == 3 * 6
    for unit in range(3):
        games = [g for g in result.games if g.unit == unit]
        assert sorted(g.players for g in games) == sorted(SEATINGS)
        for seat in range(3):  # every player sits in every seat twice (once per order of the others)
            assert Counter(g.players[seat] for g in games) == {0: 2, 1: 2, 2: 2}
    records = read_records(path)
    assert len(records) == 18
    for n, record in enumerate(records):
        validate_record(record)
        unit, seating = divmod(n, 6)
        assert record["players"] == [["random", "random", "rule_based"][j] for j in SEATINGS[seating]]
        first = records[6 * unit]
        assert record["seed"] == first["seed"]  # the same deal under every seating
        assert record["rounds"][0]["hands"] == first["rounds"][0]["hands"]
        assert len(record["rounds"]) == 1 and record["final"] is None
    assert len({r["seed"] for r in records}) == 3


def test_statistics_pool_copies_and_are_consistent():
    result = run_arena(["random", "random", "rule_based"], make_rules("hornafjardar"), deals=6, seed=2, progress=False)
    stats = {a.spec: a for a in result.agents}
    assert [a.spec for a in result.agents] == ["random", "rule_based"]
    assert stats["random"].copies == 2 and stats["rule_based"].copies == 1
    # Hornafjarðarmanni deals are zero-sum: the seats' mean scores sum to zero
    assert 2 * stats["random"].deal_score.mean + stats["rule_based"].deal_score.mean == pytest.approx(0.0)
    for agent in result.agents:
        ci = agent.deal_score
        assert ci.low < ci.mean < ci.high
        assert agent.win_share is None
        assert agent.ordinal == pytest.approx(agent.mu - 3 * agent.sigma)
        assert agent.moves > 0 and agent.ms_per_move >= 0
    (pair,) = result.head_to_head
    assert (pair.a, pair.b) == ("random", "rule_based")
    assert pair.difference.mean == pytest.approx(stats["random"].deal_score.mean - stats["rule_based"].deal_score.mean)
    assert pair.difference.low < pair.difference.mean < pair.difference.high


def test_interval_is_the_normal_approximation():
    ci = Interval.of([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * (5 / 3) ** 0.5 / 2
    assert ci.mean == 2.5 and ci.low == pytest.approx(2.5 - half) and ci.high == pytest.approx(2.5 + half)
    assert Interval.of([3.0]) == Interval(3.0, None, None)


def test_games_mode_reports_win_share():
    rules = make_rules("hornafjardar", target=3)
    result = run_arena(["random", "rule_based", "random"], rules, deals=3, seed=4, progress=False, mode="games")
    assert all(g.win is not None and sum(g.win) == pytest.approx(1.0) for g in result.games)
    shares = {a.spec: a for a in result.agents}
    total = sum(a.copies * a.win_share.mean for a in result.agents)
    assert total == pytest.approx(1.0)
    assert shares["rule_based"].deal_score.mean > shares["random"].deal_score.mean
    assert any(g.deals > 1 for g in result.games)
    assert "win share" in result.to_markdown()


def test_outputs_are_written(tmp_path):
    result = run_arena(["random", "rule_based", "rule_based"], make_rules("basic"), deals=3, seed=1, progress=False)
    write_outputs(result, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "result.json").read_text())
    assert data["settings"]["agents"] == ["random", "rule_based", "rule_based"]
    assert data["settings"]["variant"] == "basic" and data["settings"]["units"] == 3
    markdown = (tmp_path / "out" / "result.md").read_text()
    assert "| rule_based | 2 |" in markdown and "| random − rule_based |" in markdown
    assert (tmp_path / "out" / "result.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rule_based_beats_random_clearly():
    result = run_arena(["rule_based", "random", "random"], make_rules("hornafjardar"), deals=40, seed=2026, progress=False)
    (pair,) = result.head_to_head
    assert (pair.a, pair.b) == ("rule_based", "random")
    assert pair.difference.low > 1.0, result.to_markdown()


@pytest.mark.parametrize(
    ("agents", "kwargs", "message"),
    [
        (["random", "random"], {}, "exactly 3 agent specs"),
        (["random"] * 3, {"mode": "tournament"}, "mode must be one of deals, games"),
        (["random"] * 3, {"deals": 0}, "deals must be an integer ≥ 1"),
        (["random"] * 3, {"seed": -1}, "seed must be an integer ≥ 0"),
        (["random"] * 3, {"workers": 0}, "workers must be an integer ≥ 1"),
    ],
)
def test_bad_arguments_are_rejected(agents, kwargs, message):
    settings = {"deals": 2, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_arena(agents, make_rules(), progress=False, **settings)


def test_unknown_agent_is_rejected_before_playing():
    with pytest.raises(ValueError, match="no_such_agent"):
        run_arena(["random", "no_such_agent", "random"], make_rules(), deals=2, seed=0, progress=False)


def test_cli_arena_prints_the_table_and_writes_files(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "games.jsonl"
    code = main(
        ["arena", "random", "rule_based", "random", "--variant", "trjamann", "--deals", "2", "--seed", "3",
         "--out", str(out), "--records", str(records), "--no-progress"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "**trjamann**" in printed and "| rule_based | 1 |" in printed
    assert {p.name for p in out.iterdir()} == {"result.json", "result.md", "result.png"}
    assert len(read_records(records)) == 12


def _tiny_ppo_checkpoint(path, variant: str) -> str:
    """A random-weight ``ppo`` checkpoint (the arena only needs a loadable network)."""
    from agents.ppo_agent import save_checkpoint
    from manni_env.observation import ObservationEncoder

    size = ObservationEncoder(make_rules(variant)).size
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(8, size)), np.zeros(8)), (rng.normal(size=(63, 8)), np.zeros(63))]
    save_checkpoint(path, layers, {"variant": variant, "history": "summary", "obs_size": size, "activation": "tanh"})
    return f"ppo:{path}"


def test_ppo_checkpoint_agents_play_in_workers(tmp_path):
    spec = _tiny_ppo_checkpoint(tmp_path / "tiny", "laugarvatn")
    rules = make_rules("laugarvatn")
    one = run_arena([spec, "rule_based", "rule_based"], rules, deals=2, seed=9, progress=False)
    two = run_arena([spec, "rule_based", "rule_based"], rules, deals=2, seed=9, progress=False, workers=2)
    assert one.games == two.games
    assert [a.spec for a in one.agents] == [spec, "rule_based"]
