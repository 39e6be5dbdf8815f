"""Cards as integers and card sets as integer bitmasks.

A card is ``suit * 13 + rank`` with suits ``C D H S`` (0..3) and ranks ``2 … A`` (0..12), so the
52 cards are 0..51 and a set of cards is an ``int`` whose bit ``c`` is set when card ``c`` is in it.
Text notation follows RULES.md: rank then suit, e.g. ``"TH"`` (ten of hearts), ``"AS"``.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "23456789TJQKA"
NUM_CARDS = 52
ACE = 12

FULL_PACK = (1 << NUM_CARDS) - 1
SUIT_MASKS = tuple(0x1FFF << (13 * s) for s in range(4))
TWOS = sum(1 << (13 * s) for s in range(4))
PACK_48 = FULL_PACK & ~TWOS


def suit_of(card: int) -> int:
    """Suit index (0..3 for C D H S) of a card."""
    return card // 13


def rank_of(card: int) -> int:
    """Rank index (0 for a two … 12 for an ace) of a card."""
    return card % 13


def card_to_str(card: int) -> str:
    """``12`` → ``"AC"``."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card index must be in 0..51, got {card!r}")
    return RANKS[card % 13] + SUITS[card // 13]


def card_from_str(text: str) -> int:
    """``"TH"`` → 34. Accepts lower case and ``10`` for a ten."""
    s = text.strip().upper()
    if s.startswith("10"):
        s = "T" + s[2:]
    if len(s) != 2 or s[0] not in RANKS or s[1] not in SUITS:
        raise ValueError(f"not a card: {text!r} (expected rank 2-9/T/J/Q/K/A then suit C/D/H/S, e.g. 'TH')")
    return SUITS.index(s[1]) * 13 + RANKS.index(s[0])


def _suit_tables() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``_SUIT_CARDS[s][m]``: the cards of suit ``s`` whose rank bits are the 13-bit mask ``m``, ascending."""
    tables = []
    for s in range(4):
        table = [()] * 8192
        for m in range(1, 8192):
            high = m.bit_length() - 1
            table[m] = table[m ^ (1 << high)] + (high + 13 * s,)
        tables.append(tuple(table))
    return tuple(tables)


_SUIT_CARDS = _suit_tables()
_C, _D, _H, _S = _SUIT_CARDS


def suit_cards(mask: int, suit: int) -> tuple[int, ...]:
    """The cards of ``suit`` in the card-set ``mask``, ascending."""
    return _SUIT_CARDS[suit][mask >> (13 * suit) & 0x1FFF]


def cards_of(mask: int) -> list[int]:
    """The cards of a bitmask, ascending."""
    if 0 <= mask <= FULL_PACK:
        return [*_C[mask & 0x1FFF], *_D[mask >> 13 & 0x1FFF], *_H[mask >> 26 & 0x1FFF], *_S[mask >> 39]]
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of an iterable of card indices."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def mask_to_strs(mask: int) -> list[str]:
    """Bitmask → sorted list of card strings."""
    return [card_to_str(c) for c in cards_of(mask)]


def sort_for_display(cards: Iterable[int]) -> list[int]:
    """Cards grouped by suit (S H D C) and high to low within a suit, as a player holds them."""
    return sorted(cards, key=lambda c: (-(c // 13), -(c % 13)))
