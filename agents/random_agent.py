"""The ``random`` agent: uniform over the legal actions, drawn with the caller's generator."""

from __future__ import annotations

import numpy as np

from manni_env.view import SeatView


class RandomAgent:
    """Plays a uniformly random legal action."""

    def __init__(self) -> None:
        self.name = "random"

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal action (it is seat {view.to_move}'s turn)")
        return legal[int(rng.integers(len(legal)))]

    def reset(self) -> None:
        """Nothing to forget between games."""
