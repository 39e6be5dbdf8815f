"""The auxiliary belief loss of ``manni train --belief-coef`` (train/networks.py): what it counts, that
the rollout keeps its targets without showing them to a seat critic, that the update learns them, and
that the exported agent is the actor alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from manni_agents.registry import make_agent  # noqa: E402
from manni_train.critic_view import UNSEEN_SIZE  # noqa: E402
from manni_train.learner import PPOLearner  # noqa: E402
from manni_train.networks import belief_loss, run_networks  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402
from manni_train.vector_rollout import VectorRollout  # noqa: E402

TINY = dict(num_envs=16, num_steps=24, hidden=[32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, torch_threads=1, progress_bar=False)


def places(*cards: tuple[int, int]) -> torch.Tensor:
    """One row of unseen flags: each (place, card) with place 0 the next seat, 1 the one after, 2 the rest."""
    row = torch.zeros(UNSEEN_SIZE)
    for place, card in cards:
        row[place * 52 + card] = 1.0
    return row


def test_the_belief_loss_counts_the_unseen_cards_only():
    unseen = torch.stack([places((0, 5), (2, 7)), places((1, 9))])
    uniform = torch.zeros(2, UNSEEN_SIZE)
    assert belief_loss(uniform, unseen).item() == pytest.approx(math.log(3))
    certain = (unseen * 2 - 1) * 50.0  # the true place of every unseen card far ahead of the others
    assert belief_loss(certain, unseen).item() == pytest.approx(0.0, abs=1e-6)
    seen_moved = uniform.clone()
    seen_moved[:, 3] = 40.0  # card 3 is in no place: the seat sees it (its hand, played)
    assert belief_loss(seen_moved, unseen).item() == pytest.approx(math.log(3))


def test_the_rollout_keeps_the_unseen_cards_and_the_update_learns_them():
    args = Args(variant="trjamann", belief_coef=1.0, precision="fp32", update_epochs=4, **TINY)
    rollout = VectorRollout(args, torch.Generator().manual_seed(1), np.random.default_rng(1), 1)
    actor, critic = run_networks(rollout.obs_size, args)
    assert critic.belief is not None and critic.vf[0].in_features == rollout.obs_size  # the critic reads the seat's view
    batch = rollout.collect(actor, critic)
    assert batch.unseen is not None and batch.unseen.shape == (batch.steps, UNSEEN_SIZE)
    learner = PPOLearner(actor, critic, args, torch.Generator().manual_seed(1))

    def loss() -> float:
        with torch.no_grad():
            return belief_loss(critic.belief(actor.pi(batch.obs.float())), batch.unseen).item()

    before = loss()
    for _ in range(5):
        learner.update(batch, 1e-2)
    assert before == pytest.approx(math.log(3), abs=0.02) and loss() < before - 0.1


def test_a_belief_run_exports_the_actor_alone(tmp_path):
    plain = train(Args(runs_dir=str(tmp_path), run_name="plain", variant="trjamann", total_steps=400, **TINY))
    believing = train(Args(runs_dir=str(tmp_path), run_name="belief", variant="trjamann", total_steps=400,
                           belief_coef=0.5, **TINY))
    agents = [make_agent(f"ppo:{run.agent}") for run in (plain, believing)]
    assert [w.shape for w, _ in agents[0].layers] == [w.shape for w, _ in agents[1].layers]


def test_a_negative_belief_coefficient_is_refused():
    with pytest.raises(ValueError, match="--belief-coef must not be negative"):
        Args(belief_coef=-0.1).check()
