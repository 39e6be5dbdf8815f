"""Named agents: ``make_agent("pimc:worlds=16")`` turns a command-line spec into a fresh policy.

A spec is ``name`` or ``name:arg``; everything after the first ``:`` is handed to the agent's
factory as ``arg`` (``None`` without a colon). Built-in names:

==============  ==========================================================================
spec            agent
==============  ==========================================================================
``random``      uniform over the legal actions (:mod:`manni_agents.random_agent`)
``rule_based``  the documented heuristic card player (:mod:`manni_agents.rule_based`)
``pimc``        Perfect-Information Monte Carlo search (:mod:`manni_agents.pimc`); options
                ``pimc:worlds=16,rollout=rule_based,time_budget=0.5``
``ppo``         a trained network: ``ppo`` (shipped model), ``ppo:PATH`` (:mod:`manni_agents.ppo_agent`)
``search``      card-play search with the network as rollout policy (:mod:`manni_agents.search`); options
                ``search:worlds=16,weighting=uniform,model=PATH``, ``search:weighting=policy,temperature=12``
``rllib``       an RLlib-trained policy: ``rllib:CHECKPOINT_DIR`` (:mod:`manni_agents.rllib_agent`)
``ismcts``      OpenSpiel's Information Set MCTS (:mod:`manni_agents.ismcts`, needs the ``openspiel``
                extra); options ``ismcts:iterations=100,uct_c=2,rollouts=1``
``bot``         a program in any language over the ``manni-bot/1`` protocol: ``bot:COMMAND``,
                ``bot:time_limit=2,on_error=fallback:COMMAND`` (:mod:`manni_agents.bots.agent`)
==============  ==========================================================================

Every agent built here carries the spec as its ``name`` (for tables and records). Other modules
add agents with :func:`register_agent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from manni_agents.base import Policy
from manni_agents.spec_options import parse_options

__all__ = ["available_agents", "make_agent", "no_arg", "parse_options", "register_agent"]

if TYPE_CHECKING:
    from manni_env.rules import Rules

Factory = Callable[[str | None], Policy]

_FACTORIES: dict[str, Factory] = {}


def register_agent(name: str, factory: Factory) -> None:
    """Make ``name`` available to :func:`make_agent`; ``factory(arg)`` builds a fresh policy."""
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"an agent name is a non-empty string without ':' or surrounding spaces, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory for agent {name!r} must be callable, got {factory!r}")
    _FACTORIES[name] = factory


def available_agents() -> list[str]:
    """Registered agent names, sorted."""
    return sorted(_FACTORIES)


def make_agent(spec: str, rules: Rules | None = None) -> Policy:
    """Build a fresh policy from ``name[:arg]``; ``ValueError`` for an unknown name or a bad arg,
    and, with ``rules``, for an agent that cannot play them (its ``check_rules``, if it has one)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string like 'rule_based' or 'pimc:worlds=16', got {spec!r}")
    spec = spec.strip()
    name, colon, arg = spec.partition(":")
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; valid agents: {', '.join(available_agents())}")
    try:
        agent = _FACTORIES[name](arg if colon else None)
    except ValueError as err:
        raise ValueError(f"bad agent spec {spec!r}: {err}") from None
    agent.name = spec
    check = getattr(agent, "check_rules", None)
    if rules is not None and check is not None:
        check(rules)
    return agent


def no_arg(name: str, build: Callable[[], Policy]) -> Factory:
    """A factory for an agent that takes no argument (``random:x`` is an error)."""

    def factory(arg: str | None) -> Policy:
        if arg is not None:
            raise ValueError(f"agent {name!r} takes no argument, got {arg!r}")
        return build()

    return factory


# One factory per built-in agent, each importing its module on first use (agents load heavy parts:
# the observation encoder, the vector kernels, OpenSpiel). They stay plain functions with import
# statements rather than one loader of module names, so the layering test, which reads the imports
# from the source, sees every dependency.


def _make_random(arg: str | None) -> Policy:
    from manni_agents.random_agent import RandomAgent

    return no_arg("random", RandomAgent)(arg)


def _make_rule_based(arg: str | None) -> Policy:
    from manni_agents.rule_based import RuleBasedAgent

    return no_arg("rule_based", RuleBasedAgent)(arg)


def _make_pimc(arg: str | None) -> Policy:
    from manni_agents.pimc import make_pimc_agent

    return make_pimc_agent(arg)


def _make_ppo(arg: str | None) -> Policy:
    from manni_agents.ppo_agent import make_ppo_agent  # imported on use: it loads the observation encoder

    return make_ppo_agent(arg)


def _make_search(arg: str | None) -> Policy:
    from manni_agents.search import make_search_agent  # imported on use: it loads the vector kernels

    return make_search_agent(arg)


def _make_rllib(arg: str | None) -> Policy:
    from manni_agents.rllib_agent import make_rllib_agent  # numpy + safetensors only: no ray needed to play

    return make_rllib_agent(arg)


def _make_ismcts(arg: str | None) -> Policy:
    from manni_agents.ismcts import make_ismcts_agent  # OpenSpiel is imported on the first decision

    return make_ismcts_agent(arg)


def _make_bot(arg: str | None) -> Policy:
    from manni_agents.bots.agent import make_bot_agent

    return make_bot_agent(arg)


register_agent("random", _make_random)
register_agent("rule_based", _make_rule_based)
register_agent("pimc", _make_pimc)
register_agent("ppo", _make_ppo)
register_agent("search", _make_search)
register_agent("rllib", _make_rllib)
register_agent("ismcts", _make_ismcts)
register_agent("bot", _make_bot)
