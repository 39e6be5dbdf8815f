"""Gymnasium and PettingZoo registration, and Gymnasium's own ``check_env`` on the single-agent env."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import manni_env
from manni_agents.random_agent import RandomAgent
from manni_agents.rule_based import RuleBasedAgent
from manni_env.rules import VARIANTS
from manni_env.single_agent import SingleAgentManniEnv
from manni_env.vector_gym import ManniVectorEnv


def test_import_registers_everything_without_importing_the_envs():
    code = (
        "import sys, manni_env, gymnasium, pettingzoo\n"
        "heavy = {'torch', 'manni_agents', 'pyspiel', 'manni_env.env', 'manni_env.single_agent', 'manni_env.vector',"
        " 'matplotlib'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "aec = pettingzoo.make('aec', 'manni/manni-v0', variant='basic', target=5)\n"
        "aec.reset(seed=0)\n"
        "assert aec.unwrapped.rules.target == 5\n"
        "print(gymnasium.make('manni_env/Manni-v0', opponents=('random', 'random')).unwrapped.rules.variant)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hornafjardar"


@pytest.mark.filterwarnings("ignore:render_mode='human' needs an interactive")  # check_env tries every mode
@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_check_env_passes(variant):
    env = gym.make(manni_env.GYM_ID, variant=variant, opponents=("rule_based", "random"), seed=3)
    check_env(env.unwrapped)  # the raw env, as check_env advises; its spec lets it try the render modes


def test_gym_make_passes_options_and_accepts_policy_objects():
    env = gym.make(manni_env.GYM_ID, variant="basic", opponents=(RuleBasedAgent(), RandomAgent()), target=3,
                   episode="game", reward="trick")
    inner = env.unwrapped
    assert isinstance(inner, SingleAgentManniEnv)
    assert (inner.rules.variant, inner.rules.target, inner.episode, inner.reward) == ("basic", 3, "game", "trick")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert not info.get("illegal_action")
        if terminated or truncated:
            obs, info = env.reset()


def test_make_vec_runs_copies_of_the_single_agent_env():
    envs = RecordEpisodeStatistics(gym.make_vec(manni_env.GYM_ID, num_envs=2, opponents=("random", "random")))
    obs, info = envs.reset(seed=1)
    assert obs.shape == (2, 616)
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(120):
        # after an episode's last step the mask may be empty: that action is ignored (NEXT_STEP reset)
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in info["action_mask"]])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        episodes += int(info.get("_episode", np.zeros(2, bool)).sum())
    assert episodes >= 2  # one-deal episodes


def test_make_vec_of_the_self_play_env():
    envs = gym.make_vec(manni_env.GYM_SELF_PLAY_ID, num_envs=3, variant="basic", target=4)
    assert isinstance(envs, ManniVectorEnv) and envs.num_envs == 3
    obs, info = envs.reset(seed=0)
    assert obs["action_mask"].shape == (3, 63)
    with pytest.raises(gym.error.Error):
        gym.make(manni_env.GYM_SELF_PLAY_ID)  # a vector env only


def test_pettingzoo_registry_entry():
    spec = pettingzoo.aec_registry[manni_env.PETTINGZOO_ID]
    assert spec.entry_point == "manni_env.manni_v0:env"
