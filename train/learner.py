"""The PPO update of the fast trainer and the Ray trainer (CleanRL's ``ppo.py`` update, batched):
:class:`PPOLearner` takes a :class:`~manni_train.vector_rollout.RolloutBatch` and steps the actor
and the critic with one Adam optimizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from manni_train.expert_iteration import search_loss
from manni_train.networks import Actor, Critic, parameters, policy_and_value
from manni_train.precision import autocast, compute_dtype, padded_rows
from manni_train.vector_rollout import RolloutBatch

if TYPE_CHECKING:
    from manni_train.args import TrainArgs


class PPOLearner:
    """The PPO update of ``actor`` and ``critic`` (one Adam optimizer) on a :class:`RolloutBatch`:
    ``update_epochs`` epochs of minibatches, normalised advantages, the clipped objective, the value
    loss (clipped with ``--clip-vloss``), the entropy bonus and gradient clipping, with the PPO options
    of the trainer's ``args`` (and its ``--precision``). The networks live on ``device``; ``gen``
    shuffles the minibatches."""

    def __init__(self, actor: Actor, critic: Critic, args: TrainArgs, gen: torch.Generator, device: str = "cpu"):
        self.actor, self.critic, self.args, self.gen, self.device = actor, critic, args, gen, torch.device(device)
        self.params = parameters(actor, critic)
        # fused: one kernel for all parameters instead of a Python loop over them (docs/training.md)
        self.optimizer = torch.optim.Adam(self.params, lr=args.learning_rate, eps=1e-5, fused=fused_adam(self.device))
        self.dtype = compute_dtype(args.precision, self.device)
        self.precision = autocast(self.dtype, self.device)

    def update(self, batch: RolloutBatch, lr: float, minibatches: int | None = None) -> dict[str, float]:
        """One PPO update with learning rate ``lr`` in ``minibatches`` minibatches per epoch (default:
        of about ``minibatch_size``); the last minibatch's losses and approximate KL divergence, the clip
        fraction and the explained variance of the rollout's values."""
        args = self.args
        self.optimizer.param_groups[0]["lr"] = lr
        # the observations only feed the first layers, which autocast runs in the compute dtype: cast them once
        f_obs = batch.obs.to(self.device, self.dtype)
        f_unseen = None if batch.unseen is None else batch.unseen.to(self.device, self.dtype)
        f_target = None if batch.target is None else batch.target.to(self.device)  # --search-share
        f_mask, f_act, f_logp, f_val, f_adv, f_ret = (
            t.to(self.device) for t in (batch.mask, batch.actions, batch.logp, batch.values, batch.advantages,
                                        batch.returns))
        size = f_obs.shape[0]
        clipfracs, count = [], minibatches or max(1, round(size / args.minibatch_size))
        for _ in range(args.update_epochs):
            for idx in torch.randperm(size, generator=self.gen).tensor_split(count):
                idx = idx.to(self.device)
                n = idx.numel()
                rows = padded_rows(idx, self.dtype)  # the padding rows' outputs are dropped below
                obs, mask = f_obs.index_select(0, rows), f_mask.index_select(0, rows)  # (faster than obs[rows])
                act, old_logp, old_v, a, ret = (t.index_select(0, idx) for t in (f_act, f_logp, f_val, f_adv, f_ret))
                with self.precision:  # the networks' hidden layers; their outputs and the losses are float32
                    logits, v = policy_and_value(self.actor, self.critic, obs, mask,
                                                 None if f_unseen is None else f_unseen.index_select(0, rows))
                    logits, v = logits[:n], v[:n]
                logp_all = torch.log_softmax(logits, 1)
                logp = logp_all.gather(1, act[:, None]).squeeze(1)
                ratio = (logp - old_logp).exp()
                if n > 1:  # (one row, as in the last update of a run, has no spread to normalise by)
                    a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                # e^-80 is 0 to float32's precision; exp of the masked actions' -1e8 (an underflow) is about 30x slower
                probs = logp_all.clamp(min=-80.0).exp()
                entropy = -(probs * logp_all.masked_fill(~mask[:n], 0.0)).sum(1).mean()
                v_loss = (v - ret) ** 2
                if args.clip_vloss:
                    v_clipped = old_v + (v - old_v).clamp(-args.clip_coef, args.clip_coef)
                    v_loss = torch.max(v_loss, (v_clipped - ret) ** 2)
                v_loss = 0.5 * v_loss.mean()
                loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                if f_target is not None:  # expert iteration: towards the search's targets
                    s_loss = search_loss(logp_all, f_target.index_select(0, idx))
                    loss = loss + args.search_coef * s_loss
                self.step(loss)
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
        with torch.no_grad():  # CleanRL's diagnostics: the last minibatch's KL estimate, the critic's fit
            log_ratio = logp - old_logp
            approx_kl = ((log_ratio.exp() - 1) - log_ratio).mean().item()
            variance = f_ret.var().item() if size > 1 else 0.0
            explained = float("nan") if variance == 0 else 1.0 - (f_ret - f_val).var().item() / variance
        losses = {"losses/policy": pg_loss.item(), "losses/value": v_loss.item(), "losses/entropy": entropy.item(),
                  "losses/clipfrac": float(np.mean(clipfracs)), "losses/approx_kl": approx_kl,
                  "losses/explained_variance": explained}
        if f_target is not None:
            losses |= {"losses/search": s_loss.item(), "charts/searched_decisions": int((f_target.sum(1) > 0).sum())}
        return losses

    def step(self, loss: torch.Tensor) -> None:
        """One gradient step on ``loss`` (clipped to ``max_grad_norm``)."""
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.params, self.args.max_grad_norm)
        self.optimizer.step()


def fused_adam(device: torch.device) -> bool:
    """Whether torch's fused Adam kernel runs on ``device`` (CPU and CUDA)."""
    return device.type in ("cpu", "cuda")
