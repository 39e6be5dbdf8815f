"""RLlib throughput: env steps/s with R env runners × E envs each (needs the ``rllib`` extra).

Run ``python benchmarks/bench_rllib.py`` (defaults: Hornafjarðarmanni, ``rule_based`` in one seat,
configurations 1×1, 2×1, 1×8, 2×8 on a local Ray with ``--num-cpus`` CPUs). For each configuration
one PPO algorithm is built with ``train/rllib_ppo.py``'s config and measured:

- **sampling**: all env runners sample ``--sample-steps`` env steps each at once, no learning,
  ``--repeats`` times: the median wall-time rate, and the median rate per CPU-second of one env
  runner (its own process time: what one idle core would give, whatever else the machine runs);
- **training**: ``--iters`` PPO iterations (sampling + learning); the median wall-time rate of
  iterations 2.. (the first one warms up).

The ``env alone`` row is :class:`~manni_env.rllib_env.ManniMultiAgentEnv` stepped in this process
with random legal actions (engine + observation + baseline move, no RLlib), per CPU-second.
The load average before and after each row is printed: on a shared machine, read the wall-time
columns with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def env_alone(args: argparse.Namespace, seconds: float = 3.0) -> float:
    """Random legal play in :class:`ManniMultiAgentEnv`: env steps per CPU-second."""
    from manni_agents.envs import policy_factory
    from manni_env.rllib_env import MASK, ManniMultiAgentEnv

    env = ManniMultiAgentEnv({"variant": args.variant, "baseline": policy_factory("rule_based"), "seed": 0})
    rng = np.random.default_rng(0)
    obs, _ = env.reset()
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        ((agent, o),) = obs.items()
        obs, _, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(o[MASK])))})
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            obs, _ = env.reset()
    return steps / (time.process_time() - start)


def _sample(runner, steps: int) -> tuple[int, float]:
    start = time.process_time()
    count = sum(len(e) for e in runner.sample(num_timesteps=steps))
    return count, time.process_time() - start


def measure(args: argparse.Namespace, runners: int, envs: int) -> dict[str, float]:
    """Build one algorithm with ``runners`` × ``envs`` and measure it (see the module docstring)."""
    from manni_train.rllib_ppo import Args, build_config

    config = Args(variant=args.variant, num_env_runners=runners, num_envs=envs,
                  num_steps=max(1, args.batch // (envs * max(1, runners))),  # a train batch of about --batch env steps
                  minibatch_size=min(250, args.batch), update_epochs=args.epochs)
    algo = build_config(config).build_algo()
    try:
        group = algo.env_runner_group
        steps = args.sample_steps
        wall, cpu = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            results = group.foreach_env_runner(lambda r: _sample(r, steps), local_env_runner=runners == 0)
            wall.append(sum(n for n, _ in results) / (time.perf_counter() - start))
            cpu.append(statistics.median(n / s for n, s in results))
        rates, before = [], 0
        for _ in range(args.iters):
            result = algo.train()
            total = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            rates.append((total - before) / result["time_this_iter_s"])
            before = total
    finally:
        algo.stop()
    return {"sampling": statistics.median(wall), "per_cpu": statistics.median(cpu),
            "training": statistics.median(rates[1:] or rates)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="hornafjardar")
    parser.add_argument("--configs", default="1x1,2x1,1x8,2x8", help="RxE list: env runners × envs per runner")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--sample-steps", type=int, default=1000, help="env steps per env runner per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--iters", type=int, default=4, help="training iterations (the first is not counted)")
    parser.add_argument("--batch", type=int, default=1000, help="train batch size (env steps per iteration)")
    parser.add_argument("--epochs", type=int, default=2, help="SGD epochs per iteration")
    args = parser.parse_args()

    import ray

    print(f"env alone (one process, per CPU-second): {env_alone(args):,.0f} env steps/s")
    ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    rows = []
    for item in args.configs.split(","):
        runners, envs = (int(x) for x in item.split("x"))
        load = os.getloadavg()[0]
        m = measure(args, runners, envs)
        rows.append(f"| {runners} | {envs} | {m['sampling']:,.0f} | {m['per_cpu']:,.0f} | {m['training']:,.0f} | "
                    f"{load:.1f} → {os.getloadavg()[0]:.1f} |")
        print(rows[-1], flush=True)
    ray.shutdown()
    print(f"\n{args.variant}, rule_based in a third of the seats, train batch {args.batch}, {args.epochs} epochs, "
          f"{args.num_cpus} CPUs for Ray\n")
    print("| env runners | envs per runner | sampling env steps/s | per env-runner CPU-second | "
          "training env steps/s | load average |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
