"""Fast self-play PPO for Manni on the vector env, in plain torch: the loop of ``manni train``.

    manni train --total-steps 2000000 --seed 1          # or: python -m manni_train.ppo_vector ...

CleanRL-style (``cleanrl/ppo.py``): a documented :class:`Args` dataclass (the options every trainer
shares, the PPO ones under CleanRL's names, come from :class:`manni_train.args.TrainArgs`) and a
linear :func:`train` for every variant, read top to bottom: the imitation warm start
(:func:`manni_train.demonstrations.warm_start`: ``bc_samples`` decisions of ``bc_teacher`` cloned by
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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from manni_agents.ppo_agent import PLAY_MODES
from manni_env.shaping import REWARD_BASES
from manni_env.vector import BACKENDS
from manni_train import resume
from manni_train.args import MIN_ARENA_DEALS, SelfPlayArgs, parse_args
from manni_train.cpu import isa_cap
from manni_train.critic_view import CRITIC_VIEWS, unseen_size
from manni_train.demonstrations import collect_demonstrations
from manni_train.warm_start import warm_start
from manni_train.init_from import init_network, load_actor
from manni_train.learner import PPOLearner
from manni_train.networks import TORSOS, make_networks
from manni_train.record_demonstrations import load_records, record_demonstrations
from manni_train.precision import PRECISIONS
from manni_train.reporting import TrainResult
from manni_train.rollout_process import ProcessSampler, runner_seeds
from manni_train.threads import ThreadFitter
from manni_train.vector_rollout import Sampler, VectorRollout

#: ``--total-steps`` when not given, by variant (``None``: the others)
DEFAULT_TOTAL_STEPS = {None: 27_000_000, "basic": 32_000_000}
#: ``--play``: how the exported agent plays (``auto``: :meth:`Args.exported_play`)
PLAY_CHOICES = ("auto", *PLAY_MODES)


@dataclass
class Args(SelfPlayArgs):
    """Self-play PPO on the vector env (plain torch): the fast trainer, manni train's default."""

    TRAINER = "vector"
    FIXED_OPPONENTS = True

    # the defaults: what reached the most strength in about ten minutes of 2 cores
    # (benchmarks/results/time_to_strength.md)
    total_steps: int | None = None
    """learner decisions to train for, exactly: the last update takes only the rollout's first decisions
    still to train (default: 27,000,000; 32,000,000 in Basic Manni, which learns more slowly)"""
    learning_rate: float = 5e-4
    anneal_lr: bool = True
    # many games per vector step and large minibatches, two epochs: the per-step and per-minibatch
    # overheads are spread over more decisions, and fresh decisions are cheaper than a third and
    # fourth pass over old ones
    num_envs: int = 1024
    num_steps: int = 32
    minibatch_size: int = 2048
    update_epochs: int = 2
    # a population from the start: most opponents are the learner's own snapshots, one every 250,000
    # decisions, the 16 latest kept (they span the last 4 M decisions)
    opponent_mix: str = "snapshot=0.6,rule_based=0.3,random=0.05"
    snapshot_every: int = 250_000
    pool_size: int = 16
    eval_every: int = 1_000_000
    final_eval_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based, seed
    --eval-seed + 1 (default: --total-steps / 4,000 between 100 and 500, so a short run has a short
    arena; 0: none, else at least 2, for a confidence interval)"""
    final_pimc_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × pimc, the search baseline, seed
    --eval-seed + 1 (default: --total-steps / 30,000, at most 100: none below 60,000 steps; 0: none,
    else at least 2; about 0.4 s a deal on one core, shared by --eval-workers)"""
    eval_workers: int = 2
    """processes for the final arena"""
    bc_samples: int | None = None
    """imitation warm start: decisions of --bc-teacher playing every seat, cloned before PPO (default:
    30% of --total-steps, at most 600,000, so a short run has a short warm start; 0: start from
    scratch; about 160 bytes each in memory)"""
    warm_start_records: list[str] = field(default_factory=list)
    """imitate the decisions of these game records (manni-record/1 JSON Lines, e.g. from manni records
    export; every seat's unless --warm-start-players) instead of --bc-teacher's; validated first, and
    played under this run's variant and rule options; --bc-samples caps how many (default: all)"""
    warm_start_players: list[str] = field(default_factory=list)
    """with --warm-start-records, imitate only the seats whose player in the record is one of these:
    a whole name (human, remote-bot:NAME, ppo:runs/x/agent) or its kind (remote-bot, ppo)"""
    bc_epochs: int = 4
    bc_lr: float = 2e-3
    bc_batch_size: int = 1024
    """minibatch size of the imitation phase"""
    time_limit_s: float = 0.0
    """stop after this many seconds of wall time (0: no limit)"""
    backend: str = "auto"
    """vector env backend: numba, python (the same kernels, slow) or auto (numba when installed)"""
    torso: str = "separate"
    """the critic's hidden layers: separate (its own) or shared (the actor's, under a value head of its own:
    about half the arithmetic of a decision; needs --critic seat); the exported agent is the same either way"""
    critic: str = "seat"
    """what the critic reads in training: seat (the seat's observation, as the actor) or deal (that and
    the cards hidden from the seat: the others' hands and the rest of the pack; the actor, and so the
    exported agent, still reads the observation only; manni_train.critic_view)"""
    play: str = "auto"
    """how the exported agent plays its network unless a spec says otherwise (the checkpoint's
    ``play``): plain, symmetric (the policy averaged over the renamings of the plain suits; slower a
    move) or auto (symmetric where the variant's row says the trump is known from the first decision,
    as in Basic Manni; plain elsewhere)"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before training"""
    reward_of: str = "relative"
    """whose points the reward counts: own, or relative (own minus the mean of the two others': what
    pimc and search maximise and the arena's differences measure; 1.5 x own in the zero-sum
    variants, different in Basic Manni, whose deal scores are never negative)"""
    torch_threads: int = 0
    """torch CPU threads of this process (0: fitted to the cores other processes leave free, measured
    again every 30 s; the fast trainer's --overlap keeps one of them for its rollout process)"""
    overlap: bool = True
    """play the rollouts in a process of their own, each during the update of the previous one, with
    the weights one update old: an iteration takes the longer of rollout and update, not their sum
    (manni_train.rollout_process; a /dev/shm too small for it is said, and the rollouts play here);
    --no-overlap: rollouts and updates take turns in this process"""
    precision: str = "auto"
    """arithmetic of the networks' hidden layers in the warm start, the rollouts and the update: fp32,
    bf16 (autocast; weights and checkpoints stay float32) or auto (bf16 where the CPU or GPU runs it
    natively)"""
    init_from: str | None = None
    """start the actor from this ppo checkpoint instead of from scratch: ppo (the variant's shipped
    agent), ppo:VARIANT or ppo:PATH (same observations, --hidden and --activation; a summary network
    also starts a --history full run, at zero weight on the added inputs); the warm start,
    if any, then trains only the critic (e.g. a best response that starts as the agent it exploits)"""
    resume: str | None = None
    """continue the interrupted run in this directory (RUN_DIR: its args.json, networks, optimizer,
    step count, history and random states; the other options are ignored)"""

    def __post_init__(self) -> None:
        if self.total_steps is None:
            self.total_steps = DEFAULT_TOTAL_STEPS.get(self.variant, DEFAULT_TOTAL_STEPS[None])

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        super().check()
        self.check_choices({"backend": BACKENDS, "precision": PRECISIONS, "reward_of": REWARD_BASES,
                            "critic": CRITIC_VIEWS, "play": PLAY_CHOICES, "torso": TORSOS})
        isa_cap()  # a ONEDNN_MAX_CPU_ISA oneDNN does not know, as one error line
        if self.torso == "shared" and self.critic != "seat":
            raise ValueError("--torso shared needs --critic seat (the actor's layers read its observation only)")
        self.check_at_least(1, "bc_batch_size")
        if self.torch_threads < 0:
            raise ValueError(f"--torch-threads must not be negative, got {self.torch_threads}")
        if self.warm_start_players and not self.warm_start_records:
            raise ValueError("--warm-start-players needs --warm-start-records")
        if self.warm_start_records and self.resume is None:  # read and checked now: nothing trains on a bad file
            if self.bc_samples == 0:
                raise ValueError("--warm-start-records needs --bc-samples above 0 (0: no warm start)")
            self.records()
        if self.init_from and self.resume is None:  # now, as one error line, not after the run has started
            try:
                init_network(self.init_from, self)
            except OSError as err:  # a path no file system takes
                raise ValueError(f"--init-from {self.init_from[:200]}: {err.strerror or err}") from None

    def records(self) -> list[dict]:
        """The ``--warm-start-records``, read and checked once
        (:func:`~manni_train.record_demonstrations.load_records`)."""
        if getattr(self, "_records", None) is None:
            self._records = load_records(self.warm_start_records, self.rules(), self.warm_start_players)
        return self._records

    def __getstate__(self) -> dict:  # a rollout process or actor gets the options, not the records
        return {k: v for k, v in self.__dict__.items() if k != "_records"}

    def exported_play(self) -> str:
        """``--play`` with ``auto`` resolved: ``symmetric`` where the trump is known from the first decision
        (:attr:`~manni_env.rules.VariantSpec.trump_known_first`: Basic Manni), ``plain`` elsewhere."""
        if self.play != "auto":
            return self.play
        return "symmetric" if self.rules().spec.trump_known_first else "plain"

    def final_arena_deals(self) -> int:
        """``--final-eval-deals``, by default ``--total-steps`` / 4,000 between 100 and 500."""
        return min(500, max(100, self.total_steps // 4000)) if self.final_eval_deals is None else self.final_eval_deals

    def final_pimc_arena_deals(self) -> int:
        """``--final-pimc-deals``, by default ``--total-steps`` / 30,000, at most 100, and 0 below
        :data:`~manni_train.args.MIN_ARENA_DEALS` (no arena too small for a confidence interval)."""
        if self.final_pimc_deals is not None:
            return self.final_pimc_deals
        deals = min(100, self.total_steps // 30_000)
        return deals if deals >= MIN_ARENA_DEALS else 0

    def warm_start_samples(self) -> int:
        """``--bc-samples``, by default 30% of ``--total-steps`` (at most 600,000)."""
        return min(600_000, round(0.3 * self.total_steps)) if self.bc_samples is None else self.bc_samples


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
    actor, critic = make_networks(sampler.obs_size, args.hidden, args.activation, unseen_size(args.critic), args.torso)
    if isinstance(own, ProcessSampler) and not own.fits(actor, critic):  # /dev/shm too small (said so)
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
        for key in (k for k in entry if k.startswith("vs_")):
            writer.add_scalar(f"arena/{key}", entry[key]["mean"], progress.steps)

    rollouts = own if isinstance(own, ProcessSampler) else contextlib.nullcontext()
    with writer, rollouts, run.kept_if_stopped():  # the run kept first, then the rollout process stopped
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
                for name, value in warm_start(actor, critic, data, args, gen).items():
                    writer.add_scalar(name, value, 0)
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
                lr = args.learning_rate * (1.0 - progress.steps / args.total_steps if args.anneal_lr else 1.0)
                collect_start = time.time()
                batch = sampler.collect(actor, critic)
                waited = time.time() - collect_start  # the rollout's time, or with --overlap what it took beyond the update
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
                          "rollout_wait_seconds": waited, "update_seconds": time.time() - update_start,
                          "torch_threads": torch.get_num_threads()}
                for name, value in (*losses.items(), *((f"charts/{k}", v) for k, v in charts.items())):
                    writer.add_scalar(name, value, steps)
                if batch.deal_scores:
                    writer.add_scalar("charts/learner_deal_score", float(np.mean(batch.deal_scores)), steps)

                if args.snapshot_every and steps >= progress.next_snapshot:
                    progress.next_snapshot += args.snapshot_every
                    if not args.opponents:  # fixed opponents take every non-learner seat: no pool
                        sampler.add_snapshot(actor)
                        pool_size = min(pool_size + 1, args.pool_size)
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


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``manni train --trainer vector`` (:func:`manni_train.resume.command`: its exit codes)."""
    return resume.command(train, parse_args(Args, argv, prog), prog or "manni_train.ppo_vector")


if __name__ == "__main__":
    sys.exit(main())
