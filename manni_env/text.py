"""The game's words, in one place for every surface that shows the game as text: the env's ansi
render, the text renderer (:mod:`manni_env.render`), terminal play and the web app
(:mod:`manni_agents.play.human`, :mod:`manni_agents.play.web`)."""

from __future__ import annotations

from collections.abc import Callable

from manni_env.cards import RANKS, SUITS, card_to_str, cards_of, sort_for_display
from manni_env.engine import Contract, Phase
from manni_env.rules import ContractKind
from manni_env.view import SeatView

PHASE_NAMES = {
    Phase.EXCHANGE: "exchange", Phase.SWAP: "swap", Phase.PICKUP: "Manni pickup", Phase.DISCARD: "Manni discard",
    Phase.ANNOUNCE: "announcement", Phase.PLAY: "play", Phase.GAME_OVER: "game over",
}
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")  # by suit index (``cards.SUITS``)


def count(n: int, noun: str) -> str:
    """``"1 game"``, ``"2 games"``, ``"1,200 games"``: a number and its noun, plural unless the number is 1."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


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


def contract_text(contract: Contract | None, seat_name: Callable[[int], str], with_name: bool = False) -> str:
    """``"not announced yet"``, or ``contract.describe()`` followed, once a seat declared it, by
    ``", declarer "`` and ``seat_name(declarer)`` (``with_name``: the announcement's name first)."""
    if contract is None:
        return "not announced yet"
    text = contract.describe()
    if contract.declarer is not None:
        text += (f" ({contract.name})" if with_name else "") + f", declarer {seat_name(contract.declarer)}"
    return text


def decision_prompt(view: SeatView, typing: bool) -> str:
    """What the seat on turn decides now, in words, for a person who types moves (terminal play: the
    move words in quotes) or clicks them (the web app)."""

    def word(move: str) -> str:
        return f"'{move}'" if typing else move

    phase = view.phase
    if phase == Phase.EXCHANGE:
        if not typing:
            return (f"Exchange: choose up to {view.exchange_limit} cards to discard, then confirm; you draw as many "
                    "from the Manni, unseen until then.")
        chosen = " ".join(card_to_str(c) for c in view.pending) or "none"
        return (f"Exchange: pick cards to discard, one at a time (up to {view.exchange_limit} more); afterwards you "
                f"draw as many from the top of the Manni, unseen until then. 'done' stops ('done' now with none "
                f"chosen keeps your hand). Chosen so far: {chosen}")
    if phase == Phase.SWAP:
        return (f"Swap: {word('keep')} your hand, or {word('swap')} it, unseen, for the whole Manni (the first swap "
                "ends the exchange).")
    if phase == Phase.PICKUP:
        return f"Manni: {word('take')} the four Manni cards (then discard any four), or {word('pass')}."
    if phase == Phase.DISCARD:
        return f"Discard: you took the Manni; discard four cards, one at a time ({len(view.pending)} of 4 chosen)."
    if phase == Phase.ANNOUNCE:
        used = ", ".join(view.used_contracts[view.seat]) or "none"
        rows = view.rules.spec.announcements
        shared = [a for a in rows if sum(b.name == a.name for b in rows) > 1]  # Trjámann's "suit"
        suit = (f" ({' or '.join(word(SUIT_NAMES[a.trump]) for a in shared)} names the "
                f"{shared[0].name.capitalize()} contract)" if shared and typing else "")
        return f"Announce a contract you have not played yet{suit}. Already played: {used}."
    if view.trick:
        return f"Play: follow suit ({SUIT_NAMES[view.led_suit]}) if you can."
    return "Play: you lead this trick."
