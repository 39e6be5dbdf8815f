"""The one policy interface every player implements: rule bots, search, trained nets, a person."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from manni_env.view import SeatView


@runtime_checkable
class Policy(Protocol):
    """A Manni player.

    ``act`` receives the acting seat's information state and an owned random generator, and
    returns one of ``view.legal_actions``. Policies that work on observation vectors encode the
    view themselves with :class:`manni_env.observation.ObservationEncoder`. ``reset`` is called
    once before each game (for policies that keep memory between moves). A policy that plays only
    some rules (a trained network) may add ``check_rules(rules)``, raising ``ValueError`` for rules
    it cannot play; :func:`agents.registry.make_agent` calls it before any game starts.
    """

    name: str

    def act(self, view: SeatView, rng: np.random.Generator) -> int: ...

    def reset(self) -> None: ...
