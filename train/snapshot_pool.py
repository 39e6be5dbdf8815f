"""The self-play trainers' pool of frozen learner snapshots, playing all their seats in one pass.

A rollout step asks every snapshot for the moves of the games whose mover it controls; with eight
snapshots that was eight small forward passes of a few rows each, and their per-call costs (under
bf16 also the weights' casts) were half of a rollout's time. :class:`SnapshotPool` keeps the
snapshots' weights stacked, ``(snapshots, in, out)`` per layer and already in the compute dtype,
groups a step's rows by snapshot (each group padded to the largest, rounded up to
:data:`GROUP_ROWS`) and runs every layer as one batched product (``torch.baddbmm``): one pass and
one draw per step for the whole pool. Each row gets exactly its own snapshot's logits, as a
separate pass would give them; hidden layers in the rollout's dtype, the action head in float32
(as :class:`~manni_train.networks.Actor` computes it).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

Layer = tuple[torch.Tensor, torch.Tensor]  # a linear layer's (weight, bias)

#: a step's groups are padded to a multiple of this many rows (few distinct shapes for oneDNN's kernels)
GROUP_ROWS = 8


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Draw one action per row from masked logits (Gumbel-max, with the run's own generator)."""
    u = torch.rand(logits.shape, generator=generator).clamp_(1e-12, 1.0)
    return (logits - torch.log(-torch.log(u))).argmax(1)


class SnapshotPool:
    """At most ``size`` frozen copies of an actor (:class:`~manni_train.networks.Actor`), oldest
    first; :meth:`act` draws the moves of rows played by any of them, hidden layers in ``dtype``,
    actions drawn with ``gen``."""

    def __init__(self, size: int, dtype: torch.dtype, gen: torch.Generator):
        self.size, self.dtype, self.gen = size, dtype, gen
        self.snapshots: list[list[Layer]] = []  # each snapshot's linear layers
        self.activation: nn.Module | None = None
        self.stacked: list[Layer] = []

    def __len__(self) -> int:
        return len(self.snapshots)

    def add(self, actor: nn.Module) -> bool:
        """Freeze a copy of ``actor``'s weights; whether the oldest snapshot left to make room
        (the caller renumbers its seats: snapshot k becomes k - 1)."""
        self.snapshots.append([(m.weight.detach().clone(), m.bias.detach().clone()) for m in actor.linears()])
        self.activation = actor.pi[1]  # the hidden layers' activation module (stateless)
        evicted = len(self.snapshots) > self.size
        if evicted:
            self.snapshots.pop(0)
        *hidden, head = zip(*self.snapshots)  # per layer: that layer of every snapshot
        self.stacked = [self.stack(layer, self.dtype) for layer in hidden] + [self.stack(head, torch.float32)]
        return evicted

    @staticmethod
    def stack(layer: tuple[Layer, ...], dtype: torch.dtype) -> Layer:
        """One layer of every snapshot as ``(snapshots, in, out)`` weights and ``(snapshots, 1, out)`` biases."""
        weights = torch.stack([w.T for w, _ in layer]).to(dtype).contiguous()
        biases = torch.stack([b[None] for _, b in layer]).to(dtype)
        return weights, biases

    @torch.no_grad()
    def logits(self, which: np.ndarray, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked float32 logits of row i under snapshot ``which[i]`` (illegal actions: -1e8)."""
        order = np.argsort(which, kind="stable")
        group = which[order]
        counts = np.bincount(group, minlength=len(self))
        rank = np.arange(group.size) - np.repeat(np.cumsum(counts) - counts, counts)  # row's place in its group
        width = -(-int(counts.max()) // GROUP_ROWS) * GROUP_ROWS
        rows = np.zeros((len(self), width), np.int64)  # padding rows repeat row 0; their outputs are not read
        rows[group, rank] = order
        x = obs.index_select(0, torch.from_numpy(rows.reshape(-1))).view(len(self), width, -1).to(self.dtype)
        with torch.autocast(obs.device.type, enabled=False):  # the dtypes are the stacks' own
            for weight, bias in self.stacked[:-1]:
                x = self.activation(torch.baddbmm(bias, x, weight))
            weight, bias = self.stacked[-1]
            out = torch.baddbmm(bias, x.float(), weight)
        logits = torch.empty((which.size, out.shape[-1]))
        logits[torch.from_numpy(order)] = out[torch.from_numpy(group), torch.from_numpy(rank)]
        return logits.masked_fill_(~mask, -1e8)

    def act(self, which: np.ndarray, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Actions of rows ``obs``, ``mask`` (legal actions), row i played by snapshot ``which[i]``,
        drawn from each snapshot's masked softmax."""
        return sample(self.logits(which, obs, mask), self.gen)
