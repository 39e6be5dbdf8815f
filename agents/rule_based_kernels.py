"""The ``rule_based`` heuristic, written once: scalar functions on int64 card bitmasks, compiled by numba.

The heuristic of :mod:`manni_agents.rule_based` (its docstring says what it does) lives here only:
``estimate_tricks``, ``mean_estimate``, ``exchange_plan``, ``discard_plan``, ``contract_gain``, the
swap and announcement choices and ``choose_card`` with its helpers, on card bitmasks (bit ``c``
for card ``c``, as in :mod:`manni_env.cards`). Contract kinds are
:class:`~manni_env.rules.ContractKind` indices and "no trump" is ``-1``; the winning card of a
trick under way comes from the vector env's kernels (:mod:`manni_env.vector_kernels`). Two callers
feed it: :class:`~manni_agents.rule_based.RuleBasedAgent` one seat's view at a time (each call one
compiled function), and :func:`act_kernel` a batch of games of the vector env's
:class:`~manni_env.vector_kernels.VectorState` (see :mod:`manni_agents.rule_based_vector` for the
fields and why they are the seat's own information), with the variant's constants as a
:class:`RuleTable` built from the variant table by :func:`rule_table`. Like the env's kernels they
are compiled by numba when it imports, and :func:`plain_kernels` gives this module run by the
Python interpreter (slow, the same decisions).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from manni_env import actions as A
from manni_env import vector_kernels
from manni_env.cards import ACE, FULL_PACK, PACK_48, SUIT_MASKS
from manni_env.rules import ContractKind, Phase, Rules

_PLAIN_NAME = "manni_agents._rule_based_kernels_plain"  # this module loaded again without numba
_env_kernels = vector_kernels.plain_kernels() if __name__ == _PLAIN_NAME else vector_kernels
jit, kernel_trick_winner = _env_kernels.jit, _env_kernels.kernel_trick_winner
NULLO, TRUMP, GRAND = int(ContractKind.NULLO), int(ContractKind.TRUMP), int(ContractKind.GRAND)
EXCHANGE, SWAP, PICKUP, DISCARD, ANNOUNCE, PLAY = (
    int(Phase.EXCHANGE), int(Phase.SWAP), int(Phase.PICKUP), int(Phase.DISCARD), int(Phase.ANNOUNCE), int(Phase.PLAY))
EXCHANGE_DONE, KEEP_HAND, SWAP_HAND, TAKE_MANNI = A.EXCHANGE_DONE, A.KEEP_HAND, A.SWAP_HAND, A.TAKE_MANNI
MEMO_KEY, MEMO_PLAN = 5, 16  # memo key fields; longest plan (12 exchange discards, 4 pickup discards)
_POP13 = np.array([m.bit_count() for m in range(8192)], np.int64)
_HI13 = np.array([m.bit_length() - 1 for m in range(8192)], np.int64)
ACES = tuple(1 << (13 * s + ACE) for s in range(4))
_SUIT = np.array(SUIT_MASKS, np.int64)
_ACES = np.array(ACES, np.int64)


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
    kind = ContractKind[kind.upper()] if isinstance(kind, str) else ContractKind(kind)
    trump = 3 if kind == ContractKind.TRUMP else -1
    total = 0.0
    n = 2000
    for _ in range(n):
        hand = 0
        for c in rng.choice(cards, hand_size, replace=False).tolist():
            hand |= 1 << c
        total += estimate_tricks(hand, int(kind), trump, long_length(hand_size))
    return total / n


class RuleTable(NamedTuple):
    """One rule set's constants for :func:`act_kernel` (from :func:`rule_table`)."""

    pack: int
    hand_size: int
    manni_size: int
    pickup_discards: int
    exchange_limits: np.ndarray  # (3,) discards allowed in decision order (EXCHANGE)
    means: np.ndarray  # (3,) float: mean_estimate by ContractKind index, NaN for kinds never played
    ann_action: np.ndarray  # (R,) the announcements in table order: action, kind, trump (-1 none), slot
    ann_kind: np.ndarray
    ann_trump: np.ndarray
    ann_slot: np.ndarray
    option_rows: np.ndarray  # (R,) rows in the order RuleBasedAgent lists a discard's contract options


@functools.cache
def rule_table(rules: Rules) -> RuleTable:
    """The :class:`RuleTable` of ``rules`` (from ``rules.spec``)."""
    spec = rules.spec
    rows = spec.announcements
    kinds = set(spec.cut_kinds) | {a.kind for a in rows} | ({ContractKind.TRUMP} if spec.trump_rotation else set())
    means = [mean_estimate(k, rules.pack, rules.hand_size) if k in kinds else np.nan for k in ContractKind]
    options = [i for name in spec.contracts for i, a in enumerate(rows) if a.name == name]

    def ints(values) -> np.ndarray:
        return np.array(list(values), np.int64)

    return RuleTable(
        rules.pack, rules.hand_size, rules.manni_size, spec.pickup_discards, ints(spec.exchange_limits),
        np.array(means, np.float64), ints(a.action for a in rows), ints(int(a.kind) for a in rows),
        ints(-1 if a.trump is None else a.trump for a in rows), ints(a.slot for a in rows), ints(options))


# ----------------------------------------------------------------------------- bit helpers
@jit
def _pop(x):
    return _POP13[x & 8191] + _POP13[(x >> 13) & 8191] + _POP13[(x >> 26) & 8191] + _POP13[(x >> 39) & 8191]


@jit
def _hi(x):
    """Highest set bit of a card mask (-1 for 0)."""
    if x >> 39:
        return 39 + _HI13[x >> 39]
    if x >> 26:
        return 26 + _HI13[x >> 26]
    if x >> 13:
        return 13 + _HI13[x >> 13]
    return _HI13[x]


@jit
def _lo(x):
    return _hi(x & -x)


@jit
def _above(card):
    return _SUIT[card // 13] & ~((2 << card) - 1)


@jit
def _nullo_rank(card):
    r = card % 13
    return 0 if r == 12 else r + 1


@jit
def _nullo_below(card):
    s = card // 13
    if card % 13 == 12:
        return 0
    return (_SUIT[s] & ((1 << card) - 1)) | _ACES[s]


@jit
def _nullo_hi(cards):
    no_ace = cards & ~_ACES[_hi(cards) // 13]
    return _hi(no_ace) if no_ace else _hi(cards)


@jit
def _nullo_lo(cards):
    ace = cards & _ACES[_hi(cards) // 13]
    return _hi(ace) if ace else _lo(cards)


@jit
def _bits(row):
    """A (52,) boolean row as a card mask."""
    m = 0
    for c in range(52):
        if row[c]:
            m |= 1 << c
    return m


@jit
def _void(voids, seat, suit):
    """Whether ``seat`` has shown void in ``suit``; ``voids`` packs 4 bits per seat."""
    return (voids >> (4 * seat + suit)) & 1


# ----------------------------------------------------------------------------- hand strength
@jit
def long_length(hand_size):
    """The usual length of a suit in a hand of ``hand_size`` cards: 4 in 12 cards, 5 in 16."""
    return 4 if hand_size <= 12 else 5


@jit
def estimate_tricks(hand, kind, trump, long_len):
    """Expected tricks taken by ``hand`` for contract ``kind`` with ``trump`` (-1 none);
    ``long_len``: :func:`long_length` of the hand size."""
    total = 0.0
    if kind == NULLO:
        for s in range(4):
            cards = hand & _SUIT[s]
            if not cards:
                total -= 0.15
                continue
            n = _pop(cards)
            if n > long_len:
                total += 0.2 * (n - long_len)
            high = cards & ~_ACES[s]
            while high:
                c = _hi(high)
                high ^= 1 << c
                r = c % 13 + 1
                if r <= 7:
                    break
                total += 0.15 * (r - 6)
        return total
    n_trumps = _pop(hand & _SUIT[trump]) if trump >= 0 else 0
    length_bonus = 0.6 if kind == GRAND else 0.3
    for s in range(4):
        cards = hand & _SUIT[s]
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
        n = _pop(cards)
        base = 13 * s
        if (cards >> (base + 12)) & 1:
            total += 1.0
        if (cards >> (base + 11)) & 1:
            total += 0.75 if n >= 2 else 0.3
        if (cards >> (base + 10)) & 1:
            total += 0.45 if n >= 3 else 0.1
        if n >= 4 and (cards >> (base + 9)) & 1:
            total += 0.2
        if n > long_len:
            total += length_bonus * (n - long_len)
    return total


@jit
def exchange_plan(full, kind, trump, limit, threshold, long_len, plan):
    """Hornafjarðarmanni discards for the hand ``full``, in order, into ``plan`` (at most ``limit``;
    ``threshold``: the mean estimate per card); returns its length."""
    hand = full
    n_plan = 0
    while n_plan < limit and hand:
        base = estimate_tricks(hand, kind, trump, long_len)
        best, best_v = -1, 0.0
        rest = hand
        while rest:  # each card's marginal value, ascending cards
            c = _lo(rest)
            rest ^= 1 << c
            v = base - estimate_tricks(hand ^ (1 << c), kind, trump, long_len)
            if best < 0:
                best, best_v = c, v
            elif kind == NULLO:  # max by (value, card); cards ascend, so ties go to the later card
                if v >= best_v:
                    best, best_v = c, v
            elif v < best_v or (v == best_v and c % 13 < best % 13):  # min by (value, rank, card)
                best, best_v = c, v
        if kind == NULLO:
            if best_v <= threshold:
                break
        elif best_v >= threshold:
            break
        plan[n_plan] = best
        n_plan += 1
        hand ^= 1 << best
    return n_plan


@jit
def discard_plan(full, kinds, trumps, rows, long_len, count, util, plan):
    """Announcement variants: ``count`` discards of lowest mean utility (Nullo counting negatively)
    over the contracts ``(kinds[r], trumps[r])`` for ``r`` in ``rows`` (in that order) into
    ``plan``; ``util`` is a (52,) float scratch row."""
    hand = full
    n_rows = rows.shape[0]
    for k in range(count):
        rest = hand
        while rest:
            c = _lo(rest)
            rest ^= 1 << c
            util[c] = 0.0
        for i in range(n_rows):  # each contract's marginals, summed in order
            kind, trump = kinds[rows[i]], trumps[rows[i]]
            sign = -1.0 if kind == NULLO else 1.0
            base = estimate_tricks(hand, kind, trump, long_len)
            rest = hand
            while rest:
                c = _lo(rest)
                rest ^= 1 << c
                util[c] += sign * (base - estimate_tricks(hand ^ (1 << c), kind, trump, long_len))
        best, best_u = -1, 0.0
        rest = hand
        while rest:  # min by (mean utility, rank, card); cards ascend
            c = _lo(rest)
            rest ^= 1 << c
            u = util[c] / n_rows
            if best < 0 or u < best_u or (u == best_u and c % 13 < best % 13):
                best, best_u = c, u
        plan[k] = best
        hand ^= 1 << best
    return count


@jit
def contract_gain(hand, kind, trump, means, long_len):
    """How much better than average ``hand`` is as a declarer for this contract, in tricks
    (``means``: :func:`mean_estimate` by contract kind)."""
    est = estimate_tricks(hand, kind, trump, long_len)
    mean = means[kind]
    return mean - est if kind == NULLO else est - mean


@jit
def _memo_hit(memo_key, k0, k1, k2, k3, k4):
    """Whether a game's memo holds the plan of key (k0, ..., k4); if not, store the key (the
    caller then computes the plan)."""
    if memo_key[0] == k0 and memo_key[1] == k1 and memo_key[2] == k2 and memo_key[3] == k3 and memo_key[4] == k4:
        return True
    memo_key[0], memo_key[1], memo_key[2], memo_key[3], memo_key[4] = k0, k1, k2, k3, k4
    return False


@jit
def _first_in_hand(hand, plan, n_plan):
    """The first card of ``plan[:n_plan]`` still in ``hand``, else -1."""
    for i in range(n_plan):
        if (hand >> plan[i]) & 1:
            return plan[i]
    return -1


@jit
def discard_plan_for(full, forehand, unused, table, long_len, util, scratch, plan):
    """The announcement discards into ``plan``: the forehand (``forehand`` 1) discards for the
    contract it will announce, another taker by the mean over ``unused`` (the forehand's unused
    announcement rows, in option order). Returns the plan's length."""
    count = table.pickup_discards
    if not forehand:
        return discard_plan(full, table.ann_kind, table.ann_trump, unused, long_len, count, util, plan)
    best_gain = 0.0
    for i in range(unused.shape[0]):
        r = unused[i]
        kind, trump = table.ann_kind[r], table.ann_trump[r]
        discard_plan(full, table.ann_kind, table.ann_trump, unused[i:i + 1], long_len, count, util, scratch)
        rest = full
        for k in range(count):
            rest &= ~(1 << scratch[k])
        gain = contract_gain(rest, kind, trump, table.means, long_len)
        if i == 0 or gain > best_gain:
            best_gain = gain
            plan[:count] = scratch[:count]
    return count


@jit
def swap_action(hand, trump, means, long_len):
    """Basic Manni: swap when the hand is weaker than an average hand for this trump."""
    return SWAP_HAND if estimate_tricks(hand, TRUMP, trump, long_len) < means[TRUMP] else KEEP_HAND


@jit
def best_announcement(hand, usable, table, long_len):
    """The row of ``table``'s announcements (``usable``: a bitmask of the rows still open, which
    are in ascending action order) whose contract gains most over its average; the first on a tie."""
    best, best_gain = -1, 0.0
    for r in range(table.ann_action.shape[0]):
        if not (usable >> r) & 1:
            continue
        gain = contract_gain(hand, table.ann_kind[r], table.ann_trump[r], table.means, long_len)
        if best < 0 or gain > best_gain:
            best, best_gain = r, gain
    return best


# ----------------------------------------------------------------------------- card play
@jit
def _winning_card(t0, t1, tl, trump, nullo):
    """The card winning the trick so far: ``t0``, or ``t0`` and ``t1`` when ``tl`` is 2 (the last
    card repeated as the third, which never beats itself)."""
    b = t1 if tl == 2 else t0
    return t0 if kernel_trick_winner(t0, b, b, trump, nullo) == 0 else b


@jit
def choose_card(hand, seat, t0, t1, tl, led, t, nullo, gone, voids, pack):
    """The card to play from ``hand`` with ``tl`` cards in the trick (``t0``, ``t1``), ``led`` its
    suit, ``t`` the trump suit or -1. ``gone``: cards this seat knows are out of opponents' hands
    (every card played this deal and its own discards); ``voids``: the suits each seat has shown
    void in, 4 bits per seat."""
    legal = hand & _SUIT[led] if tl else 0
    if not legal:
        legal = hand
    if not legal & (legal - 1):
        return _hi(legal)
    others = pack & ~gone & ~hand
    if nullo:
        if not tl:
            return _nullo_lead(hand, others)
        return _nullo_follow(hand, seat, t0, t1, tl, led, others, voids)
    if not tl:
        return _lead(hand, seat, t, others, voids)
    return _follow(hand, seat, t0, t1, tl, led, t, others, voids)


@jit
def _lead(hand, seat, t, others, voids):
    tmask = _SUIT[t] if t >= 0 else 0
    my_trumps, opp_trumps = hand & tmask, others & tmask
    if my_trumps and opp_trumps:
        n_my, n_opp = _pop(my_trumps), _pop(opp_trumps)
        if _hi(my_trumps) > _hi(opp_trumps):
            if n_my >= 3 or n_my >= n_opp:
                return _hi(my_trumps)
        elif n_my >= 5 and n_my > n_opp:
            return _lo(my_trumps)
    o1, o2 = (seat + 1) % 3, (seat + 2) % 3
    best, best_len = -1, -1
    for s in range(4):
        cards = hand & _SUIT[s]
        if not cards:
            continue
        out = others & _SUIT[s]
        top = _hi(cards)
        if out and _hi(out) > top:
            continue
        if s != t and opp_trumps and (_void(voids, o1, s) or _void(voids, o2, s) or _pop(out) < 2):
            continue
        n = _pop(cards)
        if n > best_len:
            best, best_len = top, n
    if best >= 0:
        return best
    side = hand & ~tmask
    if not side:
        side = hand
    best_suit, best_n, best_r = -1, -1, 0
    for s in range(4):
        cards = side & _SUIT[s]
        if cards:
            n, r = _pop(cards), _hi(cards) % 13
            if best_suit < 0 or n > best_n or (n == best_n and r < best_r):  # max by (length, -rank)
                best_suit, best_n, best_r = s, n, r
    return _lo(side & _SUIT[best_suit])


@jit
def _follow(hand, seat, t0, t1, tl, led, t, others, voids):
    w = _winning_card(t0, t1, tl, t, False)
    last = tl == 2
    third = (seat + 1) % 3
    tmask = _SUIT[t] if t >= 0 else 0
    opp_trumps = others & tmask
    follow = hand & _SUIT[led]
    if follow:
        if w // 13 != led:
            return _lo(follow)
        beat = follow & _above(w)
        if not beat:
            return _lo(follow)
        if last:
            return _lo(beat)
        if _void(voids, third, led):
            if not opp_trumps or led == t or _void(voids, third, t):
                return _lo(beat)
            return _lo(follow)
        out = others & _SUIT[led]
        sure = beat & _above(_hi(out)) if out else beat
        if sure:
            return _lo(sure)
        if _pop(out & _above(_lo(beat))) <= 1:
            return _lo(beat)
        return _lo(follow)
    my_trumps = hand & tmask
    if my_trumps:
        over = my_trumps & _above(w) if w // 13 == t else my_trumps
        if over:
            if not last and _void(voids, third, led) and opp_trumps:
                sure = over & _above(_hi(opp_trumps))
                if sure:
                    return _lo(sure)
            return _lo(over)
    return _throw_away(hand, tmask)


@jit
def _throw_away(hand, tmask):
    side = hand & ~tmask
    if not side:
        side = hand
    best, best_r, best_n = -1, 0, 0
    for s in range(4):
        cards = side & _SUIT[s]
        if cards:
            c = _lo(cards)
            r, n = c % 13, _pop(cards)
            if best < 0 or r < best_r or (r == best_r and n < best_n):  # min by (rank, length)
                best, best_r, best_n = c, r, n
    return best


@jit
def _nullo_lead(hand, others):
    best, k0, k1, k2, k3 = -1, 0, 0, 0, 0
    rest = hand
    while rest:
        c = _lo(rest)
        rest ^= 1 << c
        out = others & _SUIT[c // 13]
        a0, a1, a2, a3 = 0 if out else 1, _pop(out & _nullo_below(c)), _nullo_rank(c), -_pop(out)
        if best < 0 or (a0, a1, a2, a3) < (k0, k1, k2, k3):
            best, k0, k1, k2, k3 = c, a0, a1, a2, a3
    return best


@jit
def _nullo_follow(hand, seat, t0, t1, tl, led, others, voids):
    follow = hand & _SUIT[led]
    if follow:
        w = _winning_card(t0, t1, tl, -1, True)
        ducks = follow & _nullo_below(w)
        if ducks:
            return _nullo_hi(ducks)
        if tl == 2 or _void(voids, (seat + 1) % 3, led) or not others & _SUIT[led]:
            return _nullo_hi(follow)
        return _nullo_lo(follow)
    best, k0, k1 = -1, 0, 0
    rest = hand
    while rest:
        c = _lo(rest)
        rest ^= 1 << c
        a0, a1 = _pop(others & _nullo_below(c)), _nullo_rank(c)
        if best < 0 or a0 > k0 or (a0 == k0 and a1 > k1):
            best, k0, k1 = c, a0, a1
    return best


# ----------------------------------------------------------------------------- the batch
class Memo(NamedTuple):
    """Exchange and discard plans by game slot: a seat's successive discards share one plan, a pure
    function of the key (hand with the discards chosen so far, phase, contract or options, allowance)."""

    key: np.ndarray  # (N, MEMO_KEY) int64; -1 never matches
    plan: np.ndarray  # (N, MEMO_PLAN) int64
    length: np.ndarray  # (N,) int64

    @classmethod
    def empty(cls, n: int) -> Memo:
        return cls(np.full((n, MEMO_KEY), -1, np.int64), np.zeros((n, MEMO_PLAN), np.int64), np.zeros(n, np.int64))


@jit
def act_kernel(state, table, memo, games, out):
    """``out[j]``: the rule_based action of the seat on turn in game ``games[j]`` of the vector env's
    ``state``, under the rules of ``table`` (a :class:`RuleTable`); ``memo`` a :class:`Memo` of the
    env's size, kept between calls with the same rules."""
    long_len = long_length(table.hand_size)
    util = np.zeros(52, np.float64)
    scratch = np.zeros(MEMO_PLAN, np.int64)
    unused = np.zeros(table.option_rows.shape[0], np.int64)
    for j in range(games.shape[0]):
        g = games[j]
        s = state.to_move[g]
        hand = _bits(state.hands[g, s])
        ph = state.phase[g]
        if ph == PLAY:
            gone = _bits(state.played[g, 0]) | _bits(state.played[g, 1]) | _bits(state.played[g, 2])
            gone |= _bits(state.discards[g, s])
            v = 0
            for seat in range(3):
                for suit in range(4):
                    if state.voids[g, seat, suit]:
                        v |= 1 << (4 * seat + suit)
            out[j] = choose_card(hand, s, state.trick[g, 0], state.trick[g, 1], state.trick_len[g], state.led_suit[g],
                                 state.trump[g], state.kind[g] == NULLO, gone, v, table.pack)
        elif ph == EXCHANGE or ph == DISCARD:
            full = hand
            for i in range(state.n_pending[g]):
                full |= 1 << state.pending[g, i]
            if ph == EXCHANGE:
                k, t = state.kind[g], state.trump[g]
                limit = min(table.exchange_limits[state.decision[g]], table.manni_size - state.manni_pos[g])
                if not _memo_hit(memo.key[g], full, EXCHANGE, k, t, limit):
                    memo.length[g] = exchange_plan(full, k, t, limit, table.means[k] / table.hand_size, long_len,
                                                   memo.plan[g])
            else:
                forehand = (state.dealer[g] + 1) % 3
                n_unused, rows_mask = 0, 0
                for r in table.option_rows:
                    if not state.used[g, forehand, table.ann_slot[r]]:
                        unused[n_unused] = r
                        n_unused += 1
                        rows_mask |= 1 << r
                fh = 1 if s == forehand else 0
                if not _memo_hit(memo.key[g], full, DISCARD, rows_mask, fh, 0):
                    memo.length[g] = discard_plan_for(full, fh, unused[:n_unused], table, long_len, util, scratch,
                                                       memo.plan[g])
            card = _first_in_hand(hand, memo.plan[g], memo.length[g])
            if card < 0 and ph == DISCARD:
                raise AssertionError("discard plan exhausted")
            out[j] = EXCHANGE_DONE if card < 0 else card
        elif ph == SWAP:
            out[j] = swap_action(hand, state.trump[g], table.means, long_len)
        elif ph == PICKUP:
            out[j] = TAKE_MANNI  # weakly dominant: the four cards drawn may be discarded again
        elif ph == ANNOUNCE:
            usable = 0
            for r in range(table.ann_action.shape[0]):  # the legal announcements
                if not state.used[g, s, table.ann_slot[r]]:
                    usable |= 1 << r
            out[j] = table.ann_action[best_announcement(hand, usable, table, long_len)]
        else:
            raise ValueError("rule_based: no decision in this phase")


@functools.cache
def plain_kernels():
    """This module executed again without numba: the same kernels as plain Python functions."""
    return vector_kernels.load_uncompiled(_PLAIN_NAME, __file__)
