"""Fixed opponents on the vector env: what ``--opponents SPEC [SPEC]`` of the vector trainers plays.

    manni train --opponents ppo                       # best response to the shipped agent
    manni train --opponents ppo:runs/a/agent rule_based

Each game of the rollout gives one seat, drawn at random, to the learner and the other two to the
fixed opponents: with one spec both are that agent, with two the first and the second sit in a
random order. A spec is an agent spec of ``manni arena`` that acts in batches on the vector env:

- ``ppo`` (the shipped agent of the variant), ``ppo:VARIANT``, ``ppo:PATH`` (a checkpoint); the
  last two with ``,sample`` draw from the policy instead of playing its argmax; the checkpoint must
  read the run's observations (same variant and ``--history``);
- ``rule_based`` (:class:`manni_agents.rule_based_vector.VectorRuleBased`);
- ``random`` (uniform over the legal actions).

:func:`make_opponent` builds one; :func:`check_opponent_specs` checks a list of specs as the command
line takes them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from manni_agents.ppo_agent import CheckpointError, PPOAgent, ShippedPPOAgent
from manni_agents.registry import make_agent
from manni_agents.rule_based_vector import VectorRuleBased
from manni_env.rules import Rules
from manni_env.vector import VectorManni, random_legal_actions

#: agent names that act in batches on the vector env
VECTOR_AGENTS = ("ppo", "rule_based", "random")


class VectorOpponent(Protocol):
    """A fixed agent acting for the seats on turn in some games of a vector env."""

    name: str

    def act(self, venv: VectorManni, games: np.ndarray, obs: np.ndarray, mask: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
        """Actions (int64) for ``games``, whose seats on turn see ``obs`` with legal ``mask``."""
        ...


class RandomOpponent:
    """``random``: uniform over the legal actions, drawn from the caller's generator."""

    name = "random"

    def act(self, venv, games, obs, mask, rng) -> np.ndarray:
        return random_legal_actions(mask, rng)


class RuleBasedOpponent:
    """``rule_based``, batched by :class:`~manni_agents.rule_based_vector.VectorRuleBased`."""

    name = "rule_based"

    def __init__(self, backend: str = "auto"):
        self.agent = VectorRuleBased(backend)

    def act(self, venv, games, obs, mask, rng) -> np.ndarray:
        return self.agent.act(venv, games)


class NetworkOpponent:
    """A ``ppo`` checkpoint: the masked argmax of its logits, as ``ppo:PATH`` plays (``,sample``:
    drawn from its masked softmax with the caller's generator)."""

    def __init__(self, agent: PPOAgent, name: str):
        self.agent, self.name = agent, name

    def act(self, venv, games, obs, mask, rng) -> np.ndarray:
        logits = np.where(mask, self.agent.logits(obs), -np.inf)
        if self.agent.sample:  # Gumbel-max: one draw per row from the masked softmax
            logits = logits - np.log(-np.log(rng.random(logits.shape).clip(1e-12, 1.0)))
        return logits.argmax(1)


def make_opponent(spec: str, rules: Rules, history: str, backend: str = "auto") -> VectorOpponent:
    """The batched agent of ``spec`` for games of ``rules`` seen with ``history``; ``ValueError``
    (:class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint) naming the problem."""
    name = spec.strip().partition(":")[0]
    if name not in VECTOR_AGENTS:
        raise ValueError(f"--opponents: {spec!r} does not act in batches on the vector env; "
                         f"use one of {', '.join(VECTOR_AGENTS)} (ppo, ppo:VARIANT[,sample], ppo:PATH[,sample])")
    agent = make_agent(spec, rules)
    if name == "random":
        return RandomOpponent()
    if name == "rule_based":
        return RuleBasedOpponent(backend)
    network = agent.agent_for(rules) if isinstance(agent, ShippedPPOAgent) else agent
    if network.meta["history"] != history:
        raise CheckpointError(f"--opponents {spec}: {network.path} reads history={network.meta['history']!r} "
                              f"observations, the run uses --history {history}")
    return NetworkOpponent(network, spec.strip())


def check_opponent_specs(specs: list[str], rules: Rules, history: str) -> None:
    """``ValueError`` unless ``specs`` is empty or one or two specs :func:`make_opponent` builds."""
    if len(specs) > 2:
        raise ValueError(f"--opponents takes one or two agent specs (the two non-learner seats), got {len(specs)}")
    for spec in specs:
        make_opponent(spec, rules, history, backend="python")
