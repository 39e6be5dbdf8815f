"""Suit-relabelling augmentation of the PPO update (``--suit-augment``).

Once the contract is known, the suits that are not trump play alike (:mod:`manni_env.symmetry`).
With ``--suit-augment`` each row of every minibatch is seen under one of its six suit relabellings,
drawn at random: its observation and legal mask renamed, its action renamed with them (and, with
``--search-share``, its search target). A decision then also teaches the policy its renamed twins,
for the price of a gather per minibatch. Rows seen before the contract is known stay as they are.

The rollout's log-probabilities, values and advantages stay those of the position as played: PPO's
ratio compares the renamed position's probability of the renamed action with the played one's,
which the clip bounds while the network still prefers some suits to others (the augmentation of
RAD, Laskin et al. 2020, applied to PPO).
"""

from __future__ import annotations

import torch

from manni_env.observation import ObservationEncoder
from manni_env.symmetry import IDENTITY, NO_TRUMP, SuitRelabelling


class SuitAugment:
    """Random suit relabellings of minibatch rows of observations of ``encoder``'s layout."""

    def __init__(self, encoder: ObservationEncoder, device: torch.device):
        relabelling = SuitRelabelling(encoder)
        self.contract, self.trump = relabelling.contract, relabelling.trump
        self.sources = torch.from_numpy(relabelling.sources).long().to(device)  # (table row, copy, input)
        self.actions = torch.from_numpy(relabelling.actions).long().to(device)  # (table row, copy, action)
        self.inverse = self.actions.argsort(2)  # renamed[:, j] = original[:, inverse[j]]
        self.copies = self.sources.shape[1]

    def __call__(self, obs: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor, target: torch.Tensor | None,
                 gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``obs`` and ``mask`` (``(m, ...)``) and the first ``n = len(actions)`` rows' ``actions`` and
        ``target`` (``(n, actions)``, or None), each row renamed by a relabelling drawn from ``gen``."""
        table = self.table_rows(obs)
        copy = torch.randint(self.copies, (len(obs),), generator=gen).to(obs.device)
        inverse = self.inverse[table, copy]
        obs = obs.gather(1, self.sources[table, copy])
        mask = mask.gather(1, inverse)
        n = len(actions)
        actions = self.actions[table[:n], copy[:n]].gather(1, actions[:, None]).squeeze(1)
        if target is not None:
            target = target.gather(1, inverse[:n])
        return obs, mask, actions, target

    def table_rows(self, obs: torch.Tensor) -> torch.Tensor:
        """Each observation's row of the tables (:meth:`SuitRelabelling._rows`): its trump suit's,
        the one without trump, or the unchanged one before the contract is known."""
        known = (obs[:, self.contract] > 0.5).any(1)
        flags = obs[:, self.trump] > 0.5
        return torch.where(~known, IDENTITY, torch.where(flags.any(1), flags.long().argmax(1), NO_TRUMP))
