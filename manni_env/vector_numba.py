"""Optional numba kernels for :class:`manni_env.vector.VectorManni` (``backend="numba"``).

The same state arrays, the same rules, compiled loops over the games instead of numpy array
operations: :func:`step_kernel` checks and applies one action per game up to the end of a trick,
:func:`end_deal_kernel` scores the deals that ended, :func:`start_deal_kernel` deals the next ones
(the per-slot random generators, the first dealer of a new game and the game logs stay in
``VectorManni``), and :func:`observe_kernel` writes the observations and legal-action masks of the
seats on turn, the observations byte-identical to :class:`manni_env.vector_obs.VectorEncoder` (the
equivalence tests run both backends against the engine and against each other). Install with
``pip install numba`` (the ``fast`` extra); without it the numpy backend is used.

Writing the observations dominates a step (616 float32 per game for the summary history), so
:func:`observe_kernel` zeroes each row once and then fills it while it is in the cache, copying the
card segments with :func:`_copy` (a loop LLVM turns into SIMD byte-to-float conversions)."""

from __future__ import annotations

import numba
import numpy as np

PLAY, EXCHANGE, SWAP = 5, 0, 1
NULLO, TRUMP, GRAND = 0, 1, 2
EXCHANGE_DONE, KEEP_HAND, SWAP_HAND = 52, 53, 54
LIMITS = np.array([7, 5, 12], np.int64)
_OPTS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_OPTS)
def step_kernel(actions, mask, phase, hands, discards, drawn, played, voids, manni, manni_pos, kind, trump,
                to_move, dealer, decision, pending, n_pending, exchange_counts, swapper, passed, n_passed,
                leader, led_suit, trick, trick_len, plays, n_plays, tricks_won, tricks_per_deal, deal_over):
    """Apply ``actions`` to every game if all are legal under ``mask`` (the (N, 63) masks as uint8);
    set ``deal_over[i]`` when game ``i``'s last trick is complete. Returns (any action illegal,
    so nothing was applied; the number of deals that ended)."""
    n = actions.shape[0]
    for i in range(n):
        a = actions[i]
        if a < 0 or a >= mask.shape[1] or not mask[i, a]:
            return True, 0
    manni_size = manni.shape[1]
    deals_over = 0
    for i in range(n):
        a = actions[i]
        s = to_move[i]
        ph = phase[i]
        if ph == PLAY:
            hands[i, s, a] = False
            played[i, s, a] = True
            suit = a // 13
            tl = trick_len[i]
            if tl == 0:
                led_suit[i] = suit
            elif suit != led_suit[i]:
                voids[i, s, led_suit[i]] = True
            trick[i, tl] = a
            plays[i, n_plays[i], 0] = s
            plays[i, n_plays[i], 1] = a
            n_plays[i] += 1
            to_move[i] = (s + 1) % 3
            if tl < 2:
                trick_len[i] = tl + 1
                continue
            best, best_key = 0, -1000
            for j in range(3):
                c = trick[i, j]
                r = c % 13
                if kind[i] == 0 and r == 12:
                    r = -1
                cs = c // 13
                key = 100 + r if cs == trump[i] else (r if cs == led_suit[i] else -100)
                if key > best_key:
                    best, best_key = j, key
            w = (leader[i] + best) % 3
            tricks_won[i, w] += 1
            trick_len[i] = 0
            led_suit[i] = -1
            leader[i] = w
            to_move[i] = w
            if tricks_won[i, 0] + tricks_won[i, 1] + tricks_won[i, 2] == tricks_per_deal:
                deal_over[i] = True
                deals_over += 1
        elif ph == EXCHANGE:
            finish = a == EXCHANGE_DONE
            if not finish:
                hands[i, s, a] = False
                discards[i, s, a] = True
                pending[i, n_pending[i]] = a
                n_pending[i] += 1
                finish = min(LIMITS[decision[i]], manni_size - manni_pos[i]) - n_pending[i] == 0
            if finish:
                k = n_pending[i]
                for j in range(manni_pos[i], manni_pos[i] + k):
                    hands[i, s, manni[i, j]] = True
                    drawn[i, s, manni[i, j]] = True
                exchange_counts[i, s] = k
                manni_pos[i] += k
                n_pending[i] = 0
                _next_decision(i, phase, to_move, dealer, decision, leader)
        elif ph == SWAP:
            if a == SWAP_HAND:
                for c in range(52):
                    discards[i, s, c] = hands[i, s, c]
                    hands[i, s, c] = False
                for j in range(manni_size):
                    hands[i, s, manni[i, j]] = True
                    drawn[i, s, manni[i, j]] = True
                swapper[i] = s
                _start_play(i, phase, to_move, dealer, leader)
            else:
                passed[i, n_passed[i]] = s
                n_passed[i] += 1
                _next_decision(i, phase, to_move, dealer, decision, leader)
    return False, deals_over


@numba.njit(**_OPTS)
def _next_decision(i, phase, to_move, dealer, decision, leader):
    decision[i] += 1
    if decision[i] < 3:
        to_move[i] = (dealer[i] + 1 + decision[i]) % 3
    else:
        _start_play(i, phase, to_move, dealer, leader)


@numba.njit(**_OPTS)
def _start_play(i, phase, to_move, dealer, leader):
    phase[i] = PLAY
    f = (dealer[i] + 1) % 3
    leader[i] = f
    to_move[i] = f


@numba.njit(**_OPTS)
def end_deal_kernel(g, horn, negative, target, max_deals, outcome, tricks_won, kind, plus, minus, totals,
                    deal_index, dealer, rewards, terminated, truncated, info_tricks, info_points, info_plus,
                    info_minus, info_totals, winners, deal_over, new_deal, new_game):
    """Score the deals that ended in games ``g`` (as ``VectorManni._end_deal`` does in numpy):
    tallies, ``infos`` arrays, rewards, the end of the game (``new_game[i]`` set; the caller starts
    the next game) or the next dealer and deal index (the caller deals)."""
    for i in g:
        top, n_top, top_plus = -1 << 30, 0, -1 << 30
        for a in range(3):
            t = tricks_won[i, a]
            if horn:
                p = 4 - t if kind[i] == NULLO else t - 4
            elif negative:
                p = t - 4
            else:
                p = max(0, t - 4)
            totals[i, a] += p
            plus[i, a] += max(p, 0)
            minus[i, a] += max(-p, 0)
            info_tricks[i, a] = t
            info_points[i, a] = p
            info_plus[i, a] = plus[i, a]
            info_minus[i, a] = minus[i, a]
            info_totals[i, a] = totals[i, a]
            if not outcome:
                rewards[i, a] = p
            top_plus = max(top_plus, plus[i, a])
            if totals[i, a] > top:
                top, n_top = totals[i, a], 1
            elif totals[i, a] == top:
                n_top += 1
        done = top_plus >= target if horn else top >= target and n_top == 1
        cap = not done and deal_index[i] + 1 >= max_deals
        deal_over[i] = True
        new_deal[i] = True
        if done or cap:
            terminated[i] = not cap
            truncated[i] = cap
            new_game[i] = True
            for a in range(3):
                winners[i, a] = totals[i, a] == top
            if outcome:
                for a in range(3):
                    if n_top == 3:
                        rewards[i, a] = 0.0
                    elif winners[i, a]:
                        rewards[i, a] = 1.0 / n_top
                    else:
                        rewards[i, a] = -1.0 / (3 - n_top)
        else:
            deal_index[i] += 1
            dealer[i] = (dealer[i] + 1) % 3


@numba.njit(**_OPTS)
def start_deal_kernel(g, decks, deck_ptr, hand_pos, manni_cards, horn, trump_rotation, hands, dealt, discards,
                      drawn, played, voids, manni, manni_pos, cut_card, kind, trump, phase, to_move, leader, dealer,
                      deal_index, decision, n_pending, exchange_counts, swapper, passed, n_passed, led_suit,
                      trick_len, n_plays, tricks_won):
    """Deal the next deal of games ``g`` from their shuffled packs (``decks[i, deck_ptr[i]]``, the
    caller refills exhausted blocks first), as ``VectorManni._start_deal`` does in numpy."""
    for i in g:
        deck = decks[i, deck_ptr[i]]
        deck_ptr[i] += 1
        d = dealer[i]
        f = (d + 1) % 3
        for a in range(3):
            for c in range(52):
                hands[i, a, c] = False
                discards[i, a, c] = False
                drawn[i, a, c] = False
                played[i, a, c] = False
            for u in range(4):
                voids[i, a, u] = False
            exchange_counts[i, a] = -1
            passed[i, a] = -1
            tricks_won[i, a] = 0
        for j in range(3):
            seat = (d + 1 + j) % 3
            for k in range(hand_pos.shape[1]):
                hands[i, seat, deck[hand_pos[j, k]]] = True
        for a in range(3):
            for c in range(52):
                dealt[i, a, c] = hands[i, a, c]
        for k in range(manni_cards.shape[0]):
            manni[i, k] = deck[manni_cards[k]]
        if horn:
            cut = deck[deck.shape[0] - 1]
            rank = cut % 13
            cut_card[i] = cut
            kind[i] = NULLO if rank <= 3 else (TRUMP if rank <= 7 else GRAND)
            trump[i] = cut // 13 if kind[i] == TRUMP else -1
            phase[i] = EXCHANGE
        else:
            kind[i] = TRUMP
            trump[i] = trump_rotation[deal_index[i] % 4]
            phase[i] = SWAP
        manni_pos[i] = 0
        to_move[i] = f
        leader[i] = f
        decision[i] = 0
        n_pending[i] = 0
        swapper[i] = -1
        n_passed[i] = 0
        led_suit[i] = -1
        trick_len[i] = 0
        n_plays[i] = 0


@numba.njit(**_OPTS)
def _copy(dst, d0, src, s0, k):
    """``dst[d0 : d0 + k] = src[s0 : s0 + k]`` on flat arrays, written so that LLVM vectorizes it:
    no views (each costs two atomic reference-count updates), unsigned indices (numba checks signed
    ones for negative values) and ``k`` a runtime value (a constant trip count is unrolled into
    scalar code instead)."""
    d, s = np.uint64(d0), np.uint64(s0)
    for c in range(np.uint64(k)):
        dst[d + c] = src[s + c]


@numba.njit(inline="always", **_OPTS)
def _rel(seat, me):
    """Seat ``seat`` relative to seat ``me`` (0 me, 1 left, 2 right), both in 0..2."""
    r = seat - me
    return r + 3 if r < 0 else r


@numba.njit(**_OPTS)
def observe_kernel(out, mask, off, horn, full, play_slot, variant_one, manni_size, tricks, score, max_deals,
                   hand_size, phase, hands, discards, drawn, played, voids, cut_card, kind, trump, to_move, dealer,
                   exchange_counts, manni_pos, decision, n_pending, swapper, passed, leader, led_suit, trick,
                   trick_len, tricks_won, plus, minus, totals, deal_index, plays, n_plays):
    """Observations (into ``out``, (N, size) float32) and legal-action masks (into ``mask``, (N, 63)
    bool viewed as uint8) of every game's seat on turn; ``off`` holds the segment offsets in
    :data:`manni_env.vector_obs.KERNEL_OFFSETS` order; the card arrays ``hands`` ... ``voids`` come
    as uint8 views. Each row is zeroed, then written while it is in the cache."""
    n, size = out.shape
    (o_hand, _, o_kind, o_trump, o_cut, o_cut_holder, o_dealer, o_to_move, o_phase, o_discards,
     o_drawn, o_counts, o_decided, o_manni_used, o_limit, o_swapper, o_passed, o_trick, o_led, o_leader,
     o_played, o_voids, o_tricks, o_plus, o_minus, o_totals, o_deal, o_history) = (
        off[0], off[1], off[2], off[3], off[4], off[5], off[6], off[7], off[8], off[9], off[10], off[11],
        off[12], off[13], off[14], off[15], off[16], off[17], off[18], off[19], off[20], off[21], off[22],
        off[23], off[24], off[25], off[26], off[27])
    nc, nv = hands.shape[2], voids.shape[2]  # 52 cards, 4 suits (as runtime values: see _copy)
    flat, m = out.reshape(-1), mask.reshape(-1)
    hands, discards, drawn = hands.reshape(-1), discards.reshape(-1), drawn.reshape(-1)
    played, voids = played.reshape(-1), voids.reshape(-1)
    nm = mask.shape[1]
    for i in range(n):
        row = i * size
        flat[row : row + size] = 0.0
        s = to_move[i]
        ph = phase[i]
        own = (3 * i + s) * nc  # this seat's row in the flat card arrays
        mrow = i * nm
        m[mrow : mrow + nm] = 0
        if ph == PLAY:
            lo, hi = 0, 52
            if trick_len[i] > 0:
                led = led_suit[i]
                for c in range(13 * led, 13 * led + 13):
                    if hands[own + c]:
                        lo, hi = 13 * led, 13 * led + 13
                        break
            _copy(m, mrow + lo, hands, own + lo, hi - lo)
        elif ph == EXCHANGE:
            _copy(m, mrow, hands, own, nc)
            m[mrow + EXCHANGE_DONE] = 1
        elif ph == SWAP:
            m[mrow + KEEP_HAND] = 1
            m[mrow + SWAP_HAND] = 1
        _copy(flat, row + o_hand, hands, own, nc)
        _copy(flat, row + o_discards, discards, own, nc)
        _copy(flat, row + o_drawn, drawn, own, nc)
        for r in range(3):
            a = s + r
            if a >= 3:
                a -= 3
            _copy(flat, row + o_played + nc * r, played, (3 * i + a) * nc, nc)
            _copy(flat, row + o_voids + nv * r, voids, (3 * i + a) * nv, nv)
            flat[row + o_tricks + r] = tricks_won[i, a] / tricks
            flat[row + o_plus + r] = plus[i, a] / score
            flat[row + o_minus + r] = minus[i, a] / score
            flat[row + o_totals + r] = totals[i, a] / score
        flat[row + variant_one] = 1.0
        d = _rel(dealer[i], s)
        flat[row + o_dealer + d] = 1.0
        flat[row + o_to_move] = 1.0
        flat[row + o_phase + ph] = 1.0
        flat[row + o_kind + kind[i]] = 1.0
        if trump[i] >= 0:
            flat[row + o_trump + trump[i]] = 1.0
        if horn:
            flat[row + o_cut + cut_card[i]] = 1.0
            flat[row + o_cut_holder + d] = 1.0
            for r in range(3):
                a = s + r
                if a >= 3:
                    a -= 3
                cnt = exchange_counts[i, a]
                if cnt >= 0:
                    flat[row + o_decided + r] = 1.0
                    flat[row + o_counts + r] = cnt / 12.0
            flat[row + o_manni_used] = manni_pos[i] / manni_size
            if ph == EXCHANGE:
                left = min(LIMITS[decision[i]], manni_size - manni_pos[i]) - n_pending[i]
                flat[row + o_limit] = left / 12.0
        else:
            for k in range(3):
                if passed[i, k] >= 0:
                    r = _rel(passed[i, k], s)
                    flat[row + o_passed + r] = 1.0
                    flat[row + o_decided + r] = 1.0
            if swapper[i] >= 0:
                r = _rel(swapper[i], s)
                flat[row + o_decided + r] = 1.0
                flat[row + o_swapper + r] = 1.0
                flat[row + o_manni_used] = 1.0
                flat[row + o_counts + r] = hand_size / 12.0
        if ph == PLAY:
            ld = leader[i]
            flat[row + o_leader + _rel(ld, s)] = 1.0
            if led_suit[i] >= 0:
                flat[row + o_led + led_suit[i]] = 1.0
            for k in range(trick_len[i]):
                p = ld + k
                if p >= 3:
                    p -= 3
                flat[row + o_trick + 52 * _rel(p, s) + trick[i, k]] = 1.0
        flat[row + o_deal] = deal_index[i] / max_deals
        if full:
            for k in range(n_plays[i]):
                base = row + o_history + play_slot * k
                flat[base + plays[i, k, 1]] = 1.0
                flat[base + 52 + _rel(plays[i, k, 0], s)] = 1.0
