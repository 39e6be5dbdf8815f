"""The ``trick`` training reward of the batched :class:`~manni_env.vector.VectorManni`, for the
trainer and its warm-start data.

The reward modes themselves (``deal``, ``trick``, and what a trick is worth) are defined once in
:mod:`manni_env.episodes`; :class:`VectorTrickRewards` keeps what the shaped mode needs to remember
in each game (the tricks won before the step, what the deal under way has paid) and calls
:func:`~manni_env.episodes.step_rewards` on whole batches.
"""

from __future__ import annotations

import numpy as np

from manni_env.episodes import (LEARNER_REWARDS, REWARD_BASES, check_reward, relative_points, step_rewards, trick_worth,
                       trick_worths)

#: The trainers' reward choices.
REWARDS = LEARNER_REWARDS

__all__ = ["REWARDS", "REWARD_BASES", "VectorTrickRewards", "check_reward", "trick_worth", "trick_worths"]


class VectorTrickRewards:
    """Training rewards of every (game, seat) of a vector env, step by step.

    Call :meth:`before_step` before ``venv.step`` and :meth:`after_step` with the step's deal
    scores (``rewards``, (N, 3)) and ``infos["deal_over"]``; it returns the (N, 3) training rewards
    of that step: the deal scores themselves with ``reward="deal"``, or with ``reward="trick"`` the
    worth of each trick won in a deal that goes on, and at a deal's end its score minus what its
    tricks already paid. With ``reward_of="relative"`` each seat's rewards are then its own minus
    the mean of the two others' (:func:`~manni_env.episodes.relative_points`). Reads the vector
    env's public ``tricks_won`` and ``kind`` arrays.
    """

    def __init__(self, venv, reward: str, reward_of: str = "own"):
        check_reward(reward, REWARDS)
        if reward_of not in REWARD_BASES:
            raise ValueError(f"reward_of must be one of {', '.join(REWARD_BASES)}; got {reward_of!r}")
        self.venv, self.trick, self.relative = venv, reward == "trick", reward_of == "relative"
        self.worths = trick_worths(venv.rules)
        self.paid = np.zeros((venv.num_envs, 3), np.float32)  # shaping paid in each deal under way
        self.won_before = np.array(venv.tricks_won)

    def before_step(self) -> None:
        if self.trick:
            self.won_before = np.array(self.venv.tricks_won)

    def after_step(self, rewards: np.ndarray, deal_over: np.ndarray) -> np.ndarray:
        """(N, 3) training rewards of the step just taken (see the class docstring)."""
        out = self._own(rewards, deal_over)
        return relative_points(out).astype(np.float32) if self.relative else out

    def _own(self, rewards: np.ndarray, deal_over: np.ndarray) -> np.ndarray:
        if not self.trick:
            return rewards
        venv = self.venv
        won = venv.tricks_won - self.won_before
        out = step_rewards("trick", deal_over, rewards, False, False, won, self.worths[venv.kind], self.paid)
        out = out.astype(np.float32)
        self.paid += out
        self.paid[deal_over] = 0.0
        return out
