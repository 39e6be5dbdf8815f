"""Self-play PPO for Manni on Ray RLlib (new API stack): the same command on a laptop or a cluster.

    manni train --trainer rllib --variant basic --target 5 --num-env-runners 2 --stop-iters 20
    manni train --trainer rllib --address auto ...   # on a running cluster (``ray start --head``)

(or ``python -m manni_train.rllib_ppo ...``). The options every trainer shares come from
:class:`manni_train.args.TrainArgs` (the PPO options under CleanRL's names, translated for
``PPOConfig.training`` by :func:`rllib_options`; where this trainer's defaults differ they are
RLlib's own); this trainer's own are the fields of :class:`Args`.

What runs where: each **env runner** (a Ray actor, one CPU) steps its copies of
:class:`~manni_env.rllib_env.ManniMultiAgentEnv` and the modules' inference; the **learner**
(in this process with ``--num-learners 0``, else that many Ray actors with ``--num-cpus-per-learner``
each) updates the shared module ``"main"`` with PPO. Seats map to modules per episode by
:class:`~manni_train.rllib_modules.SeatMapping`: each seat plays the frozen baseline of
``--opponent-mix`` (``rule_based`` or ``random``; by default ``rule_based=1/3``) with its share, the
others ``"main"`` (self-play); only ``"main"`` is trained. Action masking:
:class:`~manni_train.rllib_modules.MaskedPPOTorchRLModule`.

Every ``--checkpoint-every`` iterations and at the end the algorithm is saved to the run directory
``runs/<run_name>/`` (``Algorithm.save_to_path``; ``--resume DIR`` continues from one) together
with ``manni_policy.{json,safetensors}``, the trained actor in the safe format that the ``rllib``
agent loads (``manni arena rllib:runs/<run_name> rule_based rule_based``). Every ``--eval-every``
learner decisions and at the end the export plays the duplicate deals every trainer evaluates on
(:func:`manni_train.reporting.evaluate`; ``history.json``, ``learning_curve.png``, ``tb/``: the
learner's results under :data:`LOG_NAMES` or ``rllib/NAME``). Finally the export plays
``--final-eval-deals`` duplicate deals against two copies of each baseline, written to
``arena_final.md`` / ``.json`` there (:mod:`manni_train.reporting`).
"""

from __future__ import annotations

import json
import numbers
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


from manni_agents.evaluation.arena import BASELINES
from manni_agents.vector_policy import NetworkPolicy, VectorPolicy
from manni_train.args import TrainArgs, parse_args
from manni_train.reporting import TrainResult, evaluate, final_arena, plot_learning_curve, report, write_history

#: RLlib's learner results → the TensorBoard names every trainer uses (RLlib computes no clip fraction)
LOG_NAMES = {"mean_kl_loss": "losses/approx_kl", "vf_explained_var": "losses/explained_variance",
             "entropy": "losses/entropy"}


@dataclass
class Args(TrainArgs):
    """Self-play PPO for Manni on Ray RLlib (new API stack)."""

    TRAINER = "rllib"

    total_steps: int | None = None
    """stop after this many learner decisions (steps of the trained module); default: --stop-iters decides"""
    activation: str = "tanh"
    learning_rate: float = 3e-4
    num_envs: int = 1
    num_steps: int = 2000
    minibatch_size: int = 256
    ent_coef: float = 0.01
    gae_lambda: float = 1.0  # RLlib's own defaults, which this trainer has always used
    clip_coef: float = 0.3
    vf_coef: float = 1.0
    max_grad_norm: float = 0.0
    opponent_mix: str = "rule_based=1/3"
    final_eval_deals: int = 200
    num_env_runners: int = 2
    """env runner actors collecting experience (0: sample in this process); scales with machines"""
    num_learners: int = 0
    """learner actors (0: one learner in this process)"""
    num_cpus_per_learner: int = 1
    """CPUs reserved by each learner actor"""
    stop_iters: int = 50
    """stop after this many training iterations (of this run, also when resuming)"""
    stop_seconds: float | None = None
    """stop after this many seconds of training"""
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
        """Reject bad arguments before Ray starts (``ValueError`` naming what RLlib cannot do)."""
        super().check()
        if self.anneal_lr:
            raise ValueError("--anneal-lr: the rllib trainer keeps the learning rate constant")
        if self.clip_vloss:
            raise ValueError("--clip-vloss: RLlib clips the value loss its own way (at 10), not with --clip-coef")
        if self.observation != "v0":
            raise ValueError(f"--observation {self.observation}: the rllib trainer reads observation layout v0 only")
        mix = self.mix()
        if "snapshot" in mix:
            raise ValueError("--opponent-mix: the rllib trainer keeps no snapshot pool (rule_based or random only)")
        if len(mix) > 1:
            raise ValueError(f"--opponent-mix {self.opponent_mix}: the rllib trainer plays one frozen baseline "
                             "(rule_based or random), not several")
        for name, low in {"num_env_runners": 0, "num_learners": 0, "stop_iters": 1, "checkpoint_every": 1,
                          "measure_sampling": 0}.items():
            self.check_at_least(low, name)

    def train_batch_size(self) -> int:
        """Env steps per learner per iteration: --num-steps × --num-envs × env runners, shared by the learners."""
        return self.num_steps * self.num_envs * max(1, self.num_env_runners) // max(1, self.num_learners)


def baseline_spec(args: Args) -> tuple[str, float] | None:
    """The frozen baseline of ``--opponent-mix`` and its share of the seats, or ``None`` for pure self-play."""
    return next(((kind, share) for kind, share in args.mix().items() if share > 0), None)


def env_config(args: Args) -> dict[str, Any]:
    """``env_config`` of :class:`~manni_env.rllib_env.ManniMultiAgentEnv` (the baseline as a
    picklable policy factory, so env runners on other machines build their own copies)."""
    from manni_agents.envs import policy_factory

    baseline = baseline_spec(args)
    return {"variant": args.variant, "options": args.rule_options(), "history": args.history,
            "episode": args.episode, "baseline": policy_factory(baseline[0]) if baseline else None}


def build_config(args: Args):
    """The ``PPOConfig``: env, env runners, learners, modules and the seat → module mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from manni_env.rllib_env import ManniMultiAgentEnv
    from manni_train.rllib_modules import MAIN, BaselineRLModule, MaskedPPOTorchRLModule, SeatMapping

    cfg = env_config(args)
    baseline, share = baseline_spec(args) or (None, 0.0)  # module id: the agent's name
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
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs)
        .learners(num_learners=args.num_learners, num_cpus_per_learner=args.num_cpus_per_learner)
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=SeatMapping(share, baseline or "none"),
            policies_to_train=[MAIN],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(**rllib_options(args))
        .debugging(seed=args.seed)
    )


def rllib_options(args: Args) -> dict[str, Any]:
    """The PPO options (CleanRL's names, :class:`~manni_train.args.TrainArgs`) as ``PPOConfig.training``'s keywords."""
    return {"train_batch_size_per_learner": args.train_batch_size(), "minibatch_size": args.minibatch_size,
            "num_epochs": args.update_epochs, "lr": args.learning_rate, "gamma": args.gamma, "lambda_": args.gae_lambda,
            "clip_param": args.clip_coef, "vf_loss_coeff": args.vf_coef, "entropy_coeff": args.ent_coef,
            "grad_clip": args.max_grad_norm or None}


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
            "opponent_mix": args.opponent_mix, "seed": args.seed}
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
    with ExitStack() as cleanup:
        if started_ray:
            cleanup.callback(ray.shutdown)
        algo = build_config(args).build_algo()
        cleanup.callback(algo.stop)
        if args.resume:
            algo.restore_from_path(str(Path(args.resume).resolve()))
        learner_steps, history, wall_time = iterate(algo, args, run_dir)
    print(f"checkpoint and exported policy: {run_dir}")
    plot_learning_curve(history, run_dir / "learning_curve.png", f"{args.run_name}: score while training")
    final = final_arena(f"rllib:{run_dir}", args, run_dir)
    return TrainResult(run_dir, run_dir, final, history, wall_time, learner_steps)


def exported_policy(run_dir: Path) -> VectorPolicy:
    """The greedy batched policy of the export in ``run_dir`` (as ``rllib:RUN_DIR`` plays)."""
    from manni_agents.rllib_agent import RLlibAgent

    agent = RLlibAgent(run_dir)
    return NetworkPolicy(lambda obs, mask: agent.logits(obs), f"rllib:{run_dir}")


def log_learner(writer, result: dict, steps: int) -> None:
    """The trained module's learner results as TensorBoard scalars (:data:`LOG_NAMES`, else ``rllib/NAME``)."""
    from manni_train.rllib_modules import MAIN

    for key, value in result.get("learners", {}).get(MAIN, {}).items():
        if isinstance(value, numbers.Real):
            writer.add_scalar(LOG_NAMES.get(key, f"rllib/{key}"), float(value), steps)


def iterate(algo, args: Args, run_dir: Path) -> tuple[int, list[dict], float]:
    """Training iterations until a stop criterion is met, with a line per iteration, the saves, the
    TensorBoard scalars and the evaluations (every ``--eval-every`` learner decisions and at the end,
    :func:`manni_train.reporting.evaluate`); returns the learner decisions made (steps of the trained
    module), the evaluation history and the training wall time (without the evaluations)."""
    from tensorboardX import SummaryWriter

    from manni_train.rllib_modules import MAIN

    writer = SummaryWriter(str(run_dir / "tb"))
    began, eval_seconds, next_eval, history = time.perf_counter(), 0.0, args.eval_every, []
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
        log_learner(writer, result, learner_steps)
        wall_time = time.perf_counter() - began - eval_seconds
        done = (iteration >= args.stop_iters
                or (args.total_steps is not None and learner_steps >= args.total_steps)
                or (args.stop_seconds is not None and wall_time >= args.stop_seconds))
        evaluate_now = done or (args.eval_every and learner_steps >= next_eval)
        if evaluate_now or iteration % args.checkpoint_every == 0:
            save(algo, args, run_dir, iteration, env_steps)
        if evaluate_now:
            while args.eval_every and next_eval <= learner_steps:
                next_eval += args.eval_every
            eval_start = time.perf_counter()
            history.append(evaluate(exported_policy(run_dir), args, learner_steps, wall_time))
            write_history(run_dir, history)
            for key in (f"vs_{b}" for b in BASELINES):
                writer.add_scalar(f"arena/{key}", history[-1][key]["mean"], learner_steps)
            eval_seconds += time.perf_counter() - eval_start
        if done:
            break
    writer.close()
    if timed_seconds:
        print(f"training throughput (iterations 2..{iteration}): {timed_steps / timed_seconds:.0f} env steps/s")
    if args.measure_sampling:
        print(f"sampling throughput: {measure_sampling(algo, args.measure_sampling):.0f} env steps/s "
              f"({args.num_env_runners} env runners × {args.num_envs} envs)")
    return learner_steps, history, wall_time


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    print(report(train(parse_args(Args, argv, prog)), agent_kind="rllib"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
