"""Par scores (:mod:`manni_agents.evaluation.par`): deterministic, exactly the players' points when
the shipped agent plays every seat, the same live as from the record, and ``manni validate --par``."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.evaluation.par import DealPar, ParTracker, deal_par, record_par, report, totals
from manni_agents.registry import make_agent
from manni_env import GameState, make_rules
from manni_env.cli import main
from manni_env.records import game_record, write_records


def play(variant: str, specs: list[str], deals: int, seed: int = 5, tracker: bool = False):
    """``deals`` deals of ``specs`` (one per seat) and, with ``tracker``, the live par tracker."""
    state = GameState(make_rules(variant), seed=seed)
    live = ParTracker(state) if tracker else None
    agents, rng = [make_agent(s) for s in specs], np.random.default_rng(seed)
    while not state.finished and len(state.rounds) < deals:
        state.apply(agents[state.to_move].act(state.view(state.to_move), rng))
        if live is not None:
            live.update(state)
    return game_record(state, players=specs), live


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "laugarvatn"])
def test_the_agent_in_every_seat_scores_exactly_par(variant: str) -> None:
    record, _ = play(variant, ["ppo"] * 3, 3)
    pars = record_par(record)
    assert [p.deal for p in pars] == [1, 2, 3]
    assert all(p.difference == (0, 0, 0) and p.par == p.points for p in pars)


def test_par_is_deterministic_and_the_same_live_as_from_the_record() -> None:
    record, live = play("hornafjardar", ["rule_based", "random", "ppo"], 4, tracker=True)
    pars = record_par(record)
    assert pars == record_par(record) == live.pars
    assert record_par(record, make_agent("ppo")) == pars  # a fresh agent: nothing carried between calls
    points = [tuple(r["points"]) for r in record["rounds"]]
    assert [p.points for p in pars] == points
    # weaker players than the agent: par is not just their points (the test can fail)
    assert any(p.difference != (0, 0, 0) for p in pars)
    assert totals(pars)["difference"] == [sum(p.difference[s] for p in pars) for s in range(3)]


def test_deal_par_leaves_the_state_alone_and_refuses_a_finished_game() -> None:
    state = GameState(make_rules("trjamann"), seed=2)
    before = state.to_dict()
    assert deal_par(state) == deal_par(state)
    assert state.to_dict() == before
    finished = GameState(make_rules("hornafjardar"), seed=5)
    finished.finished = True
    with pytest.raises(ValueError, match="game is over"):
        deal_par(finished)


def test_tracker_needs_every_action() -> None:
    state = GameState(make_rules("hornafjardar"), seed=1)
    tracker, agent, rng = ParTracker(state), make_agent("ppo"), np.random.default_rng(0)
    while len(state.rounds) < 2:
        state.apply(agent.act(state.view(state.to_move), rng))
    with pytest.raises(ValueError, match="update after every action"):
        tracker.update(state)


def test_validate_par(tmp_path, capsys) -> None:
    record, _ = play("hornafjardar", ["rule_based", "random", "ppo"], 2)
    path = tmp_path / "games.jsonl"
    write_records(path, [record])
    assert main(["validate", "--par", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("OK: 1 game\n") and out.splitlines()[0] == f"{path}:1: par"
    assert out.splitlines()[1:-1] == report(record)
    sums = totals(record_par(record))
    assert f"points - par {' '.join(f'{v:+3d}' for v in sums['difference'])}" in out
    assert main(["validate", str(path)]) == 0 and "par" not in capsys.readouterr().out


def test_validate_par_without_the_agents_layer(tmp_path, capsys, monkeypatch) -> None:
    from manni_env.commands import validate

    monkeypatch.setattr(validate, "entry_points", lambda **_: [])  # as if only manni_env were installed
    assert main(["validate", "--par", str(tmp_path / "any.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--par needs the agents layer" in err


def test_deal_par_record() -> None:
    assert DealPar(1, (2, -1, -1), (0, 1, -1)).to_dict() == {
        "deal": 1, "points": [2, -1, -1], "par": [0, 1, -1], "difference": [2, -2, 0]}
