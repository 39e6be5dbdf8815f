"""What the critic may see in training that a player may not: the cards hidden from its seat.

With ``--critic deal`` (PerfectDou's critic that sees the whole deal) the critic reads, after the
seat's observation, the cards that seat cannot see: the hand of the next seat, the hand of the seat
after it, and the rest of the pack that is in no hand and not yet played (the Manni, the others'
discards). In training the whole deal is known, and a value that knows it varies far less with the
luck of the deal, so the advantages the actor learns from are less noisy. The actor reads the
observation only, and only the actor is exported: no agent ever reads these cards. With ``--critic
seat`` the critic reads the observation alone, as the actor does.
"""

from __future__ import annotations

import numpy as np

from manni_env.rules import Rules
from manni_env.vector_kernels import VectorState

#: what the critic reads: the seat's observation, or that and the cards hidden from the seat
CRITIC_VIEWS = ("seat", "deal")
#: the unseen cards' width: the next seat's hand, the one after, the rest of the pack (52 flags each)
UNSEEN_SIZE = 3 * 52


def pack_flags(rules: Rules) -> np.ndarray:
    """(52,) bool: the cards of ``rules``' pack."""
    return np.array([bool(rules.pack >> card & 1) for card in range(52)])


def unseen_cards(state: VectorState, pack: np.ndarray, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(k, :data:`UNSEEN_SIZE`) float32: for seat ``seats[i]`` of game ``games[i]`` the hand of the
    next seat, the hand of the seat after it, and the cards of ``pack`` in no hand and not played."""
    hands = state.hands[games]  # (k, 3, 52)
    rows = np.arange(games.size)
    rest = pack & ~hands.any(1) & ~state.played[games].any(1)
    return np.concatenate([hands[rows, (seats + 1) % 3], hands[rows, (seats + 2) % 3], rest], 1).astype(np.float32)


def unseen_size(critic: str) -> int:
    """How many inputs the critic reads beyond the observation under ``--critic``."""
    if critic not in CRITIC_VIEWS:
        raise ValueError(f"--critic must be one of {', '.join(CRITIC_VIEWS)}, got {critic!r}")
    return UNSEEN_SIZE if critic == "deal" else 0
