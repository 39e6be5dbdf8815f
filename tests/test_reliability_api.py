"""Hostile use of the Python APIs (issue 23's items 8-9): the engine, the AEC env and the Gymnasium envs
reject bad input with a ``ValueError`` naming the problem, and a rejected
call leaves the state as it was."""

from __future__ import annotations


import gymnasium as gym
import numpy as np
import pytest

import manni_env  # noqa: F401  (registers the envs)
from manni_env.engine import GameState
from manni_env.env import raw_env
from manni_env.rules import VARIANTS, make_rules


# ----------------------------------------------------------------------------- engine (item 9)
@pytest.mark.parametrize("seat", [5, -1, 3, 1.0, "0", None, True])
def test_engine_seat_queries_reject_a_bad_seat(seat):
    state = GameState(make_rules("basic"), seed=1)
    for query in (state.hand, state.hand_mask, state.drawn_mask, state.discards_mask):
        with pytest.raises(ValueError, match="seat must be 0, 1 or 2"):
            query(seat)


def _dict_with(path: str, value) -> dict:
    data = GameState(make_rules("hornafjardar"), seed=3).to_dict()
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[key]
    target[last] = value
    return data


@pytest.mark.parametrize("path, value, named", [
    ("deal.hands", [-1, 0, 0], "deal.hands"),
    ("deal.hands", [1 << 60, 0, 0], "deal.hands"),
    ("deal.to_move", 7, "deal.to_move"),
    ("dealer", 9, "dealer"),
    ("totals", "abc", "totals"),
    ("totals", [0, 0], "totals"),
    ("deal.phase", 6, "deal.phase"),
    ("deal.led_suit", 9, "deal.led_suit"),
    ("deal.order", [0, 0, 1], "deal.order"),
    ("finished", "no", "finished"),
    ("seed", -4, "seed"),
    ("deal.phase", 42, "42"),
    ("rules", {"variant": "chess"}, "chess"),
    ("deal", None, "GameState dict"),
])
def test_from_dict_names_the_bad_field(path, value, named):
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        GameState.from_dict(_dict_with(path, value))


def test_from_dict_rejects_a_missing_field_and_a_non_dict():
    data = GameState().to_dict()
    del data["rng"]
    with pytest.raises(ValueError, match="missing field 'rng'"):
        GameState.from_dict(data)
    with pytest.raises(ValueError, match="is a dict"):
        GameState.from_dict([1, 2])


@pytest.mark.parametrize("variant", VARIANTS)
def test_from_dict_still_reads_every_reachable_state(variant):
    rng = np.random.default_rng(7)
    state = GameState(make_rules(variant), seed=7)
    step = 0
    while not state.finished and len(state.rounds) < 2:
        if step % 7 == 0:
            assert GameState.from_dict(state.to_dict()) == state
        actions = state.legal_actions()
        state.apply(actions[rng.integers(len(actions))])
        step += 1


# ----------------------------------------------------------------------------- AEC env (item 9)
def test_aec_step_before_reset_and_after_the_episode_are_value_errors():
    env = raw_env(variant="basic")
    with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    with pytest.raises(ValueError, match=r"call reset\(\)"):
        env.observe("player_0")
    env.reset(seed=2, options=None)
    rng = np.random.default_rng(2)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    with pytest.raises(ValueError, match="episode is over"):
        env.step(None)


@pytest.mark.parametrize("options", ["x", 3, ["deals"]])
def test_aec_reset_rejects_options_that_are_not_a_dict(options):
    env = raw_env()
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(seed=0, options=options)


# ----------------------------------------------------------------------------- Gymnasium (item 8)
@pytest.mark.parametrize("action", [3.9, "3", 3.0, True, None, [3], np.float32(3)])
def test_single_agent_step_rejects_non_integer_actions_and_changes_nothing(action):
    env = gym.make("manni_env/Manni-v0", variant="basic", opponents=("random", "random"))
    env.reset(seed=0)
    before = env.unwrapped.state.to_dict()
    with pytest.raises(ValueError, match="an action is an integer"):
        env.step(action)
    assert env.unwrapped.state.to_dict() == before


def test_single_agent_step_takes_numpy_integers():
    env = gym.make("manni_env/Manni-v0", variant="basic", opponents=("random", "random"))
    env.reset(seed=0)
    legal = np.flatnonzero(env.unwrapped.action_masks())
    env.step(np.int64(legal[0]))
    env.reset(seed=0)
    env.step(np.array([legal[0]]))


def test_make_vec_checks_the_backend_in_every_mode():
    with pytest.raises(ValueError, match="backend must be one of"):
        gym.make_vec("manni_env/ManniSelfPlay-v0", num_envs=2, backend="zzz")
    with pytest.raises(ValueError, match="backend must be one of"):
        gym.make_vec("manni_env/ManniSelfPlay-v0", num_envs=2, backend="zzz", autoreset_mode="SameStep")


def test_an_opponent_that_cannot_play_the_variant_is_refused_at_construction():
    with pytest.raises(ValueError, match="trained for variant 'basic'"):
        gym.make("manni_env/Manni-v0", variant="hornafjardar", opponents=("ppo:basic", "random"))


def test_an_opponent_factory_is_checked_at_reset():
    from manni_agents.registry import make_agent
    from manni_env.single_agent import SingleAgentManniEnv

    env = SingleAgentManniEnv("hornafjardar", opponents=lambda rng: (make_agent("ppo:basic"), make_agent("random")))
    with pytest.raises(ValueError, match="trained for variant 'basic'"):
        env.reset(seed=0)


@pytest.mark.parametrize("action", [False, True, 3.0, "3", None])
def test_engine_apply_refuses_non_integers_unchanged(action):
    state = GameState(make_rules("basic"), seed=0)
    before = state.to_dict()
    with pytest.raises(ValueError, match="an action is an integer"):
        state.apply(action)
    assert state.to_dict() == before
