"""Self-play PPO for Manni on Ray RLlib (new API stack): the same command on a laptop or a cluster.

    python -m train.rllib_ppo --variant basic --target 5 --num-env-runners 2 --stop-iters 20
    python -m train.rllib_ppo --address auto ...   # on a running cluster (``ray start --head``)

What runs where: each **env runner** (a Ray actor, one CPU) steps its copies of
:class:`~manni_env.rllib_env.ManniMultiAgentEnv` and the modules' inference; the **learner**
(in this process with ``--num-learners 0``, else that many Ray actors with ``--num-cpus-per-learner``
each) updates the shared module ``"main"`` with PPO. Seats map to modules per episode by
:class:`~train.rllib_modules.SeatMapping`: ``--baseline-seats`` of them play the frozen
``--baseline`` (``rule_based``), the rest ``"main"`` (self-play); only ``"main"`` is trained.
Action masking: :class:`~train.rllib_modules.MaskedPPOTorchRLModule`.

Every ``--checkpoint-every`` iterations and at the end the algorithm is saved to
``--checkpoint-dir`` (``Algorithm.save_to_path``; ``--resume DIR`` continues from one) together
with ``manni_policy.{json,safetensors}``, the trained actor in the safe format that the ``rllib``
agent loads (``manni arena rllib:DIR rule_based rule_based``). With ``--eval-deals N`` the export
is finally played against ``rule_based`` in the duplicate arena and the table is written to
``DIR/eval.md`` and ``DIR/eval.json``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from manni_env.rules import make_rules
from train.args import add_arguments, args_from_namespace


@dataclass
class RLlibArgs:
    """Self-play PPO for Manni on Ray RLlib (new API stack)."""

    variant: str = "hornafjardar"
    """Manni variant (hornafjardar, basic, trjamann, laugarvatn)"""
    target: int | None = None
    """rule option: game target (hornafjardar, basic; default: the variant's)"""
    negative: bool = False
    """rule option: Basic Manni's negative scoring"""
    max_deals: int | None = None
    """rule option: deal cap (hornafjardar, basic; default: the variant's)"""
    history: str = "summary"
    """observation history: summary or full"""
    episode: str = "deal"
    """episode unit: deal (one deal of an ongoing game) or game"""
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
    stop_timesteps: int | None = None
    """stop after this many env steps sampled (all seats together)"""
    stop_seconds: float | None = None
    """stop after this many seconds of training"""
    train_batch_size: int = 4000
    """env steps per learner per iteration"""
    minibatch_size: int = 256
    """SGD minibatch size"""
    num_epochs: int = 4
    """SGD passes over each training batch"""
    lr: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount factor"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the actor and of the critic"""
    activation: str = "tanh"
    """hidden activation (tanh or relu)"""
    seed: int = 1
    """seed of the algorithm, its env runners and the evaluation"""
    checkpoint_dir: str = "runs/rllib_ppo"
    """where the algorithm checkpoint and the exported policy are written"""
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
    eval_deals: int = 200
    """duplicate deals against rule_based at the end (0: no evaluation)"""
    eval_workers: int = 1
    """processes for the evaluation arena"""


def check_args(args: RLlibArgs) -> None:
    """Reject bad arguments before Ray starts (``ValueError`` naming the valid choices)."""
    from agents.registry import make_agent
    from manni_env.observation import HISTORIES
    from manni_env.rllib_env import EPISODES

    make_rules(args.variant, **rule_options(args))
    choices = {"history": HISTORIES, "episode": EPISODES, "activation": ("tanh", "relu"), "baseline_seats": (0, 1, 2)}
    for name, valid in choices.items():
        if getattr(args, name) not in valid:
            raise ValueError(f"--{name.replace('_', '-')} must be one of {', '.join(map(str, valid))}; "
                             f"got {getattr(args, name)!r}")
    if args.baseline != "none":
        make_agent(args.baseline)
    counts = {"num_env_runners": 0, "num_envs_per_env_runner": 1, "num_learners": 0, "stop_iters": 1,
              "train_batch_size": 1, "minibatch_size": 1, "num_epochs": 1, "checkpoint_every": 1, "eval_deals": 0,
              "eval_workers": 1, "measure_sampling": 0}
    for name, low in counts.items():
        if getattr(args, name) < low:
            raise ValueError(f"--{name.replace('_', '-')} must be at least {low}; got {getattr(args, name)}")


def rule_options(args: RLlibArgs) -> dict[str, Any]:
    """The rule options given on the command line (``make_rules`` validates them per variant)."""
    options = {"target": args.target, "max_deals": args.max_deals, "negative": args.negative or None}
    return {k: v for k, v in options.items() if v is not None}


def baseline_spec(args: RLlibArgs) -> str | None:
    """The agent spec of the frozen baseline, or ``None`` for pure self-play."""
    return None if args.baseline == "none" or args.baseline_seats == 0 else args.baseline


def env_config(args: RLlibArgs) -> dict[str, Any]:
    """``env_config`` of :class:`~manni_env.rllib_env.ManniMultiAgentEnv` (the baseline as a
    picklable policy factory, so env runners on other machines build their own copies)."""
    from agents.envs import policy_factory

    spec = baseline_spec(args)
    return {"variant": args.variant, "options": rule_options(args), "history": args.history,
            "episode": args.episode, "baseline": policy_factory(spec) if spec else None}


def build_config(args: RLlibArgs):
    """The ``PPOConfig``: env, env runners, learners, modules and the seat → module mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from manni_env.rllib_env import ManniMultiAgentEnv
    from train.rllib_modules import MAIN, BaselineRLModule, MaskedPPOTorchRLModule, SeatMapping

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
    from train.rllib_modules import MAIN

    return algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]


def save(algo, args: RLlibArgs, iteration: int, env_steps: int) -> Path:
    """Save the algorithm checkpoint and the exported policy to ``--checkpoint-dir``."""
    import ray

    from agents.rllib_agent import export_policy
    from train.rllib_modules import MAIN

    path = Path(args.checkpoint_dir).resolve()
    algo.save_to_path(str(path))
    info = {"iterations": iteration, "env_steps": env_steps, "ray_version": ray.__version__,
            "baseline": baseline_spec(args), "baseline_seats": args.baseline_seats, "seed": args.seed}
    module = algo.get_module(MAIN)  # the local env runner's copy: it may lag the learner (after a restore)
    module.set_state(learner_weights(algo))
    export_policy(module, path, make_rules(args.variant, **rule_options(args)), args.history, info)
    return path


def evaluate(args: RLlibArgs, path: Path) -> str:
    """Play the export against two ``rule_based`` in the duplicate arena; write eval.md/json."""
    from agents.arena import run_arena

    result = run_arena([f"rllib:{path}", "rule_based", "rule_based"], make_rules(args.variant, **rule_options(args)),
                       deals=args.eval_deals, seed=args.seed, workers=args.eval_workers, progress=False)
    table = result.to_markdown()
    (path / "eval.md").write_text(table + "\n")
    (path / "eval.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return table


def measure_sampling(algo, steps: int) -> float:
    """Env steps/s of all env runners sampling ``steps`` env steps each at once (no learning)."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    start = time.perf_counter()
    counts = group.foreach_env_runner(lambda runner: sum(len(e) for e in runner.sample(num_timesteps=steps)),
                                      local_env_runner=not remote)
    return sum(counts) / (time.perf_counter() - start)


def train(args: RLlibArgs) -> Path:
    """Train until a stop criterion is met; returns the checkpoint directory."""
    import ray

    import agents
    import manni_env
    import train as train_package

    if args.address:  # ship this checkout's packages to the cluster's workers
        runtime_env = {"py_modules": [str(Path(m.__file__).parent) for m in (manni_env, agents, train_package)]}
        ray.init(address=args.address, runtime_env=runtime_env, ignore_reinit_error=True)
    else:
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, ignore_reinit_error=True)
    algo = build_config(args).build_algo()
    if args.resume:
        algo.restore_from_path(str(Path(args.resume).resolve()))
    began = time.perf_counter()
    iteration, env_steps, path, timed_steps, timed_seconds = 0, 0, None, 0, 0.0
    try:
        while True:
            result = algo.train()
            iteration += 1
            runners = result["env_runners"]
            steps_before, env_steps = env_steps, int(runners.get("num_env_steps_sampled_lifetime", 0))
            seconds = float(result["time_this_iter_s"])
            if iteration > 1:  # the first iteration pays for warm-up
                timed_steps, timed_seconds = timed_steps + env_steps - steps_before, timed_seconds + seconds
            returns = "  ".join(f"return[{m}] {r:+.3f}"
                                for m, r in sorted(runners.get("module_episode_returns_mean", {}).items()))
            rate = (env_steps - steps_before) / seconds
            print(f"iter {iteration:4d}  env steps {env_steps:9d}  {rate:6.0f} steps/s  {returns}", flush=True)
            done = (iteration >= args.stop_iters
                    or (args.stop_timesteps is not None and env_steps >= args.stop_timesteps)
                    or (args.stop_seconds is not None and time.perf_counter() - began >= args.stop_seconds))
            if done or iteration % args.checkpoint_every == 0:
                path = save(algo, args, iteration, env_steps)
            if done:
                break
        if timed_seconds:
            print(f"training throughput (iterations 2..{iteration}): {timed_steps / timed_seconds:.0f} env steps/s")
        if args.measure_sampling:
            print(f"sampling throughput: {measure_sampling(algo, args.measure_sampling):.0f} env steps/s "
                  f"({args.num_env_runners} env runners × {args.num_envs_per_env_runner} envs)")
    finally:
        algo.stop()
    print(f"checkpoint and exported policy: {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=inspect.getdoc(RLlibArgs), epilog=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, RLlibArgs)
    args = args_from_namespace(parser.parse_args(argv), RLlibArgs)
    try:
        check_args(args)
    except ValueError as err:
        parser.error(str(err))
    print(json.dumps(asdict(args)), flush=True)
    path = train(args)
    if args.eval_deals:
        print(evaluate(args, path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
