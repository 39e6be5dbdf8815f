"""One seat's information state: exactly what that seat may know, nothing more.

Everything an agent, the observation encoder or the belief sampler needs from the game comes from
a :class:`SeatView`. Hidden information (opponents' hands, the unseen Manni, others' discards)
is never copied into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from manni_env.rules import Contract, Phase, Rules

if TYPE_CHECKING:
    from manni_env.engine import GameState


@dataclass(frozen=True)
class SeatView:
    """The information state of ``seat``. Seats are absolute (0, 1, 2 clockwise); card sets are
    bitmasks (see :mod:`manni_env.cards`)."""

    rules: Rules
    seat: int
    phase: Phase
    to_move: int
    deal_index: int
    dealer: int
    cut_card: int | None  # Hornafjarðarmanni: public, and the dealer was dealt it
    contract: Contract | None
    hand: int  # own cards now
    dealt_hand: int  # own cards as dealt
    discards: int  # own discards (Basic: the swapped-out hand), out of play
    drawn: int  # cards this seat took from the Manni (Hornafjarðarmanni replacements, Basic Manni, pickup)
    pending: tuple[int, ...]  # own discards chosen so far in the exchange now under way
    exchange_limit: int  # Hornafjarðarmanni: own remaining discard allowance while deciding, else 0
    exchange_counts: tuple[int, int, int]  # cards each seat exchanged (-1: not decided yet)
    manni_used: int  # Hornafjarðarmanni: Manni cards drawn so far by anyone
    swapper: int | None  # Basic: who swapped with the Manni
    taker: int | None  # announcement variants: who took the Manni
    passed: tuple[int, ...]  # Basic / announcement: seats that kept their hand / passed the Manni
    used_contracts: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    leader: int
    led_suit: int  # -1 when no card has been played to the current trick
    trick: tuple[int, ...]  # current trick in play order, led by ``leader``
    plays: tuple[tuple[int, int], ...]  # every (seat, card) of this deal in play order
    played: tuple[int, int, int]  # cards each seat has played this deal
    voids: tuple[int, int, int]  # suits (bit s) each seat has shown void in
    tricks_won: tuple[int, int, int]
    plus: tuple[int, int, int]
    minus: tuple[int, int, int]
    totals: tuple[int, int, int]
    legal_actions: tuple[int, ...]  # empty unless it is this seat's turn

    @classmethod
    def of(cls, state: GameState, seat: int) -> SeatView:
        """The view of ``seat`` in a full game state (the same as ``state.view(seat)``)."""
        return state.view(seat)

    @property
    def forehand(self) -> int:
        return (self.dealer + 1) % 3

    def relative(self, other_seat: int) -> int:
        """Position of ``other_seat`` from this seat: 0 me, 1 my left (next to play), 2 my right."""
        return (other_seat - self.seat) % 3
