"""The game's words, in one place for every surface that shows the game as text: the env's ansi
render, the text renderer (:mod:`manni_env.render`), terminal play and the web app
(:mod:`manni_agents.human`, :mod:`manni_agents.web`)."""

from __future__ import annotations

from .cards import RANKS, SUITS, cards_of, sort_for_display
from .engine import Contract, Phase
from .rules import ContractKind

PHASE_NAMES = {
    Phase.EXCHANGE: "exchange", Phase.SWAP: "swap", Phase.PICKUP: "Manni pickup", Phase.DISCARD: "Manni discard",
    Phase.ANNOUNCE: "announcement", Phase.PLAY: "play", Phase.GAME_OVER: "game over",
}
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")  # by suit index (``cards.SUITS``)


def hand_text(mask: int) -> str:
    """``"S: A K 7   H: T 4   D: -   C: Q 2"``: a hand grouped by suit, high to low."""
    by_suit: dict[str, list[str]] = {s: [] for s in reversed(SUITS)}
    for card in sort_for_display(cards_of(mask)):
        by_suit[SUITS[card // 13]].append(RANKS[card % 13])
    return "   ".join(f"{s}: {' '.join(ranks) or '-'}" for s, ranks in by_suit.items())


def contract_name(contract: Contract) -> str:
    """``"Trump hearts"``, ``"Trump hearts (Suit)"`` (Trjámann), ``"Grand"``, ``"Nullo"``."""
    if contract.kind != ContractKind.TRUMP:
        return contract.kind.label.capitalize()
    return f"Trump {SUIT_NAMES[contract.trump]}" + (" (Suit)" if contract.name == "suit" else "")
