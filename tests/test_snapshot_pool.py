"""The snapshot pool: every row gets its own snapshot's logits, in one pass for the whole pool."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from manni_train.networks import Actor
from manni_train.ppo_vector import Args
from manni_train.snapshot_pool import SnapshotPool
from manni_train.vector_rollout import LEARNER, VectorRollout

OBS = 40


def actors(count: int, activation: str = "relu") -> list[Actor]:
    torch.manual_seed(0)
    return [Actor(OBS, [16, 8], activation) for _ in range(count)]


def own_logits(nets: list[Actor], which: np.ndarray, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Row i's logits from its own network ``nets[which[i]]``, one row at a time."""
    with torch.no_grad():
        return torch.stack([nets[k](obs[i:i + 1], mask[i:i + 1])[0] for i, k in enumerate(which)])


def rows(count: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    obs = torch.randint(0, 2, (count, OBS), generator=gen).float()
    mask = torch.rand((count, 63), generator=gen) < 0.3
    mask[:, 0] = True
    return obs, mask


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_each_row_gets_the_logits_of_its_own_snapshot(activation):
    nets = actors(3, activation)
    pool = SnapshotPool(8, torch.float32, torch.Generator())
    for net in nets:
        assert not pool.add(net)
    which = np.array([2, 0, 0, 1, 2, 2, 0, 2, 2, 2, 2, 2, 2, 2, 2])  # uneven groups: padding rows
    obs, mask = rows(which.size)
    logits = pool.logits(which, obs, mask)
    torch.testing.assert_close(logits, own_logits(nets, which, obs, mask))
    assert (logits[~mask] == -1e8).all()


def test_bf16_hidden_layers_stay_close_and_the_head_is_float32():
    nets = actors(2)
    pool = SnapshotPool(8, torch.bfloat16, torch.Generator())
    for net in nets:
        pool.add(net)
    which = np.array([1, 0, 1])
    obs, mask = rows(3)
    logits = pool.logits(which, obs, mask)
    assert logits.dtype == torch.float32 and pool.stacked[-1][0].dtype == torch.float32
    assert pool.stacked[0][0].dtype == torch.bfloat16
    expected = own_logits(nets, which, obs, mask)
    torch.testing.assert_close(logits[mask], expected[mask], atol=0.02, rtol=0.02)


def test_the_snapshots_are_frozen_copies_and_the_oldest_leaves_beyond_the_size():
    nets = actors(3)
    pool = SnapshotPool(2, torch.float32, torch.Generator())
    assert not pool.add(nets[0]) and not pool.add(nets[1])
    with torch.no_grad():
        nets[1].action.bias.add_(5.0)  # training goes on after the snapshot: the copy does not move
    assert pool.add(nets[2]) and len(pool) == 2
    obs, mask = rows(2)
    logits = pool.logits(np.array([0, 1]), obs, mask)
    with torch.no_grad():
        nets[1].action.bias.sub_(5.0)
        torch.testing.assert_close(logits[0], nets[1](obs[:1], mask[:1])[0])  # snapshot 0 is now net 1
        torch.testing.assert_close(logits[1], nets[2](obs[1:], mask[1:])[0])


def test_actions_are_legal_and_follow_the_generator():
    pool = SnapshotPool(8, torch.float32, torch.Generator())
    for net in actors(3):
        pool.add(net)
    which = np.random.default_rng(0).integers(3, size=200)
    obs, mask = rows(200)
    first = pool.act(which, obs, mask)
    assert mask[torch.arange(200), first].all()
    pool.gen.manual_seed(7)
    again = pool.act(which, obs, mask)
    pool.gen.manual_seed(7)
    assert torch.equal(again, pool.act(which, obs, mask))


def test_a_rollout_renumbers_the_seats_of_an_evicted_snapshot():
    args = Args(num_envs=16, num_steps=4, pool_size=2, opponent_mix="snapshot=1")
    rollout = VectorRollout(args, torch.Generator().manual_seed(0), np.random.default_rng(0), 0)
    actor = Actor(rollout.obs_size, args.hidden, args.activation)
    rollout.add_snapshot(actor)
    rollout.add_snapshot(actor)
    rollout.assign_seats(np.arange(16))
    before = rollout.controller.copy()
    rollout.add_snapshot(actor)
    assert (rollout.controller[before == 0] == LEARNER).all()
    assert (rollout.controller[before == 1] == 0).all()
    assert len(rollout.pool) == 2
