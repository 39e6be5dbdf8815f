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

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from manni_env import actions as A
from manni_env.cards import (
    ACE, SUIT_MASKS, SUITS, card_to_str, cards_of, mask_of, mask_to_strs, rank_of, suit_cards, suit_of,
)
from manni_env.rules import (
    VARIANT_TABLE, Contract, ContractKind, ContractSource, EndRule, ExchangeScheme, Phase, Rules, VariantSpec,
    make_rules,
)
from manni_env.view import SeatView

__all__ = [
    "Contract", "ContractKind", "Deal", "Exchange", "GameState", "IllegalActionError", "Phase", "RoundResult",
    "contract_from_cut", "trick_winner",
]

_EXCHANGE, _SWAP, _PICKUP, _DISCARD, _ANNOUNCE, _PLAY = (
    Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE, Phase.PLAY
)


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


def contract_from_cut(cut_card: int, spec: VariantSpec = VARIANT_TABLE["hornafjardar"]) -> Contract:
    """The contract a cut card sets (Hornafjarðarmanni: 2–5 Nullo, 6–9 trump of the cut suit, T–A Grand)."""
    kind = spec.cut_kinds[rank_of(cut_card)]
    return Contract(kind, suit_of(cut_card) if kind == ContractKind.TRUMP else None)


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
        from manni_env.cards import card_from_str

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
        if rules.spec.cut:
            if self.cut_card is None:
                raise ValueError(f"a {rules.variant} deal needs its cut card")
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
        self._d: _DealState
        self._start_deal()

    # ----------------------------------------------------------------- public queries
    @property
    def phase(self) -> Phase:
        return self._d.phase

    @property
    def to_move(self) -> int:
        """Seat on turn (-1 once the game is over)."""
        return self._d.to_move

    @property
    def contract(self) -> Contract | None:
        return self._d.contract

    @property
    def forehand(self) -> int:
        return (self.dealer + 1) % 3

    def hand(self, seat: int) -> list[int]:
        """Cards seat holds now, ascending."""
        return cards_of(self._d.hands[_seat(seat)])

    def hand_mask(self, seat: int) -> int:
        """Cards ``seat`` holds now as a bitmask (privileged: any seat's hand)."""
        return self._d.hands[_seat(seat)]

    @property
    def deal(self) -> Deal:
        """The current deal as dealt (privileged: every hand and the Manni)."""
        return self._d.deal

    @property
    def trick(self) -> tuple[int, ...]:
        """Cards of the trick under way, in play order from its leader."""
        return tuple(self._d.trick)

    @property
    def leader(self) -> int:
        """Seat that leads (led) the trick under way."""
        return self._d.leader

    @property
    def led_suit(self) -> int:
        """Suit led to the trick under way (-1 before its first card)."""
        return self._d.led_suit

    @property
    def played(self) -> tuple[int, int, int]:
        """Cards each seat has played in the current deal (bitmasks)."""
        return tuple(self._d.played)

    @property
    def voids(self) -> tuple[int, int, int]:
        """Suits (bit s) each seat has shown void in during the current deal."""
        return tuple(self._d.voids)

    def drawn_mask(self, seat: int) -> int:
        """Cards ``seat`` took from the Manni this deal (privileged unless ``seat`` is the viewer)."""
        return self._d.drawn[_seat(seat)]

    def unseen_manni(self) -> int:
        """Manni cards nobody has taken (privileged), as a bitmask."""
        d = self._d
        return mask_of(d.deal.manni) & ~(d.drawn[0] | d.drawn[1] | d.drawn[2])

    def discards_left(self) -> int:
        """Cards the seat on turn may still discard: its exchange allowance, or what a Manni taker still owes."""
        d = self._d
        if d.phase is _DISCARD:
            return self.rules.spec.pickup_discards - len(d.pending)
        return self.exchange_limit()

    def discards_mask(self, seat: int) -> int:
        """Cards ``seat`` has discarded this deal (privileged unless ``seat`` is the viewer)."""
        return self._d.discards[_seat(seat)]

    @property
    def tricks_won(self) -> tuple[int, int, int]:
        """Tricks each seat has won in the current deal."""
        return tuple(self._d.tricks_won)

    @property
    def deal_tricks(self) -> list[tuple[int, tuple[int, ...], int]]:
        """The current deal's finished tricks: (leader, cards in play order, winner)."""
        return list(self._d.tricks)

    @property
    def deal_exchanges(self) -> list[Exchange]:
        """The current deal's finished exchange decisions, in decision order."""
        return [_copy_exchange(e) for e in self._d.exchanges]

    def last_trick_points(self) -> tuple[int, int, int]:
        """The deal's points once its last trick is in, when each seat still to play that trick
        holds one card (so the trick is forced); the state is not changed (for fast rollouts)."""
        d = self._d
        if d.phase is not _PLAY or len(d.tricks) != self.rules.hand_size - 1:
            raise ValueError("last_trick_points needs the last trick of a deal under way")
        trick = list(d.trick)
        for i in range(len(trick), 3):
            trick.append(d.hands[(d.leader + i) % 3].bit_length() - 1)
        c = d.contract
        won = list(d.tricks_won)
        won[(d.leader + trick_winner(trick, c.trump, c.nullo)) % 3] += 1
        return self.rules.deal_points(won, c.kind, c.declarer)

    def exchange_limit(self) -> int:
        """Hornafjarðarmanni: how many cards the player on turn may still choose to discard."""
        d = self._d
        if d.phase != Phase.EXCHANGE:
            return 0
        limit = min(self.rules.spec.exchange_limits[d.decision], self.rules.manni_size - d.manni_pos)
        return limit - len(d.pending)

    def legal_actions(self) -> list[int]:
        """Legal actions of the player on turn, ascending (empty once the game is over)."""
        d = self._d
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
            return [a.action for a in self.rules.spec.announcements if a.name not in used]
        return []

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal for the player on turn (``False`` for what :meth:`apply`
        refuses as no action at all: a bool, a float such as ``53.0``, a string)."""
        if type(action) is not int:
            if isinstance(action, bool):  # True is 1 to Python, but not an action
                return False
            try:
                action = operator.index(action)  # numpy integers; never floats
            except TypeError:
                return False
        d = self._d
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
        d = self._d
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
                if isinstance(action, bool):  # True is 1 to Python, but not an action
                    raise TypeError
                action = operator.index(action)
            except TypeError:
                raise IllegalActionError(
                    f"an action is an integer in 0..{A.NUM_ACTIONS - 1}, got {action!r}"
                ) from None
        if not self.is_legal(action):
            raise IllegalActionError(self._illegal_message(action))
        phase = self._d.phase
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
        d = self._d
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
        d = self._d
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
        winner = (d.leader + trick_winner(trick, contract.trump, contract.kind == ContractKind.NULLO)) % 3
        d.tricks.append((d.leader, tuple(trick), winner))
        d.tricks_won[winner] += 1
        d.trick = []
        d.led_suit = -1
        d.leader = d.to_move = winner
        if len(d.tricks) == self.rules.hand_size:  # one trick per card held
            self._end_deal()

    def _exchange(self, action: int) -> None:
        d = self._d
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
        d = self._d
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
        d = self._d
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
        d = self._d
        seat = d.to_move
        d.hands[seat] ^= 1 << card
        d.discards[seat] |= 1 << card
        d.pending.append(card)
        if len(d.pending) == self.rules.spec.pickup_discards:
            d.exchanges.append(Exchange(seat, discards=tuple(d.pending), take=True))
            d.pending = []
            self._begin_announce()

    def _announce(self, action: int) -> None:
        d = self._d
        row = self.rules.spec.announcement(action)
        self.used_contracts[d.to_move].append(row.name)
        d.contract = Contract(row.kind, row.trump, d.to_move, row.name)
        self._start_play()

    def _next_decision(self) -> None:
        d = self._d
        d.decision += 1
        if d.decision < 3:
            d.to_move = d.order[d.decision]
        elif self.rules.spec.contract_source == ContractSource.ANNOUNCE:
            self._begin_announce()
        else:
            self._start_play()

    def _begin_announce(self) -> None:
        self._d.phase = Phase.ANNOUNCE
        self._d.to_move = self.forehand

    def _start_play(self) -> None:
        d = self._d
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
        spec = rules.spec
        if spec.contract_source == ContractSource.CUT:
            contract = contract_from_cut(deal.cut_card, spec)
        elif spec.contract_source == ContractSource.ROTATION:
            contract = Contract(ContractKind.TRUMP, spec.trump_rotation[self.deal_index % len(spec.trump_rotation)])
        else:
            contract = None
        phase = Phase(spec.exchange)
        self._d = _DealState(deal, [mask_of(h) for h in deal.hands], contract, phase, f, order, leader=f)

    def _random_deal(self, order: tuple[int, int, int]) -> Deal:
        """Shuffle the variant's pack and deal it by the variant table's positions (RULES.md's order)."""
        spec = self.rules.spec
        deck = self.rng.permutation(_pack_cards(spec.pack)).tolist()
        hands: list[tuple[int, ...]] = [(), (), ()]
        for positions, seat in zip(spec.hand_positions, order):
            hands[seat] = tuple(deck[p] for p in positions)
        return Deal(tuple(hands), tuple(deck[p] for p in spec.manni_positions), deck[-1] if spec.cut else None)

    def deal_points(self) -> tuple[int, int, int]:
        """This deal's score per seat from the tricks won so far (final once 12/16 tricks are in)."""
        d = self._d
        return self.rules.deal_points(d.tricks_won, d.contract.kind, d.contract.declarer)

    def _end_deal(self) -> None:
        d = self._d
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
        end_rule = rules.spec.end_rule
        if end_rule == EndRule.PLUS_TARGET:
            done = max(self.plus) >= rules.target
        elif end_rule == EndRule.UNIQUE_TOTAL_TARGET:
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
        new._d = self._d.copy()
        return new

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now (see :class:`manni_env.view.SeatView`)."""
        if seat not in (0, 1, 2):
            raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")
        d = self._d
        on_turn = d.to_move == seat
        # Filling the instance dict directly gives the same object as ``SeatView(**fields)``; the frozen
        # dataclass __init__ (one object.__setattr__ per field) would cost more than the rest of a view.
        view = object.__new__(SeatView)
        view.__dict__.update({
            "rules": self.rules,
            "seat": seat,
            "phase": d.phase,
            "to_move": d.to_move,
            "deal_index": self.deal_index,
            "dealer": self.dealer,
            "cut_card": d.deal.cut_card,
            "contract": d.contract,
            "hand": d.hands[seat],
            "dealt_hand": _hand_mask(tuple(d.deal.hands[seat])),
            "discards": d.discards[seat],
            "drawn": d.drawn[seat],
            "pending": tuple(d.pending) if on_turn else (),
            "exchange_limit": self.exchange_limit() if on_turn else 0,
            "exchange_counts": tuple(d.exchange_counts),
            "manni_used": d.manni_pos,
            "swapper": d.swapper,
            "taker": d.taker,
            "passed": tuple([e.seat for e in d.exchanges if e.swap is False or e.take is False]),
            "used_contracts": tuple(map(tuple, self.used_contracts)),
            "leader": d.leader,
            "led_suit": d.led_suit,
            "trick": tuple(d.trick),
            "plays": tuple(d.plays),
            "played": tuple(d.played),
            "voids": tuple(d.voids),
            "tricks_won": tuple(d.tricks_won),
            "plus": tuple(self.plus),
            "minus": tuple(self.minus),
            "totals": tuple(self.totals),
            "legal_actions": tuple(self.legal_actions()) if on_turn else (),
        })
        return view

    @classmethod
    def from_position(cls, view: SeatView, deal: Deal, hands: tuple[int, int, int], discards: tuple[int, int, int],
                      drawn: tuple[int, int, int], exchanges: list[Exchange], rng: np.random.Generator) -> GameState:
        """A state at ``view``'s position whose hidden cards are as given (for search agents).

        ``deal`` is the deal as dealt; ``hands``, ``discards`` and ``drawn`` are every seat's card
        sets now (the viewer's own must match ``view``); ``exchanges`` are the deal's finished
        exchange decisions. Everything public comes from ``view``. Earlier deals are not recreated,
        so play such a state to the end of its deal only. ``rng`` seeds the new state's generator.
        """
        spec = view.rules.spec
        order = (view.forehand, (view.dealer + 2) % 3, view.dealer)
        if spec.exchange == ExchangeScheme.EXCHANGE:
            decision = order.index(view.to_move) if view.phase == Phase.EXCHANGE else 3
        else:
            owner = view.swapper if spec.exchange == ExchangeScheme.SWAP else view.taker
            decision = order.index(owner) if owner is not None else len(view.passed)
        contract = view.contract
        plays = view.plays
        tricks = []
        for i in range(0, len(plays) - len(view.trick), 3):
            leader, cards = plays[i][0], tuple(p[1] for p in plays[i : i + 3])
            tricks.append((leader, cards, (leader + trick_winner(cards, contract.trump, contract.nullo)) % 3))
        state = cls.__new__(cls)
        state.rules = view.rules
        state.seed = None
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        state.deal_queue = []
        state.deal_index = view.deal_index
        state.dealer = view.dealer
        state.plus, state.minus, state.totals = list(view.plus), list(view.minus), list(view.totals)
        state.used_contracts = [list(u) for u in view.used_contracts]
        state.rounds = []
        state.finished = state.truncated = False
        state.winners = ()
        state._d = _DealState(
            deal, list(hands), contract, view.phase, view.to_move, order, view.manni_used, decision,
            list(view.pending) if view.to_move == view.seat else [], list(discards), list(drawn),
            list(view.exchange_counts), view.swapper, view.taker, exchanges, view.leader, view.led_suit,
            list(view.trick), list(plays), tricks, list(view.played), list(view.voids), list(view.tricks_won),
        )
        return state

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
            "deal": _jsonable(asdict(self._d)),
        }

    @classmethod
    def from_dict(cls, data: dict) -> GameState:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the first field that is missing, of the
        wrong type or out of range (a seat, a card set outside the pack, a tally that is no integer)."""
        if not isinstance(data, dict):
            raise ValueError(f"a GameState dict is a dict, got {type(data).__name__}")
        try:
            state = cls._from_dict(data)
        except KeyError as err:
            raise ValueError(f"not a GameState dict: missing field {err}") from None
        except (TypeError, AttributeError, IndexError) as err:
            raise ValueError(f"not a GameState dict: {err}") from None
        _check_state(state)
        return state

    @classmethod
    def _from_dict(cls, data: dict) -> GameState:
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
        state._d = _deal_state_from(data["deal"])
        return state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(mask_to_strs(h)) for h in self._d.hands)
        return (
            f"GameState({self.rules.variant}, deal {self.deal_index}, dealer {self.dealer}, "
            f"phase {self._d.phase.name}, to_move {self._d.to_move}, hands [{hands}])"
        )


def _seat(seat) -> int:
    """``seat`` if it is 0, 1 or 2; ``ValueError`` otherwise."""
    if seat in (0, 1, 2) and not isinstance(seat, (bool, float)):
        return seat
    raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")


def _need(ok: bool, field_name: str, value) -> None:
    if not ok:
        raise ValueError(f"GameState dict: {field_name} is out of range or of the wrong type: {value!r}")


def _is_int(x) -> bool:
    return type(x) is int


def _ints(field_name: str, value, n: int, low: int | None = None, high: int | None = None) -> None:
    """``value`` is a sequence of ``n`` integers in ``[low, high]``."""
    _need(isinstance(value, (list, tuple)) and len(value) == n and all(
        _is_int(x) and (low is None or x >= low) and (high is None or x <= high) for x in value), field_name, value)


def _masks(field_name: str, value, pack: int) -> None:
    """``value`` is three card sets (bitmasks) inside ``pack``."""
    _need(isinstance(value, (list, tuple)) and len(value) == 3 and all(
        _is_int(m) and m >= 0 and not m & ~pack for m in value), field_name, value)


def _check_state(state: GameState) -> None:
    """Raise ``ValueError`` naming the first field of a state built by ``from_dict`` that no game
    can reach: the state is never left half-valid (``legal_actions`` always terminates)."""
    rules, d = state.rules, state._d
    _game_seed(state.seed)
    _need(_is_int(state.deal_index) and state.deal_index >= 0, "deal_index", state.deal_index)
    _need(state.dealer in (0, 1, 2) and _is_int(state.dealer), "dealer", state.dealer)
    for name in ("plus", "minus", "totals"):
        _ints(name, getattr(state, name), 3)
    _need(len(state.used_contracts) == 3 and all(isinstance(c, str) for u in state.used_contracts for c in u),
          "used_contracts", state.used_contracts)
    _need(type(state.finished) is bool, "finished", state.finished)
    _need(type(state.truncated) is bool, "truncated", state.truncated)
    _ints("winners", state.winners, len(state.winners), 0, 2)
    dealers = [state.dealer] + [(state.dealer + 1 + i) % 3 for i in range(len(state.deal_queue))]
    for deal, dealer in zip([d.deal, *state.deal_queue], dealers):
        try:
            deal.check(rules, dealer)
        except (ValueError, TypeError) as err:
            raise ValueError(f"GameState dict: a deal is not a {rules.variant} deal: {err}") from None
    _masks("deal.hands", d.hands, rules.pack)
    _need(not (d.hands[0] & d.hands[1] or d.hands[0] & d.hands[2] or d.hands[1] & d.hands[2]), "deal.hands", d.hands)
    for name in ("discards", "drawn", "played"):
        _masks(f"deal.{name}", getattr(d, name), rules.pack)
    _ints("deal.voids", d.voids, 3, 0, 15)
    _ints("deal.tricks_won", d.tricks_won, 3, 0, rules.hand_size)
    _ints("deal.exchange_counts", d.exchange_counts, 3, -1, rules.manni_size)
    _need(sorted(d.order) == [0, 1, 2] and all(_is_int(x) for x in d.order), "deal.order", d.order)
    _need(_is_int(d.to_move) and d.to_move in ((-1,) if state.finished else (0, 1, 2)), "deal.to_move", d.to_move)
    _need(_is_int(d.leader) and d.leader in (0, 1, 2), "deal.leader", d.leader)
    _need(_is_int(d.led_suit) and -1 <= d.led_suit <= 3, "deal.led_suit", d.led_suit)
    _need(_is_int(d.manni_pos) and 0 <= d.manni_pos <= rules.manni_size, "deal.manni_pos", d.manni_pos)
    _need(_is_int(d.decision) and d.decision >= 0, "deal.decision", d.decision)
    for name in ("swapper", "taker"):
        value = getattr(d, name)
        _need(value is None or (_is_int(value) and value in (0, 1, 2)), f"deal.{name}", value)
    _ints("deal.trick", d.trick, len(d.trick), 0, 51)
    _need(len(d.trick) < 3, "deal.trick", d.trick)
    _ints("deal.pending", d.pending, len(d.pending), 0, 51)
    _need(all(len(p) == 2 and p[0] in (0, 1, 2) and _is_int(p[1]) and 0 <= p[1] < 52 for p in d.plays),
          "deal.plays", d.plays)
    _need((d.phase == Phase.GAME_OVER) == state.finished, "deal.phase (GAME_OVER exactly when finished)", d.phase)
    if not state.finished:
        _need(bool(state.legal_actions()), "deal (no legal action for the seat on turn)", d.to_move)


@functools.lru_cache(maxsize=1024)
def _hand_mask(hand: tuple[int, ...]) -> int:
    """Bitmask of a dealt hand (cached: every view of a deal asks for the same three)."""
    return mask_of(hand)


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
