"""The RLModules and the seat → module mapping of the RLlib trainer (:mod:`manni_train.rllib_ppo`).

:class:`MaskedPPOTorchRLModule` is the trainable self-play module ``"main"``;
:class:`BaselineRLModule` is a frozen baseline that plays the ``"baseline_action"`` of the env's
own copy of that agent (see :mod:`manni_env.rllib_env`); :class:`SeatMapping` assigns seats to
modules per episode.
"""

from __future__ import annotations

import hashlib
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from manni_env.rllib_env import AGENTS, BASELINE_ACTION, MASK, OBS

#: Module id of the shared trainable self-play module.
MAIN = "main"


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module with illegal actions masked out of its logits.

    The recipe of RLlib's ``ActionMaskingTorchRLModule`` example, on the current
    ``DefaultPPOTorchRLModule`` (the example extends a deprecated class): the networks are built
    for the ``"observations"`` Box, and every forward pass adds ``log(action_mask)`` (clamped to
    the most negative float) to the action logits, so an illegal action is never sampled and PPO's
    probabilities are those of the masked distribution.
    """

    def __init__(self, *, observation_space: gym.spaces.Dict | None = None, **kwargs):
        if not isinstance(observation_space, gym.spaces.Dict) or {OBS, MASK} - set(observation_space.spaces):
            raise ValueError(f"{type(self).__name__} needs a Dict observation space with keys {OBS!r} and {MASK!r}, "
                             f"got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS], **kwargs)

    def setup(self) -> None:
        super().setup()  # networks for the "observations" Box
        self.observation_space = self.observation_space_with_mask

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split_mask(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split_mask(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings: Any = None):
        if embeddings is None:
            batch = _split_mask(batch)[1]
        return super().compute_values(batch, embeddings)


def _split_mask(batch: dict) -> tuple[torch.Tensor, dict]:
    """(action mask, a shallow copy of ``batch`` whose observation is the vector alone)."""
    obs = batch[Columns.OBS]
    return obs[MASK], {**batch, Columns.OBS: obs[OBS]}


def _masked(out: dict, mask: torch.Tensor) -> dict:
    out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
    return out


class BaselineRLModule(RLModule):
    """A frozen baseline: plays the ``"baseline_action"`` its seat's env-side agent chose.

    Not trainable (leave it out of ``policies_to_train``); it has no parameters.
    """

    def _forward(self, batch: dict, **kwargs) -> dict:
        obs = batch[Columns.OBS]
        if BASELINE_ACTION not in obs:
            raise ValueError(f"{type(self).__name__} needs env_config['baseline'] set (no {BASELINE_ACTION!r} key)")
        return {Columns.ACTIONS: obs[BASELINE_ACTION]}

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        raise NotImplementedError("a frozen baseline is not trainable: keep it out of policies_to_train")


class SeatMapping:
    """The policy-mapping function: per episode, each seat independently plays the baseline module
    with probability ``share`` (the baseline's share of ``--opponent-mix``), else the shared
    ``"main"`` module, which keeps at least one seat, as in the other trainers. The draws are
    hashes of the episode id, so every call for an episode answers the same."""

    def __init__(self, share: float = 0.0, baseline_module: str = "rule_based"):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share must be a probability, got {share!r}")
        self.share = share
        self.baseline_module = baseline_module

    def __call__(self, agent_id: str, episode: Any, **kwargs) -> str:
        draws = _uniforms(str(episode.id_))
        baseline = [u < self.share for u in draws[:3]]
        if all(baseline):
            baseline[int(draws[3] * 3)] = False  # main keeps a seat
        return self.baseline_module if baseline[AGENTS.index(agent_id)] else MAIN


def _uniforms(key: str) -> list[float]:
    """Four numbers in [0, 1) drawn from ``key`` (the same for the same key in every process)."""
    digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
    return [int.from_bytes(digest[i:i + 4], "little") / 2**32 for i in range(0, 16, 4)]
