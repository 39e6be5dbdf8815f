"""Self-play MaskablePPO training (train/ppo_sb3.py): a seeded smoke run, export fidelity, resume,
checkpoint errors; and ``manni train``, the one training command with the options every trainer shares."""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import numpy as np
import pytest
import torch

from manni_agents.envs import single_agent_env
from manni_agents.evaluation.arena import run_arena
from manni_agents.evaluation.vector_arena import checkpoint_policy
from manni_agents.ppo_agent import CheckpointError, PPOAgent
from manni_env.cli import main
from manni_env.rules import make_rules
from manni_train.args import TRAINERS, TrainArgs, parse_args
from manni_train.ppo_sb3 import Args, actor_layers, load_training_checkpoint, train
from manni_train.reporting import evaluate

pytestmark = pytest.mark.slow


def smoke_args(tmp_path, **changes) -> Args:
    """A run of a few seconds: a short imitation warm start, then one PPO rollout per env."""
    base = dict(
        run_name="smoke", runs_dir=str(tmp_path), seed=3, total_steps=1024, num_envs=2, num_steps=256,
        minibatch_size=256, update_epochs=2, hidden=[64, 64], bc_samples=6000, bc_epochs=6, snapshot_every=512,
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
    assert json.loads((run / "history.json").read_text()) == smoke_run.history
    header = (run / "tb" / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"losses/approx_kl", "losses/clipfrac", "losses/explained_variance"} <= set(header)  # the fast trainer's names
    # evaluated on the duplicate deals every trainer uses: the final entry is the exported agent's score there
    shared = evaluate(checkpoint_policy(smoke_run.agent, make_rules()), smoke_args(run.parent), 1024, 0.0)
    assert {k: v for k, v in shared.items() if k.startswith("vs_")} == {
        k: v for k, v in smoke_run.history[-1].items() if k.startswith("vs_")}
    meta = json.loads((run / "agent.json").read_text())
    assert meta["training"]["args"]["seed"] == 3 and meta["training"]["timesteps"] == 1024
    spec = f"ppo:{smoke_run.agent}"
    result = run_arena([spec, "random", "random"], make_rules(), deals=24, seed=77, progress=False)
    score = next(a for a in result.agents if a.spec == spec).deal_score
    assert score.low > 0.0, f"the trained agent does not beat random: {score}"


def test_exported_actor_matches_the_sb3_policy(tmp_path):
    from sb3_contrib import MaskablePPO

    env = single_agent_env(opponents=("random", "random"), seed=0)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32, 16], "activation_fn": torch.nn.ReLU},
                        seed=0, device="cpu")
    from manni_train.ppo_sb3 import export_agent

    path = export_agent(model, tmp_path / "net", smoke_args(tmp_path, hidden=[32, 16]), 0, 0.0)
    agent = PPOAgent(path)
    obs = np.stack([env.reset(seed=s)[0] for s in range(5)])
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs))
    ours = torch.log_softmax(torch.as_tensor(agent.logits(obs)), dim=-1).numpy()
    assert np.allclose(ours, dist.distribution.logits.numpy(), atol=1e-5)  # SB3 keeps normalized logits
    assert len(actor_layers(model)) == 3


def test_resume_continues_the_run(tmp_path):
    first = train(smoke_args(tmp_path, run_name="r", total_steps=512, bc_samples=0, final_eval_deals=2,
                             eval_every=0, snapshot_every=0))
    latest = first.run_dir / "checkpoints" / "latest.pt"
    data = load_training_checkpoint(latest)
    assert data["num_timesteps"] == 512
    second = train(smoke_args(tmp_path, run_name="ignored", total_steps=1024, resume=str(latest),
                              final_eval_deals=2))
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
    weights.write_bytes(smoke_run.agent.with_suffix(".safetensors").read_bytes()[:-64])
    (tmp_path / "agent.json").write_text(smoke_run.agent.with_suffix(".json").read_text())
    with pytest.raises(CheckpointError, match="agent.safetensors: checksum mismatch"):
        PPOAgent(weights)


def test_saved_arguments_round_trip_and_unknown_fields_are_named():
    args = Args(total_steps=5000, learning_rate=3e-4, hidden=[64], bc_lr=1e-2, seed=4)
    assert Args.from_dict(dataclasses.asdict(args)) == args
    with pytest.raises(ValueError, match="does not know: net_arch, total_timesteps"):
        Args.from_dict({"total_timesteps": 5000, "net_arch": [64], "seed": 4})


def test_saved_arguments_of_release_0_2_load_under_the_new_names():
    """A 0.2.0 SB3 checkpoint's arguments: its PPO names and opponent shares (the rest rule_based)."""
    old = {"lr": 2e-4, "n_steps": 128, "batch_size": 64, "n_epochs": 3, "clip_range": 0.1, "p_snapshot": 0.3,
           "p_random": 0.1, "seed": 4}
    args = Args.from_dict(old)
    assert (args.learning_rate, args.num_steps, args.minibatch_size, args.update_epochs, args.clip_coef) == (
        2e-4, 128, 64, 3, 0.1)
    assert args.mix() == pytest.approx({"snapshot": 0.3, "rule_based": 0.6, "random": 0.1})
    args.check()


@pytest.mark.parametrize("trainer", TRAINERS)
def test_every_trainer_takes_the_shared_options(trainer):
    module = pytest.importorskip(TRAINERS[trainer])  # the ray trainer needs ray
    assert issubclass(module.Args, TrainArgs)
    shared = ["--total-steps", "700", "--learning-rate", "0.002", "--hidden", "48", "24", "--runs-dir", "out",
              "--run-name", "r1", "--seed", "5", "--variant", "basic", "--target", "3", "--negative", "--max-deals", "9",
              "--history", "full", "--final-eval-deals", "0"]
    args = parse_args(module.Args, shared)
    assert (args.total_steps, args.learning_rate, args.hidden, args.runs_dir, args.run_name, args.seed) == (
        700, 0.002, [48, 24], "out", "r1", 5)
    assert args.rules() == make_rules("basic", target=3, negative=True, max_deals=9)
    assert (args.history, args.final_eval_deals) == ("full", 0)


@pytest.mark.parametrize("trainer", TRAINERS)
def test_a_run_directory_is_named_by_the_trainer_option(trainer, tmp_path):
    """One vocabulary: ``--trainer vector`` writes ``runs/<variant>_vector_s<seed>_<time>``."""
    module = pytest.importorskip(TRAINERS[trainer])
    args = parse_args(module.Args, ["--runs-dir", str(tmp_path), "--variant", "basic", "--seed", "5"])
    assert module.Args.TRAINER == trainer and args.run_dir().name.startswith(f"basic_{trainer}_s5_")


def test_manni_train_picks_the_trainer_and_its_options(capsys):
    assert set(TRAINERS) == {"vector", "sb3", "rllib", "ray"}
    helps = {}
    for trainer in [t for t in TRAINERS if t != "ray" or importlib.util.find_spec("ray")]:
        with pytest.raises(SystemExit) as err:
            main(["train", "--trainer", trainer, "--help"])
        assert err.value.code == 0
        helps[trainer] = capsys.readouterr().out
        assert helps[trainer].startswith(f"usage: manni train --trainer {trainer} [options]")
        assert "--total-steps" in helps[trainer] and "--hidden" in helps[trainer] and "--variant" in helps[trainer]
    assert "--num-envs" in helps["vector"] and "--bc-teacher" in helps["sb3"] and "--num-env-runners" in helps["rllib"]
    if "ray" in helps:  # with ray installed
        assert "--num-runners" in helps["ray"] and "--num-gpus-per-learner" in helps["ray"]
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert capsys.readouterr().out == helps["vector"]  # the fast trainer is the default


@pytest.mark.parametrize("argv, message", [
    (["--trainer", "sb3", "--history", "everything"], "--history must be one of summary, full, got 'everything'"),
    (["--trainer", "sb3", "--opponent-mix", "snapshot=0.8,random=0.5"], "the shares sum to 1.3, more than 1"),
    (["--trainer", "rllib", "--opponent-mix", "nobody=0.5"], "unknown opponent 'nobody'; valid opponents: snapshot, rule_based, random"),
    (["--lr", "0.001"], "--lr was renamed: use --learning-rate"),
    (["--trainer", "sb3", "--n-epochs=2"], "--n-epochs was renamed: use --update-epochs"),
    (["--trainer", "rllib", "--baseline-seats", "2"], "--baseline-seats was renamed: use --opponent-mix"),
    (["--variant", "trjamann", "--target", "5"], "option 'target' is not valid for variant 'trjamann'"),
    (["--hidden", "0"], "--hidden needs positive layer sizes"),
    (["--no-such-option", "1"], "unrecognized arguments: --no-such-option 1"),
    (["--trainer", "keras"], "argument --trainer: invalid choice: 'keras'"),
])
def test_bad_training_options_exit_with_code_2_and_one_message(argv, message, capsys):
    with pytest.raises(SystemExit) as err:
        main(["train", *argv])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert message in lines[-1] and len(lines) == 2  # the usage line, then the problem
