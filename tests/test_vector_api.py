"""The vector env's API: state arrays, errors, backends, Gymnasium's vector API."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.engine import Phase
from manni_env.rules import VARIANT_TABLE, VARIANTS, make_rules
from manni_env.vector import VectorManni, resolve_backend
from manni_env.vector_gym import ManniVectorEnv

# the phases each exchange scheme goes through (Phase.EXCHANGE, SWAP, PICKUP are the schemes' first)
PHASES = {Phase.EXCHANGE: {Phase.EXCHANGE, Phase.PLAY}, Phase.SWAP: {Phase.SWAP, Phase.PLAY},
          Phase.PICKUP: {Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE, Phase.PLAY}}


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_illegal_action_is_rejected_and_changes_nothing(variant, backend):
    venv = VectorManni(make_rules(variant), 4, backend=backend)
    obs, mask, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        actions = (rng.random(mask.shape) * mask).argmax(1)
        before = [a.copy() for a in venv.state]
        for i in range(4):  # one illegal action in game i, the other games' actions legal
            bad = actions.copy()
            bad[i] = rng.choice([*np.flatnonzero(~mask[i]), -1, A.NUM_ACTIONS])
            with pytest.raises(ValueError, match=rf"illegal action {bad[i]} in game {i} \(phase "):
                venv.step(bad)
            seen.add(Phase(int(venv.phase[i])))
        assert all(np.array_equal(a, b) for a, b in zip(before, venv.state))
        assert np.array_equal(venv.action_mask(), mask) and np.array_equal(venv.observe(np.arange(4)), obs)
        obs, mask, *_ = venv.step(actions)
    assert seen == PHASES[Phase(VARIANT_TABLE[variant].exchange)]


def test_bad_arguments_are_refused_clearly():
    venv = VectorManni(make_rules("basic"), 3)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(3, np.int64))
    venv.reset(seed=1)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="integer array"):
        venv.step(np.zeros(3))
    with pytest.raises(ValueError, match="seats must be in 0..2"):
        venv.observe([0], [3])
    with pytest.raises(ValueError, match="games must be in 0..2"):
        venv.observe([3])
    with pytest.raises(ValueError, match="backend must be one of auto, numba, python, got 'numpy'"):
        VectorManni(make_rules("basic"), 2, backend="numpy")
    with pytest.raises(ValueError, match="reward must be"):
        VectorManni(make_rules("basic"), 2, reward="trick")
    with pytest.raises(ValueError, match="num_envs"):
        VectorManni(make_rules("basic"), 0)


def test_state_arrays_are_attributes_of_one_state():
    venv = VectorManni(make_rules("trjamann"), 5)
    venv.reset(seed=2)
    for name in ("hands", "dealt", "used", "passed", "taker", "declarer", "kind", "tricks_won", "totals"):
        assert getattr(venv, name) is getattr(venv.state, name)
    assert venv.hands.shape == (5, 3, 52) and venv.manni.shape == (5, 4) and venv.used.shape == (5, 3, 6)
    assert (venv.kind == -1).all() and (venv.phase == Phase.PICKUP).all()  # no contract before the announcement
    assert venv.observe(np.arange(5), np.arange(5) % 3).shape == (5, venv.obs_size)


def test_uncompiled_kernels_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # makes `import numba` fail
    assert resolve_backend("auto") == "python"
    with pytest.raises(ValueError, match="needs numba"):
        resolve_backend("numba")
    venv = VectorManni(make_rules("laugarvatn"), 2)
    assert venv.backend == "python"
    _, mask, _ = venv.reset(seed=3)
    for _ in range(20):
        _, mask, *_ = venv.step(mask.argmax(1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_vector_env_spaces_and_rewards(variant):
    env = ManniVectorEnv(variant, num_envs=8, **({"target": 2} if "target" in VARIANT_TABLE[variant].options else {}))
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    deals = 0
    for _ in range(300):
        actions = (rng.random((8, 63)) * obs["action_mask"]).argmax(1)
        acting = info["to_move"]
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].any(1).all()
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, info["seat_rewards"][np.arange(8), acting])
        deals += int(info["deal_over"].sum())
    assert deals > 30


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_writing_into_a_returned_mask_cannot_make_an_illegal_action_legal(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    from manni_env.vector import VectorManni

    venv = VectorManni(make_rules("hornafjardar"), num_envs=4, backend=backend)
    _, mask, _ = venv.reset(seed=5)
    for _ in range(30):  # into trick play, where most cards are illegal
        _, mask, *_ = venv.step(mask.argmax(1))
    card = int(np.flatnonzero(~mask[0, :52])[0])  # a card game 0's seat on turn may not play
    hands = venv.hands.copy()
    mask[0, card] = True
    actions = mask.argmax(1)
    actions[0] = card
    with pytest.raises(ValueError, match=f"illegal action {card} in game 0"):
        venv.step(actions)
    assert np.array_equal(venv.hands, hands) and not venv.action_mask()[0, card]
