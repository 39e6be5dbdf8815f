"""Self-play MaskablePPO training: a seeded smoke run, export fidelity, resume, CLI, checkpoint errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.arena import run_arena
from agents.ppo_agent import CheckpointError, PPOAgent
from manni_env.rules import make_rules
from manni_env.single_agent import SingleAgentManniEnv
from train.args import Args, check_args, parse_args
from train.ppo_sb3 import actor_layers, collect_demonstrations, load_training_checkpoint, train

pytestmark = pytest.mark.slow


def smoke_args(tmp_path, **changes) -> Args:
    """A run of a few seconds: a short imitation warm start, then one PPO rollout per env."""
    base = dict(
        run_name="smoke", runs_dir=str(tmp_path), seed=3, total_timesteps=1024, num_envs=2, n_steps=256,
        batch_size=256, n_epochs=2, net_arch=[64, 64], bc_samples=6000, bc_epochs=6, snapshot_every=512,
        eval_every=1024, eval_deals=2, final_eval_deals=4, checkpoint_every=0, progress_bar=False,
    )
    base.update(changes)
    return Args(**base)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    return train(smoke_args(tmp_path_factory.mktemp("runs")))


def test_smoke_run_writes_everything_and_beats_random(smoke_run):
    run = smoke_run.run_dir
    for name in ("args.json", "agent.safetensors", "agent.json", "learning_curve.png", "arena_final.md",
                 "arena_final.json", "checkpoints/latest.pt"):
        assert (run / name).is_file(), name
    assert list((run / "pool").glob("snapshot_*.safetensors"))
    assert list((run / "tb").glob("events.out.tfevents.*"))
    assert smoke_run.history and smoke_run.history[-1]["timesteps"] == 1024
    meta = json.loads((run / "agent.json").read_text())
    assert meta["training"]["args"]["seed"] == 3 and meta["training"]["timesteps"] == 1024
    spec = f"ppo:{smoke_run.agent_path.with_suffix('')}"
    result = run_arena([spec, "random", "random"], make_rules(), deals=24, seed=77, progress=False)
    score = next(a for a in result.agents if a.spec == spec).deal_score
    assert score.low > 0.0, f"the trained agent does not beat random: {score}"


def test_exported_actor_matches_the_sb3_policy(tmp_path):
    from sb3_contrib import MaskablePPO

    env = SingleAgentManniEnv(opponents=("random", "random"), seed=0)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32, 16], "activation_fn": torch.nn.ReLU},
                        seed=0, device="cpu")
    from train.ppo_sb3 import export_agent

    path = export_agent(model, tmp_path / "net", smoke_args(tmp_path, net_arch=[32, 16]), 0, 0.0)
    agent = PPOAgent(path)
    obs = np.stack([env.reset(seed=s)[0] for s in range(5)])
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs))
    ours = torch.log_softmax(torch.as_tensor(agent.logits(obs)), dim=-1).numpy()
    assert np.allclose(ours, dist.distribution.logits.numpy(), atol=1e-5)  # SB3 keeps normalized logits
    assert len(actor_layers(model)) == 3


def test_demonstrations_returns_sum_to_deal_scores():
    args = Args(reward="deal")
    data = collect_demonstrations(args, 500, seed=1)
    assert len(data["actions"]) >= 500
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()  # teacher moves are legal
    assert set(np.unique(data["returns"])) <= set(range(-8, 9))


def test_resume_continues_the_run(tmp_path):
    first = train(smoke_args(tmp_path, run_name="r", total_timesteps=512, bc_samples=0, final_eval_deals=1,
                             eval_every=0, snapshot_every=0))
    latest = first.run_dir / "checkpoints" / "latest.pt"
    data = load_training_checkpoint(latest)
    assert data["num_timesteps"] == 512
    second = train(smoke_args(tmp_path, run_name="ignored", total_timesteps=1024, resume=str(latest),
                              final_eval_deals=1))
    assert second.run_dir == first.run_dir  # the saved arguments (run name included) win
    assert load_training_checkpoint(latest)["num_timesteps"] == 1024
    assert [h["timesteps"] for h in second.history] == [512, 1024]


def test_broken_training_checkpoints_are_clear_errors(tmp_path):
    path = tmp_path / "latest.pt"
    path.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"latest.pt: not a readable training checkpoint"):
        load_training_checkpoint(path)
    torch.save({"format": "other"}, path)
    with pytest.raises(ValueError, match=r"latest.pt: not a manni-ppo-train/1 training checkpoint"):
        load_training_checkpoint(path)


def test_tampered_exported_agent_is_refused(smoke_run, tmp_path):
    weights = tmp_path / "agent.safetensors"
    weights.write_bytes(smoke_run.agent_path.read_bytes()[:-64])
    (tmp_path / "agent.json").write_text(smoke_run.agent_path.with_suffix(".json").read_text())
    with pytest.raises(CheckpointError, match="agent.safetensors: checksum mismatch"):
        PPOAgent(weights)


def test_arguments_and_cli(capsys):
    args = parse_args(["--total-timesteps", "5000", "--net-arch", "64", "32", "--no-progress-bar", "--seed", "9"])
    assert (args.total_timesteps, args.net_arch, args.progress_bar, args.seed) == (5000, [64, 32], False, 9)
    with pytest.raises(ValueError, match="--p-snapshot \\+ --p-random must not exceed 1"):
        check_args(Args(p_snapshot=0.8, p_random=0.5))
    from manni_env.cli import main

    with pytest.raises(SystemExit) as err:
        main(["train", "--history", "everything"])
    assert err.value.code == 2
    assert "--history must be one of summary, full" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "learner decisions to train for" in capsys.readouterr().out
