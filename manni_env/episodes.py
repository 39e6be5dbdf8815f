"""Episodes and rewards: what ends an episode and what a step pays, one definition for every
adapter of the game (the AEC, single-agent, vector, RLlib and OpenSpiel envs) and the trainers.

**Episode kinds** (:data:`EPISODES`): ``"deal"`` ends an episode when a deal ends (the game goes
on at the next ``reset()``), ``"game"`` when the game ends. :data:`DEFAULT_EPISODE` is ``"deal"``
in every adapter and trainer. A game stopped at the deal cap is *truncated* in a game episode; a
deal episode never is (its deal ended by the rules).

**Reward modes** (:data:`REWARDS`):

- ``"deal"``: each seat's deal points in the step that ends a deal (RULES.md), 0 otherwise;
- ``"outcome"``: the zero-sum game outcome in the step that ends the game, 0 otherwise: winners
  share +1, the others share −1, a three-way tie pays 0 (needs ``episode="game"``);
- ``"trick"`` (shaped, for learners): each trick a seat wins pays its *worth* at once (the sign
  of the contract kind's score in the variant table: +1 in Trump and Grand, −1 in Nullo), and
  the deal's end pays the rest of the deal points, so a deal's rewards still sum to its points.

**Reward bases** (:data:`REWARD_BASES`, the vector trainers' ``--reward-of``): a learner's
``"deal"`` or ``"trick"`` rewards count its ``"own"`` points, or, ``"relative"``, each step's
rewards become :func:`relative_points` of the three seats' (own minus the mean of the others').

:func:`step_rewards` and :func:`episode_end` take one game's values (the engine adapters) or
numpy arrays with leading batch dimensions (the batched trick rewards of
:mod:`manni_env.shaping`). The compiled kernels (:func:`manni_env.vector_kernels.end_deals`) keep
their own copy of the ``"deal"`` / ``"outcome"`` rewards and of the game-end flags, tested
against these functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from manni_env.rules import ContractKind, Rules

if TYPE_CHECKING:
    from manni_env.engine import GameState

EPISODES = ("deal", "game")
#: The episode of every adapter and trainer unless told otherwise.
DEFAULT_EPISODE = "deal"
REWARDS = ("deal", "outcome", "trick")
DEFAULT_REWARD = "deal"
#: What the envs that pay all three seats at once offer (AEC, vector).
TABLE_REWARDS = ("deal", "outcome")
#: What a learner's env and the trainers offer (single-agent env, ``manni train``).
LEARNER_REWARDS = ("deal", "trick")
#: Whose points a training reward counts: the seat's own, or its own minus the mean of the two
#: others' (:func:`relative_points`).
REWARD_BASES = ("own", "relative")


def relative_points(points: np.ndarray) -> np.ndarray:
    """Each seat's points minus the mean of the two others' (the last axis holds the 3 seats): what
    ``pimc`` and ``search`` maximise and what the arena's head-to-head differences measure. In a
    zero-sum deal it is 1.5 × the points; in Basic Manni (``max(0, t − 4)``) it also counts what the
    others score."""
    points = np.asarray(points, dtype=np.float64)
    return points - (points.sum(-1, keepdims=True) - points) / 2


def check_episode(episode: str) -> None:
    """``ValueError`` naming the choices unless ``episode`` is one of :data:`EPISODES`."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}; got {episode!r}")


def check_reward(reward: str, offered: tuple[str, ...] = REWARDS, episode: str | None = None) -> None:
    """``ValueError`` unless ``reward`` is one of ``offered`` (an adapter's choices) and, with
    ``episode``, can be paid in that episode (``"outcome"`` needs whole games)."""
    if reward not in offered:
        raise ValueError(f"reward must be one of {', '.join(offered)}; got {reward!r}")
    if reward == "outcome" and episode == "deal":
        raise ValueError("reward='outcome' is paid at the end of a game: it needs episode='game'")


def trick_worth(rules: Rules, kind: ContractKind | int) -> int:
    """What one more trick adds to a seat's deal points under contract ``kind``: +1 or −1."""
    return rules.spec.scores[kind].sign


def trick_worths(rules: Rules) -> np.ndarray:
    """``(4,)`` float32 worth of a trick by contract-kind index; index −1 (no contract yet) is 0."""
    return np.array([trick_worth(rules, kind) for kind in ContractKind] + [0], np.float32)


def winner_mask(winners: tuple[int, ...]) -> tuple[bool, bool, bool]:
    """The engine's ``GameState.winners`` (seats) as a mask by seat."""
    return tuple(s in winners for s in range(3))


def outcome(winners) -> np.ndarray:
    """``(..., 3)`` zero-sum game outcome of ``(..., 3)`` winner masks: winners share +1, the
    others share −1; a three-way tie gives zeros."""
    won = np.asarray(winners, bool)
    n = won.sum(-1, keepdims=True)
    return np.where(won, 1.0 / np.maximum(n, 1), -1.0 / np.maximum(3 - n, 1)) * (n < 3)


def outcome_rewards(winners: tuple[int, ...]) -> tuple[float, float, float]:
    """:func:`outcome` of the engine's ``winners`` (seats), as a tuple by seat."""
    return tuple(outcome(winner_mask(winners)).tolist())


def step_rewards(reward: str, deal_over, points, game_over, winners, won=0, worth=0, paid=0) -> np.ndarray:
    """``(..., 3)`` rewards by seat of one step in mode ``reward`` (see the module docstring).

    ``deal_over`` / ``game_over`` (``(...)`` bool): a deal / the game ended in this step;
    ``points`` ``(..., 3)``: the deal points of the deal that ended; ``winners`` ``(..., 3)`` bool
    (:func:`winner_mask`): the game's winners if it ended. ``"trick"`` only: ``won`` ``(..., 3)``
    the tricks each seat won in this step in a deal that goes on, ``worth`` ``(...)`` their worth
    (:func:`trick_worth`), ``paid`` ``(..., 3)`` what the deal that ended has paid before.
    """
    deal_over = np.asarray(deal_over, bool)[..., None]
    if reward == "deal":
        return np.where(deal_over, points, 0.0)
    if reward == "outcome":
        return np.where(np.asarray(game_over, bool)[..., None], outcome(winners), 0.0)
    return np.where(deal_over, np.subtract(points, paid), np.multiply(won, np.asarray(worth)[..., None]))


def engine_rewards(reward: str, game: GameState, deal_over: bool, won=0, paid=0) -> tuple[float, float, float]:
    """:func:`step_rewards` of the step just applied to the engine's ``game``: ``deal_over`` if it
    ended a deal (``game.rounds[-1]``), else (``"trick"``) ``won`` tricks in the deal under way."""
    points = game.rounds[-1].points if deal_over else (0, 0, 0)
    worth = trick_worth(game.rules, game.contract.kind) if reward == "trick" and not deal_over else 0
    rewards = step_rewards(reward, deal_over, points, game.finished, winner_mask(game.winners), won, worth, paid)
    return tuple(rewards.tolist())


def episode_over(episode: str, deal_over, game_over):
    """Whether the step ends the episode: the game ended, or a deal did in a ``"deal"`` episode."""
    return game_over | (deal_over & (episode == "deal"))


def episode_end(episode: str, deal_over, game_over, capped):
    """``(terminated, truncated)`` of a step: ``capped`` (the game was stopped at the deal cap)
    truncates a ``"game"`` episode; every other end terminates it. Bools or arrays."""
    truncated = game_over & capped & (episode == "game")
    return episode_over(episode, deal_over, game_over) ^ truncated, truncated
