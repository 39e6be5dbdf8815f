"""manni_env.fast_wrappers behave exactly like PettingZoo's wrappers they subclass."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers as pz

from manni_env import fast_wrappers as fw
from manni_env.env import raw_env


def wrap(module, **kwargs):
    env = module.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
    return module.OrderEnforcingWrapper(module.AssertOutOfBoundsWrapper(env))


def trajectory(env, seed: int, illegal_at: int | None = None) -> list[tuple]:
    """Everything the AEC loop sees, step by step, under seeded random legal play (optionally one
    illegal move at step ``illegal_at``)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    seen = []
    for i, agent in enumerate(env.agent_iter(max_iter=3000)):
        obs, reward, termination, truncation, info = env.last()
        seen.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, termination,
                     truncation, dict(info), dict(env.rewards), list(env.agents)))
        if termination or truncation:
            action = None
        elif i == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        env.step(action)
    return seen


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann"])
def test_same_trajectories_as_pettingzoo_wrappers(variant):
    options = {"episode": "game", **({"target": 3} if variant != "trjamann" else {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns about the illegal move
        for seed, illegal_at in ((1, None), (2, 40)):
            plain, fast = wrap(pz, variant=variant, **options), wrap(fw, variant=variant, **options)
            expected = trajectory(plain, seed, illegal_at)
            assert trajectory(fast, seed, illegal_at) == expected
            if illegal_at is not None:
                assert any(step[3] == -1 for step in expected)  # the illegal move was punished


def test_attributes_before_reset_fail_like_pettingzoo():
    plain, fast = wrap(pz), wrap(fw)
    for name in fw.FORWARDED + ("_private_thing",):
        with pytest.raises(AttributeError) as expected:
            getattr(plain, name)
        with pytest.raises(AttributeError) as got:
            getattr(fast, name)
        assert str(got.value) == str(expected.value)


def test_subclasses_and_pickling():
    env = wrap(fw, variant="basic")
    assert isinstance(env, pz.OrderEnforcingWrapper)
    assert isinstance(env.env, pz.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, pz.TerminateIllegalWrapper)
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy) is type(env)
    assert trajectory(copy, 3) == trajectory(env, 3)


def test_manni_v0_env_uses_them():
    from manni_env import manni_v0

    env = manni_v0.env(variant="basic")
    assert type(env) is fw.OrderEnforcingWrapper
    assert type(env.env) is fw.AssertOutOfBoundsWrapper
    assert type(env.env.env) is fw.TerminateIllegalWrapper


def test_forwarding_skips_only_the_plain_layers():
    """Stacked wrappers read the attributes from the env below the plain forwarding layers; a wrapper
    around an order-enforcing one still gets its before-reset error."""
    env = wrap(fw)
    assert env._source is env.env.env.env  # the raw env, two plain layers skipped
    outer = fw.AssertOutOfBoundsWrapper(fw.OrderEnforcingWrapper(raw_env()))
    plain = pz.AssertOutOfBoundsWrapper(pz.OrderEnforcingWrapper(raw_env()))
    for name in ("agent_selection", "terminations"):
        with pytest.raises(AttributeError) as expected:
            getattr(plain, name)
        with pytest.raises(AttributeError) as got:
            getattr(outer, name)
        assert str(got.value) == str(expected.value)
    outer.env.reset(seed=0)
    assert outer.agent_selection == outer.env.env.agent_selection
