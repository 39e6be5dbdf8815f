"""The action layout: one ``Discrete(NUM_ACTIONS)`` space for every variant and phase.

======  =====================  =======================================================
action  name                   meaning
======  =====================  =======================================================
0–51    card ``suit*13+rank``  exchange / Manni-discard phase: discard that card;
                               play phase: play that card (``0`` = 2C … ``51`` = AS)
52      EXCHANGE_DONE          Hornafjarðarmanni: stop choosing discards and draw as many
                               replacements (also "keep my hand" when nothing was chosen)
53      KEEP_HAND              Basic Manni: keep the hand
54      SWAP_HAND              Basic Manni: swap the whole hand for the Manni
55      TAKE_MANNI             announcement variants: take the four Manni cards
56      PASS_MANNI             announcement variants: leave the Manni
57      ANNOUNCE_SPADES        announcement variants: contracts (Trjámann's "Suit" is
58      ANNOUNCE_HEARTS        announced as hearts or diamonds)
59      ANNOUNCE_DIAMONDS
60      ANNOUNCE_CLUBS
61      ANNOUNCE_GRAND
62      ANNOUNCE_NULLO
======  =====================  =======================================================

Card actions keep their numbers forever; new non-card actions are appended. Legal action lists
are always sorted ascending.
"""

from __future__ import annotations

from manni_env.cards import NUM_CARDS, card_from_str, card_to_str

EXCHANGE_DONE = 52
KEEP_HAND = 53
SWAP_HAND = 54
TAKE_MANNI = 55
PASS_MANNI = 56
ANNOUNCE_SPADES = 57
ANNOUNCE_HEARTS = 58
ANNOUNCE_DIAMONDS = 59
ANNOUNCE_CLUBS = 60
ANNOUNCE_GRAND = 61
ANNOUNCE_NULLO = 62
NUM_ACTIONS = 63

ACTION_NAMES = {
    EXCHANGE_DONE: "exchange_done",
    KEEP_HAND: "keep_hand",
    SWAP_HAND: "swap_hand",
    TAKE_MANNI: "take_manni",
    PASS_MANNI: "pass_manni",
    ANNOUNCE_SPADES: "announce_spades",
    ANNOUNCE_HEARTS: "announce_hearts",
    ANNOUNCE_DIAMONDS: "announce_diamonds",
    ANNOUNCE_CLUBS: "announce_clubs",
    ANNOUNCE_GRAND: "announce_grand",
    ANNOUNCE_NULLO: "announce_nullo",
}
_BY_NAME = {name: action for action, name in ACTION_NAMES.items()}


def action_to_str(action: int) -> str:
    """``34`` → ``"TH"``; ``52`` → ``"exchange_done"``."""
    if 0 <= action < NUM_CARDS:
        return card_to_str(action)
    if action in ACTION_NAMES:
        return ACTION_NAMES[action]
    raise ValueError(f"action must be in 0..{NUM_ACTIONS - 1}, got {action!r}")


def action_from_str(text: str) -> int:
    """Inverse of :func:`action_to_str` (card text or a non-card action name)."""
    name = text.strip().lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    return card_from_str(text)
