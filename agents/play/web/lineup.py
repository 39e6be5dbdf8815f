"""Which agents a browser player may face in each variant, and the default opponent.

The menu is fixed when the server starts: every registered agent that takes no argument
(``random``, ``rule_based``, ``pimc``, ``ppo``, ...) plus the specs the operator adds with
``manni serve --agent SPEC`` (e.g. ``ppo:runs/my_model``), each offered only in the variants it can
play. Requests choose from the menu by name; a spec from a request is never parsed, so no request
can make the server open a file.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from manni_agents.registry import available_agents, make_agent
from manni_env.engine import GameState
from manni_env.rules import VARIANTS, make_rules

#: The shipped trained agent, preferred where it can play; the fallback elsewhere.
SHIPPED = "ppo"
FALLBACK = "rule_based"


def plays_variant(spec: str, variant: str) -> bool:
    """Whether ``spec`` builds an agent that can decide in ``variant`` (a trained network refuses
    another variant or observation layout with a ``ValueError``)."""
    try:
        agent = make_agent(spec)
        agent.reset()
        state = GameState(make_rules(variant), seed=0)
        agent.act(state.view(state.to_move), np.random.default_rng(0))
    except ValueError:
        return False
    return True


def strongest_shipped_agent(variant: str) -> str:
    """The default opponent: the shipped ``ppo`` agent where it plays ``variant``, else ``rule_based``."""
    return SHIPPED if plays_variant(SHIPPED, variant) else FALLBACK


class Lineup:
    """The opponents offered per variant (see the module docstring)."""

    def __init__(self, extra_specs: Iterable[str] = ()):
        extra = [spec.strip() for spec in extra_specs]
        for spec in extra:
            make_agent(spec)  # ValueError naming the problem for a bad spec
        candidates = list(dict.fromkeys([*available_agents(), *extra]))
        self.choices = {v: [s for s in candidates if plays_variant(s, v)] for v in VARIANTS}
        self.defaults = {v: strongest_shipped_agent(v) for v in VARIANTS}
        unplayable = [s for s in extra if not any(s in specs for specs in self.choices.values())]
        if unplayable:
            raise ValueError(f"agent {unplayable[0]!r} cannot play any variant")

    def check(self, spec: str, variant: str) -> str:
        """``spec`` if it is on the menu of ``variant``, else ``ValueError`` naming the choices."""
        if spec not in self.choices[variant]:
            raise ValueError(f"opponent {spec!r} is not offered for {variant}; choose one of: {', '.join(self.choices[variant])}")
        return spec

    def to_dict(self) -> dict:
        """``{variant: {"choices": [...], "default": spec}}`` for the browser."""
        return {v: {"choices": self.choices[v], "default": self.defaults[v]} for v in VARIANTS}
