"""The rollout's credit assignment and GAE on a scripted deal with known rewards, and the update's
diagnostics.

Every seat is the learner, whose actor always plays the lowest legal action, so the rollout's games
are the engine's games under that rule; the critic is a constant. With γ = λ = 1 and deal rewards,
each decision's return is then what its seat is paid from that decision to the end of its deal: the
deal score for every decision of a finished deal, the critic's value for a decision whose deal the
rollout's end cut off (the bootstrap). The expected numbers come from the engine replaying the same
deals, not from the rollout.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from manni_env.actions import NUM_ACTIONS
from manni_env.engine import Deal, GameState
from manni_env.rules import make_rules
from manni_train.learner import PPOLearner
from manni_train.networks import Actor, Critic
from manni_train.ppo_vector import Args
from manni_train.precision import autocast
from manni_train.critic_view import UNSEEN_SIZE
from manni_train.vector_rollout import RolloutBatch, VectorRollout

BOOTSTRAP_VALUE = 0.375  # the constant critic: distinct from every deal score
CUT_DECISIONS = 5  # decisions of the second deal played before the rollout ends


class LowestLegalActor(nn.Module):
    """Logits so far apart that the Gumbel noise of sampling never changes the argmax."""

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        order = -1e4 * torch.arange(mask.shape[1], dtype=torch.float32)
        return torch.where(mask, order.expand_as(mask), torch.tensor(-torch.inf))


class ConstantCritic(nn.Module):
    def forward(self, obs: torch.Tensor, unseen: torch.Tensor | None = None) -> torch.Tensor:
        return torch.full((obs.shape[0],), BOOTSTRAP_VALUE)


def engine_replay(rules, deals: list[Deal]) -> tuple[list[int], tuple[int, ...], list[int]]:
    """Seats on turn in the first deal, its score, and the seats on turn in the second deal's
    first ``CUT_DECISIONS`` decisions, all playing the lowest legal action."""
    state = GameState(rules, deals=list(deals))
    first: list[int] = []
    while not state.rounds:
        first.append(state.to_move)
        state.apply(min(state.legal_actions()))
    second = []
    for _ in range(CUT_DECISIONS):
        second.append(state.to_move)
        state.apply(min(state.legal_actions()))
    return first, tuple(state.rounds[0].points), second


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann"])
def test_rewards_land_on_each_seats_latest_decision_and_cut_trajectories_bootstrap(variant):
    args = Args(variant=variant, first_dealer=0, num_envs=1, reward="deal", reward_of="own", reward_scale=1.0,
                gamma=1.0, gae_lambda=1.0, episode="deal", opponent_mix="none")
    rules = args.rules()
    deals = [GameState(make_rules(variant, first_dealer=k), seed=11 + k).deal for k in range(2)]
    seats, score, cut_seats = engine_replay(rules, deals)
    args = dataclasses.replace(args, num_steps=len(seats) + CUT_DECISIONS)

    rollout = VectorRollout(args, torch.Generator().manual_seed(0), np.random.default_rng(0), seed=0)
    rollout.obs, rollout.mask, rollout.to_move = rollout.venv.reset(seed=0, deals=[deals])
    batch = rollout.collect(LowestLegalActor(), ConstantCritic())

    assert batch.steps == len(seats) + CUT_DECISIONS
    assert batch.deal_scores == pytest.approx([float(p) for p in score])
    # the deal score is paid once per seat, to that seat's last decision of the deal
    rewards = rollout.paths[0].reward[:, 0].numpy()
    last = {seat: max(t for t, s in enumerate(seats) if s == seat) for seat in range(3)}
    expected_rewards = np.zeros(args.num_steps, np.float32)
    for seat, t in last.items():
        expected_rewards[t] = score[seat]
    np.testing.assert_allclose(rewards, expected_rewards)
    # γ = λ = 1: every decision of the finished deal returns its seat's deal score ...
    returns = batch.returns.numpy()
    np.testing.assert_allclose(returns[: len(seats)], [score[s] for s in seats], atol=1e-6)
    np.testing.assert_allclose(batch.advantages.numpy()[: len(seats)],
                               [score[s] - BOOTSTRAP_VALUE for s in seats], atol=1e-6)
    # ... and a decision of the deal cut by the rollout's end returns its seat's bootstrap value
    assert rollout.paths[0].seat[len(seats):, 0].tolist() == cut_seats
    np.testing.assert_allclose(returns[len(seats):], BOOTSTRAP_VALUE, atol=1e-6)
    np.testing.assert_allclose(batch.advantages.numpy()[len(seats):], 0.0, atol=1e-6)


@pytest.mark.parametrize("critic_view", ["seat", "deal"])
def test_each_decision_is_valued_by_the_critic_and_its_advantage_walks_its_own_seats_trajectory(critic_view):
    """A real critic over a rollout of many games, snapshots and rule_based seats, γ and λ below 1:
    each row's value is the critic's of that row alone, and its advantage is the one a plain walk
    along its (game, seat) trajectory gives (rows taken in order, episodes ended where ``done``, a cut
    trajectory bootstrapped with the critic's value of its seat's last view)."""
    args = Args(num_envs=6, num_steps=120, hidden=[16], gamma=0.9, gae_lambda=0.8, precision="fp32", critic=critic_view,
                opponent_mix="snapshot=0.3,rule_based=0.3")
    rollout = VectorRollout(args, torch.Generator().manual_seed(3), np.random.default_rng(3), seed=3)
    torch.manual_seed(3)
    actor = Actor(rollout.obs_size, [16], "relu")
    critic = Critic(rollout.obs_size, [16], "relu", unseen=0 if critic_view == "seat" else UNSEEN_SIZE)
    rollout.add_snapshot(actor)
    played = rollout.play(actor)  # what collect does, in its two halves
    batch, paths = played.batch(critic, args), played.paths

    def value(obs: torch.Tensor, unseen: torch.Tensor | None) -> float:
        with torch.no_grad():
            return critic(obs[None], None if unseen is None else unseen[None]).item()

    unseen = [None] * batch.steps if batch.unseen is None else batch.unseen
    values = [value(batch.obs[i], unseen[i]) for i in range(batch.steps)]
    np.testing.assert_allclose(batch.values.numpy(), values, rtol=1e-5, atol=1e-6)
    trajectories: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (game, seat) -> (row, step) in time order
    row = 0
    for t in range(args.num_steps):
        for g in np.flatnonzero(paths.valid[t].numpy()):
            trajectories.setdefault((int(g), int(paths.seat[t, g])), []).append((row, t))
            row += 1
    assert row == batch.steps and played.tails > 0 and paths.done.any()
    tail = {(int(paths.tail_game[k]), int(paths.tail_seat[k])): k for k in range(played.tails)}
    expected = np.zeros(batch.steps)
    for (g, s), decisions in trajectories.items():
        following_value = following_adv = 0.0
        if (g, s) in tail:
            k = tail[(g, s)]
            following_value = value(paths.tail_obs[k], None if paths.tail_unseen is None else paths.tail_unseen[k])
        for r, t in reversed(decisions):
            live = 0.0 if paths.done[t, g] else 1.0
            delta = float(paths.reward[t, g]) + args.gamma * following_value * live - values[r]
            expected[r] = delta + args.gamma * args.gae_lambda * live * following_adv
            following_value, following_adv = values[r], expected[r]
    np.testing.assert_allclose(batch.advantages.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(batch.returns.numpy(), expected + np.array(values), rtol=1e-4, atol=1e-5)


def test_the_update_reports_approximate_kl_clip_fraction_and_explained_variance():
    args = Args(num_envs=1, hidden=[16], precision="fp32")
    gen = torch.Generator().manual_seed(0)
    actor, critic = Actor(616, [16], "relu"), Critic(616, [16], "relu")
    n = 64
    obs = torch.randn(n, 616, generator=gen)
    mask = torch.ones(n, NUM_ACTIONS, dtype=torch.bool)
    actions = torch.randint(NUM_ACTIONS, (n,), generator=gen)
    with torch.no_grad():
        logp = torch.log_softmax(actor(obs, mask), 1).gather(1, actions[:, None]).squeeze(1)
    values, returns = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    batch = RolloutBatch(obs=obs, mask=mask, actions=actions, logp=logp, values=values,
                         advantages=returns - values, returns=returns)
    stats = PPOLearner(actor, critic, args, gen).update(batch, 1e-2)
    assert stats["losses/explained_variance"] == pytest.approx(1 - (returns - values).var().item() / returns.var().item())
    assert 0.0 <= stats["losses/approx_kl"] < 1.0 and 0.0 <= stats["losses/clipfrac"] <= 1.0


def test_the_update_uses_fused_adam_and_its_losses_cover_only_the_real_rows_of_a_padded_minibatch():
    """Under bf16 a minibatch of 37 rows runs padded to 64; the losses are those of the 37."""
    args = Args(num_envs=1, hidden=[16], precision="bf16", update_epochs=1, vf_coef=0.0, ent_coef=0.0)
    gen = torch.Generator().manual_seed(0)
    actor, critic = Actor(616, [16], "relu"), Critic(616, [16], "relu")
    n = 37
    obs = (torch.rand(n, 616, generator=gen) < 0.2).float()
    mask = torch.ones(n, NUM_ACTIONS, dtype=torch.bool)
    actions = torch.randint(NUM_ACTIONS, (n,), generator=gen)
    values, returns = torch.zeros(n), torch.arange(n, dtype=torch.float32)  # row 0 (the padding's copy) fits best
    batch = RolloutBatch(obs=obs, mask=mask, actions=actions, logp=torch.zeros(n), values=values,
                         advantages=returns - values, returns=returns)
    with torch.no_grad(), autocast(torch.bfloat16):
        expected = 0.5 * ((critic(obs) - returns) ** 2).mean().item()
    learner = PPOLearner(actor, critic, args, gen)
    assert learner.optimizer.defaults["fused"]
    stats = learner.update(batch, 1e-3, minibatches=1)
    assert stats["losses/value"] == pytest.approx(expected, rel=1e-2)
