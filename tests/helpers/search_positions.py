"""Card-play positions for the ``search`` tests, reached by the shipped network."""

from __future__ import annotations

import functools

import numpy as np

from manni_agents.base import Policy
from manni_agents.registry import make_agent
from manni_env import GameState, Phase


@functools.cache
def network() -> Policy:
    """The shipped network as ``search`` plays it (``ppo:plain``), loaded once."""
    return make_agent("ppo:plain")


def to_play(state: GameState, plays: int, rng: np.random.Generator) -> GameState:
    """Advance ``state`` with the shipped network until ``plays`` cards of the deal are down and a
    seat with more than one legal card is on turn."""
    while not (state.phase == Phase.PLAY and len(state.view(0).plays) >= plays and len(state.legal_actions()) > 1):
        state.apply(network().act(state.view(state.to_move), rng))
    return state
