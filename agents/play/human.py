"""A person at the terminal as a :class:`~manni_agents.base.Policy`, and a narrator of the table.

:class:`HumanPolicy` shows its seat's view (hand sorted by suit, contract, the decision and what it
means, the trick so far, numbered legal moves) and reads a move: a card (``TH``, ``th``, ``10h``),
the number of a listed move, or a named move (``done``, ``keep``, ``swap``, ``take``, ``pass``,
``spades``, ``hearts``, ``diamonds``, ``clubs``, ``grand``, ``nullo``). Bad input gets a message and
another prompt; ``q`` raises :class:`QuitGame`. :class:`TableNarrator` is a game-loop observer that
prints what everyone at the table may see as it happens: card plays, trick winners, exchange counts,
swaps, pickups, announcements and the score after each deal — never a hidden card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from manni_env import actions as A
from manni_env.cards import card_to_str, cards_of, sort_for_display
from manni_env.engine import GameState, Phase
from manni_env.rules import ExchangeScheme
from manni_env.text import SUIT_NAMES, contract_name, count, decision_prompt, hand_text
from manni_env.view import SeatView

#: Words a person may type for the non-card actions.
MOVE_WORDS = {
    "done": A.EXCHANGE_DONE,
    "keep": A.KEEP_HAND,
    "swap": A.SWAP_HAND,
    "take": A.TAKE_MANNI,
    "pass": A.PASS_MANNI,
    "spades": A.ANNOUNCE_SPADES,
    "hearts": A.ANNOUNCE_HEARTS,
    "diamonds": A.ANNOUNCE_DIAMONDS,
    "clubs": A.ANNOUNCE_CLUBS,
    "grand": A.ANNOUNCE_GRAND,
    "nullo": A.ANNOUNCE_NULLO,
}
_WORD_OF = {action: word for word, action in MOVE_WORDS.items()}

HELP = (
    "Type a card (e.g. TH, th, 10h, AS), the number of a listed move, or a named move "
    "(done, keep, swap, take, pass, spades, hearts, diamonds, clubs, grand, nullo); "
    "'?' shows this help, 'q' quits."
)


class QuitGame(Exception):
    """The person asked to quit the game."""


def move_label(action: int) -> str:
    """What a person types for ``action``: ``"TH"`` or a move word such as ``"done"``."""
    return card_to_str(action) if action < 52 else _WORD_OF[action]


def listed_moves(view: SeatView) -> list[int]:
    """The legal actions in the order they are numbered on screen: cards as the hand is shown
    (by suit, high to low), then the named moves."""
    legal = view.legal_actions
    return sort_for_display(a for a in legal if a < 52) + [a for a in legal if a >= 52]


def parse_move(text: str, view: SeatView) -> int:
    """The legal action ``text`` names in ``view`` (a number counts in :func:`listed_moves`);
    ``ValueError`` with the reason if none; :class:`QuitGame` for ``q``."""
    t = text.strip().lower()
    legal = listed_moves(view)
    if t in ("q", "quit", "exit"):
        raise QuitGame
    if not t:
        raise ValueError("empty input. " + HELP)
    if t.isdigit():
        number = int(t)
        if 1 <= number <= len(legal):
            return legal[number - 1]
        raise ValueError(f"there is no move number {number}: choose 1 to {len(legal)}")
    if t in MOVE_WORDS:
        action = MOVE_WORDS[t]
    else:
        try:
            action = A.action_from_str(t)
        except ValueError:
            raise ValueError(f"{text.strip()!r} is not a card, a move number or a move name. {HELP}") from None
    if action in legal:
        return action
    raise ValueError(_why_illegal(action, view))


def _why_illegal(action: int, view: SeatView) -> str:
    label = move_label(action)
    options = ", ".join(move_label(a) for a in listed_moves(view))
    if action < 52:
        if not view.hand >> action & 1:
            return f"you do not hold {label}; legal moves: {options}"
        if view.phase == Phase.PLAY and view.led_suit >= 0:
            return f"you must follow suit ({SUIT_NAMES[view.led_suit]}) with {options}"
    if view.phase == Phase.ANNOUNCE and action in _WORD_OF:
        return f"{label} is not available (already played, or not a contract of this variant); choose {options}"
    return f"{label} is not a legal move now; legal moves: {options}"


def contract_text(view: SeatView, names: Sequence[str]) -> str:
    """The contract (with the cut card, or the declarer) in words."""
    c = view.contract
    if c is None:
        return "not announced yet"
    text = contract_name(c)
    if c.nullo:
        text += " (take as few tricks as possible; aces are low)"
    if view.cut_card is not None:
        text += f" — cut card {card_to_str(view.cut_card)}, dealt to the dealer ({names[view.dealer]})"
    if c.declarer is not None:
        text += f" — declared by {names[c.declarer]}"
    return text


def _trick_text(view: SeatView, names: Sequence[str]) -> str:
    if view.trick:
        plays = view.plays[-len(view.trick) :]
        return "Trick so far: " + ", ".join(f"{names[s]} {card_to_str(c)}" for s, c in plays)
    if view.plays:
        plays = ", ".join(f"{names[s]} {card_to_str(c)}" for s, c in view.plays[-3:])
        return f"Last trick: {plays} → won by {names[view.leader]}"
    return ""


def describe_view(view: SeatView, names: Sequence[str]) -> str:
    """Everything a person needs to decide, from the seat's view only."""
    seat = view.seat
    role = {view.forehand: "forehand", (view.dealer + 2) % 3: "middlehand", view.dealer: "dealer"}[seat]
    lines = [
        "",
        f"── Deal {view.deal_index + 1} · you are seat {seat} ({role}) · dealer: {names[view.dealer]} ──",
        f"Contract: {contract_text(view, names)}",
        f"Your hand:  {hand_text(view.hand)}",
    ]
    if view.drawn:
        lines.append(f"You took from the Manni: {' '.join(card_to_str(c) for c in cards_of(view.drawn))}")
    exchanged = [f"{names[s]} {n}" for s, n in enumerate(view.exchange_counts) if n >= 0]
    if view.rules.spec.exchange == ExchangeScheme.EXCHANGE and exchanged:
        lines.append("Cards exchanged: " + ", ".join(exchanged))
    if view.phase == Phase.PLAY:
        lines.append("Tricks won: " + ", ".join(f"{names[s]} {view.tricks_won[s]}" for s in range(3)))
    lines.append("Totals: " + ", ".join(f"{names[s]} {view.totals[s]:+d}" for s in range(3)))
    trick = _trick_text(view, names)
    if trick:
        lines.append(trick)
    lines.append(decision_prompt(view, typing=True))
    lines.append("Legal moves: " + "  ".join(f"{i}) {move_label(a)}" for i, a in enumerate(listed_moves(view), 1)))
    return "\n".join(lines)


class HumanPolicy:
    """A person choosing moves through ``input_fn`` (a prompt → a line) and ``output_fn``."""

    name = "human"

    def __init__(
        self,
        input_fn: Callable[[str], str] = input,
        output_fn: Callable[[str], None] = print,
        names: Sequence[str] = ("seat 0", "seat 1", "seat 2"),
    ):
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.names = list(names)

    def reset(self) -> None:
        """Nothing to forget between games."""

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        """Show the view, then ask until the person names a legal move (``q`` raises :class:`QuitGame`)."""
        self.output_fn(describe_view(view, self.names))
        while True:
            text = self.input_fn("your move> ")
            if text.strip() in ("?", "help"):
                self.output_fn(HELP)
                continue
            try:
                return parse_move(text, view)
            except ValueError as err:
                self.output_fn(f"  ! {err}")


class TableNarrator:
    """Game-loop observer printing, from ``seat``'s point of view, what the whole table sees."""

    def __init__(self, names: Sequence[str], seat: int, output_fn: Callable[[str], None] = print):
        self.names = list(names)
        self.seat = seat
        self.output_fn = output_fn
        self.rounds_seen = 0

    def __call__(self, state: GameState, seat: int, phase: Phase, action: int) -> None:
        view = state.view(self.seat)
        if phase == Phase.PLAY:
            self._say(seat, "plays", "play", card_to_str(action))
        elif phase == Phase.EXCHANGE and (state.phase != Phase.EXCHANGE or state.to_move != seat):
            self._say(seat, "exchanges", "exchange", count(view.exchange_counts[seat], "card"))
        elif phase == Phase.SWAP and action == A.SWAP_HAND:
            self._say(seat, "swaps", "swap", "the hand for the Manni")
        elif phase == Phase.SWAP:
            self._say(seat, "keeps", "keep", "the hand")
        elif phase == Phase.PICKUP and action == A.TAKE_MANNI:
            self._say(seat, "takes", "take", "the Manni")
        elif phase == Phase.PICKUP:
            self._say(seat, "passes", "pass", "")
        elif phase == Phase.ANNOUNCE:
            self._say(seat, "announces", "announce", contract_name(view.contract))
        if phase == Phase.PLAY and len(state.rounds) == self.rounds_seen and not view.trick:
            self.output_fn(f"  → trick to {self.names[view.leader]}")
        if len(state.rounds) > self.rounds_seen:
            self.rounds_seen = len(state.rounds)
            self._deal_over(state)

    def _say(self, seat: int, verb: str, own_verb: str, rest: str) -> None:
        """``"  seat 2 (random) plays KS"``, or ``"  you play KS"`` for the person's own move."""
        subject = f"{self.names[seat]} {verb}" if seat != self.seat else f"{self.names[seat]} {own_verb}"
        self.output_fn(f"  {subject} {rest}".rstrip())

    def _deal_over(self, state: GameState) -> None:
        r = state.rounds[-1]  # public once the deal is over: tricks, points, tallies
        names, say = self.names, self.output_fn
        say(f"  → trick to {names[r.tricks[-1][2]]}")
        say(f"Deal {r.index + 1} over ({contract_name(r.contract)}): tricks " + ", ".join(
            f"{names[s]} {r.tricks_won[s]}" for s in range(3)))
        say("  points: " + ", ".join(f"{names[s]} {r.points[s]:+d}" for s in range(3)))
        if state.rules.scoring == "plus_minus":
            say("  plus/minus: " + ", ".join(f"{names[s]} {r.plus[s]}/{r.minus[s]}" for s in range(3)))
        say("  totals: " + ", ".join(f"{names[s]} {r.totals[s]:+d}" for s in range(3)))
