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
    it cannot play; :func:`manni_agents.registry.make_agent` calls it before any game starts. A policy
    may also add ``deal_over(seat, result, winners)``: :func:`manni_agents.evaluation.match.play_game` calls it after
    every finished deal with the deal's :class:`~manni_env.engine.RoundResult` (hidden cards
    included: a policy passes on only the public part) and, after the last deal, the winners.
    """

    name: str

    def act(self, view: SeatView, rng: np.random.Generator) -> int: ...

    def reset(self) -> None: ...


def legal_actions_of(view: SeatView) -> tuple[int, ...]:
    """``view.legal_actions``, never empty: ``ValueError`` if the seat is not the one on turn."""
    legal = view.legal_actions
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal action (it is seat {view.to_move}'s turn)")
    return legal


def close_policies(players) -> None:
    """Stop the players that hold a resource (a ``bot:`` process): those with a ``close()``."""
    for player in players:
        close = getattr(player, "close", None)
        if close is not None:
            close()
