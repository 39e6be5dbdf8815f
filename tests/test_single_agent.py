"""The single-agent Gymnasium env: SB3 checks, masks, rewards, opponents, vector envs.

Most tests name the opponents by spec through :func:`manni_agents.envs.single_agent_env`."""

from __future__ import annotations

import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from manni_agents.envs import single_agent_env
from manni_agents.registry import make_agent
from manni_env.engine import IllegalActionError
from manni_env.single_agent import ILLEGAL_REWARD, SingleAgentManniEnv


class CheckedAgent:
    """Wraps an agent and records whether every action it returned was legal in its view."""

    def __init__(self, spec: str):
        self.inner = make_agent(spec)
        self.name = f"checked:{spec}"
        self.moves = 0
        self.illegal = 0

    def act(self, view, rng):
        action = self.inner.act(view, rng)
        self.moves += 1
        self.illegal += action not in view.legal_actions
        return action

    def reset(self):
        self.inner.reset()


class AlwaysZero:
    """Plays action 0 (2C) whatever the view: usually illegal."""

    name = "always_zero"

    def act(self, view, rng):
        return 0

    def reset(self):
        pass


def random_rollout(env, steps: int, seed: int):
    """Random legal learner actions; yields (obs, mask, reward, terminated, truncated) per step."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        mask = env.action_masks()
        assert mask.any(), "the env handed an all-zero mask to the policy"
        assert np.array_equal(mask, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        yield obs, reward, terminated, truncated
        if terminated or truncated:
            obs, info = env.reset()


@pytest.mark.parametrize("opponents", [("random", "random"), ("rule_based", "rule_based")])
def test_check_env(opponents):
    check_env(single_agent_env(opponents=opponents, seed=3))


def test_check_env_game_episodes_other_variant():
    check_env(single_agent_env("basic", opponents=("random", "rule_based"), episode="game", seed=4, target=5))


@pytest.mark.parametrize("variant", ["trjamann", "laugarvatn"])
def test_check_env_announcement_variants(variant):
    check_env(single_agent_env(variant, opponents=("rule_based", "random"), seed=5))


def test_masks_never_empty_and_opponents_legal():
    a, b = CheckedAgent("rule_based"), CheckedAgent("random")
    env = single_agent_env(opponents=(a, b), seed=11)
    episodes = sum(term or trunc for _, _, term, trunc in random_rollout(env, 1500, seed=11))
    assert episodes > 50
    assert a.moves > 500 and b.moves > 500
    assert a.illegal == 0 and b.illegal == 0


def test_deal_reward_is_the_learners_deal_score_even_when_an_opponent_ends_the_deal():
    env = single_agent_env(opponents=("rule_based", "random"), seed=5)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    ended_by = {"learner": 0, "opponent": 0}
    seats = set()
    episode_return, checked = 0.0, 0
    while checked < 60:
        rounds_before = len(env.state.rounds)
        _, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        episode_return += reward
        if not terminated:
            assert reward == 0.0 and len(env.state.rounds) == rounds_before
            continue
        result = env.state.rounds[-1]
        assert len(env.state.rounds) == rounds_before + 1
        assert reward == result.points[env.seat] == episode_return
        leader, cards, _ = result.tricks[-1]
        last_player = (leader + len(cards) - 1) % 3
        ended_by["learner" if last_player == env.seat else "opponent"] += 1
        seats.add(env.seat)
        checked += 1
        episode_return = 0.0
        env.reset()
    assert ended_by["learner"] > 5 and ended_by["opponent"] > 5
    assert seats == {0, 1, 2}


def test_game_episode_rewards_sum_to_the_final_total():
    env = single_agent_env(opponents=("rule_based", "rule_based"), episode="game", seed=8)
    total, done = 0.0, False
    for _, reward, terminated, truncated in random_rollout(env, 5000, seed=8):
        total += reward
        if terminated or truncated:
            done = True
            break
    assert done and env.state.finished
    assert total == env.state.totals[env.seat]
    assert total == sum(r.points[env.seat] for r in env.state.rounds)


def test_deal_cap_is_truncation_in_game_episodes():
    env = single_agent_env(opponents=("random", "random"), episode="game", seed=2, max_deals=1)
    outcomes = [(term, trunc) for _, _, term, trunc in random_rollout(env, 200, seed=2) if term or trunc]
    assert outcomes and all(o == (False, True) for o in outcomes)


def test_illegal_learner_action_is_a_clear_error_and_changes_nothing():
    env = single_agent_env(opponents=("random", "random"), seed=1, illegal_action="raise")
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.state.to_dict()
    with pytest.raises(IllegalActionError, match=rf"illegal action {illegal} .*learner \(seat {env.seat}\).*legal:"):
        env.step(illegal)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(99)
    assert env.state.to_dict() == before


def test_penalized_illegal_action_ends_the_episode_without_touching_the_game():
    env = single_agent_env(opponents=("random", "random"), seed=1)  # illegal_action="penalize"
    obs, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.state.to_dict()
    obs_after, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (ILLEGAL_REWARD, True, False, True)
    assert env.state.to_dict() == before and np.array_equal(obs_after, obs)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    env.reset()  # a new game: the interrupted deal is not continued
    assert env.state.to_dict() != before and env.state.rounds == [] and sum(env.state.view(0).tricks_won) == 0
    assert not env.step(int(np.flatnonzero(env.action_masks())[0]))[4].get("illegal_action")


def test_legal_play_is_the_same_in_both_illegal_action_modes():
    def trajectory(mode):
        env = single_agent_env(opponents=("random", "rule_based"), seed=4, illegal_action=mode, reward="trick")
        return [(o.tobytes(), r, t, u) for o, r, t, u in random_rollout(env, 150, seed=4)]

    assert trajectory("penalize") == trajectory("raise")


def test_reset_rejects_options():
    env = single_agent_env(opponents=("random", "random"))
    env.reset(seed=0, options={})  # empty options are no options
    with pytest.raises(ValueError, match="no options.*'deals'"):
        env.reset(options={"deals": []})


def test_illegal_opponent_action_is_not_accepted():
    env = single_agent_env(opponents=(AlwaysZero(), AlwaysZero()), seed=0)
    with pytest.raises(IllegalActionError):
        for _ in random_rollout(env, 50, seed=0):
            pass


def test_sampled_actions_are_legal():
    env = single_agent_env(opponents=("random", "random"), seed=6)
    env.reset(seed=6)
    env.action_space.seed(6)
    for _ in range(300):
        action = env.action_space.sample()
        assert env.action_masks()[action]
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()


def test_same_seed_same_trajectory():
    def trajectory():
        env = single_agent_env(opponents=("random", "rule_based"), seed=21)
        return [(o.tobytes(), r, t) for o, r, t, _ in random_rollout(env, 200, seed=21)]

    assert trajectory() == trajectory()


def test_opponent_factory_is_asked_every_episode_with_the_env_generator():
    calls = []

    def pool(rng):
        calls.append(rng)
        return make_agent("random"), make_agent("rule_based")

    env = SingleAgentManniEnv(opponents=pool, seed=9)
    episodes = sum(term or trunc for _, _, term, trunc in random_rollout(env, 400, seed=9))
    assert len(calls) == episodes + 1  # every reset, the last one included
    assert all(isinstance(rng, np.random.Generator) for rng in calls)


def test_bad_arguments():
    with pytest.raises(ValueError, match="episode must be one of deal, game"):
        single_agent_env(episode="trick")
    with pytest.raises(ValueError, match="reward must be one of deal, trick"):
        single_agent_env(reward="points")
    with pytest.raises(ValueError, match="two agents"):
        single_agent_env(opponents=("random",))
    with pytest.raises(ValueError, match="unknown agent"):
        single_agent_env(opponents=("random", "nobody"))
    with pytest.raises(ValueError, match="option 'negative' is not valid"):
        single_agent_env(negative=True)
    with pytest.raises(ValueError, match="illegal_action must be one of penalize, raise"):
        single_agent_env(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode"):
        single_agent_env(render_mode="video")


def _make_env(rank: int):
    return lambda: single_agent_env(opponents=("rule_based", "random"), seed=100 + rank)


@pytest.mark.parametrize("vec_cls", [DummyVecEnv, SubprocVecEnv])
def test_vector_envs(vec_cls):
    kwargs = {"start_method": "fork"} if vec_cls is SubprocVecEnv else {}
    venv = vec_cls([_make_env(i) for i in range(2)], **kwargs)
    try:
        obs = venv.reset()
        assert obs.shape == (2, venv.observation_space.shape[0])
        rng = np.random.default_rng(0)
        dones = 0
        for _ in range(60):
            masks = np.stack(venv.env_method("action_masks"))
            assert masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, done, infos = venv.step(actions)
            dones += int(done.sum())
        assert dones >= 2  # deals end and the vector env resets them
    finally:
        venv.close()


def test_the_env_takes_policies_only_and_needs_them():
    """The env package does not resolve agent specs: opponents are Policy objects or a factory."""
    policies = (make_agent("random"), make_agent("rule_based"))
    env = SingleAgentManniEnv("basic", opponents=policies, seed=1, target=3)
    env.reset()
    assert sorted(p.name for p in env.policies if p is not None) == ["random", "rule_based"]
    with pytest.raises(TypeError, match="opponents"):
        SingleAgentManniEnv()
    with pytest.raises(TypeError, match=r"got 'rule_based' \(build the env with manni_agents.envs.single_agent_env"):
        SingleAgentManniEnv(opponents=("rule_based", "random"))
    with pytest.raises(TypeError, match="an opponent is a Policy with act"):
        SingleAgentManniEnv(opponents=lambda rng: (policies[0], 3)).reset()
