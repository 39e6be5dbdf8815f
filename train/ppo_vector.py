"""Fast self-play PPO for Manni on the vector env, in plain torch and one readable file.

    manni train --total-steps 2000000 --seed 1          # or: python -m manni_train.ppo_vector ...

CleanRL-style (``cleanrl/ppo.py``): a documented :class:`Args` dataclass (the options every trainer
shares, the PPO ones under CleanRL's names, come from :class:`manni_train.args.TrainArgs`), a linear
:func:`train`. It serves every variant
the vector env plays. Like ``train/ppo_sb3.py`` it starts with an imitation warm start
(``bc_samples`` decisions of ``bc_teacher`` playing every seat, :mod:`manni_train.demonstrations`,
cloned by the actor with cross-entropy and by the critic with the return to go; counted in the
reported wall time). ``num_envs`` games run in lockstep in :class:`manni_env.vector.VectorManni`. At the start of every game each seat is given,
independently, to a frozen snapshot of the learner (once the pool holds one), to ``rule_based`` or
``random`` with the shares of ``--opponent-mix``, or else to the learner; at least one seat stays
with the learner. Every step runs one batched forward pass per network that has a seat
on turn, and the baselines act in batches too (:class:`manni_agents.rule_based_vector.VectorRuleBased`,
compiled with numba when installed; ``random`` draws from the masks). Each (game, seat) played by
the learner is its own trajectory: with ``reward="trick"`` (the default, as in ``ppo_sb3``;
:mod:`manni_env.shaping`) each trick a seat wins pays its worth (+1, Nullo −1) to that seat's
latest decision and the deal's end pays the rest of the deal score; with ``reward="deal"`` the deal
score is paid at the end. The deal
(``episode="deal"``) or the game ends a seat's episode, and a trajectory cut by the end of a rollout
is bootstrapped with the value of that seat's current observation. Then GAE, the clipped PPO
objective with masked categorical policies (illegal logits set to -1e8), the value loss (clipped
with ``--clip-vloss``) and an entropy bonus, over ``update_epochs`` epochs of minibatches.
The pieces are modules of their own, this file the loop that joins them: the networks and their
checkpoints (:mod:`manni_train.networks`), ``--init-from`` (:mod:`manni_train.init_from`), the
rollout (games, seats, rewards, GAE: :class:`manni_train.vector_rollout.VectorRollout`) and the
update (:class:`manni_train.learner.PPOLearner`); the Ray trainer (:mod:`manni_train.ray_vector`)
runs the same rollout and update, its rollouts in runner actors.

By default (``--overlap``) the rollouts play in a process of their own, each while the learner
updates on the one before, with the weights one update old (:mod:`manni_train.rollout_process`);
``--no-overlap`` plays them in this process, taking turns with the updates.

``--opponents SPEC [SPEC]`` replaces that mix with fixed agents (:mod:`manni_train.opponents`);
``--precision`` runs the networks' hidden layers in bfloat16 (:mod:`manni_train.precision`); the warm
start and the final arena scale with ``--total-steps``; Ctrl-C keeps the policy, the history and a
resume state for ``--resume RUN_DIR`` (:mod:`manni_train.resume`); ``--torch-threads 0`` fits torch's
threads to the free cores (:mod:`manni_train.threads`). See ``docs/training.md``.

The reported wall time counts everything but the periodic evaluations (warm start included).

Everything goes to ``runs/<run_name>/``: ``args.json``; ``tb/`` (TensorBoard scalars: losses,
steps/s, evaluation scores); ``history.json`` (every ``eval_every`` learner decisions, the greedy
policy's mean deal score against 2 × ``random`` and 2 × ``rule_based`` over ``eval_deals`` duplicate
deals, :func:`manni_train.reporting.evaluate` as in every trainer, with the training wall time;
with ``--opponents`` also against them, ``vs_opponents``);
``agent.safetensors`` + ``agent.json`` (the actor in the ``ppo`` agent's checkpoint format:
``manni arena ppo:runs/<run>/agent rule_based rule_based``); ``learning_curve.png``; and
``arena_final.md`` / ``.json``, the final agent's duplicate arena against both baselines (printed;
:mod:`manni_train.reporting`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import safetensors
import torch

from manni_agents.ppo_agent import PLAY_MODES
from manni_env.interrupts import deferred_interrupt
from manni_env.shaping import REWARD_BASES
from manni_env.vector import BACKENDS
from manni_train import resume
from manni_train.args import SelfPlayArgs, parse_args
from manni_train.cpu import isa_cap
from manni_train.critic_view import CRITIC_VIEWS, unseen_size
from manni_train.demonstrations import Demonstrations, collect_demonstrations, imitate
from manni_train.init_from import init_network, load_actor
from manni_train.learner import PPOLearner
from manni_train.networks import TORSOS, Actor, Critic, export, greedy_policy, make_networks, parameters, policy_and_value
from manni_train.precision import PRECISIONS, autocast, compute_dtype
from manni_train.reporting import TrainResult, evaluate, final_arena, plot_learning_curve, report, write_history
from manni_train.resume import ResumeError
from manni_train.rollout_process import ProcessSampler, runner_seeds
from manni_train.threads import ThreadFitter
from manni_train.vector_rollout import RolloutBatch, VectorRollout

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
    """learner decisions to train for, rounded up to whole rollouts (default: 27,000,000; 32,000,000 in
    Basic Manni, which learns more slowly)"""
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
    arena; 0: none)"""
    final_pimc_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × pimc, the search baseline, seed
    --eval-seed + 1 (default: --total-steps / 30,000, at most 100, so a short run plays none; 0:
    none; about 0.4 s a deal on one core, shared by --eval-workers)"""
    eval_workers: int = 2
    """processes for the final arena"""
    bc_samples: int | None = None
    """imitation warm start: decisions of --bc-teacher playing every seat, cloned before PPO (default:
    30% of --total-steps, at most 600,000, so a short run has a short warm start; 0: start from
    scratch; about 160 bytes each in memory)"""
    bc_epochs: int = 4
    bc_lr: float = 2e-3
    bc_batch_size: int = 1024
    """minibatch size of the imitation phase"""
    time_limit_s: float = 0.0
    """stop after this many seconds of wall time (0: no limit)"""
    backend: str = "auto"
    """vector env backend: numba, python (the same kernels, slow) or auto (numba when installed)"""
    torso: str = "separate"
    """the critic's hidden layers: separate (its own, as wide as the actor's) or shared (the actor's,
    with a value head of its own: one pass through the hidden layers serves both networks, about half
    the arithmetic of a decision; needs --critic seat); the exported agent is the same network either way"""
    critic: str = "seat"
    """what the critic reads in training: seat (the seat's observation, as the actor) or deal (that and
    the cards hidden from the seat: the others' hands and the rest of the pack; the actor, and so the
    exported agent, still reads the observation only; manni_train.critic_view)"""
    play: str = "auto"
    """how the exported agent plays its network unless a spec says otherwise (the checkpoint's
    ``play``): plain, symmetric (the policy averaged over the renamings of the plain suits; slower a
    move) or auto (symmetric in Basic Manni, where the trump is known from the first decision, plain
    elsewhere)"""
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
    (manni_train.rollout_process); --no-overlap: rollouts and updates take turns in this process"""
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
                            "critic": CRITIC_VIEWS, "play": PLAY_CHOICES,
                            "torso": TORSOS})
        isa_cap()  # a ONEDNN_MAX_CPU_ISA oneDNN does not know, as one error line
        if self.torso == "shared" and self.critic != "seat":
            raise ValueError(f"--torso shared needs --critic seat (a shared torso reads the seat's observation "
                             f"only), got --critic {self.critic}")
        self.check_at_least(1, "bc_batch_size")
        if self.torch_threads < 0:
            raise ValueError(f"--torch-threads must not be negative, got {self.torch_threads}")
        if self.init_from and self.resume is None:  # now, as one error line, not after the run has started
            try:
                init_network(self.init_from, self)
            except OSError as err:  # a path no file system takes
                raise ValueError(f"--init-from {self.init_from[:200]}: {err.strerror or err}") from None

    def exported_play(self) -> str:
        """``--play`` with ``auto`` resolved: ``symmetric`` in Basic Manni, ``plain`` elsewhere."""
        if self.play != "auto":
            return self.play
        return "symmetric" if self.variant == "basic" else "plain"

    def final_arena_deals(self) -> int:
        """``--final-eval-deals``, by default ``--total-steps`` / 4,000 between 100 and 500."""
        return min(500, max(100, self.total_steps // 4000)) if self.final_eval_deals is None else self.final_eval_deals

    def final_pimc_arena_deals(self) -> int:
        """``--final-pimc-deals``, by default ``--total-steps`` / 30,000, at most 100."""
        return min(100, self.total_steps // 30_000) if self.final_pimc_deals is None else self.final_pimc_deals

    def warm_start_samples(self) -> int:
        """``--bc-samples``, by default 30% of ``--total-steps`` (at most 600,000)."""
        return min(600_000, round(0.3 * self.total_steps)) if self.bc_samples is None else self.bc_samples


def warm_start(actor: Actor, critic: Critic, data: Demonstrations, args: Args, gen: torch.Generator) -> dict:
    """Behaviour cloning of the teacher (:func:`~manni_train.demonstrations.imitate`) under
    ``--precision``, the critic's targets scaled by ``reward_scale`` and its loss weighted by ``vf_coef``
    (as in PPO); with ``--init-from`` only the
    critic learns (the actor keeps the checkpoint's weights; with ``--torso shared`` the value head)."""

    def evaluate(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = policy_and_value(actor, critic, batch["obs"], batch["masks"], batch.get("unseen"))
        log_prob = torch.log_softmax(logits.float(), 1).gather(1, batch["actions"][:, None]).squeeze(1)
        return log_prob, values

    # with --init-from the actor keeps the checkpoint's weights (a shared torso too: only the value head learns)
    actor_params = set(actor.parameters()) if args.init_from else set()
    learning = [p for p in parameters(actor, critic) if p not in actor_params]
    what = "the critic, values of" if args.init_from else "imitating"
    return imitate(evaluate, lambda batch: actor(batch["obs"], batch["masks"]).argmax(1),
                   learning, data, epochs=args.bc_epochs, lr=args.bc_lr,
                   batch_size=args.bc_batch_size, generator=gen, value_scale=args.reward_scale,
                   value_weight=args.vf_coef,
                   precision=autocast(compute_dtype(args.precision)),
                   desc=f"warm start ({what} {args.bc_teacher})", progress_bar=args.progress_bar)


class Sampler(Protocol):
    """Where rollouts come from: a :class:`~manni_train.vector_rollout.VectorRollout` in this process, or
    the Ray trainer's runner actors (:mod:`manni_train.ray_vector`)."""

    obs_size: int

    def collect(self, actor: Actor, critic: Critic) -> RolloutBatch: ...

    def add_snapshot(self, actor: Actor) -> None: ...


def train(args: Args, sampler: Sampler | None = None, make_learner: Callable[..., PPOLearner] = PPOLearner,
          algorithm: str = "plain-torch self-play PPO on the vector env (train/ppo_vector.py)") -> TrainResult:
    """Train, export, evaluate and plot; see the module docstring. ``sampler`` (default: one
    :class:`~manni_train.vector_rollout.VectorRollout` here) collects the rollouts and
    ``make_learner(actor, critic, args, gen)`` updates the networks (the Ray trainer passes its
    own); ``algorithm`` describes the run in the export's metadata. Ctrl-C
    (``KeyboardInterrupt``) writes the current policy, the history and the resume state
    (:mod:`manni_train.resume`) before it propagates."""
    args.final_eval_deals = args.final_arena_deals()  # saved in args.json as numbers
    args.final_pimc_deals = args.final_pimc_arena_deals()
    args.check()
    run_dir = args.run_dir()
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    writer = SummaryWriter(str(run_dir / "tb"))

    # seeding: torch (weights, action sampling), the vector env (deals), numpy (seat assignment)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    own = None  # the sampler this function makes (a rollout process it also stops)
    if sampler is None:
        sampler = own = (ProcessSampler(args, runner_seeds(args.seed, 1)[0], overlap=True) if args.overlap
                         else VectorRollout(args, gen, rng, args.seed))
    fitter = None
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    else:  # a rollout process's CPU time counts as this run's
        fitter = ThreadFitter(helper_cpu_s=lambda: getattr(own, "cpu_seconds", 0.0))

    actor, critic = make_networks(sampler.obs_size, args.hidden, args.activation, unseen_size(args.critic), args.torso)
    progress, optimizer_state = resume.Progress(next_snapshot=args.snapshot_every, next_eval=args.eval_every), None
    history: list[dict] = []
    saved = resume.read(run_dir) if args.resume else None  # Finished or ResumeError before anything is written
    if saved is not None:
        history = saved[1]
        if saved[0].phase == "ppo":
            progress, optimizer_state = resume.load(run_dir, actor, critic, gen, rng)
        elif saved[0].phase == "arena":
            progress = saved[0]
    if progress.phase == "warm start" and args.init_from:
        progress.init_from = load_actor(actor, args.init_from, args)
    start = time.time() - progress.wall_time_s
    eval_seconds = 0.0  # the training wall time counts the warm start but not the evaluations

    def wall_time() -> float:
        return time.time() - start - eval_seconds

    def record_eval() -> None:
        nonlocal eval_seconds
        eval_start = time.time()
        entry = evaluate(greedy_policy(actor), args, progress.steps, wall_time(), args.backend)
        history.append(entry)
        for key in (k for k in entry if k.startswith("vs_")):
            writer.add_scalar(f"arena/{key}", entry[key]["mean"], progress.steps)
        write_history(run_dir, history)
        eval_seconds += time.time() - eval_start

    learner = None
    try:
        if progress.phase == "arena":  # trained and exported: only the final arena remains
            raise _Trained
        if progress.phase == "warm start":
            if args.warm_start_samples():
                data = collect_demonstrations(args.rules(), args.warm_start_samples(), args.seed + 1_000_003,
                                              args.history, args.reward, args.bc_teacher, args.backend,
                                              args.reward_of, args.critic, args.observation)
                for name, value in warm_start(actor, critic, data, args, gen).items():
                    writer.add_scalar(name, value, 0)
                del data
            progress.phase = "ppo"
            optimizer_state = None  # a fresh optimizer after the warm start
        learner = make_learner(actor, critic, args, gen)
        if optimizer_state is not None and getattr(learner, "optimizer", None) is not None:
            learner.optimizer.load_state_dict(optimizer_state)
        if fitter is not None and isinstance(own, ProcessSampler):
            fitter.reserve(1)  # the rollout process's core (the warm start had them all)
        pool_size = 0
        bar = tqdm(total=args.total_steps, initial=min(progress.steps, args.total_steps), desc="PPO", unit="step",
                   disable=not args.progress_bar)

        while progress.steps < args.total_steps and not (args.time_limit_s and wall_time() > args.time_limit_s):
            lr = args.learning_rate * max(0.0, 1.0 - progress.steps / args.total_steps) if args.anneal_lr else args.learning_rate
            collect_start = time.time()
            batch = sampler.collect(actor, critic)
            waited = time.time() - collect_start  # the rollout's time, or with --overlap what it took beyond the update

            # PPO update
            update_start = time.time()
            losses = learner.update(batch, lr)
            progress.steps += batch.steps
            progress.updates += 1
            steps = progress.steps
            elapsed = wall_time()
            if steps > bar.total:  # the last rollout passed --total-steps: the bar shows what ran
                bar.total = steps
            bar.update(steps - bar.n)
            for name, value in (*losses.items(), ("charts/learning_rate", lr),
                                ("charts/steps_per_second", steps / elapsed),
                                ("charts/rollout_seconds", batch.seconds),
                                ("charts/rollout_cpu_seconds", batch.cpu_seconds),
                                ("charts/rollout_wait_seconds", waited),
                                ("charts/update_seconds", time.time() - update_start),
                                ("charts/pool_size", pool_size),
                                ("charts/torch_threads", torch.get_num_threads())):
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
        if progress.steps > args.total_steps:
            print(f"PPO: {progress.steps:,} learner decisions: --total-steps {args.total_steps:,} rounded up to "
                  "whole rollouts (--num-envs x --num-steps moves each)", file=sys.stderr)
        if not history or history[-1]["timesteps"] != progress.steps:
            record_eval()
        progress.wall_time_s = wall_time()
        export(actor, run_dir / "agent", args, progress.steps, progress.wall_time_s, algorithm, progress.init_from,
               args.exported_play())
        progress.phase = "arena"  # training is over: from here --resume plays the final arena again
        resume.save_phase(run_dir, progress)
    except _Trained:
        pass
    except KeyboardInterrupt:
        with deferred_interrupt():  # a second Ctrl-C waits until everything is written
            progress.wall_time_s = wall_time()
            kept = keep_interrupted(run_dir, progress, actor, critic, learner, gen, rng, args, algorithm, history)
            writer.close()
        print(f"\ninterrupted after {progress.steps:,} learner decisions ({progress.phase}): {kept}", file=sys.stderr)
        raise
    finally:
        if isinstance(own, ProcessSampler):  # before the final arena, whose workers want the cores
            own.close()
    agent = run_dir / "agent"
    plot_learning_curve(history, run_dir / "learning_curve.png", f"{args.run_name}: score while training")
    writer.close()
    try:
        final = final_arena(f"ppo:{agent}", args, run_dir, args.progress_bar)
    except KeyboardInterrupt:
        print(f"\ninterrupted in the final arena: the policy is ppo:{agent}, the history {run_dir / 'history.json'}; "
              f"play the arena again with manni train --resume {run_dir}", file=sys.stderr)
        raise
    progress.phase = "done"
    resume.save_phase(run_dir, progress)
    return TrainResult(run_dir, agent, final, history, progress.wall_time_s, progress.steps)


class _Trained(Exception):
    """A resumed run whose training is over: straight to its final arena."""


def keep_interrupted(run_dir: Path, progress: resume.Progress, actor: Actor, critic: Critic,
                     learner: PPOLearner | None, gen: torch.Generator, rng: np.random.Generator, args: Args,
                     algorithm: str, history: list[dict]) -> str:
    """Write what an interrupted run keeps (the policy, the history, the resume state; an
    interrupted warm start starts again on ``--resume``) and say what was kept: a write that fails
    (a full disk) leaves the previous file and is named, the others still written."""
    written, failed = [], []
    steps = [("policy", lambda: export(actor, run_dir / "agent", args, progress.steps, progress.wall_time_s,
                                       algorithm, progress.init_from, args.exported_play()),
              f"ppo:{run_dir / 'agent'}"),
             ("history", lambda: write_history(run_dir, history), str(run_dir / "history.json"))]
    if progress.phase == "ppo":
        steps.append(("resume state", lambda: resume.save(run_dir, progress, actor, critic,
                                                          getattr(learner, "optimizer", None), gen, rng), None))
    else:
        steps.append(("resume state", lambda: resume.save_phase(run_dir, progress), None))
    for what, write, where in steps:
        try:
            write()
            written.append(f"{what} saved" + (f" as {where}" if where else ""))
        except (OSError, safetensors.SafetensorError) as err:
            failed.append(f"{what} not saved ({_reason(err)}; the previous file is kept)")
    hint = f"continue with manni train --resume {run_dir}" if not failed else "free some space before resuming"
    return "; ".join(written + failed) + f"; {hint}"


def _reason(err: BaseException) -> str:
    """One line for a write error: ``[Errno 28] No space left on device``'s words."""
    if getattr(err, "strerror", None):
        return err.strerror
    return str(err).splitlines()[0][:200] if str(err) else type(err).__name__


def resumed(args: Args) -> Args:
    """The saved arguments of the run in ``args.resume``, checked to be resumable (:func:`resume.read`):
    :class:`~manni_train.resume.ResumeError` if it is not, :class:`~manni_train.resume.Finished` if
    it is finished."""
    path = Path(args.resume)
    try:
        if not (path / "args.json").is_file():
            raise ResumeError(f"--resume {path}: no run there (no args.json)")
        with (path / "args.json").open("rb") as f:
            text = f.read(resume.MAX_META_BYTES + 1)
        if len(text) > resume.MAX_META_BYTES:
            raise ValueError(f"larger than {resume.MAX_META_BYTES:,} bytes")
        saved = json.loads(text)
        if not isinstance(saved, dict):
            raise ValueError("not a JSON object")
        # a run saved before --overlap (--torso) existed played its rollouts in the trainer's process
        # (with a critic of its own)
        run = type(args).from_dict({"overlap": False, "torso": "separate", **saved, "resume": str(path), "runs_dir": str(path.parent),
                                    "run_name": path.name})
        run.check()
    except (OSError, ValueError, TypeError, RecursionError) as err:
        if isinstance(err, ResumeError):
            raise
        raise ResumeError(f"--resume {path}: its args.json is not this trainer's ({_reason(err)})") from None
    resume.read(path)
    return run


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = parse_args(Args, argv, prog)
    prog = prog or "manni_train.ppo_vector"
    try:
        if args.resume is not None:
            args = resumed(args)
        print(report(train(args)))
    except resume.Finished as done:
        print(done)
    except ResumeError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
