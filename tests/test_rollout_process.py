"""The rollout process of ``--overlap`` (train/rollout_process.py): without overlap it gives the
in-process rollout's batches; with overlap each rollout plays with the weights of the call before
and takes the snapshots in the same order; a run is reproducible; the child's failure or death is
one clear error; Ctrl-C stops the child and keeps the run.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.interrupts import alive, interrupt_when_written, manni  # noqa: E402
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


def test_with_overlap_each_rollout_plays_the_weights_of_the_call_before():
    args = Args(**TINY)
    local = VectorRollout(args, torch.Generator().manual_seed(5), np.random.default_rng(5), 5)
    weights = [networks(args, k) for k in range(3)]
    with ProcessSampler(args, 5, overlap=True) as sampler:
        assert same_batch(sampler.collect(*weights[0]), local.collect(*weights[0]))  # the first: these weights
        sampler.add_snapshot(weights[1][0])
        assert same_batch(sampler.collect(*weights[1]), local.collect(*weights[0]))  # started with weights[0]
        local.add_snapshot(weights[1][0])  # the snapshot reaches the rollout after that
        assert same_batch(sampler.collect(*weights[2]), local.collect(*weights[1]))


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
