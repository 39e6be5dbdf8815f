"""Duplicate evaluation on the vector env: a batched policy against two copies of a baseline.

:func:`duplicate_score` measures what ``manni arena POLICY B B`` measures in deals mode (the
policy's mean deal score over the first deal of fresh games, every deal played with the policy in
each seat), in every variant, but steps all deals at once in :class:`~manni_env.vector.VectorManni`
(in the announcement variants a first deal is one forehand contract choice): the policy acts
for every seat on turn that is its own in one batched call, ``rule_based`` through
:class:`~manni_agents.rule_based_vector.VectorRuleBased`, ``random`` from the masks. With two copies of
one deterministic baseline the six seatings of the arena reduce to three (the policy in seat 0, 1
or 2), each played on the same deals (same seed). Thousands of deals take seconds, so trainers use
it for their learning curves; the deals differ from the arena's (another seeding), the statistic is
the same (mean per deal over the seatings, 95% normal interval).

:func:`checkpoint_policy` turns a ``ppo`` checkpoint into such a batched policy (the masked argmax of
:class:`~manni_agents.ppo_agent.PPOAgent`, so it plays the same moves as ``ppo:PATH``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from manni_agents.arena import BASELINES, Interval
from manni_agents.ppo_agent import PPOAgent
from manni_agents.rule_based_vector import VectorRuleBased
from manni_env.rules import Rules
from manni_env.vector import VectorManni, random_legal_actions

#: ``policy(obs, mask) -> actions``: (k, obs_size) float32 and (k, 63) bool → (k,) int
BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def duplicate_score(policy: BatchPolicy, rules: Rules, deals: int, seed: int, baseline: str = "rule_based",
                    history: str = "summary", backend: str = "auto") -> Interval:
    """Mean deal score (95% CI over deals) of ``policy`` against two copies of ``baseline``."""
    return Interval.of(duplicate_scores(policy, rules, deals, seed, baseline, history, backend).mean(0).tolist())


def duplicate_scores(policy: BatchPolicy, rules: Rules, deals: int, seed: int, baseline: str = "rule_based",
                     history: str = "summary", backend: str = "auto") -> np.ndarray:
    """(3, deals) deal scores of ``policy`` in seat 0, 1, 2 of the first deal of game slot ``i`` of
    ``VectorManni(rules, deals).reset(seed)``, the other two seats played by ``baseline``."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, got {baseline!r}")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    scores = np.zeros((3, deals))
    opponent = VectorRuleBased(backend)
    for seat in range(3):
        venv = VectorManni(rules, deals, history=history, backend=backend)
        rng = np.random.default_rng([seed, seat])
        obs, mask, to_move = venv.reset(seed=seed)  # the same deals for every seating
        done = np.zeros(deals, bool)
        while not done.all():
            actions = np.zeros(deals, np.int64)
            mine = np.flatnonzero(to_move == seat)
            others = np.flatnonzero(to_move != seat)
            if mine.size:
                actions[mine] = policy(obs[mine], mask[mine])
            if others.size:
                if baseline == "rule_based":
                    actions[others] = opponent.act(venv, others)
                else:
                    actions[others] = random_legal_actions(mask[others], rng)
            obs, mask, to_move, rewards, _, _, infos = venv.step(actions)
            first = infos["deal_over"] & ~done
            scores[seat, first] = rewards[first, seat]
            done |= first
    return scores


def checkpoint_policy(path: str | Path, rules: Rules) -> BatchPolicy:
    """The greedy batched policy of a ``ppo`` checkpoint (checked against ``rules``)."""
    agent = PPOAgent(path)
    agent.encoder_for(rules)  # raises CheckpointError if the checkpoint cannot play these rules

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.where(mask, agent.logits(obs), -np.inf).argmax(1)

    return policy
