"""The ``random`` agent: uniform over the legal actions, drawn with the caller's generator."""

from __future__ import annotations

import numpy as np

from manni_agents.base import legal_actions_of
from manni_env.view import SeatView


class RandomAgent:
    """Plays a uniformly random legal action."""

    def __init__(self) -> None:
        self.name = "random"

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        return legal[int(rng.integers(len(legal)))]

    def reset(self) -> None:
        """Nothing to forget between games."""
