"""Fast self-play PPO for Manni on the vector env, in plain torch: the loop of ``manni train``.

    manni train --total-steps 2000000 --seed 1          # or: python -m manni_train.ppo_vector ...

CleanRL-style (``cleanrl/ppo.py``): a documented :class:`~manni_train.vector_args.Args` dataclass
(the options every trainer shares, the PPO ones under CleanRL's names, come from
:class:`manni_train.args.TrainArgs`) and a linear :func:`train` for every variant, read top to
bottom: the imitation warm start (:func:`manni_train.warm_start.warm_start`: ``bc_samples`` decisions of ``bc_teacher`` cloned by
the actor, their returns fitted by the critic), then rollouts (:class:`manni_train.vector_rollout.VectorRollout`:
``num_envs`` games in lockstep, each seat drawn from ``--opponent-mix`` (frozen snapshots of the
learner, ``rule_based``, ``random``) or given to ``--opponents``, trick or deal rewards, GAE) and PPO
updates (:class:`manni_train.learner.PPOLearner`) for exactly ``--total-steps`` learner decisions, an
evaluation every ``--eval-every`` (:func:`manni_train.reporting.evaluate`), the export
(:mod:`manni_train.networks`) and the final arena. By default (``--overlap``) the rollouts play in a
process of their own, each during the update of the one before (:mod:`manni_train.rollout_process`).
A run stopped early is kept for ``--resume RUN_DIR`` (:mod:`manni_train.resume`); the Ray trainer
(:mod:`manni_train.ray_vector`) runs this loop with its rollouts in runner actors. See
``docs/training.md``.

Everything goes to ``runs/<run_name>/``: ``args.json``; ``tb/`` (TensorBoard scalars); ``history.json``
(the evaluations, with the training wall time: everything but the evaluations, the warm start
included); ``agent.safetensors`` + ``agent.json`` (``manni arena ppo:runs/<run>/agent rule_based
rule_based``); ``learning_curve.png``; and ``arena_final.md`` / ``.json`` (the final arena, printed).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import torch

from manni_env.interrupts import deferred_interrupt
from manni_train import resume
from manni_train.args import parse_args
from manni_train.demonstrations import collect_demonstrations
from manni_train.init_from import load_actor
from manni_train.learner import PPOLearner
from manni_train.networks import run_networks
from manni_train.record_demonstrations import record_demonstrations
from manni_train.reporting import TrainResult
from manni_train.rollout_process import ProcessSampler, runner_seeds
from manni_train.threads import ThreadFitter
from manni_train.vector_args import Args
from manni_train.vector_rollout import Sampler, VectorRollout
from manni_train.warm_start import warm_start

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter


def train(args: Args, sampler: Sampler | None = None, make_learner: Callable[..., PPOLearner] = PPOLearner,
          algorithm: str = "plain-torch self-play PPO on the vector env (train/ppo_vector.py)") -> TrainResult:
    """Train, export, evaluate and plot; see the module docstring. ``sampler`` (default: one
    :class:`~manni_train.vector_rollout.VectorRollout` here) collects the rollouts and
    ``make_learner(actor, critic, args, gen)`` updates the networks (the Ray trainer passes its
    own); ``algorithm`` describes the run in the export's metadata. Whatever stops training (Ctrl-C,
    a stop signal, a failed rollout process) keeps the run first (:meth:`manni_train.resume.Run.kept_if_stopped`)."""
    args.final_eval_deals = args.final_arena_deals()  # saved in args.json as numbers
    args.final_pimc_deals = args.final_pimc_arena_deals()
    args.check()
    # seeding: torch (weights, action sampling), the vector env (deals), numpy (seat assignment)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    own = None  # the sampler this function makes (a rollout process it also stops)
    if sampler is None:
        sampler = own = (ProcessSampler(args, runner_seeds(args.seed, 1)[0], overlap=True) if args.overlap
                         else VectorRollout(args, gen, rng, args.seed))
    actor, critic = run_networks(sampler.obs_size, args)
    if isinstance(own, ProcessSampler) and not own.fits(actor):  # /dev/shm too small (said so)
        args.overlap = False  # (args.json says what runs)
        sampler = own = VectorRollout(args, gen, rng, args.seed)
    run = resume.Run(args.run_dir(), args, actor, critic, gen, rng, algorithm)
    progress, run_dir = run.progress, run.run_dir
    if progress.phase == "warm start" and args.init_from:
        progress.init_from = load_actor(actor, args.init_from, args)
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    writer = SummaryWriter(str(run_dir / "tb"))
    fitter = None
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    else:  # a rollout process's CPU time counts as this run's
        fitter = ThreadFitter(helper_cpu_s=lambda: getattr(own, "cpu_seconds", 0.0))

    def record_eval() -> None:
        entry = run.evaluate()
        write_scalars(writer, {f"arena/{key}": entry[key]["mean"] for key in entry if key.startswith("vs_")},
                      progress.steps)

    rollouts = own if isinstance(own, ProcessSampler) else contextlib.nullcontext()
    with writer, rollouts, run.kept_if_stopped():  # the run kept first, then the rollout process stopped
        if isinstance(own, ProcessSampler) and progress.phase != "arena":
            own.start()  # it loads while the warm start's games are played (on one core)
        if progress.phase == "warm start":
            if args.warm_start_records:
                data = record_demonstrations(args.records(), args.rules(), args.bc_samples, args.history, args.reward,
                                             args.reward_of, args.critic, args.observation, args.warm_start_players)
                args._records = None  # (their rows are all the warm start needs)
            elif args.warm_start_samples():
                data = collect_demonstrations(args.rules(), args.warm_start_samples(), args.seed + 1_000_003,
                                              args.history, args.reward, args.bc_teacher, args.backend,
                                              args.reward_of, args.critic, args.observation)
            else:
                data = None
            if data is not None:
                # threads fitted as in PPO: a busy neighbour would otherwise stall every product
                refit = fitter.maybe_refit if fitter is not None else lambda: None
                write_scalars(writer, warm_start(actor, critic, data, args, gen, each_step=refit), 0)
                del data
            progress.phase = "ppo"
            run.optimizer_state = None  # a fresh optimizer after the warm start
        if progress.phase == "ppo":  # (a resumed run in its "arena" phase has trained)
            learner = make_learner(actor, critic, args, gen)
            run.optimizer = getattr(learner, "optimizer", None)
            if run.optimizer_state is not None and run.optimizer is not None:
                run.optimizer.load_state_dict(run.optimizer_state)
            if fitter is not None and isinstance(own, ProcessSampler):
                fitter.reserve(1)  # the rollout process's core (the warm start had them all)
            pool_size = 0
            bar = tqdm(total=args.total_steps, initial=progress.steps, desc="PPO", unit="step",
                       disable=not args.progress_bar)

            while progress.steps < args.total_steps and not (args.time_limit_s and run.wall_time() > args.time_limit_s):
                lr = learning_rate(args, progress.steps)
                collect_start = time.time()
                batch = sampler.collect(actor, critic)
                # the rollout's time, or with --overlap what it took beyond the update (its valuing apart)
                waited = time.time() - collect_start - batch.value_seconds
                batch = batch.first(args.total_steps - progress.steps)  # the last update: only the decisions left

                # PPO update
                update_start = time.time()
                losses = learner.update(batch, lr)
                progress.steps += batch.steps
                progress.updates += 1
                steps = progress.steps
                bar.update(batch.steps)
                charts = {"learning_rate": lr, "steps_per_second": steps / run.wall_time(), "pool_size": pool_size,
                          "rollout_seconds": batch.seconds, "rollout_cpu_seconds": batch.cpu_seconds,
                          "rollout_wait_seconds": waited, "value_seconds": batch.value_seconds,
                          "update_seconds": time.time() - update_start,
                          "torch_threads": torch.get_num_threads()}
                if batch.deal_scores:
                    charts["learner_deal_score"] = float(np.mean(batch.deal_scores))
                write_scalars(writer, {**losses, **{f"charts/{k}": v for k, v in charts.items()}}, steps)

                if args.snapshot_every and steps >= progress.next_snapshot:
                    progress.next_snapshot += args.snapshot_every
                    if not args.opponents:  # fixed opponents take every non-learner seat: no pool
                        sampler.add_snapshot(actor)
                        pool_size = min(pool_size + 1, args.pool_size)
                if args.save_every and steps >= progress.next_save:
                    progress.next_save = (steps // args.save_every + 1) * args.save_every
                    run.export(f"agents/{steps}")
                if args.eval_every and steps >= progress.next_eval:
                    progress.next_eval += args.eval_every
                    record_eval()
                if fitter is not None:
                    fitter.maybe_refit()
            bar.close()
            if not run.history or run.history[-1]["timesteps"] != progress.steps:
                record_eval()
            progress.wall_time_s = run.wall_time()
            run.export()
            progress.phase = "arena"  # training is over: from here --resume plays the final arena again
            resume.save_phase(run_dir, progress)
    return run.finish()


def write_scalars(writer: SummaryWriter, scalars: Mapping[str, float], step: int) -> None:
    """Add ``scalars`` to TensorBoard at ``step`` with Ctrl-C and stop signals held until they are
    queued: a signal that cut a write in half could leave the writer's thread unwoken, and closing the
    writer (as a stopped run does) waiting for it up to its flush interval, two minutes."""
    with deferred_interrupt():
        for name, value in scalars.items():
            writer.add_scalar(name, value, step)


def learning_rate(args: Args, steps: int) -> float:
    """The learning rate after ``steps`` learner decisions: ``--learning-rate``, or with ``--anneal-lr``
    decayed linearly from it to ``--anneal-lr-to`` of it at ``--total-steps``."""
    if not args.anneal_lr:
        return args.learning_rate
    return args.learning_rate * (1.0 - (1.0 - args.anneal_lr_to) * steps / args.total_steps)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``manni train --trainer vector`` (:func:`manni_train.resume.command`: its exit codes)."""
    return resume.command(train, parse_args(Args, argv, prog), prog or "manni_train.ppo_vector")


if __name__ == "__main__":
    sys.exit(main())
