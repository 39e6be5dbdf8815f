"""The fast trainer scaled out on Ray: runner actors step the vector env, learners update.

    manni train --trainer ray --num-runners 2                         # a local in-process Ray
    manni train --trainer ray --address auto --num-runners 60         # on a running cluster
    manni train --trainer ray --address auto --num-gpus-per-learner 1 # the update on a GPU

(or ``python -m manni_train.ray_vector ...``). This is :mod:`manni_train.ppo_vector` with its rollouts spread
over Ray: the same options (plus :class:`Args`' own), the same warm start, PPO update, snapshot
pool, evaluations, export (``manni arena ppo:runs/<run>/agent rule_based rule_based``), learning
curve and final arena, all four variants. What differs:

- **Runners**: ``--num-runners`` Ray actors (one CPU each), each a
  :class:`~manni_train.vector_rollout.VectorRollout` of ``--num-envs`` games with its own batched
  opponents, snapshot pool and seeds (runner ``i``'s seed is word ``i`` of
  ``numpy.random.SeedSequence(--seed)``). An iteration broadcasts the actor's weights (one
  ``ray.put``), every runner plays ``--num-steps`` vector steps, and their rollouts are valued by
  the critic in this process (as the fast trainer's update process values its rollout process's)
  and joined in runner order for one update (the defaults, 2 runners × 128 games, give the fast trainer's 256
  games per update; more runners give bigger updates).
  With ``--overlap`` the runners play the next rollout while the learner updates, with weights one
  update old (PPO's ratios are taken against the policy that sampled).
- **Learners**: the PPO update (:class:`~manni_train.learner.PPOLearner`) runs in this process on its
  CPUs (``--torch-threads``), or in ``--num-learners`` Ray actors (``--num-cpus-per-learner``,
  ``--num-gpus-per-learner`` each; a GPU alone asks for one actor) that split each batch and average
  their gradients with ``torch.distributed`` (gloo on CPUs, NCCL on GPUs):
  :class:`RemoteLearners`.

The same seed and runner count give the same run (tested, also with ``--overlap``). Throughput, scaling and cluster
commands: ``docs/ray.md``.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass

import numpy as np
import ray
import torch
import torch.distributed as dist

from manni_train import ppo_vector, resume
from manni_train.args import parse_args
from manni_train.learner import PPOLearner
from manni_train.networks import Actor, Critic, run_networks
from manni_train.reporting import TrainResult
from manni_train.rollout_process import RolloutProcessError, runner_seeds
from manni_train.vector_rollout import Played, RolloutBatch, VectorRollout


class ClusterError(ValueError):
    """The Ray cluster cannot run what was asked (exit code 2 on the command line)."""


ALGORITHM = "plain-torch self-play PPO on the vector env, rollouts on Ray runner actors (train/ray_vector.py)"


@dataclass
class Args(ppo_vector.Args):
    """The fast trainer's PPO with its rollouts on Ray runner actors (``manni train --trainer ray``)."""

    TRAINER = "ray"

    # the fast trainer's earlier defaults, with which docs/ray.md measured this one
    total_steps: int = 2_000_000
    num_envs: int = 128
    """games each runner steps in lockstep (2 runners × 128 games × 64 steps per update)"""
    num_steps: int = 64
    minibatch_size: int = 512
    num_runners: int = 2
    """Ray actors collecting rollouts, one CPU each; each steps --num-envs games (scales with machines)"""
    num_learners: int = 0
    """learner actors sharing each update (gradients averaged); 0: the update runs in this process"""
    num_gpus_per_learner: float = 0.0
    """GPUs of each learner actor (a fraction shares one); > 0 with --num-learners 0 means one learner actor"""
    num_cpus_per_learner: int = 1
    """CPUs (torch threads) of each learner actor"""
    overlap: bool = False
    """runners sample the next rollout while the learner updates, with the actor one update old
    (an iteration then takes the longer of sampling and update, not their sum)"""
    address: str | None = None
    """Ray cluster to join ('auto', 'HOST:6379' or 'ray://HOST:10001'); default: a local in-process Ray"""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (default: all); ignored with --address"""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        super().check()
        if self.num_runners < 1:
            raise ValueError(f"--num-runners must be at least 1, got {self.num_runners}")
        if self.num_learners < 0:
            raise ValueError(f"--num-learners must not be negative, got {self.num_learners}")
        if self.num_cpus_per_learner < 1:
            raise ValueError(f"--num-cpus-per-learner must be at least 1, got {self.num_cpus_per_learner}")
        if self.num_gpus_per_learner < 0:
            raise ValueError(f"--num-gpus-per-learner must not be negative, got {self.num_gpus_per_learner}")
        if self.num_cpus is not None and self.num_cpus < 1:
            raise ValueError(f"--num-cpus must be at least 1, got {self.num_cpus}")


def cpu_state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``module``'s weights on the CPU (what is broadcast)."""
    return {k: v.detach().cpu() for k, v in module.state_dict().items()}


class RolloutRunner:
    """A Ray actor's state: one :class:`VectorRollout` and the actor it plays with (the learner values
    its rollouts, as the fast trainer's update process does those of its rollout process)."""

    def __init__(self, args: Args, seed: int):
        torch.set_num_threads(1)
        self.rollout = VectorRollout(args, torch.Generator().manual_seed(seed), np.random.default_rng(seed), seed)
        self.actor = Actor(self.rollout.obs_size, args.hidden, args.activation)

    def obs_size(self) -> int:
        return self.rollout.obs_size

    def collect(self, actor_weights: dict) -> Played:
        """A rollout played with the broadcast actor weights."""
        self.actor.load_state_dict(actor_weights)
        return self.rollout.play(self.actor)

    def add_snapshot(self, actor_weights: dict) -> None:
        """Freeze these actor weights into the pool (they are also the next rollout's weights)."""
        self.actor.load_state_dict(actor_weights)
        self.rollout.add_snapshot(self.actor)


def runner_failure(err: ray.exceptions.RayError) -> str:
    """One line for a runner's failure: the exception its task raised, or how its actor died."""
    cause = getattr(err, "cause", None) if isinstance(err, ray.exceptions.RayTaskError) else None
    return f"{type(cause).__name__}: {resume.reason(cause)}" if cause is not None else resume.reason(err)


class RaySampler:
    """The :class:`~manni_train.vector_rollout.Sampler` of ``--num-runners`` :class:`RolloutRunner` actors."""

    def __init__(self, args: Args):
        runner = ray.remote(num_cpus=1)(RolloutRunner)
        self.runners = [runner.remote(args, seed) for seed in runner_seeds(args.seed, args.num_runners)]
        self.obs_size = ray.get(self.runners[0].obs_size.remote())
        self.args, self.overlap = args, args.overlap
        self.pending: list | None = None  # with --overlap: the rollouts under way

    def launch(self, actor: Actor) -> list:
        """Start a rollout on every runner with these actor weights (broadcast once)."""
        weights = ray.put(cpu_state(actor))
        return [r.collect.remote(weights) for r in self.runners]

    def collect(self, actor: Actor, critic: Critic) -> RolloutBatch:
        """The runners' rollouts played with ``actor``, valued here with ``critic``, joined; with
        ``--overlap`` the rollouts started at the previous call (an actor one update old), and the
        next ones start now."""
        refs = self.pending or self.launch(actor)
        self.pending = self.launch(actor) if self.overlap else None
        try:
            played = ray.get(refs)
        except ray.exceptions.RayError as err:  # kept by the trainer as a failed rollout process is
            raise RolloutProcessError(f"a Ray runner failed: {runner_failure(err)}") from None
        return RolloutBatch.concat([rollout.batch(critic, self.args) for rollout in played])

    def add_snapshot(self, actor: Actor) -> None:
        weights = ray.put(cpu_state(actor))
        for r in self.runners:  # an actor runs its calls in order: before its next rollout
            r.add_snapshot.remote(weights)


class DistributedPPOLearner(PPOLearner):
    """A :class:`PPOLearner` that averages its gradients with the other learners' before each step
    (``torch.distributed`` all-reduce: gloo on CPUs, NCCL on GPUs), so all keep the same weights."""

    def step(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in self.params])
        dist.all_reduce(flat)
        flat /= dist.get_world_size()
        offset = 0
        for p in self.params:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        torch.nn.utils.clip_grad_norm_(self.params, self.args.max_grad_norm)
        self.optimizer.step()


class LearnerActor:
    """A Ray actor's state: a learner on the actor's GPU (its CPUs when it has none); with several,
    each updates on its share of the batch and they average their gradients."""

    def __init__(self, args: Args, obs_size: int, weights: tuple[dict, dict], seed: int):
        torch.set_num_threads(args.num_cpus_per_learner)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.args, self.obs_size, self.weights, self.seed = args, obs_size, weights, seed
        self.learner = self.build(PPOLearner)

    def build(self, kind: type[PPOLearner]) -> PPOLearner:
        args = self.args
        actor, critic = run_networks(self.obs_size, args)
        actor.load_state_dict(self.weights[0])
        critic.load_state_dict(self.weights[1])
        return kind(actor.to(self.device), critic.to(self.device), args, torch.Generator().manual_seed(self.seed),
                    self.device)

    def address(self) -> str:
        """``ip:port`` where this (rank 0) learner can be reached by the others: a free port now."""
        with socket.socket() as sock:
            sock.bind(("", 0))
            return f"{ray.util.get_node_ip_address()}:{sock.getsockname()[1]}"

    def join(self, address: str, rank: int, world: int) -> None:
        """Join the learners' process group (before the first update) at rank 0's ``address``."""
        dist.init_process_group("nccl" if self.device == "cuda" else "gloo", init_method=f"tcp://{address}",
                                rank=rank, world_size=world)
        self.learner = self.build(DistributedPPOLearner)

    def update(self, batch: RolloutBatch, lr: float, minibatches: int) -> tuple[dict[str, float], tuple[dict, dict]]:
        """One PPO update; its losses and the new (actor, critic) weights on the CPU."""
        losses = self.learner.update(batch, lr, minibatches)
        return losses, (cpu_state(self.learner.actor), cpu_state(self.learner.critic))


class RemoteLearners:
    """The PPO update in ``--num-learners`` Ray actors (at least one when ``--num-gpus-per-learner``
    asks for GPUs), each with ``--num-cpus-per-learner`` CPUs and ``--num-gpus-per-learner`` GPUs.
    Several learners split each batch into equal shares and average their gradients
    (:class:`DistributedPPOLearner`); each epoch has as many minibatches as one learner's would.
    After each update the local ``actor`` and ``critic`` hold the new weights (for the snapshots,
    evaluations, export)."""

    def __init__(self, actor: Actor, critic: Critic, args: Args, gen: torch.Generator):
        self.actor, self.critic, self.args = actor, critic, args
        cls = ray.remote(num_cpus=args.num_cpus_per_learner, num_gpus=args.num_gpus_per_learner)(LearnerActor)
        weights = ray.put((cpu_state(actor), cpu_state(critic)))
        seeds = [int(torch.randint(2**31, (1,), generator=gen)) for _ in range(learner_count(args))]
        self.learners = [cls.remote(args, actor.pi[0].in_features, weights, seed) for seed in seeds]
        if len(self.learners) > 1:
            address = ray.get(self.learners[0].address.remote())
            ray.get([h.join.remote(address, rank, len(seeds)) for rank, h in enumerate(self.learners)])

    def update(self, batch: RolloutBatch, lr: float) -> dict[str, float]:
        minibatches = max(1, round(batch.steps / self.args.minibatch_size))
        shares = batch.split(len(self.learners)) if len(self.learners) > 1 else [batch]
        losses, (actor, critic) = ray.get([h.update.remote(share, lr, minibatches)
                                           for h, share in zip(self.learners, shares)])[0]
        self.actor.load_state_dict(actor)
        self.critic.load_state_dict(critic)
        return losses


def learner_count(args: Args) -> int:
    """Learner actors: ``--num-learners``, or one for a GPU learner; 0 updates in this process."""
    return args.num_learners or (1 if args.num_gpus_per_learner else 0)


def check_resources(args: Args, cluster: dict[str, float]) -> None:
    """Raise :class:`ClusterError` when the runners and learners need more CPUs or GPUs than the
    cluster has (Ray would wait for them forever)."""
    learners = learner_count(args)
    cpus, gpus = args.num_runners + learners * args.num_cpus_per_learner, learners * args.num_gpus_per_learner
    if gpus > cluster.get("GPU", 0.0):
        raise ClusterError(f"--num-gpus-per-learner {args.num_gpus_per_learner:g}: the learners need {gpus:g} GPUs, "
                           f"the Ray cluster has {cluster.get('GPU', 0.0):g}")
    if cpus > cluster.get("CPU", 0.0):
        raise ClusterError(f"{args.num_runners} runner(s) and {learners} learner(s) need {cpus} CPUs, "
                           f"the Ray cluster has {cluster.get('CPU', 0.0):g}")


def train(args: Args) -> TrainResult:
    """Start or join Ray, train with :func:`manni_train.ppo_vector.train` on :class:`RaySampler`, stop Ray
    (unless it was the caller's)."""
    from manni_train.ray_cluster import start_ray

    args.check()
    started = start_ray(args.address, args.num_cpus)
    try:
        check_resources(args, ray.cluster_resources())
        learner = RemoteLearners if learner_count(args) else PPOLearner
        return ppo_vector.train(args, RaySampler(args), learner, ALGORITHM)
    finally:
        if started:
            ray.shutdown()


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``manni train --trainer ray`` (:func:`manni_train.resume.command`: its exit codes; a cluster too
    small is exit code 2)."""
    return resume.command(train, parse_args(Args, argv, prog), prog or "manni_train.ray_vector", (ClusterError,))


if __name__ == "__main__":
    sys.exit(main())
