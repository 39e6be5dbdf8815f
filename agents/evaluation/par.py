"""Par scores: what the shipped agent scores in each seat of a deal when it plays all three seats.

Duplicate bridge and robot tournaments take luck out of a score by comparing it with what others
made with the same cards. Here the *par* of a finished deal is the deal points the shipped agent
(``ppo``, greedy) makes in each seat when it plays **all three seats** from the start of that deal:
the same hands, Manni, cut card and dealer, the same game so far (tallies, contracts used up). A
player's *par difference* is their deal points minus their seat's par; summed over deals it says
how much better or worse than the agent the player did with the cards they got.

What par removes: the luck of the cards, since a seat's par is made with exactly those cards. What
it does not remove: the other seats' play. A player's difference also moves with how well the two
others played (a weak opponent hands out tricks that the agent's table would not), so it measures
a player against the agent *at that table*, not in isolation.

:func:`deal_par` plays one deal from a state at its start; :class:`ParTracker` follows a game as it
is played (``manni serve``'s games and tables); :func:`record_par` scores a ``manni-record/1``
record (replays and ``manni validate --par``). The agent is greedy, so par is deterministic.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from manni_agents.base import Policy
from manni_agents.ppo_agent import CheckpointError
from manni_agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.records import record_deals, record_rules, round_actions, validate_record

#: The agent that makes par: the shipped network of the variant, playing greedily.
PAR_AGENT = "ppo"


@functools.cache
def par_agent() -> Policy:
    """The shared :data:`PAR_AGENT` (loaded once per process; it keeps no state between moves)."""
    return make_agent(PAR_AGENT)


@dataclass(frozen=True)
class DealPar:
    """One finished deal (``deal`` counted from 1): the players' points, the par of each seat."""

    deal: int
    points: tuple[int, int, int]
    par: tuple[int, int, int]

    @property
    def difference(self) -> tuple[int, int, int]:
        """Each seat's points minus the seat's par."""
        return tuple(p - q for p, q in zip(self.points, self.par))  # type: ignore[return-value]

    def to_dict(self) -> dict:
        return {"deal": self.deal, "points": list(self.points), "par": list(self.par),
                "difference": list(self.difference)}


def deal_par(state: GameState, agent: Policy | None = None) -> tuple[int, int, int]:
    """The deal points ``agent`` (default :func:`par_agent`) makes in each seat playing all three
    seats of the deal ``state`` stands at the start of (``state`` itself is not changed)."""
    agent = agent or par_agent()
    trial, deal = state.clone(), len(state.rounds)
    if trial.finished:
        raise ValueError("the game is over: there is no deal to play")
    rng = np.random.default_rng(deal)  # a greedy agent draws nothing; a fixed stream keeps any other reproducible
    while len(trial.rounds) == deal:
        trial.apply(agent.act(trial.view(trial.to_move), rng))
    return trial.rounds[deal].points


def totals(pars: Sequence[DealPar]) -> dict:
    """``{"points", "par", "difference"}``: each seat's sums over ``pars``."""
    return {key: [sum(getattr(p, key)[s] for p in pars) for s in range(3)] for key in ("points", "par", "difference")}


class ParTracker:
    """The par of each deal of a game as it is played: built at the start of the game, told
    :meth:`update` after every action; :attr:`pars` holds one :class:`DealPar` per finished deal."""

    def __init__(self, state: GameState, agent: Policy | None = None):
        self.agent = agent
        self.pars: list[DealPar] = []
        self._start = state.clone()

    def update(self, state: GameState) -> None:
        """Score the deal ``state`` has just finished, if it has (call after every action)."""
        done = len(state.rounds)
        if done == len(self.pars):
            return
        if done != len(self.pars) + 1:
            raise ValueError(f"{done - len(self.pars)} deals finished since the last update; update after every action")
        self.pars.append(DealPar(done, state.rounds[-1].points, deal_par(self._start, self.agent)))
        if not state.finished:
            self._start = state.clone()


def tracker_for(state: GameState) -> ParTracker | None:
    """A :class:`ParTracker` for the game ``state`` starts, or ``None`` when the par agent cannot
    play its rules (no shipped agent for them)."""
    try:
        par_agent().check_rules(state.rules)
    except CheckpointError:
        return None
    return ParTracker(state)


def summary(tracker: ParTracker | None) -> dict | None:
    """What a page shows: ``{"deals": [DealPar.to_dict(), ...], "totals": totals(...)}``, or ``None``."""
    if tracker is None:
        return None
    return {"deals": [p.to_dict() for p in tracker.pars], "totals": totals(tracker.pars)}


def record_par(record: dict, agent: Policy | None = None) -> list[DealPar]:
    """The par of every deal of ``record`` (validated first:
    :class:`~manni_env.records.RecordError` if it is broken)."""
    validate_record(record)
    state = GameState(record_rules(record), seed=0, deals=record_deals(record))
    pars = []
    for i, r in enumerate(record["rounds"]):
        par = deal_par(state, agent)
        for action, _ in round_actions(state, r):
            state.apply(action)
        pars.append(DealPar(i + 1, state.rounds[i].points, par))
    return pars


def report(record: dict) -> list[str]:
    """``manni validate --par``'s lines for one valid record: per deal and summed, each seat's
    points, par and difference (or one line saying why par is unavailable, e.g. no shipped agent
    plays the record's rules)."""
    try:
        pars = record_par(record)
    except CheckpointError as err:
        return [f"  par unavailable: {err}"]
    players = record.get("players") or [f"seat {s}" for s in range(3)]

    def row(values) -> str:
        return " ".join(f"{v:+3d}" for v in values)

    lines = [f"  deal {p.deal:>3}: points {row(p.points)} | par {row(p.par)} | points - par {row(p.difference)}"
             for p in pars]
    sums = totals(pars)
    lines.append(f"  all deals: points {row(sums['points'])} | par {row(sums['par'])} | "
                 f"points - par {row(sums['difference'])}  (seats 0, 1, 2: {', '.join(players)})")
    return lines


__all__ = ["PAR_AGENT", "DealPar", "ParTracker", "deal_par", "par_agent", "record_par", "report", "summary",
           "totals", "tracker_for"]
