"""The episode and reward rules (manni_env/episodes.py): the functions on fixed inputs, the compiled
kernels' copy of them over thousands of random steps in every variant, and one default episode."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from manni_agents.envs import single_agent_env
from manni_env.env import raw_env
from manni_env.episodes import (DEFAULT_EPISODE, EPISODES, TABLE_REWARDS, check_reward, episode_end, outcome,
                                outcome_rewards, relative_points, step_rewards, trick_worth, winner_mask)
from manni_env.rules import VARIANTS, ContractKind, make_rules
from manni_env.single_agent import SingleAgentManniEnv
from manni_env.vector import VectorManni
from manni_env.vector_gym import ManniVectorEnv

Z = (0, 0, 0)
NONE = (False, False, False)


@pytest.mark.parametrize("winners, expected", [
    ((0,), (1.0, -0.5, -0.5)), ((1,), (-0.5, 1.0, -0.5)), ((0, 2), (0.5, -1.0, 0.5)), ((0, 1, 2), (0.0, 0.0, 0.0)),
])
def test_outcome_table(winners, expected):
    assert outcome_rewards(winners) == expected
    assert outcome(winner_mask(winners)).tolist() == list(expected)


# (reward, deal_over, points, game_over, winners, won, worth, paid) -> rewards
STEPS = [
    (("deal", False, Z, False, NONE, 0, 0, 0), (0, 0, 0)),
    (("deal", True, (2, 0, -2), False, NONE, 0, 0, 0), (2, 0, -2)),
    (("deal", True, (2, 0, -2), True, (True, False, False), 0, 0, 0), (2, 0, -2)),
    (("outcome", True, (2, 0, -2), False, NONE, 0, 0, 0), (0, 0, 0)),
    (("outcome", True, (2, 0, -2), True, (True, False, False), 0, 0, 0), (1, -0.5, -0.5)),
    (("outcome", True, (0, 0, 0), True, (True, True, True), 0, 0, 0), (0, 0, 0)),
    (("trick", False, Z, False, NONE, (0, 1, 0), 1, 0), (0, 1, 0)),
    (("trick", False, Z, False, NONE, (1, 0, 0), -1, 0), (-1, 0, 0)),
    (("trick", True, (2, 0, -2), False, NONE, 0, 0, (5, 4, 3)), (-3, -4, -5)),
    (("trick", True, (-1, 3, -2), True, (False, True, False), 0, 0, (-2, 0, -1)), (1, 3, -1)),
]


@pytest.mark.parametrize("args, expected", STEPS)
def test_step_rewards_table(args, expected):
    assert step_rewards(*args).tolist() == list(expected)


def test_step_rewards_on_batches_equal_row_by_row():
    def inputs(args):  # one game's inputs, each seat's value spelled out
        _, deal_over, points, game_over, winners, won, worth, paid = args
        return deal_over, points, game_over, winners, np.broadcast_to(won, 3), worth, np.broadcast_to(paid, 3)

    columns = [np.array(column) for column in zip(*(inputs(args) for args, _ in STEPS))]
    for reward in ("deal", "outcome", "trick"):
        rows = [step_rewards(reward, *args[1:]).tolist() for args, _ in STEPS]
        assert step_rewards(reward, *columns).tolist() == rows


@pytest.mark.parametrize("episode, deal_over, game_over, capped, expected", [
    ("deal", False, False, False, (False, False)),
    ("deal", True, False, False, (True, False)),
    ("deal", True, True, False, (True, False)),
    ("deal", True, True, True, (True, False)),  # the last deal ended by the rules: not truncated
    ("game", False, False, False, (False, False)),
    ("game", True, False, False, (False, False)),
    ("game", True, True, False, (True, False)),
    ("game", True, True, True, (False, True)),
])
def test_episode_end_table(episode, deal_over, game_over, capped, expected):
    assert tuple(map(bool, episode_end(episode, deal_over, game_over, capped))) == expected
    batch = episode_end(episode, np.array([deal_over, False]), np.array([game_over, False]), np.array([capped, False]))
    assert [tuple(map(bool, pair)) for pair in zip(*batch)] == [expected, (False, False)]


def test_trick_worth_and_reward_checks():
    for variant in VARIANTS:
        rules = make_rules(variant)
        assert trick_worth(rules, ContractKind.NULLO) == -1
        assert trick_worth(rules, ContractKind.TRUMP) == trick_worth(rules, ContractKind.GRAND) == 1
    with pytest.raises(ValueError, match="reward must be one of deal, outcome; got 'trick'"):
        check_reward("trick", TABLE_REWARDS)
    with pytest.raises(ValueError, match="needs episode='game'"):
        check_reward("outcome", TABLE_REWARDS, "deal")


# ------------------------------------------------------------------ the kernels' compiled copy

# small targets and deal caps: many games end, some at the cap (truncated), some with shared wins
RULES = [make_rules("hornafjardar", target=3, max_deals=3), make_rules("basic", target=2, max_deals=2),
         make_rules("trjamann"), make_rules("laugarvatn")]
CASES = [(rules, reward) for rules in RULES for reward in TABLE_REWARDS]


def _engine_facts(venv: VectorManni, actions: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Per step and slot, what the engine says happened (deal ended and its points, game ended, its
    winners, stopped at the cap), replaying every slot's logged deals with the same actions."""
    steps, n = len(actions), venv.num_envs
    facts = {"deal_over": np.zeros((steps, n), bool), "points": np.zeros((steps, n, 3)),
             "game_over": np.zeros((steps, n), bool), "winners": np.zeros((steps, n, 3), bool),
             "capped": np.zeros((steps, n), bool)}
    logs = {}
    for log in venv.finished_logs + venv.logs:
        logs.setdefault(log.slot, []).append(dataclasses.replace(log, actions=[]))
    for i, games in logs.items():
        games = iter(games)
        state = next(games).replay(venv.rules)  # the slot's deals, no action yet
        for t, step_actions in enumerate(actions):
            deals = len(state.rounds)
            state.apply(int(step_actions[i]))
            if len(state.rounds) > deals:
                facts["deal_over"][t, i] = True
                facts["points"][t, i] = state.rounds[-1].points
            if state.finished:
                facts["game_over"][t, i], facts["capped"][t, i] = True, state.truncated
                facts["winners"][t, i] = winner_mask(state.winners)
                state = next(games).replay(venv.rules)
    return facts


@pytest.mark.parametrize("rules, reward", CASES, ids=[f"{r.variant}-{reward}" for r, reward in CASES])
def test_kernels_pay_and_end_games_as_the_module_says(rules, reward):
    """VectorManni's compiled rewards and end flags equal :func:`step_rewards` and
    :func:`episode_end` (``"game"`` episodes: the kernels' games) of the engine's facts."""
    n, steps = 16, 1500
    venv = VectorManni(rules, n, reward=reward, log_games=True)
    _, mask, _ = venv.reset(seed=3)
    rng = np.random.default_rng(3)
    actions, outs = [], []
    for _ in range(steps):
        actions.append((rng.random(mask.shape) * mask).argmax(1))
        _, mask, _, rewards, terminated, truncated, _ = venv.step(actions[-1])
        outs.append((rewards, terminated, truncated))
    facts = _engine_facts(venv, actions)
    for t, (rewards, terminated, truncated) in enumerate(outs):
        deal_over, points, game_over, winners, capped = (facts[k][t] for k in facts)
        expected = step_rewards(reward, deal_over, points, game_over, winners).astype(np.float32)
        assert rewards.tobytes() == expected.tobytes(), f"step {t}: kernels {rewards}, module {expected}"
        ends = episode_end("game", deal_over, game_over, capped)
        assert np.array_equal(terminated, ends[0]) and np.array_equal(truncated, ends[1]), f"step {t}"
    assert facts["deal_over"].sum() >= 200 and facts["game_over"].sum() >= (16 if rules.is_announcement else 100)
    if not rules.is_announcement:
        assert facts["capped"].any() and (facts["game_over"] & ~facts["capped"]).any()


# ------------------------------------------------------------------ one default episode

def test_every_adapter_defaults_to_the_one_episode():
    assert DEFAULT_EPISODE == "deal" and DEFAULT_EPISODE in EPISODES
    for adapter in (raw_env, SingleAgentManniEnv, ManniVectorEnv):
        assert inspect.signature(adapter).parameters["episode"].default == DEFAULT_EPISODE
    assert raw_env().episode == ManniVectorEnv(num_envs=1).episode == DEFAULT_EPISODE
    assert single_agent_env(opponents=("random", "random")).unwrapped.episode == DEFAULT_EPISODE


def test_rllib_and_openspiel_default_to_the_one_episode():
    pytest.importorskip("ray")
    pytest.importorskip("pyspiel")
    from manni_env.openspiel_game import load_game
    from manni_env.rllib_env import ManniMultiAgentEnv

    assert ManniMultiAgentEnv().episode == DEFAULT_EPISODE
    assert load_game("basic").get_parameters()["episode"] == DEFAULT_EPISODE


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_vector_env_deal_episodes_end_at_every_deal(mode):
    """The self-play vector env in its default episodes: every deal end ends the slot's episode,
    games go on across episodes, and the cap truncates nothing."""
    env = ManniVectorEnv("basic", num_envs=4, autoreset_mode=mode, target=3, max_deals=2)
    obs, _ = env.reset(seed=1)
    deals = ends = 0
    for _ in range(400):
        obs, _, terminated, truncated, info = env.step(env.sample())
        assert not truncated.any()
        assert np.array_equal(terminated, info["deal_over"])
        deals += int(info["deal_over"].sum())
        ends += int(terminated.sum())
    assert deals == ends >= 10


def test_single_agent_trick_rewards_pay_each_trick_and_sum_to_the_deal():
    env = single_agent_env(opponents=("random", "rule_based"), reward="trick", seed=2)
    rng = np.random.default_rng(2)
    tricked = 0
    for _ in range(6):
        env.reset()
        inner = env.unwrapped
        state, seat, total = inner.state, inner.seat, 0.0
        done = False
        while not done:
            won = state.tricks_won[seat]
            _, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = terminated or truncated
            if not done and state.tricks_won[seat] > won:  # the learner won tricks in the deal under way
                assert reward == (state.tricks_won[seat] - won) * trick_worth(state.rules, state.contract.kind)
                tricked += 1
            elif not done:
                assert reward == 0
            total += reward
        assert total == state.rounds[-1].points[seat]
    assert tricked >= 10


@pytest.mark.parametrize("points, expected", [
    ((2, 0, -2), (3.0, 0.0, -3.0)),  # zero-sum: 1.5 x the points
    ((3, 0, 0), (3.0, -1.5, -1.5)),  # Basic: one seat scored
    ((0, 0, 0), (0.0, 0.0, 0.0)),
    ((4, -8, 4), (6.0, -12.0, 6.0)),
])
def test_relative_points_are_own_minus_the_mean_of_the_others(points, expected):
    assert relative_points(points).tolist() == list(expected)
    batch = relative_points(np.array([points, points[::-1]]))
    assert batch.shape == (2, 3) and batch[1].tolist() == list(expected)[::-1]
