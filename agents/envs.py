"""The environments of :mod:`manni_env` with opponents named by agent specs.

The env package does not know this package's registry: its single-agent env takes
:class:`~manni_agents.base.Policy` objects (or a factory) and its RLlib env a policy factory. These
helpers turn specs such as ``"rule_based"`` or ``"pimc:worlds=8"`` into those objects.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from manni_agents.base import Policy
from manni_agents.registry import make_agent
from manni_env.single_agent import SingleAgentManniEnv


def single_agent_env(
    variant: str = "hornafjardar", opponents: Sequence[str | Policy] = ("rule_based", "rule_based"), **kwargs
) -> SingleAgentManniEnv:
    """:class:`~manni_env.single_agent.SingleAgentManniEnv` against two opponents given as agent
    specs or Policy objects; ``kwargs`` (history, episode, seed, reward, rule options, ...) go to
    the env. ``ValueError`` for an unknown spec or not exactly two opponents."""
    if isinstance(opponents, str) or len(opponents) != 2:
        raise ValueError(f"opponents must be two agents, got {opponents!r}")
    policies = [make_agent(o) if isinstance(o, str) else o for o in opponents]
    return SingleAgentManniEnv(variant, opponents=policies, **kwargs)


def policy_factory(spec: str) -> Callable[[], Policy]:
    """A zero-argument factory of fresh ``spec`` agents (picklable: it can travel to Ray workers),
    e.g. the ``baseline`` of :class:`~manni_env.rllib_env.ManniMultiAgentEnv`. The spec is checked
    at once (``ValueError`` for an unknown or bad spec)."""
    make_agent(spec)
    return functools.partial(make_agent, spec)
