"""The Ray trainer (train/ray_vector.py) on a local Ray cluster: its runners are the fast trainer's
rollout, its remote learner is the fast trainer's update, two learners stay in step, and a tiny
2-runner run in a non-default variant is reproducible and exports an agent that plays the arena.

Needs ray (the ``rllib`` extra); skipped without it. Select with ``pytest -m rllib``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[rllib]'")
torch = pytest.importorskip("torch")

import ray  # noqa: E402

from manni_agents.evaluation.arena import run_arena  # noqa: E402
from manni_agents.registry import make_agent  # noqa: E402
from manni_env.cli import main  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402
from manni_train.learner import PPOLearner  # noqa: E402
from manni_train.networks import Actor, Critic, run_networks  # noqa: E402
from manni_train.ray_vector import ALGORITHM, Args, RaySampler, RemoteLearners, runner_seeds, train  # noqa: E402
from manni_train.resume import RunFailed  # noqa: E402
from manni_train.vector_rollout import VectorRollout  # noqa: E402

from helpers.records import write_games  # noqa: E402

pytestmark = pytest.mark.rllib

TINY = dict(num_envs=12, num_steps=16, hidden=[16], bc_samples=300, bc_epochs=1, snapshot_every=200, pool_size=2,
            opponent_mix="snapshot=0.3,rule_based=0.4,random=0.1", eval_every=0, eval_deals=4, torch_threads=1,
            progress_bar=False)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a running cluster
    yield
    ray.shutdown()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="--num-runners must be at least 1"):
        Args(num_runners=0).check()
    with pytest.raises(ValueError, match="--num-gpus-per-learner must not be negative"):
        Args(num_gpus_per_learner=-1).check()


def _batches_equal(a, b) -> bool:
    names = ("obs", "mask", "actions", "logp", "values", "advantages", "returns")
    return all(torch.equal(getattr(a, n), getattr(b, n)) for n in names) and a.deal_scores == b.deal_scores


def test_a_runner_is_the_fast_trainers_rollout_and_the_remote_learner_its_update(local_ray):
    args = Args(variant="basic", target=5, num_runners=1, **TINY)
    torch.manual_seed(0)
    actor, critic = Actor(616, [16], "relu"), Critic(616, [16], "relu")
    seed = runner_seeds(args.seed, 1)[0]
    local = VectorRollout(args, torch.Generator().manual_seed(seed), np.random.default_rng(seed), seed)
    remote = RaySampler(args)
    for _ in range(2):  # the second rollout continues the games of the first
        expected, got = local.collect(actor, critic), remote.collect(actor, critic)
        assert expected.steps > 0 and _batches_equal(expected, got)
    # the update in a Ray actor (no GPU here) is the update in this process, weights and losses
    gen = torch.Generator().manual_seed(3)
    seed = int(torch.randint(2**31, (1,), generator=torch.Generator().manual_seed(3)))
    here = PPOLearner(Actor(616, [16], "relu"), Critic(616, [16], "relu"), args, torch.Generator().manual_seed(seed))
    here.actor.load_state_dict(actor.state_dict())
    here.critic.load_state_dict(critic.state_dict())
    there = RemoteLearners(actor, critic, Args(variant="basic", target=5, num_learners=1, **TINY), gen)
    assert here.update(got, 1e-3) == there.update(got, 1e-3)
    assert all(torch.equal(a, b) for a, b in zip(here.actor.state_dict().values(), actor.state_dict().values()))
    assert all(torch.equal(a, b) for a, b in zip(here.critic.state_dict().values(), critic.state_dict().values()))


def test_two_learners_average_their_gradients_and_keep_the_same_weights(local_ray):
    args = Args(variant="trjamann", num_learners=2, **TINY)
    torch.manual_seed(1)
    actor, critic = run_networks(616, args)  # (Trjámann's critic: half the actor's width)
    batch = VectorRollout(args, torch.Generator().manual_seed(2), np.random.default_rng(2), 2).collect(actor, critic)
    before = {k: v.clone() for k, v in actor.state_dict().items()}
    group = RemoteLearners(actor, critic, args, torch.Generator().manual_seed(3))
    (_, (actor0, critic0)), (_, (actor1, critic1)) = ray.get(
        [h.update.remote(share, 1e-3, 2) for h, share in zip(group.learners, batch.split(2))])
    assert all(torch.equal(actor0[k], actor1[k]) for k in actor0)
    assert all(torch.equal(critic0[k], critic1[k]) for k in critic0)
    assert not all(torch.equal(actor0[k], before[k]) for k in before)
    losses = group.update(batch, 1e-3)  # through the group: this process's actor gets the learners' weights
    assert np.isfinite(list(losses.values())).all()
    assert not all(torch.equal(actor.state_dict()[k], actor0[k]) for k in actor0)


@pytest.mark.slow
def test_two_runners_train_reproducibly_and_export_a_playable_agent(local_ray, tmp_path):
    """Also with --overlap: rollouts under way while the learner updates change nothing in the result."""
    runs = [train(Args(runs_dir=str(tmp_path), run_name=f"r{i}", variant="laugarvatn", total_steps=600, num_runners=2,
                       overlap=True, final_eval_deals=2, **TINY)) for i in range(2)]
    first, second = runs
    assert first.steps >= 600 and first.steps == second.steps
    assert first.history[-1]["timesteps"] == first.steps and (first.run_dir / "learning_curve.png").is_file()
    assert set(first.final) == {"random", "rule_based"}
    weights = [(r.agent.parent / "agent.safetensors").read_bytes() for r in runs]
    assert weights[0] == weights[1]  # same seed, same runner count: the same agent
    agent = make_agent(f"ppo:{first.agent}")
    assert agent.meta["variant"] == "laugarvatn" and "ray_vector" in agent.meta["training"]["algorithm"]
    result = run_arena([f"ppo:{first.agent}", "rule_based", "random"], make_rules("laugarvatn"), deals=2, seed=1,
                       progress=False)
    assert len(result.games) == 2 * 6  # every seating played, every move legal (else it raises)


@pytest.mark.slow
def test_the_fast_trainers_overlap_is_the_ray_trainer_with_one_overlapped_runner(local_ray, tmp_path):
    from manni_train import ppo_vector

    same = dict(runs_dir=str(tmp_path), variant="trjamann", total_steps=600, overlap=True, final_eval_deals=2,
                minibatch_size=64, **TINY)
    fast = ppo_vector.train(ppo_vector.Args(run_name="fast", **same))
    on_ray = train(Args(run_name="ray", num_runners=1, **same))
    assert fast.steps == on_ray.steps and fast.history[-1]["timesteps"] == on_ray.history[-1]["timesteps"]
    assert ((fast.agent.parent / "agent.safetensors").read_bytes()
            == (on_ray.agent.parent / "agent.safetensors").read_bytes())


@pytest.mark.slow
def test_the_ray_trainer_warm_starts_from_records_as_the_fast_trainer_does(local_ray, tmp_path):
    """--warm-start-records with one overlapped runner: the same agent as the fast trainer's."""
    from manni_train import ppo_vector

    records = write_games(tmp_path / "games.jsonl", make_rules("basic", target=5))
    same = dict(runs_dir=str(tmp_path), variant="basic", target=5, total_steps=300, overlap=True, final_eval_deals=0,
                minibatch_size=64, warm_start_records=[str(records)], **TINY)
    fast = ppo_vector.train(ppo_vector.Args(run_name="fast", **same))
    on_ray = train(Args(run_name="ray", num_runners=1, **same))
    assert make_agent(f"ppo:{on_ray.agent}").meta["training"]["args"]["warm_start_records"] == [str(records)]
    assert ((fast.agent.parent / "agent.safetensors").read_bytes()
            == (on_ray.agent.parent / "agent.safetensors").read_bytes())


@pytest.mark.slow
def test_a_runner_that_dies_keeps_the_run_with_one_clear_error(local_ray, tmp_path):
    """A runner actor killed between two rollouts: the run is kept (policy, resume state) as when the
    fast trainer's rollout process dies, and the error says a Ray runner failed and what was kept."""
    from manni_train import ppo_vector

    args = Args(runs_dir=str(tmp_path), run_name="killed", variant="trjamann", total_steps=100_000, num_runners=1,
                final_eval_deals=0, **TINY)
    sampler = RaySampler(args)
    collected, collect = [], sampler.collect

    def killed_after_the_first(actor, critic):
        if collected:
            ray.kill(sampler.runners[0])
        collected.append(True)
        return collect(actor, critic)

    sampler.collect = killed_after_the_first
    with pytest.raises(RunFailed, match=r"^a Ray runner failed: .+; after [\d,]+ learner decisions \(ppo\): "):
        ppo_vector.train(args, sampler, PPOLearner, ALGORITHM)
    run = tmp_path / "killed"
    assert json.loads((run / "resume.json").read_text())["phase"] == "ppo" and (run / "agent.safetensors").is_file()


def test_resources_the_cluster_lacks_are_one_error_line(local_ray, tmp_path, capsys):
    argv = ["train", "--trainer", "ray", "--num-gpus-per-learner", "1", "--runs-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["manni train --trainer ray: error: --num-gpus-per-learner 1: the learners need 1 GPUs, "
                   "the Ray cluster has 0"]
    assert not any(tmp_path.iterdir())  # stopped before any work
    assert main(argv[:3] + ["--num-runners", "2", "--num-learners", "1", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("error: 2 runner(s) and 1 learner(s) need 3 CPUs, the Ray cluster has 2")
