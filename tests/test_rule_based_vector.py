"""The batched rule_based policy decides exactly as the scalar agent on the vector env's seat views."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from agents.rule_based import RuleBasedAgent
from agents.rule_based_vector import VectorRuleBased
from manni_env.engine import Phase
from manni_env.rules import make_rules
from manni_env.vector import VectorManni, resolve_backend

N = 64
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")


def _play(variant: str, seed: int, steps: int, policy: VectorRuleBased, p_policy: float, num_envs: int = N) -> dict:
    """Step ``num_envs`` games for ``steps`` steps, each game's action being the batched policy's
    (probability ``p_policy``) or a uniformly random legal one; at every step assert that the
    batched actions equal the scalar agent's on every game. Returns counts of what was checked."""
    venv = VectorManni(make_rules(variant), num_envs)
    _, mask, _ = venv.reset(seed=seed)
    agent = RuleBasedAgent()
    rng = np.random.default_rng(seed)
    seen = {"deals": 0, "phases": set(), "kinds": set()}
    for _ in range(steps):
        actions = policy.act(venv)
        expected = [agent.act(venv.view(i, int(venv.to_move[i]))) for i in range(num_envs)]
        assert actions.dtype == np.int64 and actions.shape == (num_envs,)
        assert actions.tolist() == expected
        seen["phases"].update(venv.phase.tolist())
        seen["kinds"].update(venv.kind.tolist())
        random_actions = (rng.random(mask.shape) * mask).argmax(1)
        chosen = np.where(rng.random(num_envs) < p_policy, actions, random_actions)
        _, mask, _, _, _, _, infos = venv.step(chosen)
        seen["deals"] += int(infos["deal_over"].sum())
    return seen


@needs_numba
@pytest.mark.parametrize("variant, seed, p_policy", [
    ("hornafjardar", 0, 0.5), ("hornafjardar", 1, 0.9), ("basic", 2, 0.5), ("basic", 3, 0.9),
])
def test_batched_actions_equal_the_scalar_agent(variant, seed, p_policy):
    policy = VectorRuleBased("numba")
    seen = _play(variant, seed, 400, policy, p_policy)
    assert seen["deals"] >= 400  # a few thousand deals over the four cases
    if variant == "hornafjardar":
        assert seen["phases"] == {Phase.EXCHANGE, Phase.PLAY} and seen["kinds"] == {0, 1, 2}
    else:
        assert seen["phases"] == {Phase.SWAP, Phase.PLAY}


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "python"])
def test_subset_of_games(backend):
    venv = VectorManni(make_rules("hornafjardar"), 8)
    venv.reset(seed=5)
    policy = VectorRuleBased(backend)
    every = policy.act(venv)
    games = np.array([6, 1, 1])
    assert policy.act(venv, games).tolist() == every[games].tolist()
    assert policy.act(venv, np.array([], np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="games must be indices"):
        policy.act(venv, [8])


@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
def test_python_fallback_decides_the_same(variant):
    policy = VectorRuleBased("python")
    assert policy.backend == "python"
    seen = _play(variant, 7, 60, policy, 0.7, num_envs=8)
    assert Phase.PLAY in seen["phases"]


def test_backend_choice_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # makes `import numba` fail
    assert resolve_backend("auto", fallback="python") == "python"
    assert VectorRuleBased().backend == "python"
    with pytest.raises(ValueError, match="needs numba"):
        VectorRuleBased("numba")
    with pytest.raises(ValueError, match="backend must be one of"):
        VectorRuleBased("numpy")
