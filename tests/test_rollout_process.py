"""The rollout process of ``--overlap`` (train/rollout_process.py): without overlap it gives the
in-process rollout's batches; with overlap each rollout plays with the actor of the call before
(valued with the critic of its own call) and takes the snapshots in the same order; a run is
reproducible; the child's failure, death or silence is one clear error; a /dev/shm too small is
found before training; whatever stops a run (Ctrl-C, SIGTERM, SIGHUP, the child killed) keeps it,
and a child whose trainer died leaves quietly.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.interrupts import alive, children_of, interrupt_when_written, manni  # noqa: E402
from manni_env.interrupts import Stopped, interrupt_ignored, stop_signals  # noqa: E402
from manni_train import rollout_process  # noqa: E402
from manni_env.observation import ObservationEncoder  # noqa: E402
from manni_train.networks import Actor, Critic  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402
from manni_train.rollout_process import ProcessSampler, RolloutProcessError, runner_seeds  # noqa: E402
from manni_train.threads import ThreadFitter  # noqa: E402
from manni_train.vector_rollout import TENSORS, VectorRollout  # noqa: E402

TINY = dict(num_envs=12, num_steps=16, hidden=[16], snapshot_every=200, pool_size=2, eval_every=0, eval_deals=4,
            opponent_mix="snapshot=0.3,rule_based=0.4,random=0.1", bc_samples=300, bc_epochs=1,
            final_eval_deals=4, final_pimc_deals=0, torch_threads=1, progress_bar=False)


def networks(args: Args, seed: int) -> tuple[Actor, Critic]:
    torch.manual_seed(seed)
    size = ObservationEncoder(args.rules(), args.history, args.observation).size
    return Actor(size, args.hidden, args.activation), Critic(size, args.hidden, args.activation)


def same_batch(a, b) -> bool:
    return all(torch.equal(getattr(a, name), getattr(b, name)) for name in TENSORS
               if getattr(a, name) is not None) and a.deal_scores == b.deal_scores


@pytest.mark.parametrize("variant", ["hornafjardar", "laugarvatn"])
def test_without_overlap_the_process_gives_the_in_process_batches(variant):
    args = Args(variant=variant, **TINY)
    local = VectorRollout(args, torch.Generator().manual_seed(5), np.random.default_rng(5), 5)
    with ProcessSampler(args, 5, overlap=False) as sampler:
        for k in range(3):
            actor, critic = networks(args, k)  # new weights every rollout
            if k == 2:  # and a snapshot before the last
                local.add_snapshot(actor)
                sampler.add_snapshot(actor)
            assert same_batch(sampler.collect(actor, critic), local.collect(actor, critic))


def test_with_overlap_each_rollout_plays_the_actor_of_the_call_before_and_is_valued_by_the_critic_given():
    args = Args(**TINY)
    local = VectorRollout(args, torch.Generator().manual_seed(5), np.random.default_rng(5), 5)
    weights = [networks(args, k) for k in range(3)]
    with ProcessSampler(args, 5, overlap=True) as sampler:
        assert same_batch(sampler.collect(*weights[0]), local.collect(*weights[0]))  # the first: these weights
        sampler.add_snapshot(weights[1][0])
        # started with the actor of weights[0], valued now with the critic of weights[1]
        assert same_batch(sampler.collect(*weights[1]), local.collect(weights[0][0], weights[1][1]))
        local.add_snapshot(weights[1][0])  # the snapshot reaches the rollout after that
        assert same_batch(sampler.collect(*weights[2]), local.collect(weights[1][0], weights[2][1]))


def test_an_overlapped_run_is_reproducible_and_its_process_stops(tmp_path):
    agents = []
    for name in ("a", "b"):
        result = train(Args(overlap=True, total_steps=1200, runs_dir=str(tmp_path), run_name=name, **TINY))
        agents.append((result.agent.parent / "agent.safetensors").read_bytes())
        meta = json.loads((result.agent.parent / "agent.json").read_text())
        assert meta["training"]["timesteps"] == result.steps >= 1200
    assert agents[0] == agents[1]
    assert not [p for p in multiprocessing.active_children() if p.name == "manni-rollouts"]


def test_closing_takes_the_rollout_under_way_and_the_process_exits_by_itself():
    args = Args(**{**TINY, "num_envs": 1024, "num_steps": 64})  # a rollout larger than the pipe's buffers
    sampler = ProcessSampler(args, 1, overlap=True)
    sampler.collect(*networks(args, 0))
    process = sampler.process
    start = time.monotonic()
    sampler.close()
    assert process.exitcode == 0 and time.monotonic() - start < 10


def test_a_process_started_early_plays_the_same_rollouts_and_closes_before_any():
    """The trainer starts the child before its warm start: the rollouts are those of a child started at
    the first rollout, and a run stopped before any rollout still stops its child."""
    args = Args(**TINY)
    actor, critic = networks(args, 0)
    batches = []
    for early in (False, True):
        with ProcessSampler(args, 5, overlap=False) as sampler:
            if early:
                sampler.start()
                time.sleep(0.5)  # (still loading, or waiting with its "ready")
            batches.append(sampler.collect(actor, critic))
    assert same_batch(*batches)
    sampler = ProcessSampler(args, 5, overlap=True)
    sampler.start()
    process = sampler.process
    sampler.close()
    assert process.exitcode == 0 and sampler.process is None


def test_a_stop_signal_halfway_through_a_reply_leaves_the_pipe_in_step():
    """SIGTERM after a rollout's header is read and before its body: the stop is raised once the whole
    reply is read, so closing (which takes a rollout under way off the pipe) finds the pipe in step
    and the child exits by itself (it had blocked the trainer for good in CI)."""
    args = Args(**TINY)
    sampler = ProcessSampler(args, 1, overlap=True)
    sampler.collect(*networks(args, 0))
    conn, read = sampler.conn, sampler.conn._recv

    def signalled_after_the_header(size, *rest):
        data = read(size, *rest)
        if size == 4:
            conn._recv = read
            os.kill(os.getpid(), signal.SIGTERM)
        return data

    conn._recv = signalled_after_the_header
    process = sampler.process
    with pytest.raises(Stopped), stop_signals():
        sampler.collect(*networks(args, 0))
    start = time.monotonic()
    sampler.close()
    assert process.exitcode == 0 and time.monotonic() - start < 10


def test_a_dead_or_failing_rollout_process_is_one_clear_error():
    args = Args(**TINY)
    actor, critic = networks(args, 0)
    with ProcessSampler(args, 1, overlap=True) as sampler:
        sampler.collect(actor, critic)
        os.kill(sampler.process.pid, signal.SIGKILL)
        with pytest.raises(RolloutProcessError, match=r"^the rollout process stopped during its rollout \(exit code -9\)$"):
            sampler.collect(actor, critic)
    failing = Args(**{**TINY, "opponents": ["no_such_agent", "random"]})  # (unchecked: fails in the child)
    with ProcessSampler(failing, 1, overlap=False) as sampler:
        with pytest.raises(RolloutProcessError, match="^the rollout process failed: .*no_such_agent"):
            sampler.collect(actor, critic)


def test_a_rollout_process_dead_between_two_rollouts_is_the_same_clear_error():
    """Dead while this process updated: the next order finds the pipe closed (not a BrokenPipeError,
    which the manni command would take for a closed output and end quietly)."""
    args = Args(**TINY)
    actor, critic = networks(args, 0)
    with ProcessSampler(args, 1, overlap=False) as sampler:
        sampler.collect(actor, critic)
        os.kill(sampler.process.pid, signal.SIGKILL)
        sampler.process.join(10)
        with pytest.raises(RolloutProcessError, match=r"^the rollout process stopped before its rollout \(exit code -9\)$"):
            sampler.collect(actor, critic)


def test_runner_seeds_do_not_depend_on_the_runner_count():
    assert runner_seeds(7, 3) == runner_seeds(7, 5)[:3]


def test_the_fitter_keeps_the_reserved_cores_for_the_helper():
    before = torch.get_num_threads()
    try:
        fitter = ThreadFitter(every_s=0.0, first_sample_s=0.05, helper_cpu_s=lambda: 0.0)
        threads = fitter.threads
        assert fitter.reserve(1) == max(1, threads - 1) == torch.get_num_threads()
        assert fitter.reserve(1) == max(1, threads - 1)  # reserving again does not take another
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_ctrl_c_during_an_overlapped_run_keeps_it_and_stops_the_process(tmp_path):
    run = tmp_path / "run"
    argv = manni("train", "--overlap", "--runs-dir", str(tmp_path), "--run-name", "run", "--total-steps",
                 "100000000", "--num-envs", "16", "--num-steps", "24", "--hidden", "32", "--bc-samples", "400",
                 "--bc-epochs", "1", "--eval-every", "300", "--eval-deals", "4", "--final-pimc-deals", "0",
                 "--torch-threads", "1", "--no-progress-bar")
    interrupted = interrupt_when_written(argv, run / "history.json")
    assert interrupted.code == 130, interrupted
    assert "interrupted after" in interrupted.err and f"manni train --resume {run}" in interrupted.err
    assert "Traceback" not in interrupted.err
    assert json.loads((run / "resume.json").read_text())["phase"] == "ppo"
    deadline = time.monotonic() + 10  # the rollout process is gone with the trainer
    while any(alive(pid) for pid in interrupted.children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert interrupted.children and not any(alive(pid) for pid in interrupted.children)


def test_a_stopped_rollout_process_is_noticed_within_seconds(monkeypatch):
    """A child stopped with SIGSTOP (or stuck) beats no more: it is killed and named within
    SILENCE_S, not waited for half an hour."""
    monkeypatch.setattr(rollout_process, "SILENCE_S", 2.0)
    args = Args(**TINY)
    actor, critic = networks(args, 0)
    with ProcessSampler(args, 1, overlap=False) as sampler:
        sampler.collect(actor, critic)
        os.kill(sampler.process.pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(RolloutProcessError, match=r"^the rollout process went silent for 2 s during its rollout "
                                                      r"\(stopped or stuck\): it was killed$"):
            sampler.collect(actor, critic)
        assert time.monotonic() - start < 6
        sampler.process.join(5)
        assert not sampler.process.is_alive()


def test_a_pause_of_the_trainer_is_no_silence(monkeypatch):
    """Ctrl-Z stops both processes, and after ``fg`` the trainer may look before the child has beaten
    again: only the trainer's own waiting counts towards the silence, not the time it was stopped."""
    monkeypatch.setattr(rollout_process, "SILENCE_S", 2.0)
    args = Args(**TINY)
    actor, critic = networks(args, 0)
    with ProcessSampler(args, 1, overlap=True) as sampler:
        sampler.collect(actor, critic)
        time.sleep(1.0)  # the next rollout is played and waits: no more beats until the next order
        poll, paused = sampler.conn.poll, []

        def poll_after_a_pause(timeout: float) -> bool:
            if not paused:  # this process stopped for 3 s inside its wait, the child's beats unseen
                paused.append(True)
                time.sleep(3.0)
                return False
            return poll(timeout)

        monkeypatch.setattr(sampler.conn, "poll", poll_after_a_pause)
        assert sampler.collect(actor, critic).steps > 0 and paused


def test_a_dev_shm_too_small_is_found_before_training_and_the_rollouts_stay_in_process(tmp_path, monkeypatch, capsys):
    args = Args(overlap=True, total_steps=300, runs_dir=str(tmp_path), run_name="small", **TINY)
    sampler = ProcessSampler(args, 1, overlap=True)
    actor, critic = networks(args, 0)
    rollout = VectorRollout(args, torch.Generator(), np.random.default_rng(0), 1, slots=2)
    allocated = sum(t.nbytes for buffers in (*rollout.slots, *rollout.paths) for t in buffers.buffers().values()
                    if t is not None)
    assert sampler.shared_bytes(actor) == allocated + 2 * 4 * sum(p.numel() for p in actor.parameters())
    monkeypatch.setattr(rollout_process, "shm_free_bytes", lambda: 100_000)
    started = []
    monkeypatch.setattr(ProcessSampler, "start", lambda self: started.append(self))
    result = train(args)
    err = capsys.readouterr().err
    assert "/dev/shm has 0.1 MB free but the rollout process needs about" in err and "--shm-size" in err
    assert len([line for line in err.splitlines() if "/dev/shm" in line]) == 1
    assert not started and result.steps == 300
    assert json.loads((result.run_dir / "args.json").read_text())["overlap"] is False


def test_ctrl_c_while_processes_start_is_not_lost_and_they_ignore_it():
    """Ctrl-C just as the final arena starts its workers was dropped (they were started with SIGINT
    ignored, in this process too); now it is delivered after, and the workers still never take it."""
    context = multiprocessing.get_context("spawn")
    with pytest.raises(KeyboardInterrupt):
        with interrupt_ignored():
            child = context.Process(target=time.sleep, args=(30,))
            child.start()
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
    try:
        time.sleep(0.5)
        for signum in (signal.SIGINT, signal.SIGHUP):
            os.kill(child.pid, signum)
        time.sleep(1.0)
        assert child.is_alive()
    finally:
        child.kill()
        child.join()


ENDLESS = ("train", "--overlap", "--total-steps", "100000000", "--num-envs", "16", "--num-steps", "24", "--hidden",
           "32", "--bc-samples", "400", "--bc-epochs", "1", "--eval-every", "300", "--eval-deals", "4",
           "--final-pimc-deals", "0", "--torch-threads", "1", "--no-progress-bar")


def rollout_child(pid: int) -> int:
    """The rollout process among ``pid``'s children (not multiprocessing's resource tracker)."""
    found = [c for c in children_of(pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
    assert len(found) == 1, found
    return found[0]


def signal_during_ppo(run: Path, signum: int, to_child: bool) -> tuple[int, str, list[int]]:
    """Run an endless tiny ``manni train`` into ``run``; once it has evaluated during PPO, send ``signum``
    to it or to its rollout process; its exit code, stderr (its rollout process's too) and children."""
    proc = subprocess.Popen(manni(*ENDLESS, "--runs-dir", str(run.parent), "--run-name", run.name),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline, history = time.monotonic() + 90, run / "history.json"
        while not (history.exists() and history.stat().st_size) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        child = rollout_child(proc.pid)
        os.kill(child if to_child else proc.pid, signum)
        _, err = proc.communicate(timeout=60)  # until the rollout process, which shares stderr, is gone too
        return proc.returncode, err, [child]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("signum, to_child", [(signal.SIGKILL, True), (signal.SIGTERM, True),
                                              (signal.SIGTERM, False), (signal.SIGHUP, False)],
                         ids=["child SIGKILL", "child SIGTERM", "trainer SIGTERM", "trainer SIGHUP"])
def test_a_run_is_kept_whatever_stops_it(tmp_path, signum, to_child):
    """The rollout process killed, or the trainer sent SIGTERM (kill, timeout, docker stop) or SIGHUP
    (a closed terminal): one line, and the policy, the history and a resume state kept as on Ctrl-C."""
    run = tmp_path / "run"
    code, err, children = signal_during_ppo(run, signum, to_child)
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1, err
    if to_child:  # (it died during a rollout, or between two while this process updated)
        assert code == 1 and re.match(r"manni train --trainer vector: error: the rollout process stopped (during|before) "
                                      rf"its rollout \(exit code -{int(signum)}\); after ", lines[0]), lines[0]
    else:
        assert code == 128 + signum and lines[0].startswith(f"stopped by {signal.Signals(signum).name} after ")
    assert f"policy saved as ppo:{run / 'agent'}" in lines[0]
    assert f"continue with manni train --resume {run}" in lines[0]
    state = json.loads((run / "resume.json").read_text())
    assert state["phase"] == "ppo" and state["steps"] >= 300 and (run / "resume.safetensors").is_file()
    assert json.loads((run / "history.json").read_text())
    assert not any(alive(pid) for pid in children)


@pytest.mark.slow
def test_a_rollout_process_whose_trainer_died_leaves_quietly(tmp_path):
    """SIGKILL to the trainer: its rollout process finds the pipe closed and leaves without a
    ConnectionResetError or BrokenPipeError traceback."""
    code, err, children = signal_during_ppo(tmp_path / "run", signal.SIGKILL, to_child=False)
    assert code == -signal.SIGKILL and not err.strip(), err
    assert not any(alive(pid) for pid in children)
