"""Warm-start data from game records (train/record_demonstrations.py) and ``manni train
--warm-start-records``: the same rows as the teacher's data for the same decisions, nothing a seat
could not see in its observation, a tiny run, and the one error line of a bad file."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

pytest.importorskip("torch")

from manni_agents.registry import make_agent  # noqa: E402
from manni_env.cli import main  # noqa: E402
from manni_env.engine import Deal, GameState  # noqa: E402
from manni_env.records import game_record, record_deals, record_rules  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402
from manni_train import demonstrations  # noqa: E402
from manni_train.record_demonstrations import load_records, record_demonstrations  # noqa: E402

from helpers.cli import usage_error  # noqa: E402
from helpers.records import PLAYERS, played, write_games  # noqa: E402
from helpers.training import train_args  # noqa: E402

@pytest.fixture(scope="module")
def records_file(tmp_path_factory):
    """Two whole games of Basic Manni (target 5), written by the project's record writer."""
    return write_games(tmp_path_factory.mktemp("records") / "games.jsonl", make_rules("basic", target=5))


@pytest.mark.parametrize("variant, critic, reward, reward_of, history, layout", [
    ("hornafjardar", "deal", "trick", "relative", "summary", "v0"),
    ("basic", "seat", "deal", "own", "full", "v1"),
    ("laugarvatn", "deal", "trick", "own", "summary", "v1"),
])
def test_rows_equal_the_teachers_for_the_same_decisions(monkeypatch, variant, critic, reward, reward_of, history,
                                                        layout):
    """collect_demonstrations on one game, its game written as a record, the record's rows: the same."""
    made = []

    class Logged(VectorManni):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "log_games": True})
            made.append(self)

    monkeypatch.setattr(demonstrations, "VectorManni", Logged)
    rules = make_rules(variant)
    teacher = demonstrations.collect_demonstrations(rules, 150, 3, history, reward, "rule_based", "auto", reward_of,
                                                    critic, layout)
    venv = made[-1]
    log = venv.finished_logs[0] if venv.finished_logs else venv.logs[0]
    record = game_record(log.replay(rules))  # the deals played to their end
    ours = record_demonstrations([record], rules, 150, history, reward, reward_of, critic, layout)
    a, b = teacher.rows(slice(None)), ours.rows(slice(None))
    assert a.keys() == b.keys() and len(ours) == 150
    for key in a:
        assert np.array_equal(a[key], b[key]), key


def test_the_observation_holds_nothing_the_seat_did_not_see():
    """Seats 1 and 2 trade the cards they play in the last trick (forced, so the deal replays): every
    earlier decision of seat 0 has the same observation and mask; only the critic's unseen cards differ."""
    rules = make_rules("hornafjardar", first_dealer=0)
    state, actions, seats = played(rules, 5, deals=1)
    record = game_record(state, players=PLAYERS)
    deal = record_deals(record)[0]
    x, y = (next(a for a, s in zip(reversed(actions), reversed(seats)) if s == seat) for seat in (1, 2))
    assert deal.cut_card not in (x, y)  # (the cut card is public)
    swap = {x: y, y: x}

    def traded(cards):
        return tuple(swap.get(c, c) for c in cards)

    other = GameState(record_rules(record), seed=0,
                      deals=[Deal(tuple(map(traded, deal.hands)), traded(deal.manni), deal.cut_card)])
    for action in actions:
        other.apply(swap.get(action, action))
    a, b = (record_demonstrations([r], rules, critic="deal").rows(slice(None))
            for r in (record, game_record(other, players=PLAYERS)))
    seat0 = [i for i, s in enumerate(seats) if s == 0][:-1]  # seat 0's decisions before the last trick
    assert len(seat0) > 5 and len(a["actions"]) == len(b["actions"]) == len(actions)
    for key in ("obs", "masks", "actions"):
        assert np.array_equal(a[key][seat0], b[key][seat0]), key
    assert not np.array_equal(a["unseen"][seat0], b["unseen"][seat0])  # the critic's view: hidden cards


def test_players_keeps_only_their_seats(records_file):
    rules = make_rules("basic", target=5)
    records = load_records([str(records_file)], rules, ["random"])
    every = record_demonstrations(records, rules)
    randoms = record_demonstrations(records, rules, players=["random"])
    assert 0 < len(randoms) < len(every) and len(record_demonstrations(records, rules, 40)) == 40
    seat1 = np.concatenate([
        record_demonstrations([r], rules).rows(slice(None))["actions"][
            [i for i, s in enumerate(_seats(r)) if s == 1]] for r in records])
    assert np.array_equal(randoms.rows(slice(None))["actions"], seat1)
    with pytest.raises(ValueError, match="no seat of the game records was played by them"):
        load_records([str(records_file)], rules, ["human"])


def _seats(record) -> list[int]:
    """The seat of each decision of ``record``."""
    from manni_env.records import round_actions

    state, seats = GameState(record_rules(record), seed=0, deals=record_deals(record)), []
    for r in record["rounds"]:
        for action, _ in round_actions(state, r):
            seats.append(state.to_move)
            state.apply(action)
    return seats


def test_a_tiny_run_imitates_the_records_and_exports(records_file, tmp_path):
    assert main(train_args(tmp_path, "--warm-start-records", str(records_file), "--bc-samples", "300")) == 0
    run = tmp_path / "records"
    agent = make_agent(f"ppo:{run / 'agent'}")
    assert agent.meta["training"]["args"]["warm_start_records"] == [str(records_file)]
    assert agent.meta["variant"] == "basic"


def test_bad_record_files_are_one_error_line_and_nothing_trains(records_file, tmp_path, capsys):
    missing = tmp_path / "missing.jsonl"
    assert "missing.jsonl: No such file or directory" in usage_error(
        capsys, train_args(tmp_path, "--warm-start-records", str(missing)))
    lines = records_file.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["rounds"][0]["tricks"][0]["cards"].reverse()  # out of turn
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps(broken) + "\n")
    line = usage_error(capsys, train_args(tmp_path, "--warm-start-records", str(records_file), str(bad)))
    assert "bad.jsonl:2: not a valid game record: round 0, trick 0" in line
    line = usage_error(capsys, train_args(tmp_path, "--warm-start-records", str(records_file), "--target", "7"))
    assert "games.jsonl:1: a game of basic (target=5" in line and "but this run trains basic (target=7" in line
    other = ["--variant", "hornafjardar"]
    line = usage_error(capsys, [*train_args(tmp_path, "--warm-start-records", str(records_file))[:1],
                                *other, *train_args(tmp_path)[5:], "--warm-start-records", str(records_file)])
    assert "a game of basic" in line and "but this run trains hornafjardar" in line
    assert not (tmp_path / "records").exists()


def test_the_options_that_go_with_the_records(records_file, tmp_path, capsys):
    from manni_train.ppo_vector import Args

    with pytest.raises(ValueError, match="--warm-start-players needs --warm-start-records"):
        Args(warm_start_players=["human"]).check()
    with pytest.raises(ValueError, match="--warm-start-records needs --bc-samples above 0"):
        Args(variant="basic", target=5, warm_start_records=[str(records_file)], bc_samples=0).check()
    args = Args(variant="basic", target=5, warm_start_records=[str(records_file)])
    args.check()
    assert len(args.records()) == 2 and args.records() is args.records()  # read once
    assert getattr(pickle.loads(pickle.dumps(args)), "_records", None) is None  # not sent to a rollout process
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert "empty.jsonl: no game records" in usage_error(capsys, train_args(tmp_path, "--warm-start-records",
                                                                            str(empty)))
