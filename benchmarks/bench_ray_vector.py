"""Throughput of the Ray trainer (``manni train --trainer ray``): runners, learner, projection.

Run ``python benchmarks/bench_ray_vector.py`` (needs ray: the ``rllib`` extra). On a local Ray with
``--num-cpus`` CPUs and the trainer's defaults (Hornafjarðarmanni, ``--num-envs`` 128 games per
runner, 64 steps per rollout, the default opponent mix, MLP 256×256, 4 epochs):

- **sampling**: for R = 1 .. ``--max-runners`` runner actors, ``--repeats`` rollouts of all runners
  at once with fixed weights (after one warm-up rollout): learner decisions per second of wall
  time, and per CPU-second of a runner (its own process time, so what one idle core gives however
  busy the machine is); the median over rollouts and runners;
- **learner**: the PPO update (:class:`manni_train.learner.PPOLearner`) on the batch of R runners'
  rollouts in this process: learner decisions per second (wall and CPU), with ``--torch-threads``;
- **broadcast and transfer**: ``ray.put`` of the weights and the bytes per learner decision a
  runner sends back.

It then projects the synchronous trainer's throughput on ``N`` runners (one core each, on as many
machines as needed): an iteration takes ``B / s`` (every runner samples its ``B`` decisions at ``s``
per CPU-second, side by side) ``+ N B / u`` (one learner at ``u``) ``+ N (B b + w) / W`` (the
batches, ``b`` bytes per decision, reach the learner and the weights, ``w`` bytes, reach every
runner over the learner's link of ``W`` bytes/s; ``--link-gbit``), so throughput
``N B / (B / s + N B / u + N (B b + w) / W)`` stops growing near ``N = u / s``; with ``--overlap``
(sampling while the learner updates) an iteration takes ``max(B / s, N B / u + N (B b + w) / W)``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def measure_sampling(args: argparse.Namespace, runners: int, actor, critic) -> dict[str, float]:
    """Rollouts of ``runners`` runner actors at once (see the module docstring)."""
    import ray

    from manni_train.ray_vector import Args, RaySampler, cpu_state

    sampler = RaySampler(Args(variant=args.variant, num_runners=runners, num_envs=args.num_envs, seed=args.seed))
    weights = ray.put((cpu_state(actor), cpu_state(critic)))
    ray.get([r.collect.remote(weights) for r in sampler.runners])  # warm-up: compile, first deals
    wall, per_cpu, batches = [], [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        batches = ray.get([r.collect.remote(weights) for r in sampler.runners])
        wall.append(sum(b.steps for b in batches) / (time.perf_counter() - start))
        per_cpu += [b.steps / b.cpu_seconds for b in batches]
    size = sum(len(pickle.dumps(b, protocol=5)) for b in batches) / sum(b.steps for b in batches)
    for r in sampler.runners:
        ray.kill(r)
    return {"wall": statistics.median(wall), "per_cpu": statistics.median(per_cpu), "bytes": size,
            "batch": statistics.median(b.steps for b in batches), "batches": batches}


def measure_learner(args: argparse.Namespace, batch, actor, critic) -> dict[str, float]:
    """``--repeats`` PPO updates on ``batch`` in this process: decisions per wall and per CPU second."""
    import torch

    from manni_train.learner import PPOLearner
    from manni_train.ray_vector import Args

    learner = PPOLearner(actor, critic, Args(variant=args.variant), torch.Generator().manual_seed(0))
    learner.update(batch, 1e-4)  # warm-up
    wall, cpu = [], []
    for _ in range(args.repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        learner.update(batch, 1e-4)
        wall.append(batch.steps / (time.perf_counter() - start))
        cpu.append(batch.steps / (time.process_time() - cpu_start))
    return {"wall": statistics.median(wall), "per_cpu": statistics.median(cpu)}


def projection(s: float, u: float, batch: float, size: float, weights: float, link_gbit: float) -> str:
    """Markdown table of the projected throughput on N runners (see the module docstring)."""
    link = link_gbit * 1e9 / 8
    rows = ["| runners N | learner decisions/s | with --overlap | --overlap vs N × one runner | limited by |",
            "|---:|---:|---:|---:|---|"]
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        parts = {"sampling": batch / s, "learner": n * batch / u, "transfer": n * (batch * size + weights) / link}
        overlapped = max(parts["sampling"], parts["learner"] + parts["transfer"])
        rows.append(f"| {n} | {n * batch / sum(parts.values()):,.0f} | {n * batch / overlapped:,.0f} | "
                    f"{batch / overlapped / s:.0%} | {max(parts, key=parts.get)} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="hornafjardar")
    parser.add_argument("--num-envs", type=int, default=128, help="games per runner (the trainer's default)")
    parser.add_argument("--max-runners", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: all)")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch threads of the learner measurement")
    parser.add_argument("--link-gbit", type=float, default=10.0, help="the learner's network link in the projection")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import ray
    import torch

    from manni_train.networks import Actor, Critic
    from manni_train.ray_vector import Args, cpu_state
    from manni_train.vector_rollout import RolloutBatch

    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    actor, critic = Actor(616, [256, 256], "relu"), Critic(616, [256, 256], "relu")
    ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        rows = {}
        for runners in range(1, args.max_runners + 1):
            rows[runners] = measure_sampling(args, runners, actor, critic)
            m = rows[runners]
            print(f"{runners} runner(s) × {args.num_envs} games: {m['wall']:,.0f} learner decisions/s, "
                  f"{m['per_cpu']:,.0f} per runner CPU-second, batch {m['batch']:,.0f} per runner, "
                  f"{m['bytes']:,.0f} B per decision (load average {os.getloadavg()[0]:.1f})", flush=True)
        last = rows[args.max_runners]
        learner = measure_learner(args, RolloutBatch.concat(last["batches"]), actor, critic)
        start = time.perf_counter()
        for _ in range(args.repeats):
            ray.get(ray.put((cpu_state(actor), cpu_state(critic))))
        put_s = (time.perf_counter() - start) / args.repeats
        print(f"learner ({args.torch_threads} torch threads, {Args().update_epochs} epochs): "
              f"{learner['wall']:,.0f} decisions/s, "
              f"{learner['per_cpu']:,.0f} per CPU-second; weight broadcast (ray.put) {put_s * 1000:.1f} ms "
              f"(load average {os.getloadavg()[0]:.1f})")
        weights = sum(t.numel() * t.element_size() for m in (actor, critic) for t in m.state_dict().values())
        s, u = statistics.median(m["per_cpu"] for m in rows.values()), learner["per_cpu"]
        print(f"\nProjection (s = {s:,.0f} per runner CPU-second, u = {u:,.0f} learner decisions per CPU-second, "
              f"{args.link_gbit:g} Gbit/s to the learner):\n")
        print(projection(s, u, last["batch"], last["bytes"], weights, args.link_gbit))
        for factor in (10, 100):
            print(f"\nThe same if the learner were {factor}× faster (u = {u * factor:,.0f}; not measured here):\n")
            print(projection(s, u * factor, last["batch"], last["bytes"], weights, args.link_gbit))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
