"""Self-play PPO for Manni on Ray RLlib (new API stack): the same command on a laptop or a cluster.

    manni train --trainer rllib --variant basic --target 5 --num-env-runners 2 --stop-iters 20
    manni train --trainer rllib --address auto ...   # on a running cluster (``ray start --head``)

(or ``python -m manni_train.rllib_ppo ...``). The options every trainer shares come from
:class:`manni_train.args.TrainArgs`; this trainer's own are the fields of :class:`Args`.

What runs where: each **env runner** (a Ray actor, one CPU) steps its copies of
:class:`~manni_env.rllib_env.ManniMultiAgentEnv` and the modules' inference; the **learner**
(in this process with ``--num-learners 0``, else that many Ray actors with ``--num-cpus-per-learner``
each) updates the shared module ``"main"`` with PPO. Seats map to modules per episode by
:class:`~manni_train.rllib_modules.SeatMapping`: ``--baseline-seats`` of them play the frozen
``--baseline`` (``rule_based``), the rest ``"main"`` (self-play); only ``"main"`` is trained.
Action masking: :class:`~manni_train.rllib_modules.MaskedPPOTorchRLModule`.

Every ``--checkpoint-every`` iterations and at the end the algorithm is saved to the run directory
``runs/<run_name>/`` (``Algorithm.save_to_path``; ``--resume DIR`` continues from one) together
with ``manni_policy.{json,safetensors}``, the trained actor in the safe format that the ``rllib``
agent loads (``manni arena rllib:runs/<run_name> rule_based rule_based``). Finally the export plays
``--final-eval-deals`` duplicate deals against two copies of each baseline, written to
``arena_final.md`` / ``.json`` there (:mod:`manni_train.reporting`).
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from manni_train.args import TrainArgs, parse_args
from manni_train.reporting import TrainResult, final_arena, report


@dataclass
class Args(TrainArgs):
    """Self-play PPO for Manni on Ray RLlib (new API stack)."""

    TRAINER = "rllib"

    total_steps: int | None = None
    """stop after this many learner decisions (steps of the trained module); default: --stop-iters decides"""
    lr: float = 3e-4
    """Adam learning rate"""
    activation: str = "tanh"
    """hidden activation: tanh or relu"""
    final_eval_deals: int = 200
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based,
    seed --eval-seed + 1 (0: none)"""
    baseline: str = "rule_based"
    """registry spec of the frozen baseline module, or 'none' for pure self-play"""
    baseline_seats: int = 1
    """seats per episode played by the baseline (0, 1 or 2); the others play the trained module"""
    num_env_runners: int = 2
    """env runner actors collecting experience (0: sample in this process); scales with machines"""
    num_envs_per_env_runner: int = 1
    """environments stepped by each env runner"""
    num_learners: int = 0
    """learner actors (0: one learner in this process)"""
    num_cpus_per_learner: int = 1
    """CPUs reserved by each learner actor"""
    stop_iters: int = 50
    """stop after this many training iterations (of this run, also when resuming)"""
    stop_seconds: float | None = None
    """stop after this many seconds of training"""
    train_batch_size: int = 4000
    """env steps per learner per iteration"""
    minibatch_size: int = 256
    """SGD minibatch size"""
    num_epochs: int = 4
    """SGD passes over each training batch"""
    gamma: float = 0.995
    """discount factor"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    checkpoint_every: int = 10
    """save every N iterations (and always at the end)"""
    resume: str | None = None
    """continue training from this algorithm checkpoint directory (an RLlib checkpoint: trusted files only)"""
    address: str | None = None
    """Ray cluster to join ('auto', 'HOST:6379' or 'ray://HOST:10001'); default: a local in-process Ray"""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (default: all); ignored with --address"""
    measure_sampling: int = 0
    """after training, time this many env steps per env runner, sampled at once without learning"""

    def check(self) -> None:
        """Reject bad arguments before Ray starts (``ValueError`` naming the valid choices)."""
        from manni_agents.registry import make_agent

        super().check()
        if self.baseline_seats not in (0, 1, 2):
            raise ValueError(f"--baseline-seats must be one of 0, 1, 2, got {self.baseline_seats!r}")
        if self.baseline != "none":
            make_agent(self.baseline)
        counts = {"num_env_runners": 0, "num_envs_per_env_runner": 1, "num_learners": 0, "stop_iters": 1,
                  "train_batch_size": 1, "minibatch_size": 1, "num_epochs": 1, "checkpoint_every": 1,
                  "measure_sampling": 0}
        for name, low in counts.items():
            if getattr(self, name) < low:
                raise ValueError(f"--{name.replace('_', '-')} must be at least {low}, got {getattr(self, name)}")


def baseline_spec(args: Args) -> str | None:
    """The agent spec of the frozen baseline, or ``None`` for pure self-play."""
    return None if args.baseline == "none" or args.baseline_seats == 0 else args.baseline


def env_config(args: Args) -> dict[str, Any]:
    """``env_config`` of :class:`~manni_env.rllib_env.ManniMultiAgentEnv` (the baseline as a
    picklable policy factory, so env runners on other machines build their own copies)."""
    from manni_agents.envs import policy_factory

    spec = baseline_spec(args)
    return {"variant": args.variant, "options": args.rule_options(), "history": args.history,
            "episode": args.episode, "baseline": policy_factory(spec) if spec else None}


def build_config(args: Args):
    """The ``PPOConfig``: env, env runners, learners, modules and the seat → module mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from manni_env.rllib_env import ManniMultiAgentEnv
    from manni_train.rllib_modules import MAIN, BaselineRLModule, MaskedPPOTorchRLModule, SeatMapping

    cfg = env_config(args)
    spec = baseline_spec(args)
    baseline = spec and spec.partition(":")[0]  # module id: the agent's name
    modules = {MAIN: RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config={"fcnet_hiddens": list(args.hidden), "fcnet_activation": args.activation,
                      "head_fcnet_hiddens": [], "vf_share_layers": False},
    )}
    if baseline:
        modules[baseline] = RLModuleSpec(module_class=BaselineRLModule)
    return (
        PPOConfig()
        # RLlib's env check steps a random, unmasked action: illegal here, and the env raises on it
        .environment(ManniMultiAgentEnv, env_config=cfg, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_env_runner)
        .learners(num_learners=args.num_learners, num_cpus_per_learner=args.num_cpus_per_learner)
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=SeatMapping(args.baseline_seats if baseline else 0, baseline or "none"),
            policies_to_train=[MAIN],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=args.gamma, entropy_coeff=args.entropy_coeff)
        .debugging(seed=args.seed)
    )


def learner_weights(algo) -> dict:
    """The trained module's weights as the learner holds them (name → numpy array)."""
    from manni_train.rllib_modules import MAIN

    return algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]


def save(algo, args: Args, path: Path, iteration: int, env_steps: int) -> Path:
    """Save the algorithm checkpoint and the exported policy to directory ``path``."""
    import ray

    from manni_agents.rllib_agent import export_policy
    from manni_train.rllib_modules import MAIN

    path = Path(path).resolve()
    algo.save_to_path(str(path))
    info = {"iterations": iteration, "env_steps": env_steps, "ray_version": ray.__version__,
            "baseline": baseline_spec(args), "baseline_seats": args.baseline_seats, "seed": args.seed}
    module = algo.get_module(MAIN)  # the local env runner's copy: it may lag the learner (after a restore)
    module.set_state(learner_weights(algo))
    export_policy(module, path, args.rules(), args.history, info)
    return path


def measure_sampling(algo, steps: int) -> float:
    """Env steps/s of all env runners sampling ``steps`` env steps each at once (no learning)."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    start = time.perf_counter()
    counts = group.foreach_env_runner(lambda runner: sum(len(e) for e in runner.sample(num_timesteps=steps)),
                                      local_env_runner=not remote)
    return sum(counts) / (time.perf_counter() - start)


def train(args: Args) -> TrainResult:
    """Train until a stop criterion is met, save, and play the final arena (see the module docstring)."""
    import ray

    from manni_train.ray_cluster import start_ray

    args.check()
    run_dir = args.run_dir()
    print(json.dumps(asdict(args)), flush=True)

    started_ray = start_ray(args.address, args.num_cpus)  # a caller's own Ray instance is left running
    began = time.perf_counter()
    with ExitStack() as cleanup:
        if started_ray:
            cleanup.callback(ray.shutdown)
        algo = build_config(args).build_algo()
        cleanup.callback(algo.stop)
        if args.resume:
            algo.restore_from_path(str(Path(args.resume).resolve()))
        learner_steps = iterate(algo, args, run_dir)
    print(f"checkpoint and exported policy: {run_dir}")
    final = final_arena(f"rllib:{run_dir}", args, run_dir)
    return TrainResult(run_dir, run_dir, final, [], time.perf_counter() - began, learner_steps)


def iterate(algo, args: Args, run_dir: Path) -> int:
    """Training iterations until a stop criterion is met, with a line per iteration and the saves;
    returns the learner decisions made (steps of the trained module)."""
    from manni_train.rllib_modules import MAIN

    began = time.perf_counter()
    iteration, env_steps, learner_steps, timed_steps, timed_seconds = 0, 0, 0, 0, 0.0
    while True:
        result = algo.train()
        iteration += 1
        runners = result["env_runners"]
        steps_before, env_steps = env_steps, int(runners.get("num_env_steps_sampled_lifetime", 0))
        learner_steps = int(runners.get("num_module_steps_sampled_lifetime", {}).get(MAIN, 0))
        seconds = float(result["time_this_iter_s"])
        if iteration > 1:  # the first iteration pays for warm-up
            timed_steps, timed_seconds = timed_steps + env_steps - steps_before, timed_seconds + seconds
        returns = "  ".join(f"return[{m}] {r:+.3f}"
                            for m, r in sorted(runners.get("module_episode_returns_mean", {}).items()))
        rate = (env_steps - steps_before) / seconds
        print(f"iter {iteration:4d}  env steps {env_steps:9d}  learner steps {learner_steps:9d}  "
              f"{rate:6.0f} env steps/s  {returns}", flush=True)
        done = (iteration >= args.stop_iters
                or (args.total_steps is not None and learner_steps >= args.total_steps)
                or (args.stop_seconds is not None and time.perf_counter() - began >= args.stop_seconds))
        if done or iteration % args.checkpoint_every == 0:
            save(algo, args, run_dir, iteration, env_steps)
        if done:
            break
    if timed_seconds:
        print(f"training throughput (iterations 2..{iteration}): {timed_steps / timed_seconds:.0f} env steps/s")
    if args.measure_sampling:
        print(f"sampling throughput: {measure_sampling(algo, args.measure_sampling):.0f} env steps/s "
              f"({args.num_env_runners} env runners × {args.num_envs_per_env_runner} envs)")
    return learner_steps


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    print(report(train(parse_args(Args, argv, prog)), agent_kind="rllib"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
