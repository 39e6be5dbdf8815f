"""Gymnasium's vector API over :class:`manni_env.vector.VectorManni`: the acting seat's view.

``ManniVectorEnv(variant="hornafjardar", num_envs=64)`` is a ``gymnasium.vector.VectorEnv`` whose
observation is a dict, as in the AEC env: ``"observation"`` (N, obs_size) float32 of the seat on
turn in each game and ``"action_mask"`` (N, 63) int8 of its legal actions. ``step(actions)`` takes
one action per game for that seat.

Manni is a three-player turn-based game, so one reward per game cannot credit every seat:
``rewards[i]`` is what the seat that made step's decision in game ``i`` received (its deal score
when its action ended a deal), and ``infos`` carries the full picture: ``seat_rewards`` (N, 3) by
absolute seat, ``acting_seat`` (N,) (who made the decision), ``to_move`` (N,) (whose view the new
observation is), plus the arrays of :meth:`VectorManni.step`. Self-play trainers should credit
``seat_rewards`` per seat, as ``train/ppo_vector.py`` does. Finished games reset within the same
step (``autoreset_mode`` ``SAME_STEP``).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from .actions import NUM_ACTIONS
from .rules import make_rules
from .vector import VectorManni


class ManniVectorEnv(gymnasium.vector.VectorEnv):
    """N Manni games for Gymnasium's vector API (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, variant: str = "hornafjardar", num_envs: int = 64, history: str = "summary",
                 reward: str = "deal", backend: str = "auto", **options):
        self.venv = VectorManni(make_rules(variant, **options), num_envs, reward=reward, history=history,
                                backend=backend)
        self.num_envs = num_envs
        enc = self.venv.encoder
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(enc.low, enc.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._to_move = np.zeros(num_envs, np.int64)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, mask, self._to_move = self.venv.reset(seed)
        return {"observation": obs, "action_mask": mask.astype(np.int8)}, {"to_move": self._to_move}

    def step(self, actions):
        acting = self._to_move
        obs, mask, self._to_move, seat_rewards, terminated, truncated, infos = self.venv.step(np.asarray(actions))
        rewards = seat_rewards[np.arange(self.num_envs), acting]
        infos = {**infos, "seat_rewards": seat_rewards, "acting_seat": acting, "to_move": self._to_move}
        return ({"observation": obs, "action_mask": mask.astype(np.int8)}, rewards, terminated, truncated, infos)
