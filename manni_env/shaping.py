"""The shaped ``trick`` training reward: one definition for the envs and every trainer.

``reward="deal"`` pays a seat its deal score when the deal ends. ``reward="trick"`` pays each trick
a seat wins its *worth* at once and the rest of the deal score when the deal ends, so a deal's
rewards still sum to its score. A trick's worth is the sign of the contract kind's score in the
variant table (``rules.spec.scores[kind].sign``: +1 in Trump and Grand, −1 in Nullo); the
declarer's offsets of the announcement variants move a deal's total, not what one more trick adds.

:func:`trick_worth` serves the single-agent env (one game), :class:`VectorTrickRewards` the
batched trainer and its warm-start data on :class:`~manni_env.vector.VectorManni`.
"""

from __future__ import annotations

import numpy as np

from .rules import ContractKind, Rules

REWARDS = ("deal", "trick")


def check_reward(reward: str) -> None:
    """``ValueError`` unless ``reward`` is one of :data:`REWARDS`."""
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")


def trick_worth(rules: Rules, kind: ContractKind | int) -> int:
    """What one more trick adds to a seat's deal score under contract ``kind``: +1 or −1."""
    return rules.spec.scores[kind].sign


def trick_worths(rules: Rules) -> np.ndarray:
    """``(4,)`` float32 worth of a trick by contract-kind index; index −1 (no contract yet) is 0."""
    return np.array([trick_worth(rules, kind) for kind in ContractKind] + [0], np.float32)


class VectorTrickRewards:
    """Training rewards of every (game, seat) of a vector env, step by step.

    Call :meth:`before_step` before ``venv.step`` and :meth:`after_step` with the step's deal
    scores (``rewards``, (N, 3)) and ``infos["deal_over"]``; it returns the (N, 3) training rewards
    of that step: the deal scores themselves with ``reward="deal"``, or with ``reward="trick"`` the
    worth of each trick won in a deal that goes on, and at a deal's end its score minus what its
    tricks already paid. Reads the vector env's public ``tricks_won`` and ``kind`` arrays.
    """

    def __init__(self, venv, reward: str):
        check_reward(reward)
        self.venv, self.trick = venv, reward == "trick"
        self.worths = trick_worths(venv.rules)
        self.paid = np.zeros((venv.num_envs, 3), np.float32)  # shaping paid in each deal under way
        self.won_before = np.array(venv.tricks_won)

    def before_step(self) -> None:
        if self.trick:
            self.won_before = np.array(self.venv.tricks_won)

    def after_step(self, rewards: np.ndarray, deal_over: np.ndarray) -> np.ndarray:
        """(N, 3) training rewards of the step just taken (see the class docstring)."""
        if not self.trick:
            return rewards
        worth = (self.venv.tricks_won - self.won_before).astype(np.float32) * self.worths[self.venv.kind][:, None]
        worth[deal_over] = 0.0  # a finished deal's tricks are settled with its score
        out = worth.copy()
        out[deal_over] = rewards[deal_over] - self.paid[deal_over]
        self.paid += worth
        self.paid[deal_over] = 0.0
        return out
