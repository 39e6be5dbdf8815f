"""Episode kinds and the game-outcome reward, named once for every adapter of the game (the AEC,
single-agent, vector, OpenSpiel and RLlib envs) and the trainers.

An episode is one ``"deal"`` or a whole ``"game"``; each adapter documents its default and the
rewards it pays. :func:`outcome_rewards` is the zero-sum result of a finished game.
"""

from __future__ import annotations

EPISODES = ("deal", "game")


def check_episode(episode: str) -> None:
    """``ValueError`` naming the choices unless ``episode`` is one of :data:`EPISODES`."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}; got {episode!r}")


def outcome_rewards(winners: tuple[int, ...]) -> tuple[float, float, float]:
    """Zero-sum game outcome: winners share +1, the other seats share -1 (all tied: zeros)."""
    if len(winners) == 3:
        return (0.0, 0.0, 0.0)
    win, lose = 1.0 / len(winners), -1.0 / (3 - len(winners))
    return tuple(win if s in winners else lose for s in range(3))
