"""The fast trainer's rollouts in a process of their own, beside the update (``--overlap``).

:class:`ProcessSampler` runs one :class:`~manni_train.vector_rollout.VectorRollout` in a child
process with one torch thread. With ``overlap`` (the fast trainer's ``--overlap``) the next rollout
starts, with the actor the learner has at that moment, as soon as the previous one is handed
over, so it plays while the learner updates on that one: an iteration takes the longer of the
rollout and the update, not their sum, and each rollout's actor is one update old (PPO's
ratios are taken against the policy that sampled; the Ray trainer's ``--overlap`` and Cleanba's
one-update-stale actors do the same). Without ``overlap`` it collects one rollout per call, as the
in-process rollout does (the same batches: tested).

The child only plays (:meth:`~manni_train.vector_rollout.VectorRollout.play`, the actor's forward
passes); the critic's values and the GAE of each rollout (:meth:`~manni_train.vector_rollout.Played.batch`)
are computed here, in the update's process, with the critic of the latest update and all of a
rollout's decisions in one batch: at one update epoch the update takes less time than a rollout, so
this moves work from the slower process to the faster one.

Nothing large goes through the pipe between the processes: the learner's rows and trajectories are
written to two sets of shared-memory buffers used in turn (the child fills one while the update reads
the other), and the weights to the child's actor, which lives in shared memory and is written only
while the child waits for its next order. The child ignores Ctrl-C and a closed terminal's SIGHUP
(the trainer keeps the run and then stops it) and leaves quietly when the trainer is gone. A child
that dies or fails is reported as one error line (:class:`RolloutProcessError`), not waited for,
and so is one that goes silent: it beats a shared counter while it starts and at every vector
step, and one that stops beating for :data:`SILENCE_S` (stopped with SIGSTOP, stuck) is killed.

The shared buffers take about 96 MB of ``/dev/shm`` on the defaults (:meth:`ProcessSampler.shared_bytes`);
:meth:`ProcessSampler.fits` checks, before training, that ``/dev/shm`` has room for them (a Docker
container has 64 MB unless given more: ``docker run --shm-size=256m``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import dataclass

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn

from manni_agents.rule_based_vector import VectorRuleBased
from manni_env.interrupts import TERMINAL_SIGNALS, deferred_interrupt, interrupt_ignored
from manni_env.observation import ObservationEncoder
from manni_train.networks import Actor, Critic
from manni_train.precision import compute_dtype
from manni_train.vector_rollout import LearnerRows, Paths, Played, RolloutBatch, VectorRollout

#: how long the child may go without a heartbeat (starting, or playing a vector step) before it is killed
SILENCE_S = 15.0
#: how long the child may take to start before it is killed (it beats once it has loaded Python and torch)
START_TIMEOUT_S = 300.0
#: how long a closing child may take to finish its rollout and exit before it is killed
CLOSE_TIMEOUT_S = 30.0
#: how often the trainer looks at a child it waits for
POLL_S = 0.5
#: where torch's shared memory lives (Linux)
SHM_DIR = "/dev/shm"
#: the share of room ``/dev/shm`` must have beyond the buffers' own size
SHM_MARGIN = 0.1


class RolloutProcessError(RuntimeError):
    """The rollout process failed or died; the message says how."""


def shm_free_bytes() -> int | None:
    """The room left in :data:`SHM_DIR` (``None`` where there is none: not Linux)."""
    try:
        stat = os.statvfs(SHM_DIR)
    except (OSError, AttributeError):
        return None
    return stat.f_bavail * stat.f_frsize


def runner_seeds(seed: int, runners: int) -> list[int]:
    """Runner ``i``'s seed: word ``i`` of ``SeedSequence(seed)`` (the same whatever the runner count)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(runners)]


@dataclass
class _Shared:
    """What the child shares with the trainer: its slots of rows and paths, and its networks' tensors."""

    slots: list[LearnerRows]
    paths: list[Paths]
    actor: dict[str, torch.Tensor]  # the rollouts' actor
    snapshot: dict[str, torch.Tensor]  # the next snapshot's weights


class ProcessSampler:
    """The :class:`~manni_train.vector_rollout.Sampler` of one :class:`VectorRollout` in a child process
    (seeded with ``seed``, as the Ray trainer's runner of that seed); with ``overlap`` each rollout
    plays during the previous update. The child starts at :meth:`start` (the trainer calls it before
    its warm start, so that the child loads while the teacher's games are played) or else at the first
    :meth:`collect`; call :meth:`close` (or use the sampler as a context manager) to stop it."""

    def __init__(self, args, seed: int, overlap: bool):
        self.args, self.seed, self.overlap = args, seed, overlap
        self.obs_size = ObservationEncoder(args.rules(), args.history, args.observation).size
        self.process: mp.Process | None = None
        self.beats = None  # the child's heartbeat counter (shared)
        self.shared: _Shared | None = None
        self.pending = False  # a rollout under way
        self.snapshot: dict[str, torch.Tensor] | None = None  # weights to add to the pool before the next rollout
        self.cpu_seconds = 0.0  # the child's CPU time in its rollouts so far

    def __enter__(self) -> ProcessSampler:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def collect(self, actor: Actor, critic: Critic) -> RolloutBatch:
        """A rollout played with ``actor``, valued with ``critic``; with ``overlap`` the rollout started at
        the previous call (an actor one update old; at the first call, this one), and the next one
        starts now."""
        if not self.pending:
            self._launch(actor)
        played = self._receive()
        if self.overlap:
            self._launch(actor)
        return played.batch(critic, self.args)

    def shared_bytes(self, actor: Actor) -> int:
        """The shared memory the child takes: its two slots of rows and paths, and two actors (float32)."""
        args, dtype, unseen = self.args, compute_dtype(self.args.precision), self.args.critic == "deal"
        rows = LearnerRows.nbytes(args.num_envs * args.num_steps, self.obs_size, dtype, unseen, args.search_share > 0)
        paths = Paths.nbytes(args.num_steps, args.num_envs, self.obs_size, dtype, unseen)
        return 2 * (rows + paths) + 2 * 4 * sum(p.numel() for p in actor.parameters())

    def fits(self, actor: Actor) -> bool:
        """Whether :data:`SHM_DIR` has room for :meth:`shared_bytes` (and :data:`SHM_MARGIN` more);
        if not, say so in one line on stderr, with the fix."""
        free, need = shm_free_bytes(), self.shared_bytes(actor)
        if free is None or free >= need * (1 + SHM_MARGIN):
            return True
        print(f"manni train: {SHM_DIR} has {free / 1e6:,.1f} MB free but the rollout process needs about "
              f"{need / 1e6:,.1f} MB: the rollouts play in this process, as with --no-overlap (slower); give "
              f"{SHM_DIR} more room for them, e.g. docker run --shm-size=256m (docs/training.md)", file=sys.stderr)
        return False

    def add_snapshot(self, actor: Actor) -> None:
        """Add a frozen copy of ``actor`` to the child's pool before its next rollout."""
        self.snapshot = {k: v.detach().clone() for k, v in actor.state_dict().items()}

    def close(self) -> None:
        """Stop the child: it finishes a rollout under way first (not used), or is killed after
        :data:`CLOSE_TIMEOUT_S`."""
        if self.process is None:
            return
        try:
            if self.shared is None:  # take its "ready" off the pipe first
                self._wait("start", CLOSE_TIMEOUT_S)
            if self.pending:  # take the rollout under way off the pipe, where the child waits to hand it over
                self._wait("last rollout", CLOSE_TIMEOUT_S)
            with deferred_interrupt():
                self.conn.send(("close",))
        except (OSError, ValueError, RolloutProcessError):  # the child is gone already
            pass
        process, self.process, self.pending = self.process, None, False
        process.join(CLOSE_TIMEOUT_S)
        if process.is_alive():
            process.kill()
            process.join()
        self.conn.close()

    def start(self) -> None:
        """Start the child without waiting for it (it loads Python, torch and its games meanwhile)."""
        if self.process is not None:
            return
        context = mp.get_context("spawn")  # not fork: a forked child may hang in the parent's thread pools
        self.conn, child = context.Pipe()
        self.beats = context.RawValue("Q", 0)
        self.process = context.Process(target=_serve, args=(child, self.args, self.seed, self.beats), daemon=True,
                                       name="manni-rollouts")
        with interrupt_ignored():  # Ctrl-C and SIGHUP are the trainer's, also while the child starts
            self.process.start()
        child.close()

    def _launch(self, actor: nn.Module) -> None:
        """Write the actor's weights (and a pending snapshot) to the waiting child and start its next rollout."""
        self.start()
        if self.shared is None:
            self.shared = self._wait("start", START_TIMEOUT_S)
        shared = self.shared
        with torch.no_grad():
            for name, tensor in actor.state_dict().items():
                shared.actor[name].copy_(tensor)
            if self.snapshot is not None:
                for name, tensor in self.snapshot.items():
                    shared.snapshot[name].copy_(tensor)
        try:
            with deferred_interrupt():  # (a message cut in half by a stop signal would leave the pipe out of step)
                self.conn.send(("collect", self.snapshot is not None))
                self.snapshot, self.pending = None, True
        except OSError:  # the child is gone (a closed pipe)
            raise self._stopped("before its rollout") from None

    def _receive(self) -> Played:
        turn, steps, tails, deal_scores, seconds, cpu_seconds = self._wait("rollout")
        self.cpu_seconds += cpu_seconds
        return Played(self.shared.slots[turn].first(steps), self.shared.paths[turn], tails, deal_scores, seconds,
                      cpu_seconds)

    def _wait(self, what: str, timeout_s: float | None = None):
        """The child's next reply; :class:`RolloutProcessError` if it failed or died, or if it went
        without a heartbeat for :data:`SILENCE_S` or sent nothing for ``timeout_s`` (then it is killed).
        Both count this process's waiting, so that a pause of both (Ctrl-Z, then ``fg``) is no silence."""
        waited = quiet = 0.0
        beats = self.beats.value
        try:
            while not self.conn.poll(POLL_S):
                if not self.process.is_alive():
                    raise EOFError
                waited += POLL_S
                if self.beats.value != beats:
                    beats, quiet = self.beats.value, 0.0
                elif beats:  # (from its first beat: Python and torch load first)
                    quiet += POLL_S
                if quiet > SILENCE_S or (timeout_s is not None and waited > timeout_s):
                    self.process.kill()
                    how = f"went silent for {SILENCE_S:.0f} s" if quiet > SILENCE_S else f"sent nothing for {timeout_s:.0f} s"
                    raise RolloutProcessError(f"the rollout process {how} during its {what} (stopped or stuck): "
                                              "it was killed")
            with deferred_interrupt():  # (a message cut in half by a stop signal would leave the pipe out of step)
                kind, payload = self.conn.recv()
                self.pending = False
        except (EOFError, OSError):  # the child is gone (its end of the pipe closed with it)
            raise self._stopped(f"during its {what}") from None
        if kind == "error":
            raise RolloutProcessError(f"the rollout process failed: {payload}")
        return payload

    def _stopped(self, when: str) -> RolloutProcessError:
        """The error of a child that is gone, with its exit code."""
        self.process.join(CLOSE_TIMEOUT_S)
        return RolloutProcessError(f"the rollout process stopped {when} (exit code {self.process.exitcode})")


def _serve(conn, args, seed: int, beats) -> None:
    """The child: build the rollout and its shared networks, then play a rollout per order, beating
    ``beats`` while it starts and at every vector step; it leaves quietly when the trainer is gone."""
    for signum in TERMINAL_SIGNALS:  # (blocked already where the trainer started it from its main thread)
        signal.signal(signum, signal.SIG_IGN)
    torch.set_num_threads(1)
    started = threading.Event()

    def beat() -> None:
        beats.value += 1

    def beat_while_starting() -> None:
        while not started.wait(0.5):
            beat()

    threading.Thread(target=beat_while_starting, daemon=True, name="heartbeat").start()
    try:
        # the rule-based agent's kernel first (the teacher and an opponent): on a first run this
        # process compiles it while the trainer compiles the env's kernels, and each loads the other's
        VectorRuleBased().compile(args.rules())
        rollout = VectorRollout(args, torch.Generator().manual_seed(seed), np.random.default_rng(seed), seed, slots=2,
                                on_step=beat)
        for buffers in (*rollout.slots, *rollout.paths):
            buffers.share_memory_()
        actor, snapshot = (Actor(rollout.obs_size, args.hidden, args.activation).share_memory() for _ in range(2))
        conn.send(("ready", _Shared(rollout.slots, rollout.paths, actor.state_dict(), snapshot.state_dict())))
        started.set()
        while True:
            order = conn.recv()
            if order[0] == "close":
                return
            if order[1]:
                rollout.add_snapshot(snapshot)
            turn = rollout.turn
            played = rollout.play(actor)
            conn.send(("rollout", (turn, played.rows["actions"].shape[0], played.tails, played.deal_scores,
                                   played.seconds, played.cpu_seconds)))
    except (EOFError, ConnectionError):  # the trainer is gone (a closed or reset pipe)
        return
    except Exception as err:  # noqa: BLE001 - reported to the trainer as one line
        try:
            conn.send(("error", f"{type(err).__name__}: {err}"))
        except OSError:  # the trainer is gone too
            pass
