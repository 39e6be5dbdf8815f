"""The fast trainer scaled out on Ray: runner actors step the vector env, one learner updates.

    manni train --trainer ray --num-runners 2                         # a local in-process Ray
    manni train --trainer ray --address auto --num-runners 60         # on a running cluster
    manni train --trainer ray --address auto --num-gpus-per-learner 1 # the update on a GPU

(or ``python -m train.ray_vector ...``). This is :mod:`train.ppo_vector` with its rollouts spread
over Ray: the same options (plus :class:`Args`' own), the same warm start, PPO update, snapshot
pool, evaluations, export (``manni arena ppo:runs/<run>/agent rule_based rule_based``), learning
curve and final arena, all four variants. What differs:

- **Runners**: ``--num-runners`` Ray actors (one CPU each), each a
  :class:`~train.vector_rollout.VectorRollout` of ``--num-envs`` games with its own batched
  opponents, snapshot pool and seeds (runner ``i``'s seed is word ``i`` of
  ``numpy.random.SeedSequence(--seed)``). An iteration broadcasts the actor's and critic's weights
  (one ``ray.put``), every runner plays ``--num-steps`` vector steps, and their batches are joined
  in runner order: an update sees ``num_runners`` × as many learner decisions as the fast trainer's.
  With ``--overlap`` the runners play the next rollout while the learner updates, with weights one
  update old (PPO's ratios are taken against the policy that sampled).
- **Learner**: the PPO update (:class:`~train.ppo_vector.PPOLearner`) runs in this process on its
  CPUs (``--torch-threads``), or with ``--num-gpus-per-learner G`` in a Ray actor that Ray places on
  a GPU (``G`` may be a fraction of one). One learner: the update of these small networks is a
  fraction of a second on one GPU, so several data-parallel learners are not supported.

Same seed and the same number of runners give the same run. Throughput, scaling and cluster
commands: ``docs/rllib.md``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import ray
import torch

from train import ppo_vector
from train.args import parse_args
from train.ppo_vector import Actor, Critic, PPOLearner
from train.reporting import TrainResult, report
from train.vector_rollout import RolloutBatch, VectorRollout

class ClusterError(ValueError):
    """The Ray cluster cannot run what was asked (exit code 2 on the command line)."""


ALGORITHM = "plain-torch self-play PPO on the vector env, rollouts on Ray runner actors (train/ray_vector.py)"


@dataclass
class Args(ppo_vector.Args):
    """The fast trainer's PPO with its rollouts on Ray runner actors (``manni train --trainer ray``)."""

    TRAINER = "ray"

    num_runners: int = 2
    """Ray actors collecting rollouts, one CPU each; each steps --num-envs games (scales with machines)"""
    num_gpus_per_learner: float = 0.0
    """GPUs of the learner: 0 updates in this process on its CPUs; > 0 in a Ray actor on a GPU (a fraction shares one)"""
    overlap: bool = False
    """runners sample the next rollout while the learner updates, with the weights one update old
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
        if self.num_gpus_per_learner < 0:
            raise ValueError(f"--num-gpus-per-learner must not be negative, got {self.num_gpus_per_learner}")
        if self.num_cpus is not None and self.num_cpus < 1:
            raise ValueError(f"--num-cpus must be at least 1, got {self.num_cpus}")


def runner_seeds(seed: int, runners: int) -> list[int]:
    """Runner ``i``'s seed: word ``i`` of ``SeedSequence(seed)`` (the same whatever the runner count)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(runners)]


def cpu_state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``module``'s weights on the CPU (what is broadcast)."""
    return {k: v.detach().cpu() for k, v in module.state_dict().items()}


class RolloutRunner:
    """A Ray actor's state: one :class:`VectorRollout` and the networks it plays with."""

    def __init__(self, args: Args, seed: int):
        torch.set_num_threads(1)
        self.rollout = VectorRollout(args, torch.Generator().manual_seed(seed), np.random.default_rng(seed), seed)
        self.actor = Actor(self.rollout.obs_size, args.hidden, args.activation)
        self.critic = Critic(self.rollout.obs_size, args.hidden, args.activation)

    def obs_size(self) -> int:
        return self.rollout.obs_size

    def collect(self, weights: tuple[dict, dict]) -> RolloutBatch:
        """A rollout with the broadcast (actor, critic) weights."""
        self.actor.load_state_dict(weights[0])
        self.critic.load_state_dict(weights[1])
        return self.rollout.collect(self.actor, self.critic)

    def add_snapshot(self, actor_weights: dict) -> None:
        """Freeze these actor weights into the pool (they are also the next rollout's weights)."""
        self.actor.load_state_dict(actor_weights)
        self.rollout.add_snapshot(self.actor)


class RaySampler:
    """The :class:`~train.ppo_vector.Sampler` of ``--num-runners`` :class:`RolloutRunner` actors."""

    def __init__(self, args: Args):
        runner = ray.remote(num_cpus=1)(RolloutRunner)
        self.runners = [runner.remote(args, seed) for seed in runner_seeds(args.seed, args.num_runners)]
        self.obs_size = ray.get(self.runners[0].obs_size.remote())
        self.overlap = args.overlap
        self.pending: list | None = None  # with --overlap: the rollouts under way

    def launch(self, actor: Actor, critic: Critic) -> list:
        """Start a rollout on every runner with these weights (broadcast once)."""
        weights = ray.put((cpu_state(actor), cpu_state(critic)))
        return [r.collect.remote(weights) for r in self.runners]

    def collect(self, actor: Actor, critic: Critic) -> RolloutBatch:
        """The runners' rollouts with these weights, joined; with ``--overlap`` the rollouts started
        at the previous call (weights one update old), and the next ones start now."""
        refs = self.pending or self.launch(actor, critic)
        self.pending = self.launch(actor, critic) if self.overlap else None
        return RolloutBatch.concat(ray.get(refs))

    def add_snapshot(self, actor: Actor) -> None:
        weights = ray.put(cpu_state(actor))
        for r in self.runners:  # an actor runs its calls in order: before its next rollout
            r.add_snapshot.remote(weights)


class LearnerActor:
    """A Ray actor's state: a :class:`PPOLearner` on the actor's GPU (CPU when it has none)."""

    def __init__(self, args: Args, obs_size: int, weights: tuple[dict, dict], seed: int):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        actor, critic = Actor(obs_size, args.hidden, args.activation), Critic(obs_size, args.hidden, args.activation)
        actor.load_state_dict(weights[0])
        critic.load_state_dict(weights[1])
        self.learner = PPOLearner(actor.to(device), critic.to(device), args, torch.Generator().manual_seed(seed), device)

    def update(self, batch: RolloutBatch, lr: float) -> tuple[dict[str, float], tuple[dict, dict]]:
        """One PPO update; its losses and the new (actor, critic) weights on the CPU."""
        losses = self.learner.update(batch, lr)
        return losses, (cpu_state(self.learner.actor), cpu_state(self.learner.critic))


class RemoteLearner:
    """A :class:`PPOLearner` in a Ray actor with ``--num-gpus-per-learner`` GPUs; after each update
    the local ``actor`` and ``critic`` hold the new weights (for the snapshots, evaluations, export)."""

    def __init__(self, actor: Actor, critic: Critic, args: Args, gen: torch.Generator):
        self.actor, self.critic = actor, critic
        seed = int(torch.randint(2**31, (1,), generator=gen))
        learner = ray.remote(num_cpus=1, num_gpus=args.num_gpus_per_learner)(LearnerActor)
        self.handle = learner.remote(args, actor.pi[0].in_features, (cpu_state(actor), cpu_state(critic)), seed)

    def update(self, batch: RolloutBatch, lr: float) -> dict[str, float]:
        losses, (actor, critic) = ray.get(self.handle.update.remote(batch, lr))
        self.actor.load_state_dict(actor)
        self.critic.load_state_dict(critic)
        return losses


def train(args: Args) -> TrainResult:
    """Start or join Ray, train with :func:`train.ppo_vector.train` on :class:`RaySampler`, stop Ray
    (unless it was the caller's)."""
    from train.ray_cluster import start_ray

    args.check()
    started = start_ray(args.address, args.num_cpus)
    try:
        gpus = ray.cluster_resources().get("GPU", 0.0)
        if args.num_gpus_per_learner > gpus:
            raise ClusterError(f"--num-gpus-per-learner {args.num_gpus_per_learner:g}: the Ray cluster has {gpus:g} GPUs")
        learner = RemoteLearner if args.num_gpus_per_learner else PPOLearner
        return ppo_vector.train(args, RaySampler(args), learner, ALGORITHM)
    finally:
        if started:
            ray.shutdown()


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = parse_args(Args, argv, prog)
    try:
        result = train(args)
    except ClusterError as err:
        print(f"{prog or 'train.ray_vector'}: error: {err}", file=sys.stderr)
        return 2
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
