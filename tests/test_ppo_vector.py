"""The fast trainer (train/ppo_vector.py) and what it shares with the others: the trick reward on
the vector env (manni_env/shaping.py), the warm-start data (train/demonstrations.py), a smoke run
per variant."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

pytest.importorskip("torch")

from manni_agents.registry import make_agent  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.rules import VARIANTS, ContractKind, make_rules  # noqa: E402
from manni_env.shaping import VectorTrickRewards, trick_worth  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402
from manni_train.cpu import describe  # noqa: E402
from manni_train.demonstrations import collect_demonstrations  # noqa: E402
from manni_train.ppo_vector import Args, train, write_scalars  # noqa: E402
from manni_train.precision import compute_dtype  # noqa: E402

ANNOUNCEMENT_VARIANTS = ("trjamann", "laugarvatn")


def vector_env(variant: str, num_envs: int) -> VectorManni:
    """The vector env of ``variant``; the test skips while VectorManni does not play an
    announcement variant yet (it runs as soon as it does)."""
    try:
        return VectorManni(make_rules(variant), num_envs)
    except (ValueError, NotImplementedError) as err:
        if variant not in ANNOUNCEMENT_VARIANTS:
            raise
        pytest.skip(f"VectorManni does not play {variant} yet ({err})")


def test_a_tricks_worth_is_the_sign_of_its_contract_kinds_score():
    for variant in VARIANTS:
        rules = make_rules(variant)
        assert trick_worth(rules, ContractKind.NULLO) == -1
        assert trick_worth(rules, ContractKind.TRUMP) == trick_worth(rules, ContractKind.GRAND) == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_trick_rewards_pay_each_trick_at_once_and_sum_to_the_deal_score(variant):
    venv = vector_env(variant, 16)
    shaping = VectorTrickRewards(venv, "trick")
    _, mask, _ = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    paid = np.zeros((16, 3))
    deals = 0
    for _ in range(800):
        before, kind = venv.tricks_won.copy(), venv.kind.copy()
        shaping.before_step()
        _, mask, _, rewards, _, _, infos = venv.step((rng.random(mask.shape) * mask).argmax(1))
        step_rewards = shaping.after_step(rewards, infos["deal_over"])
        over = infos["deal_over"]
        going = ~over
        # a deal that goes on: the trick's winner gets +1 (Nullo -1) at once, nobody else anything
        expected = (venv.tricks_won - before)[going] * np.where(kind[going] == int(ContractKind.NULLO), -1.0, 1.0)[:, None]
        assert np.array_equal(step_rewards[going], expected)
        paid += step_rewards
        # a deal that ends: everything paid during the deal sums to its score
        assert np.array_equal(paid[over], infos["points"][over])
        paid[over] = 0.0
        deals += int(over.sum())
    assert deals > 20


@pytest.mark.parametrize("variant", ["basic", "trjamann"])
def test_relative_rewards_are_own_minus_the_others_mean_and_sum_to_the_relative_deal_score(variant):
    """Basic's deal scores are never negative, so a deal's relative rewards differ from its own there; in
    a zero-sum variant they sum to 1.5 x the deal score."""
    venv = vector_env(variant, 8)
    own, relative = VectorTrickRewards(venv, "trick"), VectorTrickRewards(venv, "trick", reward_of="relative")
    _, mask, _ = venv.reset(seed=4)
    rng = np.random.default_rng(2)
    paid, differs = np.zeros((8, 3)), False
    for _ in range(500):
        own.before_step()
        relative.before_step()
        _, mask, _, rewards, _, _, infos = venv.step((rng.random(mask.shape) * mask).argmax(1))
        mine, rel = own.after_step(rewards, infos["deal_over"]), relative.after_step(rewards, infos["deal_over"])
        assert np.allclose(rel, mine - (mine.sum(1, keepdims=True) - mine) / 2)
        paid += rel
        over = infos["deal_over"]
        points = infos["points"][over]
        assert np.allclose(paid[over], points - (points.sum(1, keepdims=True) - points) / 2)
        differs |= not np.allclose(paid[over], 1.5 * points)
        paid[over] = 0.0
    assert differs == (variant == "basic")
    with pytest.raises(ValueError, match="reward_of must be one of own, relative; got 'others'"):
        VectorTrickRewards(venv, "trick", reward_of="others")


def test_relative_reward_trains_and_is_recorded(tmp_path):
    result = train(Args(variant="basic", reward_of="relative", total_steps=300, num_envs=8, num_steps=16, hidden=[16],
                        eval_every=0, eval_deals=4, bc_samples=300, bc_epochs=1, final_eval_deals=0, torch_threads=1,
                        progress_bar=False, runs_dir=str(tmp_path), run_name="relative"))
    assert make_agent(f"ppo:{result.agent}").meta["training"]["args"]["reward_of"] == "relative"
    with pytest.raises(ValueError, match="--reward-of must be one of own, relative, got .theirs."):
        train(Args(reward_of="theirs", total_steps=100, runs_dir=str(tmp_path), run_name="bad"))


def test_deal_rewards_are_the_vector_envs_deal_scores():
    venv = VectorManni(make_rules("hornafjardar"), 4)
    shaping = VectorTrickRewards(venv, "deal")
    rewards = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert shaping.after_step(rewards, np.ones(4, bool)) is rewards
    with pytest.raises(ValueError, match="reward must be one of deal, trick"):
        VectorTrickRewards(venv, "points")


@pytest.mark.parametrize("reward", ["trick", "deal"])
def test_warm_start_data_are_legal_teacher_moves_with_bounded_returns(reward):
    data = collect_demonstrations(make_rules("hornafjardar"), 2048, seed=3, reward=reward).rows(slice(None))
    n = len(data["actions"])
    assert n == 2048 and data["obs"].shape == (n, VectorManni(make_rules(), 1).obs_size)
    assert data["masks"][np.arange(n), data["actions"]].all()
    assert data["returns"].dtype == np.float32 and np.abs(data["returns"]).max() <= 8  # 12 tricks - 4
    if reward == "deal":  # every decision's return is an integer deal score
        assert (data["returns"] == data["returns"].round()).all()
    # the games play several deals, so the data cover the exchange and the play of cards
    assert (data["actions"] < 52).any() and (data["actions"] >= 52).any()


def test_warm_start_data_depend_on_the_seed_only():
    rules = make_rules("basic", target=5)
    a, b = (collect_demonstrations(rules, 700, seed=9, teacher="random").rows(slice(None)) for _ in range(2))
    c = collect_demonstrations(rules, 700, seed=10, teacher="random").rows(slice(None))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["actions"], c["actions"])
    with pytest.raises(ValueError, match="teacher must be one of rule_based, random"):
        collect_demonstrations(rules, 10, seed=1, teacher="pimc")


@pytest.mark.parametrize("change, message", [
    ({"reward": "points"}, "--reward must be one of deal, trick"),
    ({"minibatch_size": 0}, "--minibatch-size must be at least 1"),
    ({"opponent_mix": "rule_based=0.9,snapshot=0.2"}, "the shares sum to 1.1, more than 1"),
    ({"opponent_mix": "rule_based"}, "opponents are 'kind=share' separated by commas, got 'rule_based'"),
    ({"opponent_mix": "random=1/0"}, "opponent random='1/0': must be a number such as 0.2 or 1/3"),
    ({"opponent_mix": "random=0.1,random=0.2"}, "opponent 'random' given twice"),
    ({"opponent_mix": "random=1.5"}, "opponent random='1.5': must be between 0 and 1"),
    ({"max_grad_norm": 0.0}, "--max-grad-norm must be positive for this trainer"),
    ({"bc_teacher": "pimc"}, "--bc-teacher must be one of rule_based, random"),
    ({"variant": "trjamann", "target": 5}, "option 'target' is not valid for variant 'trjamann'"),
    ({"save_every": -1}, "--save-every must not be negative"),
    ({"anneal_lr_to": 1.5}, "--anneal-lr-to is a fraction of --learning-rate from 0 to 1, got 1.5"),
    ({"anneal_lr_to": 0.5, "anneal_lr": False}, "--anneal-lr-to needs --anneal-lr"),
])
def test_bad_arguments_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        Args(**change).check()


def test_the_learning_rate_decays_linearly_to_its_end_fraction():
    """--anneal-lr decays --learning-rate linearly over --total-steps, to 0 or to --anneal-lr-to of
    it; --no-anneal-lr keeps it."""
    from manni_train.ppo_vector import learning_rate

    args = Args(variant="laugarvatn", total_steps=1_000, learning_rate=1e-3)  # to 0 by default
    args.check()
    assert [learning_rate(args, steps) for steps in (0, 500, 1_000)] == pytest.approx([1e-3, 5e-4, 0.0])
    args = Args(variant="trjamann", total_steps=1_000, learning_rate=1e-3)  # to half by default
    args.check()
    assert [learning_rate(args, steps) for steps in (0, 500, 1_000)] == pytest.approx([1e-3, 7.5e-4, 5e-4])
    args.anneal_lr, args.anneal_lr_to = False, 0.0
    assert learning_rate(args, 700) == 1e-3


def test_no_final_arena_is_too_small_for_a_confidence_interval():
    """A short run plays no pimc arena (--total-steps 50,000 once gave one of 1 deal, without an
    interval), and an arena of 1 deal is refused."""
    assert Args(total_steps=50_000).final_pimc_arena_deals() == 0
    assert Args(total_steps=60_000).final_pimc_arena_deals() == 2
    assert Args(total_steps=50_000, final_pimc_deals=3).final_pimc_arena_deals() == 3
    for name in ("final_eval_deals", "final_pimc_deals"):
        with pytest.raises(ValueError, match=f"--{name.replace('_', '-')} must be 0 .no arena. or at least 2"):
            Args(**{name: 1}).check()


def test_an_update_on_one_decision_keeps_the_networks_finite(recwarn):
    """The last update of a run may take a single decision (--total-steps is exact): its advantage is
    not normalised (one value has no spread), and nothing becomes NaN."""
    import torch

    from manni_train.learner import PPOLearner
    from manni_train.networks import Actor, Critic
    from manni_train.vector_rollout import VectorRollout

    args = Args(num_envs=4, num_steps=8, hidden=[16], precision="fp32")
    rollout = VectorRollout(args, torch.Generator().manual_seed(1), np.random.default_rng(1), 1)
    actor, critic = Actor(rollout.obs_size, [16], "relu"), Critic(rollout.obs_size, [16], "relu")
    batch = rollout.collect(actor, critic).first(1)
    losses = PPOLearner(actor, critic, args, torch.Generator().manual_seed(1)).update(batch, 1e-2)
    assert batch.steps == 1 and np.isfinite(losses["losses/policy"])
    assert all(torch.isfinite(p).all() for p in [*actor.parameters(), *critic.parameters()])
    assert not [w for w in recwarn if "degrees of freedom" in str(w.message)]


def test_basic_mannis_agent_plays_symmetric_because_its_trump_is_known_from_the_first_decision():
    assert [v for v in VARIANTS if make_rules(v).spec.trump_known_first] == ["basic"]
    assert {v: Args(variant=v).exported_play() for v in VARIANTS} == {
        v: "symmetric" if v == "basic" else "plain" for v in VARIANTS}


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_trainer_smoke_run_writes_a_playable_agent(variant, tmp_path):
    """A few seconds of training on every variant the vector env plays: warm start, PPO with a
    snapshot pool and batched baselines, the vector evaluation, export, the final arena."""
    vector_env(variant, 1)
    torch = pytest.importorskip("torch")
    args = Args(runs_dir=str(tmp_path), run_name="tiny", variant=variant, total_steps=1200, num_envs=16,
                num_steps=24, hidden=[32], snapshot_every=400, eval_every=0, eval_deals=4, bc_samples=600,
                bc_epochs=1, opponent_mix="snapshot=0.3,rule_based=0.3,random=0.1", final_eval_deals=2, torch_threads=1,
                progress_bar=False)
    result = train(args)
    run = result.run_dir
    assert result.steps >= 1200 and result.history[-1]["timesteps"] == result.steps
    assert set(result.final) == {"random", "rule_based"} and "vs 2 × rule_based" in (run / "arena_final.md").read_text()
    assert (run / "learning_curve.png").is_file() and json.loads((run / "history.json").read_text()) == result.history
    torch.set_num_threads(1)
    agent = make_agent(f"ppo:{result.agent}")
    assert agent.meta["variant"] == variant and agent.meta["training"]["args"]["hidden"] == [32]
    assert agent.meta["training"]["cpu"] == describe()  # what trained it, and in which arithmetic
    assert agent.meta["training"]["precision"] == ("bf16" if compute_dtype("auto") == torch.bfloat16 else "fp32")
    state = GameState(make_rules(variant), seed=1)
    rng = np.random.default_rng(0)
    for _ in range(80):
        view = state.view(state.to_move)
        action = agent.act(view, rng)
        assert action in view.legal_actions
        state.apply(action)


def test_save_every_keeps_the_policy_as_it_trained_as_agents_of_their_own(tmp_path):
    """``--save-every``: a copy after the first update past each multiple of N learner decisions,
    under ``agents/DECISIONS``, each a ``ppo``
    agent that loads by its path and records the decisions and wall time it was saved at; the
    copies differ as training goes on, and the last one before the end is not the final agent."""
    torch = pytest.importorskip("torch")
    args = Args(runs_dir=str(tmp_path), run_name="saves", total_steps=1600, num_envs=16, num_steps=25, hidden=[32],
                save_every=400, eval_every=0, eval_deals=4, bc_samples=200, bc_epochs=1, final_eval_deals=0,
                final_pimc_deals=0, torch_threads=1, progress_bar=False, overlap=False)
    result = train(args)
    saved = sorted((result.run_dir / "agents").glob("*.json"), key=lambda p: int(p.stem))
    steps = [int(p.stem) for p in saved]
    assert len(steps) == 4 and all(400 * k <= s < 400 * k + 16 * 25 for k, s in enumerate(steps, 1))
    torch.set_num_threads(1)
    agents = [make_agent(f"ppo:{p.with_suffix('')}") for p in saved]
    assert [a.meta["training"]["timesteps"] for a in agents] == steps
    assert all(a.meta["training"]["wall_time_s"] > 0 for a in agents)
    first, last = (json.loads(p.with_suffix(".json").read_text()) for p in (saved[0], saved[-1]))
    assert first != last
    final = make_agent(f"ppo:{result.agent}")
    assert final.meta["training"]["timesteps"] == result.steps == 1600


def test_a_ctrl_c_during_a_tensorboard_write_comes_once_the_scalars_are_queued():
    """A Ctrl-C that cut TensorBoard's queueing in half could leave its thread unwoken and the
    stopped run's closing writer waiting up to two minutes (a CI timeout): it is held until the
    scalars are written."""
    class Writer:
        def __init__(self):
            self.added = []

        def add_scalar(self, name: str, value: float, step: int) -> None:
            if not self.added:
                os.kill(os.getpid(), signal.SIGINT)
            self.added.append(name)  # the rest of the write, which the signal must not cut

    writer = Writer()
    with pytest.raises(KeyboardInterrupt):
        write_scalars(writer, {"losses/policy": 0.1, "charts/pool_size": 3}, 10)
    assert writer.added == ["losses/policy", "charts/pool_size"]
