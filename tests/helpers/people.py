"""Scripted people for the tests of terminal and browser play: a person typing at ``manni play``
(:class:`ScriptedPerson`) and the moves a person's page sends (:func:`choose`)."""

from __future__ import annotations

import re

import numpy as np

LEGAL_LINE = re.compile(r"^Legal moves: (.*)$", re.MULTILINE)


class ScriptedPerson:
    """Reads the legal moves from the last screen and answers: sometimes garbage first, then a
    card typed in varying spellings, a move name, or a move number."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.screen: list[str] = []
        self.garbage = 0
        self.answers = 0

    def output(self, text: str) -> None:
        self.screen.append(text)

    def input(self, prompt: str) -> str:
        moves = [m.split(") ")[1] for m in LEGAL_LINE.findall("\n".join(self.screen))[-1].split("  ")]
        if self.answers % 5 == 0 and not self.screen[-1].startswith("  !"):
            self.garbage += 1
            self.answers += 1
            return ["zz", "99", "", "1X"][(self.garbage - 1) % 4]
        self.answers += 1
        k = int(self.rng.integers(len(moves)))
        move = moves[k]
        style = self.answers % 3
        if style == 0:
            return str(k + 1)
        if len(move) == 2 and style == 1:  # a card, typed lower case, tens as "10"
            return move.lower().replace("t", "10", 1) if move[0] == "T" else move.lower()
        return move


def choose(snap: dict, rng: np.random.Generator) -> list[int]:
    """A random legal move as the page sends it (a multi-card choice, or one card or button)."""
    cards = [h["action"] for h in snap["hand"] if h["legal"]]
    select = snap["select"]
    if select:
        k = select["max"] if select["exact"] else int(rng.integers(select["max"] + 1))
        picks = [int(c) for c in rng.choice(cards, size=k, replace=False)]
        return picks + ([select["done"]] if select["done"] is not None and k < select["max"] else [])
    return [int(rng.choice(cards + [b["action"] for b in snap["buttons"]]))]
