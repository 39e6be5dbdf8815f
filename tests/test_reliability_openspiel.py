"""Hostile use of the OpenSpiel game (issue 23's items 5-7): impossible chance outcomes and actions
after the end are refused at once, leaving the state as it was; serialization is the action
history, and a crafted pickle is rejected without being run."""

from __future__ import annotations

import base64
import pickle

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from manni_env import openspiel_game as osg  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.rules import VARIANTS, make_rules  # noqa: E402


# ----------------------------------------------------------------------------- OpenSpiel (items 5-7)


def _chance_then(state, rng):
    outcomes = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
    state.apply_action(int(rng.choice(outcomes)))


@pytest.mark.parametrize("outcomes, message", [
    ([3], "first dealer is seat 0, 1 or 2"),
    ([0, 52], "not a card of the"),
    ([0, 7, 7], "dealt already"),
])
def test_chance_nodes_reject_impossible_outcomes_at_once(outcomes, message):
    state = osg.load_game("hornafjardar").new_initial_state()
    *good, bad = outcomes
    for a in good:
        state.apply_action(a)
    before = (str(state), state.history())
    with pytest.raises(ValueError, match=message):
        state.apply_action(bad)
    assert (str(state), state.history()) == before


def test_basic_chance_nodes_reject_cards_outside_its_pack():
    state = osg.load_game("basic").new_initial_state()
    state.apply_action(0)
    small = next(c for c in range(52) if not make_rules("basic").pack >> c & 1)
    with pytest.raises(ValueError, match="not a card of the basic pack"):
        state.apply_action(small)


@pytest.mark.parametrize("episode", ["deal", "game"])
def test_a_finished_state_refuses_further_actions(episode):
    options = {"target": 2} if episode == "game" else {}
    state = osg.load_game("basic", episode=episode, **options).new_initial_state()
    rng = np.random.default_rng(4)
    while not state.is_terminal():
        _chance_then(state, rng)
    history = state.history()
    for action in (0, 52, 60):
        with pytest.raises(ValueError, match="episode is over"):
            state.apply_action(action)
    assert state.history() == history and state.is_terminal()


@pytest.mark.parametrize("variant", VARIANTS)
def test_serialize_is_the_action_history_and_round_trips(variant):
    game = osg.load_game(variant)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    for _ in range(60):
        text = state.serialize()
        assert text == "".join(f"{a}\n" for a in state.history())
        copy = game.deserialize_state(text)
        assert str(copy) == str(state) and copy.history() == state.history()
        if state.is_terminal():
            break
        _chance_then(state, rng)


def test_a_crafted_pickle_is_rejected_without_running_it(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return exec, (f"import pathlib; pathlib.Path({str(marker)!r}).touch()",)

    blob = base64.b64encode(pickle.dumps({"_x": Payload()})).decode()
    crafted = f"history=\nmove_number=0\n__dict__={blob}"
    game = osg.load_game("basic")
    with pytest.raises(ValueError, match="not a serialized Manni state: line 1"):
        game.deserialize_state(crafted)
    assert not marker.exists()


@pytest.mark.parametrize("text, message", [
    ("0\n99\n", "line 2"),
    ("0\n5\n5\n", "dealt already"),
    ("-1\n", "line 1"),
    ("1" * 5000, "line 1"),
    ("0\n" * 100_000, "at most"),
    (b"0\n", "is a str"),
])
def test_deserialize_names_the_bad_line(text, message):
    with pytest.raises(ValueError, match=message):
        osg.load_game("basic").deserialize_state(text)


def test_serialize_refuses_a_state_without_history():
    game = osg.load_game("basic")
    state = game.state_from(GameState(make_rules("basic"), seed=1))
    with pytest.raises(ValueError, match="no action history"):
        state.serialize()
