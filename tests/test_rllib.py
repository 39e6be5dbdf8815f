"""The Ray RLlib integration: env contract, masking module, policy export, and a short real run.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); skipped without ray. Select with
``pytest -m rllib``. The training test starts a local Ray instance (2 CPUs), trains a few tiny
iterations with 2 env runners, saves and restores the checkpoint, and plays the exported policy
in a small duplicate arena, where any illegal move would raise.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="Ray RLlib is optional: pip install -e '.[rllib]'")
torch = pytest.importorskip("torch")

from manni_agents.envs import policy_factory  # noqa: E402
from manni_agents.evaluation.arena import run_arena  # noqa: E402
from manni_agents.ppo_agent import PPOAgent  # noqa: E402
from manni_agents.registry import make_agent  # noqa: E402
from manni_agents.rllib_agent import export_policy  # noqa: E402
from manni_env.engine import GameState, IllegalActionError  # noqa: E402
from manni_env.rllib_env import AGENTS, BASELINE_ACTION, MASK, OBS, ManniMultiAgentEnv  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402
from manni_train.args import parse_args  # noqa: E402
from manni_train.rllib_modules import MaskedPPOTorchRLModule, SeatMapping  # noqa: E402

pytestmark = pytest.mark.rllib


def _play(env: ManniMultiAgentEnv, rng: np.random.Generator, steps: int):
    """Random legal play; yields (agent, action, obs, rewards, terminated, truncated) per step."""
    obs, _ = env.reset(seed=int(rng.integers(1 << 30)))
    for _ in range(steps):
        ((agent, o),) = obs.items()
        action = int(rng.choice(np.flatnonzero(o[MASK])))
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        yield agent, action, obs, rewards, terminated["__all__"], truncated["__all__"]
        if terminated["__all__"] or truncated["__all__"]:
            obs, _ = env.reset()


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann"])
def test_turns_masks_and_deal_rewards(variant):
    env = ManniMultiAgentEnv({"variant": variant, "episode": "game", "seed": 3})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=11)
    ends = 0
    for _ in range(3000):
        assert list(obs) == [AGENTS[env.state.to_move]]  # only the agent on turn observes
        ((agent, o),) = obs.items()
        seat = AGENTS.index(agent)
        view = env.state.view(seat)
        assert np.flatnonzero(o[MASK]).tolist() == list(view.legal_actions)
        np.testing.assert_array_equal(o[OBS], env.encoder.encode(view))
        assert env.observation_spaces[agent].contains(o)
        deals = len(env.state.rounds)
        obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(view.legal_actions))})
        assert set(rewards) == set(AGENTS)
        if len(env.state.rounds) > deals:  # a deal ended: every seat gets its deal score
            assert [rewards[a] for a in AGENTS] == list(env.state.rounds[-1].points)
        else:
            assert set(rewards.values()) == {0.0}
        if terminated["__all__"] or truncated["__all__"]:
            assert env.state.finished and set(obs) == set(AGENTS)  # final observations for all
            assert truncated["__all__"] == env.state.truncated
            ends += 1
            obs, _ = env.reset()
    assert ends >= 1


def test_deal_episodes_continue_the_game():
    env = ManniMultiAgentEnv({"variant": "basic", "episode": "deal", "seed": 5})
    rng = np.random.default_rng(1)
    deals_seen = []
    for _, _, obs, rewards, terminated, _ in _play(env, rng, 400):
        if terminated:
            deals_seen.append(len(env.state.rounds))
            assert [rewards[a] for a in AGENTS] == list(env.state.rounds[-1].points) and set(obs) == set(AGENTS)
    # each episode is one deal, and the next episode is the next deal of the same game
    assert len(deals_seen) >= 3 and deals_seen[:3] == [1, 2, 3]


def test_bad_steps_raise_and_leave_the_state_unchanged():
    env = ManniMultiAgentEnv({"variant": "hornafjardar"})
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0})
    obs, _ = env.reset(seed=2)
    ((agent, o),) = obs.items()
    other = next(a for a in AGENTS if a != agent)
    before = env.state.to_dict()
    with pytest.raises(ValueError, match=f"it is {agent}'s turn"):
        env.step({other: 0})
    illegal = int(np.flatnonzero(o[MASK] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step({agent: illegal})
    assert env.state.to_dict() == before
    with pytest.raises(ValueError, match="episode must be one of"):
        ManniMultiAgentEnv({"episode": "trick"})
    with pytest.raises(ValueError, match="unknown env_config keys"):
        ManniMultiAgentEnv({"varient": "basic"})
    with pytest.raises(TypeError, match="zero-argument callable returning a Policy"):
        ManniMultiAgentEnv({"baseline": "rule_based"})  # the env package does not resolve agent specs
    with pytest.raises(TypeError, match="not a Policy"):
        ManniMultiAgentEnv({"baseline": dict})


def test_baseline_action_is_the_baseline_agents_move_for_the_seat_on_turn():
    env = ManniMultiAgentEnv({"variant": "hornafjardar", "baseline": policy_factory("rule_based"), "seed": 7})
    reference = make_agent("rule_based")  # deterministic: its move depends on the view only
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=4)
    for _ in range(300):
        ((agent, o),) = obs.items()
        view = env.state.view(AGENTS.index(agent))
        assert o[BASELINE_ACTION] == reference.act(view, rng)
        obs, _, terminated, truncated, _ = env.step({agent: int(o[BASELINE_ACTION])})
        if terminated["__all__"] or truncated["__all__"]:
            obs, _ = env.reset()


def test_seat_mapping_draws_each_seat_with_the_baseline_share_and_keeps_a_seat_for_main():
    class Episode:
        def __init__(self, id_):
            self.id_ = id_

    for share in (0.0, 1 / 3, 1.0):
        mapping = SeatMapping(share, "rule_based")
        counts = []
        for i in range(600):
            episode = Episode(f"episode-{i}")
            modules = [mapping(agent, episode) for agent in AGENTS]
            assert set(modules) <= {"rule_based", "main"} and "main" in modules
            assert modules == [mapping(agent, episode) for agent in AGENTS]  # stable within an episode
            counts.append([m == "rule_based" for m in modules])
        per_seat = np.mean(counts, axis=0)
        if share == 1.0:
            assert np.allclose(per_seat.sum(), 2.0) and (per_seat > 0.5).all()  # main keeps one seat, any seat
        else:  # the share of every seat, within sampling error
            assert np.allclose(per_seat, share, atol=0.07), per_seat
    with pytest.raises(ValueError, match="share must be a probability"):
        SeatMapping(1.5)


def test_rllib_learner_results_reach_tensorboard_under_the_shared_names():
    from manni_train.rllib_ppo import log_learner

    class Writer:
        def __init__(self):
            self.scalars = {}

        def add_scalar(self, name, value, step):
            self.scalars[name] = (value, step)

    writer = Writer()
    result = {"learners": {"main": {"mean_kl_loss": np.float32(0.01), "vf_explained_var": 0.5, "entropy": 1.2,
                                    "policy_loss": -0.1, "module_train_batch_size_mean": 4000, "note": "text"}}}
    log_learner(writer, result, 77)
    assert writer.scalars == {"losses/approx_kl": (pytest.approx(0.01), 77), "losses/explained_variance": (0.5, 77),
                              "losses/entropy": (1.2, 77), "rllib/policy_loss": (-0.1, 77),
                              "rllib/module_train_batch_size_mean": (4000.0, 77)}


def test_rllib_takes_the_shared_ppo_options_and_refuses_what_it_cannot_do():
    from manni_train.rllib_ppo import Args, rllib_options

    args = parse_args(Args, ["--learning-rate", "1e-3", "--num-steps", "300", "--num-envs", "2", "--num-env-runners",
                             "3", "--num-learners", "2", "--update-epochs", "5", "--minibatch-size", "64",
                             "--ent-coef", "0.02", "--clip-coef", "0.25", "--vf-coef", "0.7", "--gae-lambda", "0.9",
                             "--max-grad-norm", "0.4", "--opponent-mix", "random=0.5"])
    assert rllib_options(args) == {"train_batch_size_per_learner": 300 * 2 * 3 // 2, "minibatch_size": 64,
                                   "num_epochs": 5, "lr": 1e-3, "gamma": 0.995, "lambda_": 0.9, "clip_param": 0.25,
                                   "vf_loss_coeff": 0.7, "entropy_coeff": 0.02, "grad_clip": 0.4}
    assert rllib_options(Args())["grad_clip"] is None  # RLlib's default: no clipping
    for change, message in [({"anneal_lr": True}, "keeps the learning rate constant"),
                            ({"clip_vloss": True}, "clips the value loss its own way"),
                            ({"opponent_mix": "snapshot=0.2,rule_based=0.5"}, "keeps no snapshot pool"),
                            ({"opponent_mix": "rule_based=0.5,random=0.1"}, "one frozen baseline")]:
        with pytest.raises(ValueError, match=message):
            Args(**change).check()


def _module(env: ManniMultiAgentEnv, inference_only: bool = True) -> MaskedPPOTorchRLModule:
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    spec = RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        observation_space=env.observation_spaces[AGENTS[0]],
        action_space=env.action_spaces[AGENTS[0]],
        model_config={"fcnet_hiddens": [32, 16], "head_fcnet_hiddens": [], "vf_share_layers": False},
        inference_only=inference_only,
    )
    return spec.build()


def _batch(env: ManniMultiAgentEnv, n: int, rng: np.random.Generator) -> tuple[dict, list[tuple[int, ...]]]:
    states = [GameState(env.rules, seed=int(s)) for s in rng.integers(1 << 30, size=n)]
    views = [s.view(s.to_move) for s in states]
    batch = {"obs": {OBS: torch.tensor(np.stack([env.encoder.encode(v) for v in views])),
                     MASK: torch.tensor(np.stack([env.encoder.action_mask(v) for v in views]), dtype=torch.float32)}}
    return batch, [v.legal_actions for v in views]


def test_masked_module_only_samples_legal_actions_and_export_matches_it(tmp_path):
    from ray.rllib.core.columns import Columns

    env = ManniMultiAgentEnv({"variant": "hornafjardar"})
    module = _module(env)
    batch, legal = _batch(env, 16, np.random.default_rng(3))
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    generator = torch.Generator().manual_seed(0)
    for row, allowed in zip(logits, legal):
        drawn = torch.multinomial(torch.softmax(row, -1), 200, replacement=True, generator=generator)
        assert set(drawn.tolist()) <= set(allowed) and len(set(drawn.tolist())) > 1
    # the export (numpy, safetensors) computes the same logits on the legal actions
    stem = export_policy(module, tmp_path, env.rules, "summary")
    agent = PPOAgent(stem)
    expected = agent.logits(batch["obs"][OBS].numpy())
    for row, want, allowed in zip(logits.numpy(), expected, legal):
        np.testing.assert_allclose(row[list(allowed)], want[list(allowed)], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="observations"):
        export_policy(module, tmp_path / "other", make_rules("trjamann"), "full")


def test_masked_module_needs_the_mask_in_its_space():
    import gymnasium as gym

    with pytest.raises(ValueError, match="action_mask"):
        MaskedPPOTorchRLModule(observation_space=gym.spaces.Box(0, 1, (4,)), action_space=gym.spaces.Discrete(3),
                               model_config={"fcnet_hiddens": [8]})


def test_rllib_agent_spec_errors(tmp_path):
    with pytest.raises(ValueError, match="needs a path"):
        make_agent("rllib")
    with pytest.raises(ValueError, match="no usable manni_policy export"):
        make_agent(f"rllib:{tmp_path}")
    with pytest.raises(ValueError, match="no such checkpoint file"):
        make_agent(f"rllib:{tmp_path}/missing,sample")


@pytest.mark.slow
def test_train_checkpoint_restore_and_arena(tmp_path):
    """A real run: local Ray, 2 env runners, three tiny PPO iterations, save, restore, arena."""
    import ray

    from manni_train.rllib_modules import MAIN
    from manni_train.rllib_ppo import Args, build_config, learner_weights, save

    args = Args(variant="basic", target=3, num_env_runners=2, num_steps=100, minibatch_size=100,
                update_epochs=1, hidden=[32, 32], seed=5)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a running cluster
    try:
        algo = build_config(args).build_algo()
        try:
            def weights():
                return {k: np.array(v) for k, v in learner_weights(algo).items()}

            initial = weights()
            for _ in range(2):
                result = algo.train()
            returns = result["env_runners"]["module_episode_returns_mean"]
            assert set(returns) == {MAIN, "rule_based"}  # seats mapped to both modules
            learner_steps = result["env_runners"]["num_module_steps_sampled_lifetime"][MAIN]  # what --total-steps counts
            assert 0 < learner_steps < result["env_runners"]["num_env_steps_sampled_lifetime"]
            trained = weights()
            assert any(not np.array_equal(initial[k], trained[k]) for k in trained)  # main learned
            path = save(algo, args, tmp_path / "ckpt", iteration=2,
                        env_steps=int(result["env_runners"]["num_env_steps_sampled_lifetime"]))
            algo.train()
            assert any(not np.array_equal(trained[k], v) for k, v in weights().items())
            algo.restore_from_path(str(path))
            restored = weights()
            assert trained.keys() == restored.keys()
            assert all(np.array_equal(trained[k], restored[k]) for k in trained)
            exported = make_agent(f"rllib:{path}").layers
            assert np.array_equal(exported[-1][0], trained["pi.net.mlp.0.weight"])  # export = saved learner
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    agent = make_agent(f"rllib:{path}")
    assert agent.meta["trained_with"] == "rllib" and agent.meta["iterations"] == 2
    result = run_arena([f"rllib:{path}", "rule_based", "random"], make_rules("basic", target=3), deals=3, seed=1,
                       progress=False)
    stats = {a.spec: a for a in result.agents}
    assert len(result.games) == 3 * 6  # every deal in every seating, each move legal (else it raises)
    assert stats[f"rllib:{path}"].moves > 0 and stats[f"rllib:{path}"].copies == 1


@pytest.mark.slow
def test_manni_train_rllib_end_to_end(tmp_path, capsys):
    """``manni train --trainer rllib``: in-process sampling until --total-steps learner decisions,
    the checkpoint with its export in the run directory, the final arena against both baselines."""
    from manni_agents.evaluation.vector_arena import checkpoint_policy
    from manni_env.cli import main
    from manni_train.reporting import evaluate
    from manni_train.rllib_ppo import Args

    argv = ["train", "--trainer", "rllib", "--variant", "basic", "--target", "3", "--num-env-runners", "0",
            "--num-cpus", "1", "--num-steps", "100", "--minibatch-size", "50", "--update-epochs", "1",
            "--eval-deals", "3",
            "--hidden", "16", "--total-steps", "150", "--stop-iters", "20", "--final-eval-deals", "2",
            "--runs-dir", str(tmp_path), "--run-name", "r", "--seed", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    run = tmp_path / "r"
    iterations = [line for line in out.splitlines() if line.startswith("iter ")]
    assert 1 <= len(iterations) < 20  # stopped by --total-steps, not by --stop-iters
    assert f"agent: rllib:{run}" in out and "### vs 2 × rule_based" in out and "### vs 2 × random" in out
    assert (run / "args.json").is_file() and (run / "arena_final.json").is_file()
    history = json.loads((run / "history.json").read_text())  # evaluated like every trainer, the last at the end
    assert history and history[-1]["timesteps"] >= 150
    shared = evaluate(checkpoint_policy(f"{run}/manni_policy", make_rules("basic", target=3)),
                      Args(variant="basic", target=3, eval_deals=3), 0, 0.0)  # the deals every trainer plays
    assert {k: v for k, v in shared.items() if k.startswith("vs_")} == {
        k: v for k, v in history[-1].items() if k.startswith("vs_")}
    assert (run / "learning_curve.png").is_file() and list((run / "tb").glob("events.out.tfevents.*"))
    agent = make_agent(f"rllib:{run}")
    assert agent.meta["variant"] == "basic" and agent.meta["net_arch"] == [16]
