"""The state a vector-trainer run keeps for ``--resume RUN_DIR``, and what resuming it means.

``resume.json`` says which phase the run is in (:data:`PHASES`): ``warm start`` and ``ppo`` while
it trains, ``arena`` once training is over and the policy exported (the final arena remains),
``done`` when the arena is written. In the ``ppo`` phase (written on Ctrl-C) it holds where
training stands: learner decisions and updates done, wall time, the next snapshot and
evaluation, the record of the ``--init-from`` checkpoint, Adam's hyperparameters and the numpy
generator's state, and ``resume.safetensors`` holds the tensors (the actor, the critic, Adam's
moments and step counts, the torch generator's state), so loading them runs no code (no pickle).
The evaluation history is the run's ``history.json``.

A run is kept whatever stops it (:meth:`Run.kept_if_stopped`): Ctrl-C, SIGTERM or SIGHUP
(:class:`~manni_env.interrupts.Stopped`) and a failed rollout process
(:class:`~manni_train.rollout_process.RolloutProcessError`) write the policy, the history and the
resume state (:meth:`Run.keep`) and end in one line that says so.

Resuming never loses what a run kept (:func:`read`): a ``done`` run is finished (:class:`Finished`),
an ``arena`` run plays its final arena again, a ``ppo`` run continues, a ``warm start`` run starts
its warm start again. A directory that kept a policy or a history but has no readable resume
state (a run of an older release, a deleted or damaged ``resume.json``) is refused with one error
line, as is anything unreadable or foreign (:class:`ResumeError`): training from step 0 would
overwrite what it kept.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import safetensors.torch
import torch
from filelock import FileLock, Timeout
from torch import nn

from manni_env.cli import shortened
from manni_env.files import replace_atomically, write_text
from manni_env.interrupts import Stopped, deferred_interrupt, stop_signals
from manni_train.args import TrainArgs
from manni_train.networks import Actor, Critic, export, greedy_policy
from manni_train.reporting import TrainResult, evaluate, final_arena, plot_learning_curve, report, write_history
from manni_train.rollout_process import RolloutProcessError

if TYPE_CHECKING:
    from manni_train.ppo_vector import Args

STATE, META = "resume.safetensors", "resume.json"
#: The lock a training process holds in its run directory (:func:`run_lock`).
LOCK_FILE = ".train.lock"
#: A run's phases, in order (see the module docstring).
PHASES = ("warm start", "ppo", "arena", "done")
#: What a run keeps that training from step 0 would overwrite.
KEPT = ("agent.safetensors", "agent.json", "history.json", "arena_final.json")
#: The largest resume.json read (it holds a few numbers and Adam's hyperparameters: about 2 kB).
MAX_META_BYTES = 1_000_000
#: The largest history.json read (an entry is about 500 bytes: 100,000 evaluations).
MAX_HISTORY_BYTES = 64_000_000


class ResumeError(ValueError):
    """``--resume`` cannot continue this directory (one error line, exit code 2)."""


class Finished(ResumeError):
    """``--resume`` names a run that is finished: nothing to do."""


class RunFailed(RuntimeError):
    """Training failed (its rollout process did) after the run was kept; the message says both."""


@dataclass
class Progress:
    """Where a run stands: its phase (one of :data:`PHASES`) and, in the ``ppo`` phase, how far
    training went."""

    phase: str = "warm start"  # one of PHASES
    steps: int = 0
    updates: int = 0
    wall_time_s: float = 0.0
    next_snapshot: int = 0
    next_eval: int = 0
    next_save: int = 0
    init_from: dict | None = None  # what the run recorded of its --init-from checkpoint when it loaded it


def save_phase(run_dir: Path, progress: Progress) -> None:
    """Write ``resume.json`` for a phase without tensors (``warm start``, ``arena``, ``done``) and
    drop the tensors of an earlier ``ppo`` state."""
    assert progress.phase != "ppo", "a ppo state has tensors: save() it"
    write_text(run_dir / META, json.dumps(progress.__dict__, indent=1) + "\n")
    (run_dir / STATE).unlink(missing_ok=True)


def save(run_dir: Path, progress: Progress, actor: nn.Module, critic: nn.Module,
         optimizer: torch.optim.Optimizer | None, gen: torch.Generator, rng: np.random.Generator) -> None:
    """Write ``resume.safetensors`` and ``resume.json`` of the ``ppo`` phase (each replaced in one
    step, the tensors first: a ``resume.json`` of phase ``ppo`` always has its tensors)."""
    tensors = {f"actor.{k}": v for k, v in actor.state_dict().items()}
    # a shared torso (--torso shared) is in both networks: safetensors stores no tensor twice, so a copy
    actors = {v.data_ptr() for v in actor.state_dict().values()}
    tensors |= {f"critic.{k}": v.clone() if v.data_ptr() in actors else v for k, v in critic.state_dict().items()}
    tensors["generator"] = gen.get_state()
    groups = None
    if optimizer is not None:
        state = optimizer.state_dict()
        groups = state["param_groups"]
        for i, moments in state["state"].items():
            tensors |= {f"optimizer.{i}.{k}": torch.as_tensor(v) for k, v in moments.items()}
    meta = {**progress.__dict__, "optimizer_groups": groups, "numpy_rng": rng.bit_generator.state}
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    text = json.dumps(meta, indent=1) + "\n"
    replace_atomically((run_dir / STATE, lambda p: safetensors.torch.save_file(tensors, str(p))),
                       (run_dir / META, lambda p: p.write_text(text)))


def kept_files(run_dir: Path) -> list[str]:
    """The files of :data:`KEPT` that ``run_dir`` holds."""
    return [name for name in KEPT if (run_dir / name).exists()]


def read(run_dir: Path) -> tuple[Progress, list[dict]] | None:
    """The phase and history of the run in ``run_dir`` (see the module docstring); ``None`` when
    it kept nothing yet (start afresh). :class:`Finished` for a finished run, :class:`ResumeError`
    for a directory that cannot be resumed without losing what it kept."""
    if not (run_dir / META).exists():
        kept = kept_files(run_dir)
        if not kept:
            return None
        if "arena_final.json" in kept:  # a finished run of a release before resume.json kept the phase
            raise Finished(f"the run in {run_dir} is finished (its final arena is {run_dir / 'arena_final.md'}): "
                           "nothing to resume")
        raise ResumeError(f"--resume {run_dir}: it kept {', '.join(kept)} but has no resume state ({META}); "
                          "training again from step 0 would overwrite them (continue from its policy in a new run: "
                          f"--init-from ppo:{run_dir / 'agent'})")
    meta = _json(run_dir / META, dict)
    try:
        progress = Progress(**{f.name: meta[f.name] for f in fields(Progress) if f.name in meta})
    except TypeError as err:
        raise ResumeError(f"--resume {run_dir}: {META} is not a resume state ({err})") from None
    numbers = [getattr(progress, f.name) for f in fields(Progress) if f.type in ("int", "float")]
    if (progress.phase not in PHASES or not all(type(v) in (int, float) and v >= 0 for v in numbers)
            or not isinstance(progress.init_from, dict | None)):
        raise ResumeError(f"--resume {run_dir}: {META} is not a resume state (phase {str(progress.phase)[:40]!r}, "
                          "a count that is not a non-negative number, or a bad init_from)")
    if progress.phase == "done":
        raise Finished(f"the run in {run_dir} is finished ({progress.steps:,} learner decisions; its final arena is "
                       f"{run_dir / 'arena_final.md'}): nothing to resume")
    if progress.phase == "ppo" and not (run_dir / STATE).is_file():
        raise ResumeError(f"--resume {run_dir}: {META} says training stopped at {progress.steps:,} learner decisions "
                          f"but {STATE} is missing")
    history = _json(run_dir / "history.json", list) if (run_dir / "history.json").exists() else []
    return progress, history


def load(run_dir: Path, actor: nn.Module, critic: nn.Module, gen: torch.Generator,
         rng: np.random.Generator) -> tuple[Progress, dict | None]:
    """Restore the networks and generators of a ``ppo`` state from ``run_dir``; its
    :class:`Progress` and the optimizer's state dict (``None`` if none was saved), for
    :meth:`torch.optim.Optimizer.load_state_dict`. :class:`ResumeError` if anything does not fit."""
    try:
        return _load(run_dir, actor, critic, gen, rng)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, safetensors.SafetensorError) as err:
        raise ResumeError(f"--resume {run_dir}: its resume state does not fit this run "
                          f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''})") from None


def _load(run_dir: Path, actor: nn.Module, critic: nn.Module, gen: torch.Generator,
          rng: np.random.Generator) -> tuple[Progress, dict | None]:
    tensors = safetensors.torch.load_file(str(run_dir / STATE))
    meta = _json(run_dir / META, dict)
    actor.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("actor.")})
    critic.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("critic.")})
    gen.set_state(tensors["generator"])
    rng.bit_generator.state = meta.pop("numpy_rng")
    groups = meta.pop("optimizer_groups")
    optimizer = None
    if groups is not None:
        state: dict[int, dict] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, i, name = key.split(".", 2)
                state.setdefault(int(i), {})[name] = value
        optimizer = {"state": state, "param_groups": groups}
    return Progress(**meta), optimizer


def _json(path: Path, kind: type):
    """The JSON ``kind`` (``dict``: resume.json, at most :data:`MAX_META_BYTES`; ``list``: the
    history, at most :data:`MAX_HISTORY_BYTES`); :class:`ResumeError` naming the file otherwise."""
    limit = MAX_HISTORY_BYTES if kind is list else MAX_META_BYTES
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"larger than {limit:,} bytes")
        value = json.loads(data)
    except (OSError, ValueError, RecursionError) as err:
        raise ResumeError(f"--resume {path.parent}: cannot read {path.name}: {err}") from None
    if not isinstance(value, kind):
        raise ResumeError(f"--resume {path.parent}: {path.name} holds no {kind.__name__}")
    return value


class Run:
    """A vector-trainer run in ``run_dir`` as it trains: its arguments, networks and generators, where
    it stands (:attr:`progress`), its evaluations (:attr:`history`), its training wall time and, once
    PPO has started, its optimizer. With ``--resume`` its saved state is read (:func:`read`;
    :class:`ResumeError` or :class:`Finished` before anything is written) and a ``ppo`` state loaded
    into the networks and generators; :attr:`optimizer_state` then holds the optimizer's."""

    def __init__(self, run_dir: Path, args: Args, actor: Actor, critic: Critic, gen: torch.Generator,
                 rng: np.random.Generator, algorithm: str):
        self.run_dir, self.args, self.actor, self.critic, self.gen, self.rng = run_dir, args, actor, critic, gen, rng
        self.algorithm = algorithm
        self.progress = Progress(next_snapshot=args.snapshot_every, next_eval=args.eval_every,
                                 next_save=args.save_every)
        self.history: list[dict] = []
        self.optimizer: torch.optim.Optimizer | None = None
        self.optimizer_state: dict | None = None
        saved = read(run_dir) if args.resume else None
        if saved is not None:
            self.history = saved[1]
            if saved[0].phase == "ppo":
                self.progress, self.optimizer_state = load(run_dir, actor, critic, gen, rng)
            elif saved[0].phase == "arena":
                self.progress = saved[0]
        self.started = time.time() - self.progress.wall_time_s
        self.eval_seconds = 0.0

    def wall_time(self) -> float:
        """The training wall time: since the run started (before its interruptions too), less the
        evaluations (the warm start counts)."""
        return time.time() - self.started - self.eval_seconds

    def evaluate(self) -> dict:
        """Evaluate the greedy policy (:func:`~manni_train.reporting.evaluate`), add the entry to the
        history and write ``history.json``; the entry."""
        start = time.time()
        entry = evaluate(greedy_policy(self.actor), self.args, self.progress.steps, self.wall_time(), self.args.backend)
        self.history.append(entry)
        write_history(self.run_dir, self.history)
        self.eval_seconds += time.time() - start
        return entry

    def export(self, name: str = "agent") -> None:
        """Write the actor as the run's ``ppo`` agent (``agent.safetensors`` + ``agent.json``), or as
        ``NAME.safetensors`` + ``NAME.json`` under the run directory."""
        p = self.progress
        (self.run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        wall_time = self.wall_time() if p.phase == "ppo" else p.wall_time_s  # (still training: the time so far)
        export(self.actor, self.run_dir / name, self.args, p.steps, wall_time, self.algorithm, p.init_from,
               self.args.exported_play())

    def finish(self) -> TrainResult:
        """The run's last phase, once trained and exported: the learning curve, the final arena (on
        Ctrl-C or a stop signal, say how to play it again) and the ``done`` state."""
        agent, args = self.run_dir / "agent", self.args
        plot_learning_curve(self.history, self.run_dir / "learning_curve.png", f"{args.run_name}: score while training")
        try:
            final = final_arena(f"ppo:{agent}", args, self.run_dir, args.progress_bar)
        except KeyboardInterrupt as stop:  # (the arena's own, with a stop signal as its context)
            signalled = next((e for e in (stop, stop.__context__) if isinstance(e, Stopped)), None)
            print(f"\n{f'stopped by {signalled}' if signalled else 'interrupted'} in the final arena: the policy is "
                  f"ppo:{agent}, the history {self.run_dir / 'history.json'}; play the arena again with manni train "
                  f"--resume {self.run_dir}", file=sys.stderr)
            if signalled is None:
                raise
            signalled.said = True
            raise signalled from None
        self.progress.phase = "done"
        save_phase(self.run_dir, self.progress)
        return TrainResult(self.run_dir, agent, final, self.history, self.progress.wall_time_s, self.progress.steps)

    def keep(self) -> str:
        """Write what a stopped run keeps (the policy, the history, the resume state; a stopped warm
        start starts again on ``--resume``) and say what was kept: a write that fails (a full disk)
        leaves the previous file and is named, the others still written."""
        written, failed = [], []
        if self.progress.phase == "ppo":
            state = lambda: save(self.run_dir, self.progress, self.actor, self.critic, self.optimizer,  # noqa: E731
                                 self.gen, self.rng)
        else:
            state = lambda: save_phase(self.run_dir, self.progress)  # noqa: E731
        for what, write, where in (("policy", self.export, f"ppo:{self.run_dir / 'agent'}"),
                                   ("history", lambda: write_history(self.run_dir, self.history),
                                    str(self.run_dir / "history.json")),
                                   ("resume state", state, None)):
            try:
                write()
                written.append(f"{what} saved" + (f" as {where}" if where else ""))
            except (OSError, safetensors.SafetensorError) as err:
                failed.append(f"{what} not saved ({reason(err)}; the previous file is kept)")
        hint = f"continue with manni train --resume {self.run_dir}" if not failed else "free some space before resuming"
        return "; ".join(written + failed) + f"; {hint}"

    @contextlib.contextmanager
    def kept_if_stopped(self) -> Iterator[None]:
        """Keep the run (:meth:`keep`) if the block is stopped: Ctrl-C or a stop signal (said in one
        line, then raised again) or a failed rollout process (raised again as :class:`RunFailed`,
        whose message says what was kept)."""
        try:
            yield
        except (KeyboardInterrupt, RolloutProcessError) as stop:
            with deferred_interrupt():  # a second Ctrl-C or signal waits until everything is written
                self.progress.wall_time_s = self.wall_time()
                where = f"after {self.progress.steps:,} learner decisions ({self.progress.phase}): {self.keep()}"
                if isinstance(stop, RolloutProcessError):
                    raise RunFailed(f"{stop}; {where}") from None
                cause = "interrupted"
                if isinstance(stop, Stopped):
                    cause, stop.said = f"stopped by {stop}", True
                print(f"\n{cause} {where}", file=sys.stderr)
            raise


def reason(err: BaseException) -> str:
    """One line for a write error: ``[Errno 28] No space left on device``'s words."""
    if getattr(err, "strerror", None):
        return err.strerror
    return str(err).splitlines()[0][:200] if str(err) else type(err).__name__


A = TypeVar("A", bound=TrainArgs)


def resumed(args: A) -> A:
    """The saved arguments of the run in ``args.resume``, checked to be resumable (:func:`read`):
    :class:`ResumeError` if it is not (a path no file system takes, no run there, an ``args.json``
    of another trainer), :class:`Finished` if it is finished."""
    path = Path(args.resume)
    try:
        os.stat(path)
    except (OSError, ValueError) as err:  # before anything is read from the run: the path's own error (a NUL)
        if getattr(err, "errno", None) == errno.ENOENT:
            raise ResumeError(f"--resume {shortened(path)}: no run there (no such directory)") from None
        raise ResumeError(f"--resume {shortened(path)}: {reason(err)}") from None
    try:
        if not (path / "args.json").is_file():
            raise ResumeError(f"--resume {shortened(path)}: no run there (no args.json)")
        with (path / "args.json").open("rb") as f:
            text = f.read(MAX_META_BYTES + 1)
        if len(text) > MAX_META_BYTES:
            raise ValueError(f"larger than {MAX_META_BYTES:,} bytes")
        saved = json.loads(text)
        if not isinstance(saved, dict):
            raise ValueError("not a JSON object")
        # a run saved before --overlap (--torso) existed played its rollouts in the trainer's process
        # (with a critic of its own); one saved before --anneal-lr-to decayed its rate to 0
        run = type(args).from_dict({"overlap": False, "torso": "separate", "anneal_lr_to": 0.0, **saved,
                                    "resume": str(path), "runs_dir": str(path.parent), "run_name": path.name})
        if "critic_hidden" not in saved and getattr(run, "critic_hidden", None) is not None:
            run.critic_hidden = list(run.hidden)  # saved before --critic-hidden: the critic as wide as the actor
        run.check()
    except (OSError, ValueError, TypeError, RecursionError) as err:
        if isinstance(err, ResumeError):
            raise
        raise ResumeError(f"--resume {shortened(path)}: its args.json is not this trainer's ({reason(err)})") from None
    read(path)
    return run


def check_fresh(args: TrainArgs) -> None:
    """:class:`ResumeError` if the directory ``--run-name`` or ``--out`` names holds a run already
    (:data:`KEPT`): a run from step 0 there would overwrite it (a second terminal, a name used twice)."""
    path = args.named_dir()
    kept = [] if path is None else kept_files(path)  # (a run named from the time: a new directory)
    if kept:
        raise ResumeError(f"{shortened(path)} holds a run already ({', '.join(kept)}): continue it with "
                          f"manni train --resume {shortened(path)}, or give the new run another --run-name")


@contextlib.contextmanager
def run_lock(args: TrainArgs) -> Iterator[None]:
    """Hold ``RUN_DIR/.train.lock`` while a named run (``--run-name``, ``--out``) or a resumed one trains:
    :class:`ResumeError` if another ``manni train`` holds it (two terminals on one run would each
    write its files). The lock is the operating system's, so a process that dies releases it."""
    path = Path(args.resume) if args.resume is not None else args.named_dir()
    try:
        if path is not None and args.resume is None:
            path.mkdir(parents=True, exist_ok=True)
        lockable = path is not None and path.is_dir()
    except OSError:  # (a path the system refuses: the run's own reading or writing says why)
        lockable = False
    if not lockable:  # (a new run named from the time, in a directory of its own; a --resume of nothing)
        yield
        return
    lock = FileLock(path / LOCK_FILE, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        advice = "" if args.resume is not None else ", or give this run another --run-name"
        raise ResumeError(f"{shortened(path)} is being trained by another manni train right now: wait for it to "
                          f"end{advice}") from None
    try:
        yield
    finally:
        lock.release()


def command(train: Callable[[A], TrainResult], args: A, prog: str, refused: tuple[type[Exception], ...] = ()) -> int:
    """A vector trainer's command: ``train(args)`` (with ``--resume``, on the run's saved arguments) and
    its report, under :func:`~manni_env.interrupts.stop_signals`. The exit code: 0; 2 for a run that
    cannot be resumed or an error of ``refused`` (one line); 1 when training failed (one line, the
    run kept); 128 + the signal's number when a stop signal stopped it (the run kept, as said)."""
    try:
        with stop_signals(), run_lock(args):
            if args.resume is None:
                check_fresh(args)
            print(report(train(resumed(args) if args.resume is not None else args)))
    except Finished as done:
        print(done)
    except (ResumeError, *refused) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except RunFailed as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    except Stopped as stop:
        if not stop.said:  # (before training or after it: nothing to keep)
            print(f"{prog}: stopped by {stop}", file=sys.stderr)
        return 128 + stop.signum
    return 0
