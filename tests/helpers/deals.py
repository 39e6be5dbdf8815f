"""Explicit deals and trick-count builders shared by the rules tests and the two-path edge cases.

Most deals are built by :func:`build_deal` so that every trick is played in one suit that all three
seats follow, each seat playing its highest remaining card of that suit: trick ``k`` is then won by
``winners[k]`` whoever leads, which fixes the trick counts of a deal exactly.
"""

from __future__ import annotations

from manni_env.engine import Deal

HIGH = "AKQJT98765432"
NO_ACES = "KQJT98765432"  # 12 ranks: ace-high and ace-low order agree
NO_TWOS = "AKQJT9876543"  # Basic Manni's 48-card pack
NULLO_NO_TWOS = "KQJT9876543A"  # ace low


def build_deal(winners: list[int], suits: str, order: str, pack: str = HIGH, dealer: int | None = None,
               cut: str | None = None) -> Deal:
    """A deal in which trick ``k`` is played in ``suits[k // 4]`` and won by ``winners[k]``.

    ``order`` lists the 12 ranks of each used suit high to low in the contract's order; each seat
    gets one card of each group of three, the group's top card going to the trick's winner. Cards of
    ``pack`` not used form the Manni. ``cut`` goes to ``dealer``.
    """
    hands: list[list[str]] = [[], [], []]
    for k, winner in enumerate(winners):
        group = [order[3 * (k % 4) + i] + suits[k // 4] for i in range(3)]
        others = [s for s in range(3) if s != winner]
        if cut in group[1:] and dealer in others:
            others.sort(key=lambda s: s != dealer)
            group[1:] = sorted(group[1:], key=lambda c: c != cut)
        assert cut not in group or (cut == group[0]) == (winner == dealer), "cut card cannot reach the dealer"
        for seat, card in zip([winner] + others, group):
            hands[seat].append(card)
    used = {c for h in hands for c in h}
    manni = [r + s for s in "CDHS" for r in pack if r + s not in used]
    return Deal.from_strs(hands, manni, cut)


def counts_winners(counts: tuple[int, ...]) -> list[int]:
    """Trick winners (12 or 16) with the given trick counts per seat."""
    return [s for s in range(3) for _ in range(counts[s])]


# RULES.md's worked game
WORKED_GAME = [
    # cut, dealer, suits played, trick winners, tricks, deal score, plus after, minus after
    ("7H", 2, "HSD", [0, 0, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2], (6, 4, 2), (2, 0, -2), (2, 0, 0), (0, 0, 2)),
    ("3C", 0, "CDH", [1, 1, 1, 2, 0, 2, 2, 2, 2, 2, 1, 1], (1, 5, 6), (3, -1, -2), (5, 0, 0), (0, 1, 4)),
    ("QD", 1, "DSC", [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2], (9, 2, 1), (5, -2, -3), (10, 0, 0), (0, 3, 7)),
]


def deal_with_hands(hands: list[str], manni: str, cut: str) -> Deal:
    """A deal from space-separated card strings per hand and for the Manni."""
    return Deal.from_strs([h.split() for h in hands], manni.split(), cut)


# seat 0 leads (dealer 2); seat 1 holds hearts and one spade, seat 2 no hearts
FOLLOW_DEAL = deal_with_hands(
    [
        "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H",
        "2H AS KS QS JS TS 9S 8S 7S 6S 5S 4S",
        "3S 2S AD KD QD JD TD 9D 8D 7D 6D 5D",
    ],
    "4D 3D 2D AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
    "TD",
)
