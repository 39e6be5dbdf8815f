"""The batched-policy interface of the vector env's lockstep loops, its agents and the seat dispatch.

Every seat controller of a :class:`~manni_env.vector.VectorManni` loop acts through one method,
:meth:`VectorPolicy.act`: given the games whose seat on turn it plays and the observations and
legal masks of every game's seat on turn, it returns those games' actions (the rows are not
copied out for it: ``rule_based`` reads the env's state and needs none). The agents that act so:

- :class:`RandomPolicy` (``random``: uniform over the legal actions, from the caller's generator);
- :class:`~manni_agents.rule_based_vector.VectorRuleBased` (``rule_based``, from the env's state);
- :class:`NetworkPolicy` (a network's masked argmax, or a draw from its masked softmax): ``ppo``
  checkpoints, and the trainers' networks;

:func:`make_vector_policy` builds one from an agent spec of ``manni arena``; :func:`act_seats`
asks several controllers, each once, for the actions of the games whose mover they control.

The three lockstep loops (the trainer's rollout, :mod:`manni_train.vector_rollout`; the warm
start's demonstrations, :mod:`manni_train.demonstrations`; the duplicate evaluation,
:mod:`manni_agents.evaluation.vector_arena`) share this interface (the rollout and the evaluation also
:func:`act_seats`; in the demonstrations one teacher plays every seat), not one loop: what
surrounds the step is all they have apart (the rollout records the learner's forward passes and
shaped rewards, reassigns seats at game ends and keeps its games across calls; the demonstrations
record every decision compactly and play on until each recorded deal ends; the evaluation replays
the same first deals once per seating), so a shared loop would be a loop of hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np

from manni_agents.ppo_agent import CheckpointError, PPOAgent, ShippedPPOAgent
from manni_agents.registry import make_agent
from manni_agents.rule_based_vector import VectorRuleBased
from manni_env.rules import Rules
from manni_env.vector import VectorManni, random_legal_actions

#: agent names that act in batches on the vector env
VECTOR_AGENTS = ("ppo", "rule_based", "random")


class VectorPolicy(Protocol):
    """An agent acting for the seats on turn in some games of a vector env."""

    name: str

    def act(self, venv: VectorManni, games: np.ndarray, obs: np.ndarray, mask: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
        """Actions (int64) for ``games``, whose seats on turn see ``obs[games]`` with legal
        ``mask[games]`` (``obs``, ``mask``: one row per game of ``venv``); any randomness is drawn
        from ``rng``."""
        ...


class RandomPolicy:
    """``random``: uniform over the legal actions, drawn from the caller's generator."""

    name = "random"

    def act(self, venv, games, obs, mask, rng) -> np.ndarray:
        return random_legal_actions(mask[games], rng)


class NetworkPolicy:
    """A network's masked argmax; with ``sample``, a draw from its masked softmax (Gumbel-max with
    the caller's generator). ``logits(obs, mask)`` gives the (k, 63) logits of k observations."""

    def __init__(self, logits: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str, sample: bool = False):
        self.logits, self.name, self.sample = logits, name, sample

    def act(self, venv, games, obs, mask, rng) -> np.ndarray:
        obs, mask = obs[games], mask[games]
        logits = np.where(mask, self.logits(obs, mask), -np.inf)
        if self.sample:
            logits = logits - np.log(-np.log(rng.random(logits.shape).clip(1e-12, 1.0)))
        return logits.argmax(1)


def make_vector_policy(spec: str, rules: Rules, history: str = "summary", backend: str = "auto",
                       layout: str = "v0") -> VectorPolicy:
    """The batched agent of ``spec`` (``ppo``, ``ppo:VARIANT[,sample,symmetric|plain]``, ``ppo:PATH[,…]``,
    ``rule_based``, ``random``) for games of ``rules`` seen with ``history`` in observation ``layout``
    (a ``v0`` network reads the ``v0`` prefix of ``v1`` observations); ``ValueError``
    (:class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint) naming the problem."""
    name = spec.strip().partition(":")[0]
    if name not in VECTOR_AGENTS:
        raise ValueError(f"{spec!r} does not act in batches on the vector env; use one of "
                         f"{', '.join(VECTOR_AGENTS)} (ppo, ppo:VARIANT[,sample,symmetric|plain], ppo:PATH[,…])")
    agent = make_agent(spec, rules)
    if name == "random":
        return RandomPolicy()
    if name == "rule_based":
        return VectorRuleBased(backend)
    network = agent.agent_for(rules) if isinstance(agent, ShippedPPOAgent) else agent
    return network_policy(network, rules, history, layout, spec.strip())


def network_policy(network: PPOAgent, rules: Rules, history: str, layout: str, name: str) -> NetworkPolicy:
    """The batched policy of a ``ppo`` network in games of ``rules`` seen with ``history`` in
    ``layout``: it reads the leading floats of their observations that its own layout holds
    (:meth:`~manni_agents.ppo_agent.PPOAgent.input_width`); :class:`CheckpointError` if it cannot."""
    if network.meta["history"] != history:
        raise CheckpointError(f"{name}: {network.path} reads history={network.meta['history']!r} "
                              f"observations, the games are seen with history={history!r}")
    try:
        width = network.input_width(rules, layout)
    except CheckpointError as err:
        raise CheckpointError(f"{name}: {err}") from None
    return NetworkPolicy(lambda obs, mask: network.policy_logits(obs[:, :width], mask, rules), name, network.sample)


def act_seats(policies: Mapping[int, VectorPolicy], who: np.ndarray, venv: VectorManni, obs: np.ndarray,
              mask: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
    """Fill ``out[g]`` for every game ``g`` whose mover is controlled by a key of ``policies``
    (``who[g]``: the code of the controller of game ``g``'s seat on turn): each policy acts once,
    for all its games, in the mapping's order (so the draws from ``rng`` come in that order).
    Games of other codes are left as they are."""
    for code, policy in policies.items():
        games = np.flatnonzero(who == code)
        if games.size:
            out[games] = policy.act(venv, games, obs, mask, rng)
