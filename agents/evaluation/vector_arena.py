"""Duplicate evaluation on the vector env: a batched policy against two copies of an opponent.

:func:`duplicate_score` measures what ``manni arena POLICY B B`` measures in deals mode (the
policy's mean deal score over the first deal of fresh games, every deal played with the policy in
each seat), in every variant, but steps all deals at once in :class:`~manni_env.vector.VectorManni`
(in the announcement variants a first deal is one forehand contract choice). The policy and the
opponents are :class:`~manni_agents.vector_policy.VectorPolicy` controllers, each acting for
every seat on turn that is its own in one batched call (:func:`~manni_agents.vector_policy.act_seats`):
``random``, ``rule_based`` (:class:`~manni_agents.rule_based_vector.VectorRuleBased`), a ``ppo``
checkpoint or a trainer's network. With two copies of one deterministic opponent the six seatings
of the arena reduce to three (the policy in seat 0, 1 or 2), each played on the same deals (same
seed); with two different opponents both orders around the policy are played (six seatings).
Thousands of deals take seconds, so trainers use it for their learning curves; the deals differ
from the arena's (another seeding), the statistic is the same (mean per deal over the seatings,
95% normal interval). :func:`duplicate_margin` is the arena's "X − Y" (the policy's score minus
its opponents' mean in each deal), which differs from 1.5 × the score only where deals are not
zero-sum (Basic Manni's floor).

:func:`checkpoint_policy` turns a ``ppo`` checkpoint into such a batched policy (the argmax of
:meth:`~manni_agents.ppo_agent.PPOAgent.policy_logits`, so it plays the same moves as ``ppo:PATH``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from manni_agents.evaluation.arena import Interval
from manni_agents.ppo_agent import PPOAgent
from manni_agents.vector_policy import VectorPolicy, act_seats, make_vector_policy, network_policy
from manni_env.rules import Rules
from manni_env.vector import VectorManni

#: an opponent: an agent spec (``rule_based``, ``random``, ``ppo...``), a controller, or two of
#: them (the seats after the policy's and before it, both orders played)
Opponents = str | VectorPolicy | tuple[VectorPolicy, VectorPolicy]


def duplicate_score(policy: VectorPolicy, rules: Rules, deals: int, seed: int, baseline: Opponents = "rule_based",
                    history: str = "summary", backend: str = "auto", layout: str = "v0") -> Interval:
    """Mean deal score (95% CI over deals) of ``policy`` against two copies of ``baseline``."""
    return duplicate_interval(duplicate_seat_scores(policy, rules, deals, seed, baseline, history, backend, layout))


def duplicate_interval(seat_scores: np.ndarray) -> Interval:
    """The policy's mean deal score (95% CI over deals, each deal's seatings averaged first) from
    :func:`duplicate_seat_scores`' array."""
    return Interval.of(seat_scores[..., 0].mean(0).tolist())


def duplicate_margin(seat_scores: np.ndarray) -> Interval:
    """The policy's mean deal score minus its opponents' (the arena's "X − Y", 95% CI over deals)
    from :func:`duplicate_seat_scores`' array."""
    own, others = seat_scores[..., 0], seat_scores[..., 1:].mean(-1)
    return Interval.of((own - others).mean(0).tolist())


def duplicate_scores(policy: VectorPolicy, rules: Rules, deals: int, seed: int, baseline: Opponents = "rule_based",
                     history: str = "summary", backend: str = "auto", layout: str = "v0") -> np.ndarray:
    """(seatings, deals) deal scores of ``policy``: :func:`duplicate_seat_scores`' first column."""
    return duplicate_seat_scores(policy, rules, deals, seed, baseline, history, backend, layout)[..., 0]


def duplicate_seat_scores(policy: VectorPolicy, rules: Rules, deals: int, seed: int,
                          baseline: Opponents = "rule_based", history: str = "summary", backend: str = "auto",
                          layout: str = "v0") -> np.ndarray:
    """(seatings, deals, 3) deal scores of ``policy`` (column 0), the opponent in the seat after it
    (1) and the one before it (2) in the first deal of game slot ``i`` of
    ``VectorManni(rules, deals, history=history, layout=layout).reset(seed)`` (the observations the
    policies get): seating ``s`` (of 3) puts it in seat ``s`` and
    ``baseline`` in the other two; with two opponents ``(a, b)``, seating ``2 s`` puts ``a`` in
    the seat after it and ``b`` in the one before, seating ``2 s + 1`` the other way round."""
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    if isinstance(baseline, str):
        baseline = make_vector_policy(baseline, rules, history, backend, layout)
    orders = [baseline, baseline[::-1]] if isinstance(baseline, tuple) else [(baseline, baseline)]
    seatings = [(seat, after, before) for seat in range(3) for after, before in orders]
    scores = np.zeros((len(seatings), deals, 3))
    for i, (seat, after, before) in enumerate(seatings):
        # seats counted from the policy's; one code per distinct controller, which acts once a step
        by_seat = (policy, after, before)
        code = np.array([next(j for j, c in enumerate(by_seat) if c is p) for p in by_seat])
        policies = {j: by_seat[j] for j in sorted(set(code.tolist()))}
        venv = VectorManni(rules, deals, history=history, backend=backend, layout=layout)
        rng = np.random.default_rng([seed, i])
        obs, mask, to_move = venv.reset(seed=seed)  # the same deals for every seating
        done = np.zeros(deals, bool)
        from_policy = (seat + np.arange(3)) % 3  # the seats of the policy, the one after it, the one before
        while not done.all():
            actions = np.zeros(deals, np.int64)
            act_seats(policies, code[(to_move - seat) % 3], venv, obs, mask, rng, actions)
            obs, mask, to_move, rewards, _, _, infos = venv.step(actions)
            first = infos["deal_over"] & ~done
            scores[i, first] = rewards[first][:, from_policy]
            done |= first
    return scores


def checkpoint_policy(path: str | Path, rules: Rules, layout: str = "v0") -> VectorPolicy:
    """The greedy batched policy of a ``ppo`` checkpoint (checked against ``rules``) in games seen in
    observation ``layout`` (that of :func:`duplicate_score`'s games) with the checkpoint's history."""
    agent = PPOAgent(path)
    agent.encoder_for(rules)  # raises CheckpointError if the checkpoint cannot play these rules
    return network_policy(agent, rules, agent.meta["history"], layout, f"ppo:{path}")
