"""Belief sampler: full game states consistent with everything one seat knows.

``sample_worlds(view, rng, n)`` returns ``n`` independent :class:`~manni_env.engine.GameState`
objects built from the :class:`~manni_env.view.SeatView` alone (nothing is copied from the true
game). Each continues the current deal from the same public point — tricks played, the trick in
progress, exchange / swap / pickup state, tallies, used contracts, deal index and dealer — so a
search can play it out, and its ``view(view.seat)`` equals ``view``.

**What is hidden and how it is filled.** The cards the seat has not seen (not in its hand, not its
own discards or draws, not played) are split among the places that hold hidden cards, with exact
sizes: each opponent's current hand (``hand size − cards played``), each opponent's discards
(Hornafjarðarmanni: as many as it exchanged; the taker's four in the announcement variants; a
Basic swapper's whole dealt hand) and the Manni cards nobody has seen. Constraints:

- a seat that has shown a void in a suit holds none of it now;
- Hornafjarðarmanni: the cut card was dealt to the dealer, so unless it is played (or the seat is
  the dealer) it is in the dealer's hand or among the dealer's discards, and never one of the
  dealer's drawn cards;
- which of an opponent's cards it drew from the Manni (Hornafjarðarmanni, announcement pickup)
  is a uniformly chosen subset of its hand and played cards of the public size; a Basic swapper's
  hand and plays are the original Manni, its swapped-out hand is out of play.

**Distribution.** Worlds are uniform over the consistent labelled worlds (which card lies where and
which cards each opponent drew), i.e. what a uniform prior over deals and uniformly random
exchange choices gives. The split is drawn by rejection (shuffle and deal, retry when a void is
broken; up to :data:`REJECTION_TRIES` tries), which is exact; when voids make that unlikely, an
exact count-based sampler (dynamic programming over suits) takes over, so no call ever fails or
returns an impossible world. Approximations, both documented here: opponents' real strategies are
ignored (no inference from their exchange counts or play beyond the hard constraints), and an
opponent that is in the middle of choosing discards (Hornafjarðarmanni) or the four pickup
discards is modelled as not having chosen any yet — the seat cannot see those choices, so such a
world is still exactly consistent with its view.

Sampled worlds hold no records of earlier deals (``rounds`` is empty; the view has none), and the
engine counts recorded deals for the deal cap and the announcement variants' fixed length, so a
world is meant to be played to the end of the current deal, not beyond.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from manni_env.cards import SUIT_MASKS, cards_of
from manni_env.engine import Deal, Exchange, GameState
from manni_env.rules import ExchangeScheme, Phase
from manni_env.view import SeatView

REJECTION_TRIES = 64


def sample_worlds(view: SeatView, rng: np.random.Generator, n: int) -> list[GameState]:
    """``n`` full game states consistent with ``view`` (see the module docstring)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if view.phase == Phase.GAME_OVER:
        raise ValueError("the game is over: there is no deal to sample")
    problem = _Problem.of(view)
    return [problem.world(rng) for _ in range(n)]


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _void_cards(voids: int) -> int:
    return sum(SUIT_MASKS[s] for s in range(4) if voids >> s & 1)


@dataclass
class _Problem:
    """The hidden part of ``view``'s deal: unknown cards and the sizes and rules of their places."""

    view: SeatView
    opps: tuple[int, int]
    pool: list[int]  # unknown cards (the floating cut card excluded)
    hand_size: dict[int, int]  # hidden current hand size per opponent
    forbidden: dict[int, int]  # cards an opponent cannot hold now (shown voids)
    extra: dict[int, int]  # opponent's hidden discards
    drawn_count: dict[int, int]  # opponent's cards drawn from the Manni (labelled among hand + played)
    unseen_manni: int  # Manni cards nobody has seen
    cut: int | None  # Hornafjarðarmanni cut card whose place (dealer's hand or discards) is unknown
    _ways_memo: dict[tuple[int, int, int], int] = field(default_factory=dict)

    @classmethod
    def of(cls, view: SeatView) -> _Problem:
        rules, seat = view.rules, view.seat
        opps = ((seat + 1) % 3, (seat + 2) % 3)
        played = view.played
        all_played = played[0] | played[1] | played[2]
        known = view.hand | view.discards | view.drawn | all_played
        hand_size, extra, drawn_count = {}, {}, {}
        for o in opps:
            hand_size[o] = rules.hand_size - played[o].bit_count()
            extra[o] = drawn_count[o] = 0
        unseen, cut = 0, None
        scheme = rules.spec.exchange
        if scheme == ExchangeScheme.EXCHANGE:
            for o in opps:
                k = view.exchange_counts[o]
                extra[o] = drawn_count[o] = max(k, 0)
            unseen = rules.manni_size - view.manni_used
            if view.cut_card is not None and view.dealer != seat and not all_played >> view.cut_card & 1:
                cut = view.cut_card
        elif scheme == ExchangeScheme.SWAP:
            if view.swapper is None:
                unseen = rules.manni_size
            elif view.swapper != seat:
                extra[view.swapper] = rules.hand_size
        else:
            taker = view.taker
            if taker is None:
                unseen = rules.manni_size
            elif taker != seat:
                drawn_count[taker] = rules.manni_size
                if view.phase == Phase.DISCARD:
                    hand_size[taker] += rules.manni_size
                else:
                    extra[taker] = rules.spec.pickup_discards
        unknown = rules.pack & ~known
        if cut is not None:
            unknown &= ~(1 << cut)
        pool = cards_of(unknown)
        need = sum(hand_size.values()) + sum(extra.values()) + unseen - (cut is not None)
        if need != len(pool):
            raise ValueError(f"inconsistent view: {len(pool)} unseen cards for {need} hidden places")
        forbidden = {o: _void_cards(view.voids[o]) for o in opps}
        return cls(view, opps, pool, hand_size, forbidden, extra, drawn_count, unseen, cut)

    # ------------------------------------------------------------------ sampling the split
    def _labellings(self) -> tuple[int, int]:
        """Ways to choose the dealer's drawn cards when the cut card is in its hand (it cannot be
        one of them: 0 when it is void in the cut's suit) vs. among its discards."""
        d, size = self.view.dealer, self.view.rules.hand_size
        k = self.extra[d]
        in_hand = 0 if self.forbidden[d] >> self.cut & 1 else math.comb(size - 1, k)
        return in_hand, math.comb(size, k)

    def _cut_weights(self) -> tuple[int, int]:
        """Proposal weights of the cut card lying in the dealer's hand vs. its discards: the
        number of slots there times the labellings (uniform over labelled worlds before voids)."""
        d = self.view.dealer
        in_hand, in_discards = self._labellings()
        return self.hand_size[d] * in_hand, self.extra[d] * in_discards

    def _split(self, rng: np.random.Generator) -> tuple[dict[int, int], list[int], bool]:
        """Opponents' hands (masks), the free cards (discards + unseen Manni, shuffled) and
        whether the cut card lies in the dealer's hand."""
        a, b = self.opps
        cut_in_hand = False
        if self.cut is not None:
            w_hand, w_disc = self._cut_weights()
        for _ in range(REJECTION_TRIES):
            sizes = dict(self.hand_size)
            if self.cut is not None:
                cut_in_hand = _weighted_index([w_hand, w_disc], rng) == 0
                if cut_in_hand:
                    sizes[self.view.dealer] -= 1
            deck = rng.permutation(self.pool).tolist() if self.pool else []
            ha, hb = _mask(deck[: sizes[a]]), _mask(deck[sizes[a] : sizes[a] + sizes[b]])
            if not ha & self.forbidden[a] and not hb & self.forbidden[b]:
                return self._with_cut({a: ha, b: hb}, cut_in_hand), deck[sizes[a] + sizes[b] :], cut_in_hand
        return self._exact_split(rng)

    def _with_cut(self, hands: dict[int, int], cut_in_hand: bool) -> dict[int, int]:
        if cut_in_hand:
            hands[self.view.dealer] |= 1 << self.cut
        return hands

    def _exact_split(self, rng: np.random.Generator) -> tuple[dict[int, int], list[int], bool]:
        """Exact uniform split by counting completions suit by suit (used when rejection fails)."""
        a, b = self.opps
        by_suit = [[c for c in self.pool if c // 13 == s] for s in range(4)]
        allowed = [(not self.forbidden[a] >> (13 * s) & 1, not self.forbidden[b] >> (13 * s) & 1) for s in range(4)]
        memo = self._ways_memo  # shared by every world of this view

        def ways(s: int, ra: int, rb: int) -> int:
            """Ways to give suits s.. to the two hands (ra, rb cards still to fill), rest free."""
            if s == 4:
                return int(ra == 0 and rb == 0)
            key = (s, ra, rb)
            if key not in memo:
                n = len(by_suit[s])
                total = 0
                for x in range(min(n, ra) + 1 if allowed[s][0] else 1):
                    for y in range(min(n - x, rb) + 1 if allowed[s][1] else 1):
                        total += math.comb(n, x) * math.comb(n - x, y) * ways(s + 1, ra - x, rb - y)
                memo[key] = total
            return memo[key]

        sizes = dict(self.hand_size)
        cut_in_hand = False
        if self.cut is not None:
            d = self.view.dealer
            lab_hand, lab_disc = self._labellings()
            sizes_hand = dict(sizes)
            sizes_hand[d] -= 1
            free = len(self.pool) + 1 - sum(sizes.values())  # discards + unseen Manni, cut included
            # labelled worlds: splits of the free cards with the cut among the discards are a
            # fraction extra/free of those with the cut in the hand
            p_hand = lab_hand * ways(0, sizes_hand[a], sizes_hand[b]) * free
            p_disc = lab_disc * ways(0, sizes[a], sizes[b]) * self.extra[d]
            cut_in_hand = _weighted_index([p_hand, p_disc], rng) == 0
            if cut_in_hand:
                sizes = sizes_hand
        ra, rb = sizes[a], sizes[b]
        if ways(0, ra, rb) == 0:
            raise ValueError("inconsistent view: no deal satisfies the shown voids")
        ha = hb = 0
        free_cards: list[int] = []
        for s in range(4):
            n = len(by_suit[s])
            options, weights = [], []
            for x in range(min(n, ra) + 1 if allowed[s][0] else 1):
                for y in range(min(n - x, rb) + 1 if allowed[s][1] else 1):
                    w = math.comb(n, x) * math.comb(n - x, y) * ways(s + 1, ra - x, rb - y)
                    if w:
                        options.append((x, y))
                        weights.append(w)
            x, y = options[_weighted_index(weights, rng)]
            cards = rng.permutation(by_suit[s]).tolist() if n else []
            ha |= _mask(cards[:x])
            hb |= _mask(cards[x : x + y])
            free_cards += cards[x + y :]
            ra, rb = ra - x, rb - y
        free_cards = rng.permutation(free_cards).tolist() if free_cards else []
        return self._with_cut({a: ha, b: hb}, cut_in_hand), free_cards, cut_in_hand

    # ------------------------------------------------------------------ building the world
    def world(self, rng: np.random.Generator) -> GameState:
        view, seat = self.view, self.view.seat
        hands, free, cut_in_hand = self._split(rng)
        if self.cut is not None and not cut_in_hand:
            free = [self.cut] + free  # the cut card is one of the dealer's discards
        hands[seat] = view.hand
        discards = {seat: view.discards}
        drawn = {seat: view.drawn}
        pos = 0
        # the dealer's discards first so that the cut card (if discarded) lands there
        for o in sorted(self.opps, key=lambda o: o != view.dealer):
            discards[o] = _mask(free[pos : pos + self.extra[o]])
            pos += self.extra[o]
        unseen = free[pos:]
        for o in self.opps:
            drawn[o] = self._label_drawn(o, hands[o], rng)
        dealt = {seat: view.dealt_hand}
        for o in self.opps:
            dealt[o] = (hands[o] | view.played[o] | discards[o]) & ~drawn[o]
        manni, exchanges = self._manni_and_exchanges(discards, drawn, unseen)
        deal = Deal(tuple(tuple(cards_of(dealt[s])) for s in range(3)), tuple(manni), view.cut_card)
        return GameState.from_position(view, deal, tuple(hands[s] for s in range(3)),
                                       tuple(discards[s] for s in range(3)), tuple(drawn[s] for s in range(3)),
                                       exchanges, rng)

    def _label_drawn(self, o: int, hand: int, rng: np.random.Generator) -> int:
        """Which of opponent ``o``'s cards came from the Manni."""
        view = self.view
        scheme = view.rules.spec.exchange
        if scheme == ExchangeScheme.SWAP:
            return hand | view.played[o] if view.swapper == o else 0
        k = self.drawn_count[o]
        if not k:
            return 0
        candidates = hand | view.played[o]
        if view.cut_card is not None and o == view.dealer:
            candidates &= ~(1 << view.cut_card)
        cards = cards_of(candidates)
        return _mask(rng.choice(cards, k, replace=False).tolist())

    def _manni_and_exchanges(self, discards, drawn, unseen) -> tuple[list[int], list[Exchange]]:
        view = self.view
        scheme = view.rules.spec.exchange
        manni: list[int] = []
        exchanges: list[Exchange] = []
        if scheme == ExchangeScheme.EXCHANGE:
            for s in (view.forehand, (view.dealer + 2) % 3, view.dealer):
                if view.exchange_counts[s] < 0:
                    break
                segment = cards_of(drawn[s])
                manni += segment
                exchanges.append(Exchange(s, discards=tuple(cards_of(discards[s])), drawn=tuple(segment)))
            return manni + unseen, exchanges
        swap = scheme == ExchangeScheme.SWAP
        exchanges = [Exchange(p, **{"swap" if swap else "take": False}) for p in view.passed]
        if swap:
            if view.swapper is None:
                return unseen, exchanges
            exchanges.append(Exchange(view.swapper, swap=True))
            return cards_of(drawn[view.swapper]), exchanges
        taker = view.taker
        if taker is None:
            return unseen, exchanges
        if view.phase != Phase.DISCARD:  # the taker's record is written once its four discards are made
            exchanges.append(Exchange(taker, discards=tuple(cards_of(discards[taker])), take=True))
        return cards_of(drawn[taker]), exchanges


def _weighted_index(weights: list[int], rng: np.random.Generator) -> int:
    """Index drawn with probability proportional to exact integer ``weights``."""
    total = sum(weights)
    r = int(rng.integers(total)) if total < 2**63 else int(rng.random() * total)
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    return len(weights) - 1
