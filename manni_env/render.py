"""Pictures and text of a Manni table, from one seat's point of view (or every hand, privileged).

- :func:`view_text`: one seat's information state (:class:`~manni_env.view.SeatView`) as text:
  the single-agent env's ``ansi`` render and the OpenSpiel game's observation strings.
- :func:`render_rgb`: the table as an ``(H, W, 3)`` ``uint8`` image drawn with matplotlib: the
  three seats around the table, the viewer's hand face up and the others face down (every hand face
  up when ``hands`` is given: privileged, for spectators and videos), the current trick, the
  contract and the tallies. Used by the ``rgb_array`` render mode of the AEC, single-agent and
  vector envs.
- :class:`HumanWindow`: the ``human`` render mode: shows the frames in a matplotlib window; without
  an interactive backend (headless) it prints the text instead.

matplotlib is imported on first use, so importing this module stays cheap.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from manni_env.actions import action_to_str
from manni_env.cards import card_to_str, cards_of, sort_for_display
from manni_env.engine import Phase
from manni_env.rules import ExchangeScheme
from manni_env.text import PHASE_NAMES, contract_text, hand_text
from manni_env.view import SeatView

SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
_RED = "#c8102e"
_FELT = "#1f6e43"
_BACK = "#2b4c9a"
FIGSIZE = (8.0, 6.0)  # inches; with DPI the image is 800 x 600
DPI = 100


# ---------------------------------------------------------------------------------------- text
def _cards(cards) -> str:
    return " ".join(card_to_str(c) for c in cards) or "-"


def _ints(values) -> str:
    return " ".join(map(str, values))


def view_text(view: SeatView) -> str:
    """Everything ``view.seat`` knows, as lines of text (no hidden card ever appears).

    Two views give the same text only if they are equal (apart from the derived ``legal_actions``),
    so the text can key an information state."""
    seat = view.seat
    on_turn = "-" if view.to_move < 0 else f"seat {view.to_move}"
    lines = [
        f"Manni ({view.rules.variant}) | seat {seat} | deal {view.deal_index + 1} | dealer seat {view.dealer} | "
        f"phase: {PHASE_NAMES[view.phase]} | on turn: {on_turn}",
    ]
    contract = contract_text(view.contract, "seat {}".format, with_name=True)
    if view.cut_card is not None:
        contract += f" | cut {card_to_str(view.cut_card)}"
    lines.append(f"Contract: {contract}")
    lines.append(f"Hand: {hand_text(view.hand)} | dealt: {_cards(cards_of(view.dealt_hand))}")
    if view.discards or view.drawn or view.pending:
        lines.append(f"Discards: {_cards(cards_of(view.discards))} | drawn: {_cards(cards_of(view.drawn))} | "
                     f"choosing: {_cards(view.pending)}")
    scheme = view.rules.spec.exchange
    if scheme == ExchangeScheme.EXCHANGE:
        counts = " ".join("-" if c < 0 else str(c) for c in view.exchange_counts)
        lines.append(f"Exchanged per seat: {counts} | Manni cards used: {view.manni_used}")
    else:
        who = view.swapper if scheme == ExchangeScheme.SWAP else view.taker
        verb = "swapped" if scheme == ExchangeScheme.SWAP else "taken"
        lines.append(f"Passed: {' '.join(map(str, view.passed)) or '-'} | Manni {verb} by: "
                     f"{'-' if who is None else f'seat {who}'}")
    if view.rules.is_announcement:
        used = " | ".join(f"seat {s}: {', '.join(u) or '-'}" for s, u in enumerate(view.used_contracts))
        lines.append(f"Contracts used: {used}")
    plays = view.plays
    if plays:
        tricks = [" ".join(f"{s}:{card_to_str(c)}" for s, c in plays[i : i + 3]) for i in range(0, len(plays), 3)]
        lines.append(f"Plays: {' / '.join(tricks)}")
    lines.append(
        f"Tricks won {_ints(view.tricks_won)} | plus {_ints(view.plus)} | minus {_ints(view.minus)} | "
        f"total {' '.join(f'{t:+d}' for t in view.totals)}"
    )
    if view.legal_actions:
        lines.append(f"Legal: {' '.join(action_to_str(a) for a in view.legal_actions)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- image
def render_rgb(view: SeatView, hands: Sequence[int] | None = None, title: str | None = None) -> np.ndarray:
    """The table seen by ``view.seat`` as an ``(H, W, 3)`` ``uint8`` image.

    ``hands`` (privileged: every seat's current hand as a card bitmask, indexed by seat) shows all
    hands face up; without it only the viewer's hand is face up."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    _draw_table(ax, view, hands, title)
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def _draw_table(ax, view: SeatView, hands: Sequence[int] | None, title: str | None) -> None:
    from matplotlib.patches import FancyBboxPatch

    ax.set_xlim(0, 16)
    ax.set_ylim(0, 12)
    ax.set_axis_off()
    ax.add_patch(FancyBboxPatch((0.3, 0.3), 15.4, 11.4, boxstyle="round,pad=0,rounding_size=0.6", fc=_FELT, ec="none"))
    seat = view.seat
    left, right = (seat + 1) % 3, (seat + 2) % 3
    on_turn = view.to_move
    header = title or f"Manni ({view.rules.variant}) - deal {view.deal_index + 1} - {PHASE_NAMES[view.phase]}"
    ax.text(0.7, 11.2, header, color="white", fontsize=13, weight="bold", va="center")
    contract = "contract: not announced yet" if view.contract is None else f"contract: {view.contract.describe()}"
    if view.contract is not None and view.contract.declarer is not None:
        contract += f", declarer {_name(view.contract.declarer, seat)}"
    if view.cut_card is not None:
        contract += f"   cut card: {_card_label(view.cut_card)}"
    ax.text(0.7, 10.6, contract, color="white", fontsize=10, va="center")

    played = [len(cards_of(m)) for m in view.played]
    count = [view.rules.hand_size - played[s] for s in range(3)]
    if view.phase == Phase.DISCARD and view.taker is not None:
        count[view.taker] += view.rules.manni_size - len(view.pending)
    own = sort_for_display(cards_of(view.hand))
    # the viewer: a row at the bottom
    _seat_label(ax, 8.0, 3.05, f"{_name(seat, seat)} (seat {seat})", seat == view.dealer, seat == on_turn, "center")
    x0 = 8.0 - min(len(own) * 0.62, 13.4) / 2
    step = min(0.62, 13.4 / max(len(own), 1))
    for i, card in enumerate(own):
        _card(ax, x0 + i * step, 0.9, card)
    # the others: columns at the sides
    for s, x, align in ((left, 0.9, "left"), (right, 14.2, "right")):
        label_x = 0.7 if align == "left" else 15.3
        _seat_label(ax, label_x, 9.3, f"{_name(s, seat)} (seat {s})", s == view.dealer, s == on_turn, align)
        cards = sort_for_display(cards_of(hands[s])) if hands is not None else [None] * count[s]
        ystep = min(0.42, 6.0 / max(len(cards), 1))
        for i, card in enumerate(cards):
            _card(ax, x, 7.6 - i * ystep, card)
        if hands is None:
            ax.text(x + 0.45, 7.6 - len(cards) * ystep - 0.25, f"{len(cards)} cards", color="white",
                    fontsize=8, ha="center", va="top")
    # the current trick in the middle, each card towards its player
    spot = {seat: (7.55, 4.1), left: (5.9, 5.7), right: (9.2, 5.7)}
    if view.phase == Phase.PLAY:
        for i, card in enumerate(view.trick):
            x, y = spot[(view.leader + i) % 3]
            _card(ax, x, y, card)
        if view.trick:
            ax.text(8.0, 7.75, f"trick {sum(view.tricks_won) + 1}, led by {_name(view.leader, seat)}",
                    color="white", fontsize=9, ha="center")
    # tallies
    names = [_name(s, seat) for s in (seat, left, right)]
    rows = [("", names), ("tricks", [view.tricks_won[s] for s in (seat, left, right)]),
            ("plus", [view.plus[s] for s in (seat, left, right)]),
            ("minus", [view.minus[s] for s in (seat, left, right)]),
            ("total", [view.totals[s] for s in (seat, left, right)])]
    for r, (label, values) in enumerate(rows):
        y = 11.25 - 0.34 * r
        ax.text(10.6, y, label, color="white", fontsize=8, va="center")
        for c, value in enumerate(values):
            ax.text(12.3 + 1.1 * c, y, str(value), color="white", fontsize=8, va="center", ha="center",
                    weight="bold" if r == 0 else "normal")
    if view.discards:
        discards = " ".join(_card_label(c) for c in sort_for_display(cards_of(view.discards)))
        ax.text(0.7, 10.05, f"your discards: {discards}", color="white", fontsize=9, va="center")


def _name(s: int, viewer: int) -> str:
    return ("you", "left", "right")[(s - viewer) % 3]


def _card_label(card: int) -> str:
    text = card_to_str(card)
    return ("10" if text[0] == "T" else text[0]) + SUIT_SYMBOLS[text[1]]


def _card(ax, x: float, y: float, card: int | None) -> None:
    """A card with its lower left corner at (x, y); ``None`` is a card back."""
    from matplotlib.patches import FancyBboxPatch

    face = card is not None
    ax.add_patch(FancyBboxPatch((x, y), 0.9, 1.3, boxstyle="round,pad=0,rounding_size=0.1",
                                fc="white" if face else _BACK, ec="#222222", lw=0.8))
    if face:
        color = _RED if card_to_str(card)[1] in "HD" else "black"
        ax.text(x + 0.08, y + 1.2, _card_label(card), color=color, fontsize=9, weight="bold", va="top")


def _seat_label(ax, x: float, y: float, text: str, dealer: bool, on_turn: bool, align: str) -> None:
    if dealer:
        text += "  [dealer]"
    ax.text(x, y, text, color="#ffd54a" if on_turn else "white", fontsize=10, weight="bold" if on_turn else "normal",
            ha=align, va="center")


# ---------------------------------------------------------------------------------------- human mode
class HumanWindow:
    """The ``human`` render mode: frames in one matplotlib window (updated in place).

    Without an interactive matplotlib backend (a headless machine, ``MPLBACKEND=Agg``) it warns
    once and prints the text instead, so ``render_mode="human"`` never fails."""

    def __init__(self, fps: float = 1.0):
        self.fps = fps
        self._figure = None
        self._image = None
        self._headless: bool | None = None

    def show(self, draw: Callable[[], np.ndarray], text: str) -> None:
        """Show the frame ``draw()`` returns (not called when headless: ``text`` is printed)."""
        if self._headless is None:
            self._headless = not _interactive_backend()
            if self._headless:
                warnings.warn("render_mode='human' needs an interactive matplotlib backend; printing the table "
                              "instead", stacklevel=3)
        if self._headless:
            print(text)
            return
        import matplotlib.pyplot as plt

        frame = draw()
        if self._figure is None or not plt.fignum_exists(self._figure.number):
            self._figure = plt.figure("Manni", figsize=FIGSIZE)
            ax = self._figure.add_axes((0, 0, 1, 1))
            ax.set_axis_off()
            self._image = ax.imshow(frame)
        else:
            self._image.set_data(frame)
        plt.pause(1.0 / self.fps)

    def close(self) -> None:
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = None


def _interactive_backend() -> bool:
    """Whether pyplot's backend opens windows (matplotlib falls back to Agg without a display)."""
    import matplotlib.pyplot as plt

    probe = plt.figure()
    try:
        return type(probe.canvas).required_interactive_framework is not None
    finally:
        plt.close(probe)


# ---------------------------------------------------------------------------------------- a picture
def main(argv: list[str] | None = None) -> int:
    """``python -m manni_env.render deal.png``: a picture of a random game after some random moves."""
    import argparse

    from PIL import Image

    from manni_env.engine import GameState
    from manni_env.rules import VARIANTS, make_rules

    parser = argparse.ArgumentParser(prog="python -m manni_env.render", description=main.__doc__)
    parser.add_argument("out", help="PNG file to write")
    parser.add_argument("--variant", choices=VARIANTS, default="hornafjardar")
    parser.add_argument("--seed", type=int, default=7, help="seed of the game and of the random moves (default 7)")
    parser.add_argument("--moves", type=int, default=40, help="random legal moves before the picture (default 40)")
    parser.add_argument("--all", action="store_true", help="every hand face up (privileged)")
    args = parser.parse_args(argv)
    if args.moves < 0:
        parser.error("--moves must be at least 0")
    state = GameState(make_rules(args.variant), seed=args.seed)
    rng = np.random.default_rng(args.seed)
    for _ in range(args.moves):
        if state.finished:
            break
        state.apply(int(rng.choice(state.legal_actions())))
    seat = max(state.to_move, 0)
    hands = [sum(1 << c for c in state.hand(s)) for s in range(3)] if args.all else None
    Image.fromarray(render_rgb(state.view(seat), hands)).save(args.out, optimize=True)
    print(f"wrote {args.out}: the table seen by seat {seat}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
