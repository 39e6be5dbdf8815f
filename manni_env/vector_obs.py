"""Batched observation encoding for :class:`manni_env.vector.VectorManni`.

:class:`VectorEncoder` writes, for many games at once, exactly the vectors that
:class:`manni_env.observation.ObservationEncoder` writes for one seat view (same layout, same
float32 values; the equivalence test checks it byte for byte). It reads the vector env's arrays
directly and encodes each game from the point of view of its seat on turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .engine import Phase
from .observation import _PLAY_SLOT, EXCHANGE_SCALE, ObservationEncoder, score_scale
from .rules import VARIANTS, Rules

if TYPE_CHECKING:
    from .vector import VectorManni

_REL = np.arange(3)
#: Segment offsets in the order :func:`manni_env.vector_numba.observe_kernel` unpacks them.
KERNEL_OFFSETS = ("hand", "variant", "contract_kind", "trump", "cut_card", "cut_holder", "dealer", "to_move",
                  "phase", "discards", "drawn", "exchange_counts", "exchange_decided", "manni_used",
                  "exchange_limit", "swapper", "passed", "trick", "led_suit", "leader", "played", "voids",
                  "tricks_won", "plus", "minus", "totals", "deal_index", "history")


class VectorEncoder:
    """Observations of the seats on turn of a :class:`VectorManni` (layout: :attr:`segments`)."""

    def __init__(self, rules: Rules, history: str = "summary"):
        scalar = ObservationEncoder(rules, history)
        self.rules = rules
        self.history = history
        self.segments = scalar.segments
        self.size = scalar.size
        self.low, self.high = scalar.low, scalar.high
        self.o = scalar.offset
        self._variant = self.o["variant"] + VARIANTS.index(rules.variant)
        self._horn = rules.variant == "hornafjardar"
        self._full = history == "full"
        self._score = float(score_scale(rules))
        # for the numba kernel (manni_env.vector_numba.observe_kernel)
        self.kernel_offsets = np.array([self.o.get(name, 0) for name in KERNEL_OFFSETS], np.int64)
        self.horn, self.full, self.play_slot = self._horn, self._full, _PLAY_SLOT
        self.variant_one, self.score = self._variant, self._score
        self._tricks = float(rules.tricks_per_deal)

    def encode(self, v: VectorManni, g: np.ndarray, seats: np.ndarray | None = None) -> np.ndarray:
        """``(len(g), size)`` float32 observations of games ``g`` for ``seats`` (default: the
        seats on turn; a trainer encodes waiting seats to bootstrap their value)."""
        o = self.o
        k = g.size
        out = np.zeros((k, self.size), np.float32)
        flat = out.reshape(-1)  # one-hots are written through flat indices (faster than 2-D ones)
        rows = np.arange(k)
        base = rows * self.size
        to_move = v.to_move[g]
        s = to_move if seats is None else np.asarray(seats, np.int64)
        absr = (s[:, None] + _REL) % 3  # absolute seat of each relative seat
        own = g * 3 + s  # row of (game, seat) in the (N * 3, ...) views of per-seat arrays
        each = (g[:, None] * 3 + absr).ravel()  # rows of (game, relative seat 0, 1, 2)
        out[:, o["hand"] : o["hand"] + 52] = v.hands.reshape(-1, 52).take(own, 0)
        out[:, o["discards"] : o["discards"] + 52] = v.discards.reshape(-1, 52).take(own, 0)
        out[:, o["drawn"] : o["drawn"] + 52] = v.drawn.reshape(-1, 52).take(own, 0)
        out[:, o["played"] : o["played"] + 156] = v.played.reshape(-1, 52).take(each, 0).reshape(k, 156)
        out[:, o["voids"] : o["voids"] + 12] = v.voids.reshape(-1, 4).take(each, 0).reshape(k, 12)
        out[:, self._variant] = 1.0
        dealer = (v.dealer[g] - s) % 3
        flat[base + o["dealer"] + dealer] = 1.0
        flat[base + o["to_move"] + (to_move - s) % 3] = 1.0
        phase = v.phase[g]
        flat[base + o["phase"] + phase] = 1.0
        flat[base + o["contract_kind"] + v.kind[g]] = 1.0
        trump = v.trump[g]
        has = trump >= 0
        flat[base[has] + o["trump"] + trump[has]] = 1.0
        if self._horn:
            flat[base + o["cut_card"] + v.cut_card[g]] = 1.0
            flat[base + o["cut_holder"] + dealer] = 1.0
            counts = v.exchange_counts.reshape(-1).take(each).reshape(k, 3)  # by relative seat
            out[:, o["exchange_decided"] : o["exchange_decided"] + 3] = counts >= 0
            out[:, o["exchange_counts"] : o["exchange_counts"] + 3] = np.maximum(counts, 0) / EXCHANGE_SCALE
            out[:, o["manni_used"]] = v.manni_pos[g] / self.rules.manni_size
            out[:, o["exchange_limit"]] = np.where(s == to_move, v.exchange_limit(g), 0) / EXCHANGE_SCALE
        else:
            passed = v.passed[g]  # (k, 3) absolute seats that kept, -1 padded
            pr, pc = np.nonzero(passed >= 0)
            rel = (passed[pr, pc] - s[pr]) % 3
            out[pr, o["passed"] + rel] = 1.0
            out[pr, o["exchange_decided"] + rel] = 1.0
            swapped = np.flatnonzero(v.swapper[g] >= 0)
            rel = (v.swapper[g[swapped]] - s[swapped]) % 3
            out[swapped, o["exchange_decided"] + rel] = 1.0
            out[swapped, o["swapper"] + rel] = 1.0
            out[swapped, o["manni_used"]] = 1.0
            out[swapped, o["exchange_counts"] + rel] = self.rules.hand_size / EXCHANGE_SCALE
        play = np.flatnonzero(phase == Phase.PLAY)
        if play.size:
            gp = g[play]
            leader = v.leader[gp]
            out[play, o["leader"] + (leader - s[play]) % 3] = 1.0
            led = v.led_suit[gp]
            lp = led >= 0
            out[play[lp], o["led_suit"] + led[lp]] = 1.0
            tl = v.trick_len[gp]
            for i in range(2):
                on = np.flatnonzero(tl > i)
                r = play[on]
                rel = (leader[on] + i - s[r]) % 3
                out[r, o["trick"] + 52 * rel + v.trick[gp[on], i]] = 1.0
        for name, arr, scale in (("tricks_won", v.tricks_won, self._tricks), ("plus", v.plus, self._score),
                                 ("minus", v.minus, self._score), ("totals", v.totals, self._score)):
            out[:, o[name] : o[name] + 3] = arr.reshape(-1).take(each).reshape(k, 3) / scale
        out[:, o["deal_index"]] = v.deal_index[g] / self.rules.max_deals
        if self._full:
            n = v.n_plays[g]
            pr, pc = np.nonzero(np.arange(v.plays.shape[1]) < n[:, None])
            seat, card = v.plays[g[pr], pc, 0], v.plays[g[pr], pc, 1]
            slot = o["history"] + _PLAY_SLOT * pc
            out[pr, slot + card] = 1.0
            out[pr, slot + 52 + (seat - s[pr]) % 3] = 1.0
        return out
