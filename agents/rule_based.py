"""The ``rule_based`` agent: a heuristic Manni player for every variant and contract.

It works on integer bitmasks only (no numpy per move), so it is also the fast rollout policy of
:mod:`manni_agents.pimc`. Everything it uses comes from the seat's :class:`~manni_env.view.SeatView`.

**Hand strength.** :func:`estimate_tricks` is a simple trick count for a hand. Trump/Grand: a side
ace 1, a king 0.75 (0.3 when single), a queen 0.45 with two more cards in the suit (0.1 otherwise),
a jack 0.2 in a suit of four or more, plus 0.6 (Grand) or 0.3 (Trump) per card beyond the usual
length (4 cards in a 12-card hand, 5 in a 16-card hand); each trump 0.5 plus up to 0.5 by rank; a
void side suit is worth 0.4 when holding two or more trumps. Nullo (tricks *taken*, ace low): a
card ranked 8 or above by Nullo order scores 0.15 per step above 7 (king 0.9), a long suit
0.2 per card beyond the usual length, and each void suit −0.15 (it lets dangerous cards go).
:func:`mean_estimate` is the average estimate of a random hand of the variant's pack for that
contract kind, precomputed by Monte Carlo over 2,000 hands with a fixed seed (it does not
depend on which suit is trump, by symmetry). A card's *value* is its marginal contribution: the
estimate with the card minus the estimate without it.

**Exchange (Hornafjarðarmanni).** Discard greedily, one card at a time, the card whose value is
lowest (Trump/Grand: the least useful; Nullo: the most dangerous), as long as it is worse than
an average replacement (the mean estimate divided by the hand size) and the allowance is not
used up. So a weak hand exchanges many cards, a strong one few: low cards and short weak suits
go, trumps, aces and long strong suits stay (Trump/Grand); high cards go, low ones stay, short
suits are emptied for voids (Nullo). The plan is recomputed from the hand plus the discards chosen
so far, so the sequential choice is deterministic, and ends with ``EXCHANGE_DONE``.

**Swap (Basic).** Swap when the hand's estimate is below the mean estimate of a random 12-card hand
of the 48-card pack for this trump.

**Announcement variants.** Take the Manni always: taking is weakly dominant, since the taker may
discard the four cards it drew. Discard four by the exchange logic: the forehand picks its
contract first and discards for it; another taker discards the cards of lowest value averaged
over the contracts the forehand may still announce (a Nullo value counts negatively). Announce
the unused contract with the best gain over its average: ``estimate − mean`` for Trump/Grand,
``mean − estimate`` for Nullo. The declarer's offsets (``t − 8``, ``4 − t``) are constant per
contract and every contract must be played once, so spending the hand where it beats that
contract's average by most is what maximises the sum of the declarer's scores.

**Play.** Track the cards that can still be out against us (not played, not in our hand, not our
own discards) and the voids opponents have shown.

- Trump/Grand, leading: draw trumps with the master trump when holding at least three (or as
  many as are out), or lead a low trump from five or more; else cash a sure winner (the highest
  remaining card of a suit, where no opponent is known void with trumps out and at least two
  cards of the suit are out); else lead the lowest card of the longest side suit.
- Trump/Grand, following: win as cheaply as possible — last to play, the lowest card that wins;
  second, a sure winner of the suit if we have one (or the lowest winning card when the third
  player is void and cannot ruff), otherwise play low. Void: ruff with the lowest trump that wins
  (high enough to beat the trumps out when the third player may overruff); otherwise discard the
  lowest card of the shortest side suit.
- Nullo (ace low): following, duck under the current winner with the highest card that still
  loses; when every card wins, win with the highest if we win anyway (last, or the third player is
  void), else play the lowest. Void: shed the most dangerous card (the one with the most unseen
  lower cards of its suit, then the highest). Leading: the card with the fewest unseen lower
  cards of its suit (in a suit others still hold), lowest first.

:mod:`manni_agents.rule_based_kernels` is a numba port of these functions for batches of games
(int64 bitmasks, lookup tables instead of ``int.bit_count``): the lines look alike on purpose, and
``tests/test_rule_based_vector.py`` holds the two to the same decision in every phase of every
variant. A change here is made there too.
"""

from __future__ import annotations

import functools

import numpy as np

from manni_agents.base import legal_actions_of
from manni_env import actions as A
from manni_env.cards import ACE, FULL_PACK, PACK_48, SUIT_MASKS
from manni_env.engine import trick_winner
from manni_env.rules import ContractKind, Phase
from manni_env.view import SeatView

ACES = tuple(1 << (13 * s + ACE) for s in range(4))

# ----------------------------------------------------------------------------- bit helpers
def _hi(mask: int) -> int:
    return mask.bit_length() - 1


def _lo(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _above(card: int) -> int:
    """Mask of the cards above ``card`` in its suit (ace-high order)."""
    return SUIT_MASKS[card // 13] & ~((2 << card) - 1)


def _nullo_rank(card: int) -> int:
    """Nullo order within a suit: ace 0, two 1, …, king 12."""
    r = card % 13
    return 0 if r == ACE else r + 1


def _nullo_below(card: int) -> int:
    """Mask of the cards below ``card`` in its suit in Nullo order (ace low)."""
    s = card // 13
    if card % 13 == ACE:
        return 0
    return (SUIT_MASKS[s] & ((1 << card) - 1)) | ACES[s]


def _nullo_hi(cards: int) -> int:
    """Highest card by Nullo order of a one-suit mask."""
    no_ace = cards & ~ACES[_hi(cards) // 13]
    return _hi(no_ace) if no_ace else _hi(cards)


def _nullo_lo(cards: int) -> int:
    """Lowest card by Nullo order of a one-suit mask."""
    ace = cards & ACES[_hi(cards) // 13]
    return _hi(ace) if ace else _lo(cards)


# ----------------------------------------------------------------------------- hand strength
def estimate_tricks(hand: int, kind: ContractKind, trump: int | None, hand_size: int) -> float:
    """Expected tricks taken by ``hand`` (see the module docstring); ``hand_size`` 12 or 16."""
    long_len = 4 if hand_size <= 12 else 5
    total = 0.0
    if kind == ContractKind.NULLO:
        for s in range(4):
            cards = hand & SUIT_MASKS[s]
            if not cards:
                total -= 0.15
                continue
            n = cards.bit_count()
            if n > long_len:
                total += 0.2 * (n - long_len)
            high = cards & ~ACES[s]
            while high:
                c = _hi(high)
                high ^= 1 << c
                r = c % 13 + 1
                if r <= 7:
                    break
                total += 0.15 * (r - 6)
        return total
    trumps = hand & SUIT_MASKS[trump] if trump is not None else 0
    n_trumps = trumps.bit_count()
    length_bonus = 0.6 if kind == ContractKind.GRAND else 0.3
    for s in range(4):
        cards = hand & SUIT_MASKS[s]
        if s == trump:
            while cards:
                c = _lo(cards)
                cards ^= 1 << c
                total += 0.5 + 0.5 * (c % 13) / 12
            continue
        if not cards:
            if n_trumps >= 2:
                total += 0.4
            continue
        n = cards.bit_count()
        base = 13 * s
        if cards >> (base + 12) & 1:
            total += 1.0
        if cards >> (base + 11) & 1:
            total += 0.75 if n >= 2 else 0.3
        if cards >> (base + 10) & 1:
            total += 0.45 if n >= 3 else 0.1
        if n >= 4 and cards >> (base + 9) & 1:
            total += 0.2
        if n > long_len:
            total += length_bonus * (n - long_len)
    return total


#: :func:`monte_carlo_mean` precomputed for every (kind, pack, hand size) the variants use
#: (a test checks the table against the computation).
_MEAN_ESTIMATES = {
    (ContractKind.NULLO, FULL_PACK, 12): 2.8573,
    (ContractKind.TRUMP, FULL_PACK, 12): 3.9063,
    (ContractKind.GRAND, FULL_PACK, 12): 2.4154,
    (ContractKind.TRUMP, PACK_48, 12): 4.1007,
    (ContractKind.NULLO, FULL_PACK, 16): 3.8289,
    (ContractKind.TRUMP, FULL_PACK, 16): 5.3451,
    (ContractKind.GRAND, FULL_PACK, 16): 3.3583,
}


def mean_estimate(kind: ContractKind, pack: int, hand_size: int) -> float:
    """Mean :func:`estimate_tricks` of a random ``hand_size``-card hand of ``pack`` for this
    contract kind (precomputed; see :func:`monte_carlo_mean`)."""
    key = (kind, pack, hand_size)
    if key not in _MEAN_ESTIMATES:
        _MEAN_ESTIMATES[key] = monte_carlo_mean(kind, pack, hand_size)
    return _MEAN_ESTIMATES[key]


def monte_carlo_mean(kind: ContractKind, pack: int, hand_size: int) -> float:
    """Mean :func:`estimate_tricks` over 2,000 random hands (fixed seed); ``kind=ContractKind.TRUMP`` uses
    spades as trump — the mean is the same for every suit by symmetry."""
    rng = np.random.default_rng(20240601)
    cards = np.array([c for c in range(52) if pack >> c & 1])
    trump = 3 if kind == ContractKind.TRUMP else None
    total = 0.0
    n = 2000
    for _ in range(n):
        hand = 0
        for c in rng.choice(cards, hand_size, replace=False).tolist():
            hand |= 1 << c
        total += estimate_tricks(hand, kind, trump, hand_size)
    return total / n


def _marginals(hand: int, kind: ContractKind, trump: int | None, hand_size: int) -> dict[int, float]:
    """Each card's marginal trick value in ``hand``."""
    base = estimate_tricks(hand, kind, trump, hand_size)
    out = {}
    rest = hand
    while rest:
        c = _lo(rest)
        rest ^= 1 << c
        out[c] = base - estimate_tricks(hand ^ (1 << c), kind, trump, hand_size)
    return out


@functools.lru_cache(maxsize=4096)
def exchange_plan(full: int, kind: ContractKind, trump: int | None, limit: int, pack: int, hand_size: int) -> tuple[int, ...]:
    """Hornafjarðarmanni discards for the hand ``full``, in order (see the module docstring)."""
    threshold = mean_estimate(kind, pack, hand_size) / hand_size
    hand, plan = full, []
    while len(plan) < limit and hand:
        values = _marginals(hand, kind, trump, hand_size)
        if kind == ContractKind.NULLO:  # most tricks taken first
            card = max(values, key=lambda c: (values[c], c))
            if values[card] <= threshold:
                break
        else:  # least useful first
            card = min(values, key=lambda c: (values[c], c % 13, c))
            if values[card] >= threshold:
                break
        plan.append(card)
        hand ^= 1 << card
    return tuple(plan)


def _utility(hand: int, contracts: tuple[tuple[ContractKind, int | None], ...], hand_size: int) -> dict[int, float]:
    """Mean over ``contracts`` of each card's contribution to the score (Nullo counts negatively)."""
    total = dict.fromkeys(range(52), 0.0)
    for kind, trump in contracts:
        sign = -1.0 if kind == ContractKind.NULLO else 1.0
        for c, v in _marginals(hand, kind, trump, hand_size).items():
            total[c] += sign * v
    return {c: total[c] / len(contracts) for c in range(52) if hand >> c & 1}


@functools.lru_cache(maxsize=4096)
def discard_plan(full: int, contracts: tuple[tuple[ContractKind, int | None], ...], hand_size: int, count: int) -> tuple[int, ...]:
    """Announcement variants: ``count`` discards of lowest mean utility over ``contracts``."""
    hand, plan = full, []
    for _ in range(count):
        util = _utility(hand, contracts, hand_size)
        card = min(util, key=lambda c: (util[c], c % 13, c))
        plan.append(card)
        hand ^= 1 << card
    return tuple(plan)


def contract_gain(hand: int, kind: ContractKind, trump: int | None, pack: int, hand_size: int) -> float:
    """How much better than average ``hand`` is as a declarer for this contract, in tricks."""
    est = estimate_tricks(hand, kind, trump, hand_size)
    mean = mean_estimate(kind, pack, hand_size)
    return mean - est if kind == ContractKind.NULLO else est - mean


# ----------------------------------------------------------------------------- card play
def choose_card(
    hand: int, seat: int, trick: list[int] | tuple[int, ...], led_suit: int, trump: int | None, nullo: bool,
    gone: int, voids: list[int] | tuple[int, ...], pack: int,
) -> int:
    """The card to play. ``gone``: cards this seat knows are out of opponents' hands (every card
    played this deal and its own discards); ``voids``: suits (bit s) each seat has shown void in."""
    legal = hand & SUIT_MASKS[led_suit] if trick else 0
    if not legal:
        legal = hand
    if not legal & (legal - 1):
        return _hi(legal)
    others = pack & ~gone & ~hand
    if nullo:
        if not trick:
            return _nullo_lead(hand, others)
        return _nullo_follow(hand, seat, trick, led_suit, others, voids)
    t = -1 if trump is None else trump
    if not trick:
        return _lead(hand, seat, t, others, voids)
    return _follow(hand, seat, trick, led_suit, trump, t, others, voids)


def _lead(hand: int, seat: int, t: int, others: int, voids) -> int:
    tmask = SUIT_MASKS[t] if t >= 0 else 0
    my_trumps, opp_trumps = hand & tmask, others & tmask
    if my_trumps and opp_trumps:
        n_my, n_opp = my_trumps.bit_count(), opp_trumps.bit_count()
        if _hi(my_trumps) > _hi(opp_trumps):
            if n_my >= 3 or n_my >= n_opp:
                return _hi(my_trumps)
        elif n_my >= 5 and n_my > n_opp:
            return _lo(my_trumps)
    o1, o2 = (seat + 1) % 3, (seat + 2) % 3
    best, best_len = -1, -1
    for s in range(4):
        cards = hand & SUIT_MASKS[s]
        if not cards:
            continue
        out = others & SUIT_MASKS[s]
        top = _hi(cards)
        if out and _hi(out) > top:
            continue
        if s != t and opp_trumps and ((voids[o1] | voids[o2]) >> s & 1 or out.bit_count() < 2):
            continue
        n = cards.bit_count()
        if n > best_len:
            best, best_len = top, n
    if best >= 0:
        return best
    side = hand & ~tmask or hand
    best_suit, best_key = -1, None
    for s in range(4):
        cards = side & SUIT_MASKS[s]
        if cards:
            key = (cards.bit_count(), -(_hi(cards) % 13))
            if best_key is None or key > best_key:
                best_suit, best_key = s, key
    return _lo(side & SUIT_MASKS[best_suit])


def _follow(hand: int, seat: int, trick, led: int, trump: int | None, t: int, others: int, voids) -> int:
    w = trick[trick_winner(trick, trump, False)]
    last = len(trick) == 2
    third = (seat + 1) % 3
    tmask = SUIT_MASKS[t] if t >= 0 else 0
    opp_trumps = others & tmask
    follow = hand & SUIT_MASKS[led]
    if follow:
        if w // 13 != led:
            return _lo(follow)
        beat = follow & _above(w)
        if not beat:
            return _lo(follow)
        if last:
            return _lo(beat)
        if voids[third] >> led & 1:
            if not opp_trumps or led == t or voids[third] >> t & 1:
                return _lo(beat)
            return _lo(follow)
        out = others & SUIT_MASKS[led]
        sure = beat & _above(_hi(out)) if out else beat
        if sure:
            return _lo(sure)
        if (out & _above(_lo(beat))).bit_count() <= 1:
            return _lo(beat)
        return _lo(follow)
    my_trumps = hand & tmask
    if my_trumps:
        over = my_trumps & _above(w) if w // 13 == t else my_trumps
        if over:
            if not last and voids[third] >> led & 1 and opp_trumps:
                sure = over & _above(_hi(opp_trumps))
                if sure:
                    return _lo(sure)
            return _lo(over)
    return _throw_away(hand, tmask)


def _throw_away(hand: int, tmask: int) -> int:
    """Throw the lowest card of the shortest side suit (a trump only when nothing else is left)."""
    side = hand & ~tmask or hand
    best, best_key = -1, None
    for s in range(4):
        cards = side & SUIT_MASKS[s]
        if cards:
            c = _lo(cards)
            key = (c % 13, cards.bit_count())
            if best_key is None or key < best_key:
                best, best_key = c, key
    return best


def _nullo_lead(hand: int, others: int) -> int:
    best, best_key = -1, None
    rest = hand
    while rest:
        c = _lo(rest)
        rest ^= 1 << c
        out = others & SUIT_MASKS[c // 13]
        key = (0 if out else 1, (out & _nullo_below(c)).bit_count(), _nullo_rank(c), -out.bit_count())
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


def _nullo_follow(hand: int, seat: int, trick, led: int, others: int, voids) -> int:
    follow = hand & SUIT_MASKS[led]
    if follow:
        w = trick[trick_winner(trick, None, True)]
        ducks = follow & _nullo_below(w)
        if ducks:
            return _nullo_hi(ducks)
        if len(trick) == 2 or voids[(seat + 1) % 3] >> led & 1 or not others & SUIT_MASKS[led]:
            return _nullo_hi(follow)
        return _nullo_lo(follow)
    best, best_key = -1, None
    rest = hand
    while rest:
        c = _lo(rest)
        rest ^= 1 << c
        key = ((others & _nullo_below(c)).bit_count(), _nullo_rank(c))
        if best_key is None or key > best_key:
            best, best_key = c, key
    return best


# ----------------------------------------------------------------------------- the agent
class RuleBasedAgent:
    """The heuristic player described in the module docstring (deterministic: ignores ``rng``)."""

    def __init__(self) -> None:
        self.name = "rule_based"

    def reset(self) -> None:
        """Nothing to forget between games (plans are pure functions of the view)."""

    def act(self, view: SeatView, rng: np.random.Generator | None = None) -> int:
        legal = legal_actions_of(view)
        if len(legal) == 1:
            return legal[0]
        phase = view.phase
        if phase == Phase.PLAY:
            return self._play(view)
        if phase == Phase.EXCHANGE:
            return self._exchange(view)
        if phase == Phase.SWAP:
            return self._swap(view)
        if phase == Phase.PICKUP:
            return A.TAKE_MANNI
        if phase == Phase.DISCARD:
            return self._discard(view)
        return self._announce(view)

    @staticmethod
    def _play(view: SeatView) -> int:
        played = view.played
        gone = played[0] | played[1] | played[2] | view.discards
        c = view.contract
        return choose_card(view.hand, view.seat, view.trick, view.led_suit, c.trump, c.nullo, gone, view.voids,
                           view.rules.pack)

    @staticmethod
    def _exchange(view: SeatView) -> int:
        pending = 0
        for c in view.pending:
            pending |= 1 << c
        c = view.contract
        limit = view.exchange_limit + len(view.pending)
        plan = exchange_plan(view.hand | pending, c.kind, c.trump, limit, view.rules.pack, view.rules.hand_size)
        for card in plan:
            if view.hand >> card & 1:
                return card
        return A.EXCHANGE_DONE

    @staticmethod
    def _swap(view: SeatView) -> int:
        rules = view.rules
        trump = view.contract.trump
        est = estimate_tricks(view.hand, ContractKind.TRUMP, trump, rules.hand_size)
        return A.SWAP_HAND if est < mean_estimate(ContractKind.TRUMP, rules.pack, rules.hand_size) else A.KEEP_HAND

    @staticmethod
    def _discard(view: SeatView) -> int:
        rules = view.rules
        pending = 0
        for c in view.pending:
            pending |= 1 << c
        full = view.hand | pending
        unused = [n for n in rules.contracts if n not in view.used_contracts[view.forehand]]
        options = [(a.kind, a.trump) for n in unused for a in rules.spec.announcements if a.name == n]
        if view.seat == view.forehand:  # we announce: discard for the contract we will choose
            best = None
            for kind, trump in options:
                plan = discard_plan(full, ((kind, trump),), rules.hand_size, rules.spec.pickup_discards)
                gain = contract_gain(full & ~_mask(plan), kind, trump, rules.pack, rules.hand_size)
                if best is None or gain > best[0]:
                    best = (gain, plan)
            plan = best[1]
        else:
            plan = discard_plan(full, tuple(options), rules.hand_size, rules.spec.pickup_discards)
        for card in plan:
            if view.hand >> card & 1:
                return card
        raise AssertionError("discard plan exhausted")  # the engine ends the phase after four discards

    @staticmethod
    def _announce(view: SeatView) -> int:
        rules = view.rules
        best_action, best_gain = None, None
        for action in view.legal_actions:
            row = rules.spec.announcement(action)
            kind, trump = row.kind, row.trump
            gain = contract_gain(view.hand, kind, trump, rules.pack, rules.hand_size)
            if best_gain is None or gain > best_gain:
                best_action, best_gain = action, gain
        return best_action


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m
