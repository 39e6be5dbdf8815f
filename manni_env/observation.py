"""Observation vectors and action masks, from one seat's point of view.

:class:`ObservationEncoder` turns a :class:`~manni_env.view.SeatView` into a flat ``float32``
vector with one layout for every variant (only the optional ``history="full"`` segment is sized by
the variant's tricks per deal). Seats are **relative** to the observing seat: 0 = me, 1 = my left
(the next to play after me), 2 = my right. Cards are one-hot over the 52 card indices
(``suit*13+rank``, see :mod:`manni_env.cards`).

Two layouts (:data:`LAYOUTS`): ``v0``, and ``v1`` = every ``v0`` segment unchanged and in the same
order, followed by the trick-play segments (:data:`TRICK_PLAY_SEGMENTS`: the position in the
current trick, the card winning it so far and whose it is, the cards that led and won this deal's
tricks, and for each card in hand how many unseen cards of its suit rank above it), so a ``v0``
observation is the first ``v0 size`` floats of the ``v1`` observation of the same position. Each
layout names the variants of its ``variant`` one-hot (:data:`LAYOUT_VARIANTS`: both name the four
of today), so a row added to the variant table changes no observation of an existing layout and
no checkpoint is refused for it; the new variant's one-hot is all zeros there.

The layout is published as a table generated from the code (:func:`layout_table`) and a vector can
be decoded back into words (:func:`describe`). Scaled numbers:

- exchange counts (cards each seat took from the Manni: Hornafjarðarmanni exchanges, Basic's
  whole-hand swap = 12, the announcement variants' pickup = 4) and the own remaining discard
  allowance are divided by 12; Manni cards used by the size of the Manni; tricks won by the tricks
  per deal; the deal index by the deal cap;
- the plus / minus / total tallies are divided by the target (Hornafjarðarmanni, Basic) or by
  :data:`FIXED_SCORE_SCALE` (the fixed-length announcement variants);
- ``v1``'s ``unseen_above`` counts are divided by :data:`UNSEEN_SCALE`.

Contracts each seat has used (announcement variants) have one slot each of
:data:`~manni_env.rules.CONTRACT_SLOTS` (spades, hearts, diamonds, clubs, grand, nullo); Trjámann's
"suit" contract (hearts or diamonds, named by the declarer) uses the hearts slot, since hearts is not
a contract of its own there.

:class:`StateEncoder` is the privileged full state (every hand, the unseen Manni, every discard)
for PettingZoo's ``state()``: tools only, never a policy's input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from manni_env.actions import NUM_ACTIONS
from manni_env.cards import ACE, NUM_CARDS, SUITS, card_to_str, sort_for_display
from manni_env.engine import GameState, trick_winner
from manni_env.rules import CONTRACT_SLOTS, ContractKind, ExchangeScheme, Phase, Rules
from manni_env.view import SeatView

HISTORIES = ("summary", "full")
#: Observation layouts: ``v0`` the original one; ``v1`` = v0 followed by the trick-play segments
#: (:data:`TRICK_PLAY_SEGMENTS`), so a v0 observation is the first ``v0 size`` floats of the v1 one.
LAYOUTS = ("v0", "v1")
#: The variants each layout names, in the order of its ``variant`` one-hot: the segment's width is
#: frozen with the layout, not read from the variant table, so a row added to the table leaves every
#: observation of these layouts (and every checkpoint trained on them) as it was. A variant a layout
#: does not name has no bit there (the segment is all zeros); a new layout may name it.
LAYOUT_VARIANTS: dict[str, tuple[str, ...]] = {
    "v0": ("hornafjardar", "basic", "trjamann", "laugarvatn"),
    "v1": ("hornafjardar", "basic", "trjamann", "laugarvatn"),
}
#: Divisor of the ``unseen_above`` counts (the most cards of a suit above a card).
UNSEEN_SCALE = 12
#: Divisor of the score tallies in the fixed-length variants (Trjámann, Laugarvatnsmanni).
FIXED_SCORE_SCALE = 32
#: Divisor of exchange counts and of the remaining discard allowance (a hand's size).
EXCHANGE_SCALE = 12
CONTRACT_KINDS = tuple(k.label for k in ContractKind)  # by ContractKind index
PHASES = ("exchange", "swap", "pickup", "discard", "announce", "play")  # Phase 0..5
SEAT_NAMES = ("me", "left", "right")
_CARD_BYTES = 7  # 56 bits hold a 52-card mask
#: Floats of one slot of the ``history`` segment: the card one-hot and the relative seat one-hot.
PLAY_SLOT = NUM_CARDS + 3
_REL = tuple(tuple((a - s) % 3 for a in range(3)) for s in range(3))  # _REL[seat][abs] = relative
#: _BYTE_BITS[b]: the 8 bits of byte value b, least significant first, as floats
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)
#: _PLAY_BITS[relative seat][card]: the bits of one history slot
_PLAY_BITS = tuple(tuple(1 << card | 1 << (NUM_CARDS + r) for card in range(NUM_CARDS)) for r in range(3))
#: TRICK_ORDER[nullo]: the ranks of a suit from the highest in the trick order to the lowest
TRICK_ORDER = (tuple(range(ACE, -1, -1)), (*range(ACE - 1, -1, -1), ACE))


@dataclass(frozen=True)
class Segment:
    """One named slice ``[offset, offset + size)`` of an observation vector."""

    name: str
    offset: int
    size: int
    meaning: str


#: The segments ``v1`` appends to ``v0`` (after ``deal_index``, or ``history`` with the full history).
TRICK_PLAY_SEGMENTS = (
    ("trick_position", 3, "play phase: cards already in the current trick (0, 1, 2), one-hot"),
    ("trick_winning_card", 52, "the card winning the current trick so far (zeros when it is empty)"),
    ("trick_winning_seat", 3, "relative seat that played the card winning the current trick"),
    ("led", 52, "cards played this deal that were the first card of their trick"),
    ("won", 52, "cards played this deal that won their (completed) trick"),
    # scaled numbers
    ("unseen_above", 52, f"for each card in hand: cards of its suit above it in the trick order (nullo: "
     f"ace low) that this seat has not seen (not in hand, not played, not its own discards; the cut "
     f"card counts as unseen: its holder may have discarded it) / {UNSEEN_SCALE}; 0 for other cards"),
)


def check_layout(layout: str) -> str:
    """``layout`` if it is one of :data:`LAYOUTS`, else a one-line ``ValueError``."""
    if layout not in LAYOUTS:
        raise ValueError(f"observation layout must be one of {', '.join(LAYOUTS)}; got {layout!r}")
    return layout


def variant_slot(layout: str, variant: str) -> int | None:
    """The bit of ``variant`` in ``layout``'s ``variant`` segment (:data:`LAYOUT_VARIANTS`), ``None``
    when the layout does not name it."""
    names = LAYOUT_VARIANTS[check_layout(layout)]
    return names.index(variant) if variant in names else None


def _observation_segments(rules: Rules, history: str, layout: str = "v0") -> list[tuple[str, int, str]]:
    if history not in HISTORIES:
        raise ValueError(f"history must be one of {', '.join(HISTORIES)}; got {history!r}")
    check_layout(layout)
    scale = "target" if rules.target is not None else str(FIXED_SCORE_SCALE)
    parts = [
        ("hand", 52, "own hand now (card one-hot)"),
        ("variant", len(LAYOUT_VARIANTS[layout]), "variant: " + ", ".join(LAYOUT_VARIANTS[layout])),
        ("contract_kind", 3, "contract kind: nullo, trump, grand (zeros before the announcement)"),
        ("trump", 4, "trump suit: C, D, H, S (zeros without trump)"),
        ("cut_card", 52, "Hornafjarðarmanni: the cut card (public)"),
        ("cut_holder", 3, "relative seat that was dealt the cut card (the dealer)"),
        ("dealer", 3, "relative seat of the dealer"),
        ("to_move", 3, "relative seat on turn (zeros once the game is over)"),
        ("phase", 6, "phase: " + ", ".join(PHASES) + " (zeros once the game is over)"),
        ("discards", 52, "own discards this deal (Basic: the swapped-out hand)"),
        ("drawn", 52, "own cards taken from the Manni this deal"),
        ("exchange_decided", 3, "relative seats that made their exchange / swap / pickup decision"),
        ("swapper", 3, "Basic: relative seat that swapped its hand for the Manni"),
        ("passed", 3, "Basic / announcement: relative seats that kept the hand / passed the Manni"),
        ("taker", 3, "announcement: relative seat that took the Manni"),
        ("declarer", 3, "announcement: relative seat of the declarer"),
        ("used_contracts", 3 * len(CONTRACT_SLOTS), f"announcement: contracts used, {len(CONTRACT_SLOTS)} slots "
         "per relative seat: " + ", ".join(
            CONTRACT_SLOTS) + " (Trjámann's suit in the hearts slot)"),
        ("trick", 3 * 52, "current trick: the card each relative seat played to it (3 x 52)"),
        ("led_suit", 4, "suit led to the current trick: C, D, H, S"),
        ("leader", 3, "relative seat that leads the current trick (play phase)"),
        ("played", 3 * 52, "cards each relative seat has played this deal (3 x 52)"),
        ("voids", 12, "suits C, D, H, S each relative seat has shown void in (3 x 4)"),
        # scaled numbers, one contiguous block
        ("exchange_counts", 3, f"cards each relative seat took from the Manni / {EXCHANGE_SCALE}"),
        ("manni_used", 1, "Manni cards taken so far / Manni size"),
        ("exchange_limit", 1, f"own remaining discard allowance / {EXCHANGE_SCALE} (while deciding)"),
        ("tricks_won", 3, "tricks won this deal per relative seat / tricks per deal"),
        ("plus", 3, f"plus tally per relative seat / {scale}"),
        ("minus", 3, f"minus tally per relative seat / {scale}"),
        ("totals", 3, f"total (plus - minus) per relative seat / {scale}"),
        ("deal_index", 1, "deals played before this one / deal cap"),
    ]
    if history == "full":
        slots = 3 * rules.tricks_per_deal
        parts.append(("history", slots * PLAY_SLOT,
                      f"every play of this deal in order: {slots} slots x (52 card one-hot + 3 relative seat)"))
    if layout == "v1":
        parts += TRICK_PLAY_SEGMENTS
    return parts


def _build(parts: list[tuple[str, int, str]]) -> list[Segment]:
    segments, offset = [], 0
    for name, size, meaning in parts:
        segments.append(Segment(name, offset, size, meaning))
        offset += size
    return segments


def score_scale(rules: Rules) -> int:
    """Divisor of the plus / minus / total tallies in the observation."""
    return rules.target if rules.target is not None else FIXED_SCORE_SCALE


class ObservationEncoder:
    """Encodes a :class:`SeatView` as a ``float32`` vector of :attr:`size` (layout: :attr:`segments`).

    The 0/1 segments are assembled as bits of one Python integer (card sets are already bitmasks)
    and turned into floats by one table lookup of its bytes; the scaled numbers form one contiguous
    block written after (and, in layout ``v1``, the ``unseen_above`` block at the end).
    """

    def __init__(self, rules: Rules, history: str = "summary", layout: str = "v0"):
        self.rules = rules
        self.history = history
        self.layout = layout
        self.segments = _build(_observation_segments(rules, history, layout))
        self.size = self.segments[-1].offset + self.segments[-1].size
        self.offset = {s.name: s.offset for s in self.segments}
        self._nbytes = (self.size + 7) // 8
        self.variant_slot = variant_slot(layout, rules.variant)
        self._variant_bit = 0 if self.variant_slot is None else 1 << (self.offset["variant"] + self.variant_slot)
        self._scalars = self.offset["exchange_counts"]
        self._scalars_end = self.offset["deal_index"] + 1
        self._manni_size = rules.manni_size
        self._tricks = rules.tricks_per_deal
        self._score = score_scale(rules)
        self._max_deals = rules.max_deals
        spec = rules.spec
        self._exchange = spec.exchange == ExchangeScheme.EXCHANGE
        self._swap = spec.exchange == ExchangeScheme.SWAP
        self._pickup_discards = spec.pickup_discards
        self._slot_of = {a.name: a.slot for a in spec.announcements}
        self._full = history == "full"
        self._trick_play = layout == "v1"
        self._pack = rules.pack
        # cards a swap (Basic: the whole hand) or a pickup (the four Manni cards) takes
        self._taken = (rules.hand_size if self._swap else rules.manni_size) / EXCHANGE_SCALE
        self.low, self.high = self._bounds()

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Elementwise bounds of the vector (for a ``gymnasium.spaces.Box``)."""
        low = np.zeros(self.size, np.float32)
        high = np.ones(self.size, np.float32)
        # one deal moves a tally by at most the tricks per deal
        bound = self._max_deals * self._tricks / self._score
        for name in ("plus", "minus", "totals"):
            o = self.offset[name]
            high[o : o + 3] = bound
        o = self.offset["totals"]
        low[o : o + 3] = -bound
        return low, high

    def encode(self, view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``view.seat`` (written into ``out`` when given, else a new array)."""
        o = self.offset
        seat = view.seat
        rel = _REL[seat]
        left, right = (seat + 1) % 3, (seat + 2) % 3
        played = view.played
        bits = (
            view.hand << o["hand"] | view.discards << o["discards"] | view.drawn << o["drawn"]
            | played[seat] << o["played"] | played[left] << (o["played"] + 52)
            | played[right] << (o["played"] + 104) | self._variant_bit
        )
        dealer = rel[view.dealer]
        bits |= 1 << (o["dealer"] + dealer)
        if view.to_move >= 0:
            bits |= 1 << (o["to_move"] + rel[view.to_move])
        phase = view.phase
        if phase != Phase.GAME_OVER:
            bits |= 1 << (o["phase"] + phase)
        if view.cut_card is not None:
            bits |= 1 << (o["cut_card"] + view.cut_card) | 1 << (o["cut_holder"] + dealer)
        contract = view.contract
        if contract is not None:
            bits |= 1 << (o["contract_kind"] + contract.kind)
            if contract.trump is not None:
                bits |= 1 << (o["trump"] + contract.trump)
            if contract.declarer is not None:
                bits |= 1 << (o["declarer"] + rel[contract.declarer])

        # exchange / swap / pickup: decisions as bits, counts as scaled numbers
        counts = [0.0, 0.0, 0.0]
        manni_used = limit = 0.0
        if self._exchange:
            for s, count in enumerate(view.exchange_counts):
                if count >= 0:
                    bits |= 1 << (o["exchange_decided"] + rel[s])
                    counts[rel[s]] = count / EXCHANGE_SCALE
            manni_used = view.manni_used / self._manni_size
            limit = view.exchange_limit / EXCHANGE_SCALE
        else:
            for s in view.passed:
                bits |= 1 << (o["passed"] + rel[s]) | 1 << (o["exchange_decided"] + rel[s])
            taker = view.swapper if self._swap else view.taker
            if taker is not None:
                r = rel[taker]
                bits |= 1 << (o["exchange_decided"] + r) | 1 << ((o["swapper"] if self._swap else o["taker"]) + r)
                counts[r] = self._taken
                manni_used = 1.0
            if phase == Phase.DISCARD and view.to_move == seat:
                limit = (self._pickup_discards - len(view.pending)) / EXCHANGE_SCALE
            for s, names in enumerate(view.used_contracts):
                base = o["used_contracts"] + len(CONTRACT_SLOTS) * rel[s]
                for name in names:
                    bits |= 1 << (base + self._slot_of[name])

        # trick play
        if phase == Phase.PLAY:
            leader = view.leader
            bits |= 1 << (o["leader"] + rel[leader])
            trick_o = o["trick"]
            for i, card in enumerate(view.trick):
                bits |= 1 << (trick_o + 52 * rel[(leader + i) % 3] + card)
            if view.led_suit >= 0:
                bits |= 1 << (o["led_suit"] + view.led_suit)
        voids = view.voids
        bits |= voids[seat] << o["voids"] | voids[left] << (o["voids"] + 4) | voids[right] << (o["voids"] + 8)
        if self._full:  # Horner's scheme: the last play first, each earlier one shifted in below
            history = 0
            for s, card in reversed(view.plays):
                history = history << PLAY_SLOT | _PLAY_BITS[rel[s]][card]
            bits |= history << o["history"]
        if self._trick_play:
            bits |= self._trick_play_bits(view, rel)

        # each byte of ``bits`` becomes its 8 floats in one table lookup
        byte_values = np.frombuffer(bits.to_bytes(self._nbytes, "little"), np.uint8)
        floats = _BYTE_BITS.take(byte_values, axis=0).reshape(-1)[: self.size]
        if out is None:
            out = floats
        else:
            out[:] = floats
        tricks, score = self._tricks, self._score
        won, plus, minus, totals = view.tricks_won, view.plus, view.minus, view.totals
        out[self._scalars : self._scalars_end] = (
            *counts, manni_used, limit,
            won[seat] / tricks, won[left] / tricks, won[right] / tricks,
            plus[seat] / score, plus[left] / score, plus[right] / score,
            minus[seat] / score, minus[left] / score, minus[right] / score,
            totals[seat] / score, totals[left] / score, totals[right] / score,
            view.deal_index / self._max_deals,
        )
        if self._trick_play:
            self._unseen_above(view, out)
        return out

    def _trick_play_bits(self, view: SeatView, rel: tuple[int, ...]) -> int:
        """The 0/1 segments of layout ``v1``: trick position, the card winning the trick so far
        and its seat, the cards that led and won this deal's tricks."""
        o, bits = self.offset, 0
        contract = view.contract
        if contract is None:
            return bits
        trump, nullo = contract.trump, contract.kind == ContractKind.NULLO
        trick = view.trick
        if view.phase == Phase.PLAY:
            bits |= 1 << (o["trick_position"] + len(trick))
        if trick:
            best = trick_winner(trick, trump, nullo)
            bits |= 1 << (o["trick_winning_card"] + trick[best])
            bits |= 1 << (o["trick_winning_seat"] + rel[(view.leader + best) % 3])
        plays = view.plays
        for first in range(0, len(plays), 3):
            cards = [card for _, card in plays[first : first + 3]]
            bits |= 1 << (o["led"] + cards[0])
            if len(cards) == 3:
                bits |= 1 << (o["won"] + cards[trick_winner(cards, trump, nullo)])
        return bits

    def _unseen_above(self, view: SeatView, out: np.ndarray) -> None:
        """Layout ``v1``'s ``unseen_above`` block (see :data:`TRICK_PLAY_SEGMENTS`)."""
        hand = view.hand
        seen = hand | view.discards | view.played[0] | view.played[1] | view.played[2] | ~self._pack
        contract = view.contract
        order = TRICK_ORDER[contract is not None and contract.kind == ContractKind.NULLO]
        base = self.offset["unseen_above"]
        for suit in range(0, NUM_CARDS, 13):
            above = 0
            for rank in order:
                card = suit + rank
                if hand >> card & 1:
                    out[base + card] = above / UNSEEN_SCALE
                elif not seen >> card & 1:
                    above += 1

    @staticmethod
    def action_mask(view: SeatView) -> np.ndarray:
        """``int8`` mask over the :data:`~manni_env.actions.NUM_ACTIONS` actions; all zeros unless
        it is ``view.seat``'s turn."""
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask.put(view.legal_actions, 1)
        return mask


def layout_table(rules: Rules, history: str = "summary", layout: str = "v0") -> str:
    """The observation layout as a Markdown table (segment, offset, size, meaning)."""
    enc = ObservationEncoder(rules, history, layout)
    return _table(enc.segments, f"Observation layout {layout} ({rules.variant}, history={history!r}): "
                  f"{enc.size} floats")


def _table(segments: list[Segment], title: str) -> str:
    lines = [title, "", "| segment | offset | size | meaning |", "|---|---:|---:|---|"]
    lines += [f"| `{s.name}` | {s.offset} | {s.size} | {s.meaning} |" for s in segments]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------- describe
def _cards_text(bits: np.ndarray) -> str:
    cards = sort_for_display(int(c) for c in np.flatnonzero(bits > 0.5))
    return " ".join(card_to_str(c) for c in cards) if cards else "-"


def _seats(bits: np.ndarray) -> list[str]:
    return [SEAT_NAMES[r] for r in np.flatnonzero(bits > 0.5)]


def _one(bits: np.ndarray, names) -> str | None:
    hot = np.flatnonzero(bits > 0.5)
    return names[int(hot[0])] if len(hot) else None


def describe(obs: np.ndarray, rules: Rules, history: str = "summary", layout: str = "v0") -> str:
    """Decode an observation vector into words (seats as me / left / right), one fact per line."""
    enc = ObservationEncoder(rules, history, layout)
    obs = np.asarray(obs, dtype=np.float64)
    if obs.shape != (enc.size,):
        raise ValueError(f"expected an observation of shape ({enc.size},) for {rules.variant}, got {obs.shape}")
    seg = {s.name: obs[s.offset : s.offset + s.size] for s in enc.segments}
    score = score_scale(rules)
    variant = _one(seg["variant"], LAYOUT_VARIANTS[layout]) or f"- (not named by layout {layout})"
    lines = [f"variant: {variant}",
             f"phase: {_one(seg['phase'], PHASES) or 'game over'}; on turn: {_one(seg['to_move'], SEAT_NAMES) or '-'}",
             f"dealer: {_one(seg['dealer'], SEAT_NAMES)}"]
    kind = _one(seg["contract_kind"], CONTRACT_KINDS)
    trump = _one(seg["trump"], SUITS)
    contract = "-" if kind is None else f"Trump {trump}" if kind == "trump" else kind.capitalize()
    declarer = _one(seg["declarer"], SEAT_NAMES)
    lines.append(f"contract: {contract}" + (f" (declarer: {declarer})" if declarer else ""))
    if seg["cut_card"].any():
        lines.append(f"cut card: {_cards_text(seg['cut_card'])} (dealt to {_one(seg['cut_holder'], SEAT_NAMES)})")
    lines += [f"hand: {_cards_text(seg['hand'])}",
              f"discards: {_cards_text(seg['discards'])}",
              f"drawn from the Manni: {_cards_text(seg['drawn'])}"]
    decided = _seats(seg["exchange_decided"])
    counts = [f"{SEAT_NAMES[r]} {round(seg['exchange_counts'][r] * EXCHANGE_SCALE)}" for r in range(3)
              if SEAT_NAMES[r] in decided]
    lines.append(f"exchanged: {', '.join(counts) or '-'}; Manni used: "
                 f"{round(seg['manni_used'][0] * rules.manni_size)}/{rules.manni_size}; "
                 f"my remaining limit: {round(seg['exchange_limit'][0] * EXCHANGE_SCALE)}")
    for name, label in (("swapper", "swapped"), ("taker", "took the Manni"), ("passed", "kept / passed")):
        if seg[name].any():
            lines.append(f"{label}: {', '.join(_seats(seg[name]))}")
    if rules.is_announcement:
        used = seg["used_contracts"].reshape(3, len(CONTRACT_SLOTS))
        names = list(CONTRACT_SLOTS)
        for a in rules.spec.announcements:
            names[a.slot] = a.name
        lines.append("contracts used: " + "; ".join(
            f"{SEAT_NAMES[r]} [{', '.join(names[i] for i in np.flatnonzero(used[r] > 0.5))}]" for r in range(3)))
    trick = seg["trick"].reshape(3, 52)
    leader = _one(seg["leader"], SEAT_NAMES)
    if leader is not None:
        order = [(SEAT_NAMES.index(leader) + i) % 3 for i in range(3)]
        played = [f"{SEAT_NAMES[r]} {_cards_text(trick[r])}" for r in order if trick[r].any()]
        led = _one(seg["led_suit"], SUITS)
        lines.append(f"trick: led by {leader}" + (f", suit {led}: " + ", ".join(played) if led else ", no card yet"))
    plays = seg["played"].reshape(3, 52)
    lines.append("played this deal: " + "; ".join(f"{SEAT_NAMES[r]} {_cards_text(plays[r])}" for r in range(3)))
    voids = seg["voids"].reshape(3, 4)
    shown = [f"{SEAT_NAMES[r]} {''.join(SUITS[s] for s in np.flatnonzero(voids[r] > 0.5))}" for r in range(3)
             if voids[r].any()]
    lines.append(f"void in: {', '.join(shown) or '-'}")

    def per_seat(name: str, scale: float) -> str:
        return ", ".join(f"{SEAT_NAMES[r]} {round(seg[name][r] * scale)}" for r in range(3))

    lines += [f"tricks won: {per_seat('tricks_won', rules.tricks_per_deal)}",
              f"plus: {per_seat('plus', score)}",
              f"minus: {per_seat('minus', score)}",
              f"totals: {per_seat('totals', score)}",
              f"deal: {round(seg['deal_index'][0] * rules.max_deals)}"]
    if history == "full":
        slots = seg["history"].reshape(-1, PLAY_SLOT)
        plays_text = [f"{_one(s[NUM_CARDS:], SEAT_NAMES)} {_cards_text(s[:NUM_CARDS])}" for s in slots if s.any()]
        lines.append(f"history: {', '.join(plays_text) or '-'}")
    if layout == "v1":
        lines += _describe_trick_play(seg)
    return "\n".join(lines)


def _describe_trick_play(seg: dict[str, np.ndarray]) -> list[str]:
    position = np.flatnonzero(seg["trick_position"] > 0.5)
    winning = (f"{_cards_text(seg['trick_winning_card'])} ({_one(seg['trick_winning_seat'], SEAT_NAMES)})"
               if seg["trick_winning_card"].any() else "-")
    unseen = [f"{card_to_str(int(c))} {round(seg['unseen_above'][c] * UNSEEN_SCALE)}"
              for c in sort_for_display(int(c) for c in np.flatnonzero(seg["unseen_above"] > 0))]
    return [f"cards in the trick: {int(position[0]) if len(position) else '-'}; winning so far: {winning}",
            f"led this deal: {_cards_text(seg['led'])}",
            f"won tricks this deal: {_cards_text(seg['won'])}",
            f"unseen cards above mine: {', '.join(unseen) or '-'}"]


# ------------------------------------------------------------------------------------- full state
_PRIVATE = ("hand", "discards", "drawn", "exchange_limit")


class StateEncoder:
    """The privileged full state of a game as a ``float32`` vector (PettingZoo ``state()``).

    Every hand, the cards still unseen in the Manni, every seat's discards and draws, the
    remaining discard allowance of the seat on turn, then the public segments of the observation
    layout with **absolute** seats (seat 0's point of view). For tools and centralized critics only.
    """

    def __init__(self, rules: Rules, history: str = "summary"):
        self.rules = rules
        self.observation = ObservationEncoder(rules, history)
        parts = [
            ("hands", 3 * 52, "every seat's hand now (absolute seats, 3 x 52)"),
            ("manni", 52, "cards still in the Manni (not taken by anyone)"),
            ("discards", 3 * 52, "every seat's discards this deal (3 x 52)"),
            ("drawn", 3 * 52, "cards each seat took from the Manni this deal (3 x 52)"),
            ("exchange_limit", 1, f"remaining discard allowance of the seat on turn / {EXCHANGE_SCALE}"),
        ]
        public = [s for s in self.observation.segments if s.name not in _PRIVATE]
        first_public = sum(size for _, size, _ in parts)
        parts += [(s.name, s.size, s.meaning.replace("relative seat", "seat")) for s in public]
        self.segments = _build(parts)
        self.size = self.segments[-1].offset + self.segments[-1].size
        self._src = np.concatenate([np.arange(s.offset, s.offset + s.size) for s in public])
        self._dest = np.arange(first_public, self.size)
        obs_low, obs_high = self.observation.low, self.observation.high
        self.low = np.concatenate([np.zeros(first_public, np.float32), obs_low[self._src]])
        self.high = np.concatenate([np.ones(first_public, np.float32), obs_high[self._src]])

    def encode(self, state: GameState) -> np.ndarray:
        out = np.zeros(self.size, np.float32)
        hidden = [*(state.hand_mask(s) for s in range(3)), state.unseen_manni(),
                  *(state.discards_mask(s) for s in range(3)), *(state.drawn_mask(s) for s in range(3))]
        raw = b"".join(m.to_bytes(_CARD_BYTES, "little") for m in hidden)
        bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little").reshape(len(hidden), -1)
        out[: 52 * len(hidden)] = bits[:, :NUM_CARDS].ravel()
        out[52 * len(hidden)] = state.discards_left() / EXCHANGE_SCALE
        out[self._dest] = self.observation.encode(state.view(0))[self._src]
        return out

    def layout_table(self) -> str:
        return _table(self.segments, f"State layout ({self.rules.variant}): {self.size} floats")


__all__ = [
    "FIXED_SCORE_SCALE", "HISTORIES", "LAYOUTS", "LAYOUT_VARIANTS", "PLAY_SLOT", "TRICK_ORDER",
    "TRICK_PLAY_SEGMENTS", "ObservationEncoder", "Segment", "StateEncoder", "check_layout", "describe",
    "layout_table", "score_scale", "variant_slot",
]
