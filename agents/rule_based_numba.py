"""Numba kernels of :class:`agents.rule_based_vector.VectorRuleBased` (the ``fast`` extra).

A line-by-line port of :mod:`agents.rule_based` (``estimate_tricks``, ``exchange_plan``, the swap
rule and ``choose_card`` with its helpers) to compiled functions on int64 card bitmasks (bit ``c``
for card ``c``, as in :mod:`manni_env.cards`). Every comparison, tie-break and float operation is
kept in the Python agent's order, so both choose the same action in every state. Contract kinds
are the vector env's integers (``0`` Nullo, ``1`` Trump, ``2`` Grand) and "no trump" is ``-1``.
"""

from __future__ import annotations

import numba
import numpy as np

from agents.rule_based import ACES
from manni_env import actions as A
from manni_env.cards import SUIT_MASKS
from manni_env.engine import Phase
from manni_env.vector import GRAND, NULLO, TRUMP

PLAY, EXCHANGE, SWAP = int(Phase.PLAY), int(Phase.EXCHANGE), int(Phase.SWAP)
EXCHANGE_DONE, KEEP_HAND, SWAP_HAND = A.EXCHANGE_DONE, A.KEEP_HAND, A.SWAP_HAND
_POP13 = np.array([m.bit_count() for m in range(8192)], np.int64)
_HI13 = np.array([m.bit_length() - 1 for m in range(8192)], np.int64)
_SUIT = np.array(SUIT_MASKS, np.int64)
_ACES = np.array(ACES, np.int64)


# ----------------------------------------------------------------------------- bit helpers
@numba.njit(cache=True, nogil=True)
def _pop(x):
    return _POP13[x & 8191] + _POP13[(x >> 13) & 8191] + _POP13[(x >> 26) & 8191] + _POP13[(x >> 39) & 8191]


@numba.njit(cache=True, nogil=True)
def _hi(x):
    """Highest set bit of a card mask (-1 for 0)."""
    if x >> 39:
        return 39 + _HI13[x >> 39]
    if x >> 26:
        return 26 + _HI13[x >> 26]
    if x >> 13:
        return 13 + _HI13[x >> 13]
    return _HI13[x]


@numba.njit(cache=True, nogil=True)
def _lo(x):
    return _hi(x & -x)


@numba.njit(cache=True, nogil=True)
def _above(card):
    return _SUIT[card // 13] & ~((2 << card) - 1)


@numba.njit(cache=True, nogil=True)
def _nullo_rank(card):
    r = card % 13
    return 0 if r == 12 else r + 1


@numba.njit(cache=True, nogil=True)
def _nullo_below(card):
    s = card // 13
    if card % 13 == 12:
        return 0
    return (_SUIT[s] & ((1 << card) - 1)) | _ACES[s]


@numba.njit(cache=True, nogil=True)
def _nullo_hi(cards):
    no_ace = cards & ~_ACES[_hi(cards) // 13]
    return _hi(no_ace) if no_ace else _hi(cards)


@numba.njit(cache=True, nogil=True)
def _nullo_lo(cards):
    ace = cards & _ACES[_hi(cards) // 13]
    return _hi(ace) if ace else _lo(cards)


@numba.njit(cache=True, nogil=True)
def _bits(row):
    """A (52,) boolean row as a card mask."""
    m = 0
    for c in range(52):
        if row[c]:
            m |= 1 << c
    return m


@numba.njit(cache=True, nogil=True)
def _void(voids, seat, suit):
    """Whether ``seat`` has shown void in ``suit``; ``voids`` packs 4 bits per seat."""
    return (voids >> (4 * seat + suit)) & 1


# ----------------------------------------------------------------------------- hand strength
@numba.njit(cache=True, nogil=True)
def estimate_tricks(hand, kind, trump, long_len):
    """``agents.rule_based.estimate_tricks`` (``long_len`` 4 for 12-card hands, 5 for 16)."""
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


@numba.njit(cache=True, nogil=True)
def exchange_plan(full, kind, trump, limit, threshold, long_len, plan):
    """``agents.rule_based.exchange_plan`` into ``plan``; returns its length."""
    hand = full
    n_plan = 0
    while n_plan < limit and hand:
        base = estimate_tricks(hand, kind, trump, long_len)
        best, best_v = -1, 0.0
        rest = hand
        while rest:  # ascending cards, as the Python dict of marginals
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


@numba.njit(cache=True, nogil=True)
def _exchange(hand, full, key, memo_key, memo_plan, memo_len, threshold, long_len):
    """The first card of the exchange plan of ``full`` (hand and pending discards) still in
    ``hand``, else ``EXCHANGE_DONE``. The plan is a pure function of ``key`` = (full, kind, trump,
    limit, pack, hand size) and is kept per game in ``memo_*`` (a seat's successive exchange
    decisions share it)."""
    same = True
    for i in range(key.shape[0]):
        same = same and memo_key[i] == key[i]
    if not same:
        memo_key[:] = key
        memo_len[0] = exchange_plan(full, key[1], key[2], key[3], threshold, long_len, memo_plan)
    for i in range(memo_len[0]):
        if (hand >> memo_plan[i]) & 1:
            return memo_plan[i]
    return EXCHANGE_DONE


# ----------------------------------------------------------------------------- card play
@numba.njit(cache=True, nogil=True)
def _trick_winner(trick, tl, trump, nullo):
    """``manni_env.engine.trick_winner`` of the first ``tl`` cards of ``trick``."""
    best = 0
    best_card = trick[0]
    for i in range(1, tl):
        card = trick[i]
        cs, bs = card // 13, best_card // 13
        if cs == bs:
            cr, br = card % 13, best_card % 13
            if nullo:
                cr = -1 if cr == 12 else cr
                br = -1 if br == 12 else br
            if cr > br:
                best, best_card = i, card
        elif cs == trump:
            best, best_card = i, card
    return best


@numba.njit(cache=True, nogil=True)
def choose_card(hand, seat, trick, tl, led, t, nullo, gone, voids, pack):
    """``agents.rule_based.choose_card`` (``t`` the trump suit or -1, ``voids`` 4 bits per seat)."""
    legal = hand & _SUIT[led] if tl else 0
    if not legal:
        legal = hand
    if not legal & (legal - 1):
        return _hi(legal)
    others = pack & ~gone & ~hand
    if nullo:
        if not tl:
            return _nullo_lead(hand, others)
        return _nullo_follow(hand, seat, trick, tl, led, others, voids)
    if not tl:
        return _lead(hand, seat, t, others, voids)
    return _follow(hand, seat, trick, tl, led, t, others, voids)


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def _follow(hand, seat, trick, tl, led, t, others, voids):
    w = trick[_trick_winner(trick, tl, t, False)]
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


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def _nullo_follow(hand, seat, trick, tl, led, others, voids):
    follow = hand & _SUIT[led]
    if follow:
        w = trick[_trick_winner(trick, tl, -1, True)]
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
@numba.njit(cache=True, nogil=True)
def act_kernel(games, limits, phase, to_move, hands, discards, played, voids, trick, trick_len, led_suit,
               kind, trump, pending, n_pending, pack, hand_size, means, memo_key, memo_plan, memo_len, out):
    """``out[j]``: the rule_based action of the seat on turn in game ``games[j]``; ``limits[j]`` its
    remaining exchange allowance, ``means[k]`` the mean estimate of contract kind ``k``;
    ``memo_key`` (N, 6), ``memo_plan`` (N, 12), ``memo_len`` (N,): exchange plans by game (see
    :func:`_exchange`; a key that does not match, such as the initial -1, is recomputed)."""
    long_len = 4 if hand_size <= 12 else 5
    key = np.empty(6, np.int64)
    for j in range(games.shape[0]):
        g = games[j]
        s = to_move[g]
        hand = _bits(hands[g, s])
        ph = phase[g]
        k = kind[g]
        if ph == PLAY:
            gone = _bits(played[g, 0]) | _bits(played[g, 1]) | _bits(played[g, 2]) | _bits(discards[g, s])
            v = 0
            for seat in range(3):
                for suit in range(4):
                    if voids[g, seat, suit]:
                        v |= 1 << (4 * seat + suit)
            out[j] = choose_card(hand, s, trick[g], trick_len[g], led_suit[g], trump[g], k == NULLO, gone, v, pack)
        elif ph == EXCHANGE:
            full = hand
            for i in range(n_pending[g]):
                full |= 1 << pending[g, i]
            key[0], key[1], key[2], key[3], key[4], key[5] = full, k, trump[g], limits[j] + n_pending[g], pack, hand_size
            out[j] = _exchange(hand, full, key, memo_key[g], memo_plan[g], memo_len[g:g + 1], means[k] / hand_size,
                               long_len)
        elif ph == SWAP:
            est = estimate_tricks(hand, TRUMP, trump[g], long_len)
            out[j] = SWAP_HAND if est < means[TRUMP] else KEEP_HAND
        else:
            raise ValueError("rule_based: the vector env has only exchange, swap and play phases")
