"""Suit relabellings: the same position under other names of the plain suits.

Once the contract is fixed, the suits that are not trump play alike: renaming them (clubs as
diamonds, diamonds as clubs, say) in everything a seat has seen gives a position that is the same
game, whose best card is the renamed best card. A policy can be asked about each relabelled
position and its answers averaged (test-time augmentation), which removes the arbitrary
preferences between suits that a network picks up in training.

:class:`SuitRelabelling` maps an observation of an :class:`~manni_env.observation.ObservationEncoder`
layout to its relabelled copies and back for the actions. Only decisions taken once the contract is
known are relabelled (Hornafjarðarmanni's exchange, Basic Manni's swap and every card play): before
the announcement of Trjámann and Laugarvatnsmanni (pickup, discard, the announcement itself) the
suits still differ in what they may become. With a trump suit the three other suits are permuted
(6 ways); without one (Nullo, Grand) clubs, diamonds and hearts are, spades kept (6 of the 24 ways).
"""

from __future__ import annotations

import itertools

import numpy as np

from manni_env.actions import NUM_ACTIONS
from manni_env.cards import NUM_CARDS
from manni_env.observation import PLAY_SLOT, ObservationEncoder

SUIT_COUNT = 4
RANK_COUNT = NUM_CARDS // SUIT_COUNT
#: segments holding card one-hots (each a multiple of 52 long)
CARD_SEGMENTS = ("hand", "cut_card", "discards", "drawn", "trick", "played",
                 "trick_winning_card", "led", "won", "unseen_above")
#: segments holding one flag per suit (each a multiple of 4 long)
SUIT_SEGMENTS = ("trump", "led_suit", "voids")
#: the suit kept in place when there is no trump
NO_TRUMP_FIXED = 3  # spades
#: rows of :class:`SuitRelabelling`'s tables after those of the four trump suits
NO_TRUMP, IDENTITY = SUIT_COUNT, SUIT_COUNT + 1


def suit_maps(trump: int | None) -> list[tuple[int, ...]]:
    """The suit relabellings used with ``trump`` (a suit index, or None): ``map[s]`` is the new
    name of suit ``s``; the identity first."""
    fixed = NO_TRUMP_FIXED if trump is None else trump
    plain = [s for s in range(SUIT_COUNT) if s != fixed]
    maps = []
    for names in itertools.permutations(plain):
        mapping = list(range(SUIT_COUNT))
        for old, new in zip(plain, names):
            mapping[old] = new
        maps.append(tuple(mapping))
    return maps


def card_map(mapping: tuple[int, ...]) -> np.ndarray:
    """Card index ``c`` → the index of the same rank in suit ``mapping[suit(c)]``."""
    cards = np.arange(NUM_CARDS)
    return np.asarray(mapping)[cards // RANK_COUNT] * RANK_COUNT + cards % RANK_COUNT


class SuitRelabelling:
    """The relabelled copies of observations of one layout (see the module docstring).

    Its tables have one row per trump suit (0-3), then ``NO_TRUMP`` and ``IDENTITY`` (six unchanged
    copies, for positions before the contract is known): ``sources[row, k]`` gathers the ``k``-th
    copy (``copy = obs[sources[row, k]]``), ``targets[row, k]`` is its inverse (input ``i`` lands at
    ``targets[row, k, i]``) and ``actions[row, k, a]`` is action ``a`` renamed in the copy. A row's
    observation shows the contract is known in ``contract`` and its trump suit in ``trump``."""

    def __init__(self, encoder: ObservationEncoder):
        self.encoder = encoder
        self.contract = slice(encoder.offset["contract_kind"], encoder.offset["contract_kind"] + 3)
        self.trump = slice(encoder.offset["trump"], encoder.offset["trump"] + SUIT_COUNT)
        maps = [suit_maps(trump) for trump in range(SUIT_COUNT)] + [suit_maps(None)]
        maps.append([tuple(range(SUIT_COUNT))] * len(maps[0]))
        self.sources = np.stack([[self._gather(m) for m in row] for row in maps])
        self.targets = np.argsort(self.sources, axis=2).astype(np.int32)
        self.actions = np.tile(np.arange(NUM_ACTIONS), (len(maps), len(maps[0]), 1))
        self.actions[:, :, :NUM_CARDS] = [[card_map(m) for m in row] for row in maps]

    def tables(self, trump: int | None) -> tuple[np.ndarray, np.ndarray]:
        """``(sources, actions)`` for ``trump``: row ``k`` of ``sources`` gathers the ``k``-th
        relabelled observation (``obs[sources[k]]``) and ``actions[k, a]`` is action ``a`` renamed
        in it (card actions change suit, the others stay)."""
        row = NO_TRUMP if trump is None else trump
        return self.sources[row], self.actions[row]

    def _gather(self, mapping: tuple[int, ...]) -> np.ndarray:
        """Gather indices of the relabelled observation: ``new[i] = obs[sources[i]]``."""
        sources = np.arange(self.encoder.size)
        cards, suits = card_map(mapping), np.asarray(mapping)
        for segment in self.encoder.segments:
            if segment.name in CARD_SEGMENTS or segment.name == "history":
                block, width = (PLAY_SLOT, NUM_CARDS) if segment.name == "history" else (NUM_CARDS, NUM_CARDS)
                for start in range(segment.offset, segment.offset + segment.size, block):
                    sources[start + cards] = start + np.arange(width)
            elif segment.name in SUIT_SEGMENTS:
                for start in range(segment.offset, segment.offset + segment.size, SUIT_COUNT):
                    sources[start + suits] = start + np.arange(SUIT_COUNT)
        return sources

    def copies(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(observations, actions)`` for a batch ``obs`` of shape ``(n, size)``: ``(n, 6, size)``
        relabelled copies of each row (the identity first) and ``(n, 6, NUM_ACTIONS)`` action
        renamings (:meth:`tables`). Rows seen before the contract is known get six unchanged copies."""
        rows = self._rows(obs)
        return obs[np.arange(len(obs))[:, None, None], self.sources[rows]], self.actions[rows]

    def _rows(self, obs: np.ndarray) -> np.ndarray:
        """The table row of each observation: its trump's, ``NO_TRUMP`` or, before the contract is
        known, ``IDENTITY``."""
        known = (obs[:, self.contract] > 0.5).any(1)
        flags = obs[:, self.trump] > 0.5
        return np.where(~known, IDENTITY, np.where(flags.any(1), flags.argmax(1), NO_TRUMP))
