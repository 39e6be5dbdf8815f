"""The rules engine: a pure game state for every Manni variant.

Deal → exchange (or swap / Manni pickup and announcement) → 12 or 16 tricks → score → next deal,
until the game ends. No gymnasium, no pettingzoo, no global RNG: the only randomness is the owned
``numpy.random.Generator`` that shuffles the deals and draws the first dealer.

Typical use::

    state = GameState(make_rules("hornafjardar"), seed=7)
    while not state.finished:
        state.apply(state.legal_actions()[0])

``apply`` validates its action and raises :class:`IllegalActionError` without changing anything
when the action is not legal. Seats are 0, 1, 2 clockwise; ``state.view(seat)`` is what one seat
may know (see :mod:`manni_env.view`).
"""

from __future__ import annotations

import functools
import numbers
import operator
from dataclasses import asdict, dataclass, field
from enum import IntEnum

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from . import actions as A
from .cards import (
    ACE, SUIT_MASKS, SUITS, card_to_str, cards_of, mask_of, mask_to_strs, rank_of, suit_cards, suit_of,
)
from .rules import Rules, make_rules

HEARTS, SPADES, DIAMONDS, CLUBS = 2, 3, 1, 0
#: Basic Manni's trump by deal number ``k``: hearts, spades, diamonds, clubs, ...
BASIC_TRUMP_ROTATION = (HEARTS, SPADES, DIAMONDS, CLUBS)
#: Hornafjarðarmanni's exchange limits in decision order (forehand, middlehand, dealer).
EXCHANGE_LIMITS = (7, 5, 12)
ANNOUNCE_DISCARDS = 4


class Phase(IntEnum):
    """What kind of decision the player on turn makes."""

    EXCHANGE = 0  # Hornafjarðarmanni: choose discards one by one, then EXCHANGE_DONE
    SWAP = 1  # Basic Manni: keep the hand or swap it for the Manni
    PICKUP = 2  # announcement variants: take the Manni or pass
    DISCARD = 3  # announcement variants: the taker discards four cards
    ANNOUNCE = 4  # announcement variants: forehand names the contract
    PLAY = 5  # trick play
    GAME_OVER = 6


_EXCHANGE, _SWAP, _PICKUP, _DISCARD, _ANNOUNCE, _PLAY = (
    Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE, Phase.PLAY
)


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


# action -> (contract name, kind, trump suit) for each announcement variant
_ANNOUNCEMENTS = {
    "trjamann": {
        A.ANNOUNCE_SPADES: ("spades", "trump", SPADES),
        A.ANNOUNCE_HEARTS: ("suit", "trump", HEARTS),
        A.ANNOUNCE_DIAMONDS: ("suit", "trump", DIAMONDS),
        A.ANNOUNCE_GRAND: ("grand", "grand", None),
        A.ANNOUNCE_NULLO: ("nullo", "nullo", None),
    },
    "laugarvatn": {
        A.ANNOUNCE_SPADES: ("spades", "trump", SPADES),
        A.ANNOUNCE_HEARTS: ("hearts", "trump", HEARTS),
        A.ANNOUNCE_DIAMONDS: ("diamonds", "trump", DIAMONDS),
        A.ANNOUNCE_CLUBS: ("clubs", "trump", CLUBS),
        A.ANNOUNCE_GRAND: ("grand", "grand", None),
        A.ANNOUNCE_NULLO: ("nullo", "nullo", None),
    },
}


@dataclass(frozen=True)
class Contract:
    """The contract of a deal: ``kind`` nullo | trump | grand, the trump suit, the declarer."""

    kind: str
    trump: int | None = None
    declarer: int | None = None
    name: str | None = None  # announcement variants: the contract used up ("suit", "spades", ...)

    @property
    def nullo(self) -> bool:
        return self.kind == "nullo"

    def describe(self) -> str:
        if self.kind == "trump":
            return f"Trump {SUITS[self.trump]}"
        return self.kind.capitalize()


def contract_from_cut(cut_card: int) -> Contract:
    """Hornafjarðarmanni: 2–5 Nullo, 6–9 trump of the cut suit, T–A Grand."""
    rank = rank_of(cut_card)
    if rank <= 3:
        return Contract("nullo")
    if rank <= 7:
        return Contract("trump", suit_of(cut_card))
    return Contract("grand")


def trick_winner(cards: list[int] | tuple[int, ...], trump: int | None, nullo: bool) -> int:
    """Index in ``cards`` (play order, leader first) of the card that wins the trick."""
    best = 0
    best_card = cards[0]
    for i in range(1, len(cards)):
        card = cards[i]
        cs, bs = card // 13, best_card // 13
        if cs == bs:
            cr, br = card % 13, best_card % 13
            if nullo:
                cr = -1 if cr == ACE else cr
                br = -1 if br == ACE else br
            if cr > br:
                best, best_card = i, card
        elif cs == trump:
            best, best_card = i, card
    return best


@dataclass(frozen=True)
class Deal:
    """An explicit deal: hands by absolute seat, the Manni top card first, the cut card."""

    hands: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    manni: tuple[int, ...]
    cut_card: int | None = None

    @classmethod
    def from_strs(cls, hands, manni, cut_card: str | None = None) -> Deal:
        """Build from card strings, e.g. ``Deal.from_strs([["AS", ...], ...], ["2C", ...], "7H")``."""
        from .cards import card_from_str

        return cls(
            tuple(tuple(card_from_str(c) for c in h) for h in hands),
            tuple(card_from_str(c) for c in manni),
            None if cut_card is None else card_from_str(cut_card),
        )

    def check(self, rules: Rules, dealer: int) -> None:
        """Raise ``ValueError`` if this deal is not a legal deal of ``rules`` with ``dealer``."""
        if len(self.hands) != 3:
            raise ValueError(f"a deal has 3 hands, got {len(self.hands)}")
        for seat, hand in enumerate(self.hands):
            if len(hand) != rules.hand_size:
                raise ValueError(f"seat {seat} holds {len(hand)} cards; {rules.variant} deals {rules.hand_size}")
        if len(self.manni) != rules.manni_size:
            raise ValueError(f"the Manni has {len(self.manni)} cards; {rules.variant} deals {rules.manni_size}")
        everything = [c for h in self.hands for c in h] + list(self.manni)
        for c in everything:
            if not (isinstance(c, int) and 0 <= c < 52) or not rules.pack >> c & 1:
                raise ValueError(f"card {c!r} is not in the {rules.variant} pack")
        if len(set(everything)) != len(everything):
            dup = sorted({card_to_str(c) for c in everything if everything.count(c) > 1})
            raise ValueError(f"cards dealt twice: {', '.join(dup)}")
        if rules.variant == "hornafjardar":
            if self.cut_card is None:
                raise ValueError("a Hornafjarðarmanni deal needs its cut card")
            if self.cut_card not in self.hands[dealer]:
                raise ValueError(
                    f"the cut card {card_to_str(self.cut_card)} must be in the dealer's (seat {dealer}) hand"
                )
        elif self.cut_card is not None:
            raise ValueError(f"variant {rules.variant!r} has no cut card")


@dataclass
class Exchange:
    """One exchange decision, in decision order (see RECORD.md ``exchanges``)."""

    seat: int
    discards: tuple[int, ...] = ()
    drawn: tuple[int, ...] = ()
    swap: bool | None = None  # basic
    take: bool | None = None  # announcement variants


@dataclass
class RoundResult:
    """A finished deal, everything a record needs (cards as ints)."""

    index: int
    dealer: int
    cut_card: int | None
    contract: Contract
    hands: tuple[tuple[int, ...], ...]
    manni: tuple[int, ...]
    exchanges: list[Exchange]
    tricks: list[tuple[int, tuple[int, ...], int]]  # (leader, cards in play order, winner)
    tricks_won: tuple[int, int, int]
    points: tuple[int, int, int]
    plus: tuple[int, int, int]
    minus: tuple[int, int, int]
    totals: tuple[int, int, int]


@dataclass(slots=True)
class _DealState:
    """Everything that is reset for a new deal."""

    deal: Deal
    hands: list[int]
    contract: Contract | None
    phase: Phase
    to_move: int
    order: tuple[int, int, int]
    manni_pos: int = 0
    decision: int = 0
    pending: list[int] = field(default_factory=list)
    discards: list[int] = field(default_factory=lambda: [0, 0, 0])
    drawn: list[int] = field(default_factory=lambda: [0, 0, 0])
    exchange_counts: list[int] = field(default_factory=lambda: [-1, -1, -1])
    swapper: int | None = None
    taker: int | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    leader: int = 0
    led_suit: int = -1
    trick: list[int] = field(default_factory=list)
    plays: list[tuple[int, int]] = field(default_factory=list)
    tricks: list[tuple[int, tuple[int, ...], int]] = field(default_factory=list)
    played: list[int] = field(default_factory=lambda: [0, 0, 0])
    voids: list[int] = field(default_factory=lambda: [0, 0, 0])
    tricks_won: list[int] = field(default_factory=lambda: [0, 0, 0])

    def copy(self) -> _DealState:
        """An independent copy: lists and exchanges copied, immutable values (deal, contract, tuples) shared."""
        return _DealState(
            self.deal, self.hands[:], self.contract, self.phase, self.to_move, self.order, self.manni_pos,
            self.decision, self.pending[:], self.discards[:], self.drawn[:], self.exchange_counts[:],
            self.swapper, self.taker, [_copy_exchange(e) for e in self.exchanges], self.leader, self.led_suit,
            self.trick[:], self.plays[:], self.tricks[:], self.played[:], self.voids[:], self.tricks_won[:],
        )


def _copy_exchange(e: Exchange) -> Exchange:
    return Exchange(e.seat, e.discards, e.drawn, e.swap, e.take)


class _BlankSeed(ISeedSequence):
    """Seeds a bit generator cheaply with zeros, for one whose state is overwritten right after."""

    def generate_state(self, n_words: int, dtype=np.uint32) -> np.ndarray:
        return np.zeros(n_words, dtype)


_BLANK_SEED = _BlankSeed()


def _copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator in the same state (much cheaper than ``copy.deepcopy``)."""
    bit_generator = type(rng.bit_generator)(_BLANK_SEED)
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)


def _game_seed(seed) -> int | None:
    """``seed`` as a Python int (numpy integers too) or ``None``; ``ValueError`` for anything else."""
    if seed is None:
        return None
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


class GameState:
    """A whole game of Manni: a sequence of deals until the game ends or the deal cap is hit.

    ``deals`` optionally gives explicit deals (:class:`Deal`) used in order before any random
    deal; ``seed`` seeds the owned generator that shuffles the rest and draws the first dealer
    (unless ``rules.first_dealer`` fixes it).
    """

    def __init__(self, rules: Rules | None = None, seed: int | None = None, deals: list[Deal] | None = None):
        self.rules = rules if rules is not None else make_rules()
        self.seed = _game_seed(seed)
        self.rng = np.random.default_rng(seed)
        self.deal_queue: list[Deal] = list(deals or [])
        self.deal_index = 0
        first = self.rules.first_dealer
        self.dealer = int(self.rng.integers(3)) if first is None else first
        self.plus = [0, 0, 0]
        self.minus = [0, 0, 0]
        self.totals = [0, 0, 0]
        self.used_contracts: list[list[str]] = [[], [], []]
        self.rounds: list[RoundResult] = []
        self.finished = False
        self.truncated = False
        self.winners: tuple[int, ...] = ()
        self.d: _DealState
        self._start_deal()

    # ----------------------------------------------------------------- public queries
    @property
    def phase(self) -> Phase:
        return self.d.phase

    @property
    def to_move(self) -> int:
        """Seat on turn (-1 once the game is over)."""
        return self.d.to_move

    @property
    def contract(self) -> Contract | None:
        return self.d.contract

    @property
    def forehand(self) -> int:
        return (self.dealer + 1) % 3

    def hand(self, seat: int) -> list[int]:
        """Cards seat holds now, ascending."""
        return cards_of(self.d.hands[seat])

    def exchange_limit(self) -> int:
        """Hornafjarðarmanni: how many cards the player on turn may still choose to discard."""
        d = self.d
        if d.phase != Phase.EXCHANGE:
            return 0
        limit = min(EXCHANGE_LIMITS[d.decision], self.rules.manni_size - d.manni_pos)
        return limit - len(d.pending)

    def legal_actions(self) -> list[int]:
        """Legal actions of the player on turn, ascending (empty once the game is over)."""
        d = self.d
        phase = d.phase
        if phase is _PLAY:
            hand = d.hands[d.to_move]
            if d.trick:
                follow = suit_cards(hand, d.led_suit)
                if follow:
                    return list(follow)
            return cards_of(hand)
        if phase is _EXCHANGE:
            legal = cards_of(d.hands[d.to_move])
            legal.append(A.EXCHANGE_DONE)
            return legal
        if phase is _SWAP:
            return [A.KEEP_HAND, A.SWAP_HAND]
        if phase is _PICKUP:
            return [A.TAKE_MANNI, A.PASS_MANNI]
        if phase is _DISCARD:
            return cards_of(d.hands[d.to_move])
        if phase is _ANNOUNCE:
            used = self.used_contracts[d.to_move]
            table = _ANNOUNCEMENTS[self.rules.variant]
            return [a for a, (name, _, _) in table.items() if name not in used]
        return []

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal for the player on turn."""
        d = self.d
        phase = d.phase
        if phase is _PLAY:
            if not 0 <= action < 52:
                return False
            hand = d.hands[d.to_move]
            if not hand >> action & 1:
                return False
            if d.trick and action // 13 != d.led_suit and hand & SUIT_MASKS[d.led_suit]:
                return False
            return True
        if (phase is _EXCHANGE or phase is _DISCARD) and type(action) is int:  # any card in hand
            if 0 <= action < 52:
                return d.hands[d.to_move] >> action & 1 == 1
            return phase is _EXCHANGE and action == A.EXCHANGE_DONE
        return action in self.legal_actions()

    # ----------------------------------------------------------------- applying actions
    def apply(self, action: int) -> None:
        """Play ``action`` for the seat on turn; raise :class:`IllegalActionError` if illegal."""
        d = self.d
        if type(action) is int and 0 <= action < 52 and d.hands[d.to_move] >> action & 1:
            # a card in hand, the common case: checked here rather than by is_legal
            phase = d.phase
            if phase is _PLAY:
                if not d.trick or action // 13 == d.led_suit or not d.hands[d.to_move] & SUIT_MASKS[d.led_suit]:
                    self._play(action)
                    return
            elif phase is _EXCHANGE:
                self._exchange(action)
                return
            elif phase is _DISCARD:
                self._discard(action)
                return
        if type(action) is not int:
            try:
                action = operator.index(action)
            except TypeError:
                raise IllegalActionError(
                    f"an action is an integer in 0..{A.NUM_ACTIONS - 1}, got {action!r}"
                ) from None
        if not self.is_legal(action):
            raise IllegalActionError(self._illegal_message(action))
        phase = self.d.phase
        if phase is _PLAY:
            self._play(action)
        elif phase is _EXCHANGE:
            self._exchange(action)
        elif phase is _SWAP:
            self._swap(action)
        elif phase is _PICKUP:
            self._pickup(action)
        elif phase is _DISCARD:
            self._discard(action)
        else:
            self._announce(action)

    def _illegal_message(self, action: int) -> str:
        d = self.d
        if d.phase == Phase.GAME_OVER:
            return "the game is over: no action is legal"
        what = A.action_to_str(action) if 0 <= action < A.NUM_ACTIONS else "out of range"
        reason = ""
        if d.phase == Phase.PLAY and 0 <= action < 52:
            if not d.hands[d.to_move] >> action & 1:
                reason = f": seat {d.to_move} does not hold {what}"
            else:
                reason = f": seat {d.to_move} must follow suit {SUITS[d.led_suit]}"
        legal = " ".join(A.action_to_str(a) for a in self.legal_actions())
        return f"illegal action {action} ({what}) in phase {d.phase.name}{reason}; legal: {legal}"

    def _play(self, card: int) -> None:
        d = self.d
        seat = d.to_move
        bit = 1 << card
        d.hands[seat] ^= bit
        d.played[seat] |= bit
        trick = d.trick
        if not trick:
            d.led_suit = card // 13
        elif card // 13 != d.led_suit:
            d.voids[seat] |= 1 << d.led_suit
        trick.append(card)
        d.plays.append((seat, card))
        if len(trick) < 3:
            d.to_move = (seat + 1) % 3
            return
        contract = d.contract
        winner = (d.leader + trick_winner(trick, contract.trump, contract.kind == "nullo")) % 3
        d.tricks.append((d.leader, tuple(trick), winner))
        d.tricks_won[winner] += 1
        d.trick = []
        d.led_suit = -1
        d.leader = d.to_move = winner
        if len(d.tricks) == self.rules.hand_size:  # one trick per card held
            self._end_deal()

    def _exchange(self, action: int) -> None:
        d = self.d
        if action != A.EXCHANGE_DONE:
            d.hands[d.to_move] ^= 1 << action
            d.discards[d.to_move] |= 1 << action
            d.pending.append(action)
            if self.exchange_limit() > 0:
                return
        seat, k = d.to_move, len(d.pending)
        drawn = d.deal.manni[d.manni_pos : d.manni_pos + k]
        d.manni_pos += k
        d.hands[seat] |= mask_of(drawn)
        d.drawn[seat] = mask_of(drawn)
        d.exchange_counts[seat] = k
        d.exchanges.append(Exchange(seat, discards=tuple(d.pending), drawn=tuple(drawn)))
        d.pending = []
        self._next_decision()

    def _swap(self, action: int) -> None:
        d = self.d
        seat = d.to_move
        if action == A.SWAP_HAND:
            d.discards[seat] = d.hands[seat]
            d.hands[seat] = d.drawn[seat] = mask_of(d.deal.manni)
            d.swapper = seat
            d.exchanges.append(Exchange(seat, swap=True))
            self._start_play()
        else:
            d.exchanges.append(Exchange(seat, swap=False))
            self._next_decision()

    def _pickup(self, action: int) -> None:
        d = self.d
        seat = d.to_move
        if action == A.TAKE_MANNI:
            d.hands[seat] |= mask_of(d.deal.manni)
            d.drawn[seat] = mask_of(d.deal.manni)
            d.taker = seat
            d.phase = Phase.DISCARD
        else:
            d.exchanges.append(Exchange(seat, take=False))
            self._next_decision()

    def _discard(self, card: int) -> None:
        d = self.d
        seat = d.to_move
        d.hands[seat] ^= 1 << card
        d.discards[seat] |= 1 << card
        d.pending.append(card)
        if len(d.pending) == ANNOUNCE_DISCARDS:
            d.exchanges.append(Exchange(seat, discards=tuple(d.pending), take=True))
            d.pending = []
            self._begin_announce()

    def _announce(self, action: int) -> None:
        d = self.d
        name, kind, trump = _ANNOUNCEMENTS[self.rules.variant][action]
        self.used_contracts[d.to_move].append(name)
        d.contract = Contract(kind, trump, d.to_move, name)
        self._start_play()

    def _next_decision(self) -> None:
        d = self.d
        d.decision += 1
        if d.decision < 3:
            d.to_move = d.order[d.decision]
        elif self.rules.is_announcement:
            self._begin_announce()
        else:
            self._start_play()

    def _begin_announce(self) -> None:
        self.d.phase = Phase.ANNOUNCE
        self.d.to_move = self.forehand

    def _start_play(self) -> None:
        d = self.d
        d.phase = Phase.PLAY
        d.leader = d.to_move = self.forehand

    # ----------------------------------------------------------------- deals and scoring
    def _start_deal(self) -> None:
        rules = self.rules
        f = (self.dealer + 1) % 3
        order = (f, (self.dealer + 2) % 3, self.dealer)
        if self.deal_queue:
            deal = self.deal_queue.pop(0)
            deal.check(rules, self.dealer)
        else:
            deal = self._random_deal(order)
        if rules.variant == "hornafjardar":
            contract, phase = contract_from_cut(deal.cut_card), Phase.EXCHANGE
        elif rules.variant == "basic":
            contract, phase = Contract("trump", BASIC_TRUMP_ROTATION[self.deal_index % 4]), Phase.SWAP
        else:
            contract, phase = None, Phase.PICKUP
        self.d = _DealState(deal, [mask_of(h) for h in deal.hands], contract, phase, f, order, leader=f)

    def _random_deal(self, order: tuple[int, int, int]) -> Deal:
        """Shuffle the variant's pack and deal it in the order RULES.md describes."""
        rules = self.rules
        deck = self.rng.permutation(_pack_cards(rules.pack)).tolist()
        hands: list[list[int]] = [[], [], []]
        manni: list[int] = []
        if rules.variant == "hornafjardar":
            # rounds of 13 cards [4 Manni, 3 f, 3 m, 3 dealer] four times; the bottom card (the cut)
            # to the dealer
            for r in range(0, 52, 13):
                manni += deck[r : r + 4]
                for i, seat in enumerate(order):
                    hands[seat] += deck[r + 4 + 3 * i : r + 7 + 3 * i]
            return Deal(tuple(map(tuple, hands)), tuple(manni), deck[-1])
        if rules.variant == "basic":
            # packets of four: f, m, dealer, Manni, three times
            for r in range(3):
                chunk = deck[16 * r : 16 * r + 16]
                for i, seat in enumerate(order):
                    hands[seat] += chunk[4 * i : 4 * i + 4]
                manni += chunk[12:16]
            return Deal(tuple(map(tuple, hands)), tuple(manni))
        # announcement variants: one at a time to f, m, dealer; the last four form the Manni
        for i, seat in enumerate(order):
            hands[seat] = deck[i:48:3]
        return Deal(tuple(map(tuple, hands)), tuple(deck[48:]))

    def deal_points(self) -> tuple[int, int, int]:
        """This deal's score per seat from the tricks won so far (final once 12/16 tricks are in)."""
        d, rules = self.d, self.rules
        t = d.tricks_won
        nullo = d.contract.kind == "nullo"
        if rules.variant == "hornafjardar":
            return tuple(4 - x if nullo else x - 4 for x in t)
        if rules.variant == "basic":
            return tuple(x - 4 if rules.negative else max(0, x - 4) for x in t)
        decl = d.contract.declarer
        if nullo:
            return tuple((4 if s == decl else 6) - t[s] for s in range(3))
        return tuple(t[s] - (8 if s == decl else 4) for s in range(3))

    def _end_deal(self) -> None:
        d = self.d
        points = self.deal_points()
        for s in range(3):
            p = points[s]
            self.totals[s] += p
            if p > 0:
                self.plus[s] += p
            else:
                self.minus[s] -= p
        self.rounds.append(
            RoundResult(
                self.deal_index, self.dealer, d.deal.cut_card, d.contract, d.deal.hands, d.deal.manni,
                d.exchanges, d.tricks, tuple(d.tricks_won), points, tuple(self.plus), tuple(self.minus),
                tuple(self.totals),
            )
        )
        rules = self.rules
        done = False
        if rules.variant == "hornafjardar":
            done = max(self.plus) >= rules.target
        elif rules.variant == "basic":
            top = max(self.totals)
            done = top >= rules.target and self.totals.count(top) == 1
        else:
            done = len(self.rounds) == rules.max_deals
        if not done and len(self.rounds) >= rules.max_deals:
            done = self.truncated = True
        if done:
            top = max(self.totals)
            self.winners = tuple(s for s in range(3) if self.totals[s] == top)
            self.finished = True
            d.phase = Phase.GAME_OVER
            d.to_move = -1
            return
        self.deal_index += 1
        self.dealer = (self.dealer + 1) % 3
        self._start_deal()

    # ----------------------------------------------------------------- copies and views
    def clone(self) -> GameState:
        """An independent copy that continues identically (its generator too).

        Everything the game goes on changing is copied; finished rounds (:class:`RoundResult`, never
        changed once recorded) and other immutable values are shared with the original.
        """
        new = GameState.__new__(GameState)
        new.__dict__.update(self.__dict__)
        new.rng = _copy_generator(self.rng)
        new.deal_queue = self.deal_queue[:]
        new.plus, new.minus, new.totals = self.plus[:], self.minus[:], self.totals[:]
        new.used_contracts = [u[:] for u in self.used_contracts]
        new.rounds = self.rounds[:]
        new.d = self.d.copy()
        return new

    def view(self, seat: int):
        """What ``seat`` may know now: a :class:`manni_env.view.SeatView`."""
        return _seat_view_class().of(self, seat)

    def to_dict(self) -> dict:
        """A JSON-safe dict of the whole state (privileged: it holds every hidden card)."""
        return {
            "rules": {"variant": self.rules.variant, **self.rules.options()},
            "seed": self.seed,
            "rng": self.rng.bit_generator.state,
            "deal_queue": [asdict(deal) for deal in self.deal_queue],
            "deal_index": self.deal_index,
            "dealer": self.dealer,
            "plus": list(self.plus),
            "minus": list(self.minus),
            "totals": list(self.totals),
            "used_contracts": [list(u) for u in self.used_contracts],
            "rounds": [_jsonable(asdict(r)) for r in self.rounds],
            "finished": self.finished,
            "truncated": self.truncated,
            "winners": list(self.winners),
            "deal": _jsonable(asdict(self.d)),
        }

    @classmethod
    def from_dict(cls, data: dict) -> GameState:
        """Inverse of :meth:`to_dict`."""
        state = cls.__new__(cls)
        state.rules = make_rules(**data["rules"])
        state.seed = data["seed"]
        state.rng = np.random.default_rng()
        state.rng.bit_generator.state = data["rng"]
        state.deal_queue = [_deal_from(x) for x in data["deal_queue"]]
        state.deal_index = data["deal_index"]
        state.dealer = data["dealer"]
        state.plus, state.minus, state.totals = list(data["plus"]), list(data["minus"]), list(data["totals"])
        state.used_contracts = [list(u) for u in data["used_contracts"]]
        state.rounds = [_round_from(r) for r in data["rounds"]]
        state.finished, state.truncated = data["finished"], data["truncated"]
        state.winners = tuple(data["winners"])
        state.d = _deal_state_from(data["deal"])
        return state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(mask_to_strs(h)) for h in self.d.hands)
        return (
            f"GameState({self.rules.variant}, deal {self.deal_index}, dealer {self.dealer}, "
            f"phase {self.d.phase.name}, to_move {self.d.to_move}, hands [{hands}])"
        )


@functools.cache
def _seat_view_class() -> type:
    """:class:`manni_env.view.SeatView`, imported on first use (view.py imports this module)."""
    from .view import SeatView

    return SeatView


_PACK_CARDS: dict[int, np.ndarray] = {}


def _pack_cards(pack: int) -> np.ndarray:
    """The cards of a pack bitmask as an array, ascending (cached; never modified)."""
    cards = _PACK_CARDS.get(pack)
    if cards is None:
        cards = _PACK_CARDS[pack] = np.array(cards_of(pack))
    return cards


def _jsonable(value):
    """Tuples → lists, recursively (so a dict compares equal after a JSON round trip)."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _deal_from(x: dict) -> Deal:
    return Deal(_tuples(x["hands"]), _tuples(x["manni"]), x["cut_card"])


def _contract_from(x: dict | None) -> Contract | None:
    return None if x is None else Contract(**x)


def _round_from(r: dict) -> RoundResult:
    return RoundResult(
        r["index"], r["dealer"], r["cut_card"], _contract_from(r["contract"]), _tuples(r["hands"]),
        _tuples(r["manni"]), [_exchange_from(e) for e in r["exchanges"]],
        [(t[0], tuple(t[1]), t[2]) for t in r["tricks"]], *(tuple(r[k]) for k in
        ("tricks_won", "points", "plus", "minus", "totals")),
    )


def _exchange_from(e: dict) -> Exchange:
    return Exchange(e["seat"], tuple(e["discards"]), tuple(e["drawn"]), e["swap"], e["take"])


def _deal_state_from(x: dict) -> _DealState:
    return _DealState(
        deal=_deal_from(x["deal"]),
        hands=list(x["hands"]),
        contract=_contract_from(x["contract"]),
        phase=Phase(x["phase"]),
        to_move=x["to_move"],
        order=tuple(x["order"]),
        manni_pos=x["manni_pos"],
        decision=x["decision"],
        pending=list(x["pending"]),
        discards=list(x["discards"]),
        drawn=list(x["drawn"]),
        exchange_counts=list(x["exchange_counts"]),
        swapper=x["swapper"],
        taker=x["taker"],
        exchanges=[_exchange_from(e) for e in x["exchanges"]],
        leader=x["leader"],
        led_suit=x["led_suit"],
        trick=list(x["trick"]),
        plays=[tuple(p) for p in x["plays"]],
        tricks=[(t[0], tuple(t[1]), t[2]) for t in x["tricks"]],
        played=list(x["played"]),
        voids=list(x["voids"]),
        tricks_won=list(x["tricks_won"]),
    )
