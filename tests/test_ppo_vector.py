"""The fast trainer's reward accounting, warm-start data and argument checks (train/ppo_vector.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from manni_env.rules import make_rules  # noqa: E402
from manni_env.vector import NULLO, VectorManni  # noqa: E402
from train.ppo_vector import Args, RewardBook, check_args, collect_demonstrations  # noqa: E402


@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
def test_trick_rewards_pay_each_trick_at_once_and_sum_to_the_deal_score(variant):
    venv = VectorManni(make_rules(variant), 16)
    book = RewardBook(venv, "trick")
    _, mask, _ = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    paid = np.zeros((16, 3))
    deals = 0
    for _ in range(600):
        before, kind = venv.tricks_won.copy(), venv.kind.copy()
        book.before_step()
        _, mask, _, rewards, _, _, infos = venv.step((rng.random(mask.shape) * mask).argmax(1))
        step_rewards = book.after_step(rewards, infos["deal_over"])
        over = infos["deal_over"]
        going = ~over
        # a deal that goes on: the trick's winner gets +1 (Nullo -1) at once, nobody else anything
        expected = (venv.tricks_won - before)[going] * np.where(kind[going] == NULLO, -1.0, 1.0)[:, None]
        assert np.array_equal(step_rewards[going], expected)
        paid += step_rewards
        # a deal that ends: everything paid during the deal sums to its score
        assert np.array_equal(paid[over], infos["points"][over]) if over.any() else True
        paid[over] = 0.0
        deals += int(over.sum())
    assert deals > 20


def test_deal_rewards_are_the_vector_envs_deal_scores():
    venv = VectorManni(make_rules("hornafjardar"), 4)
    book = RewardBook(venv, "deal")
    rewards = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert book.after_step(rewards, np.ones(4, bool)) is rewards


@pytest.mark.parametrize("reward", ["trick", "deal"])
def test_warm_start_data_are_legal_teacher_moves_with_bounded_returns(reward):
    args = Args(reward=reward, seed=3, backend="numpy")
    data = collect_demonstrations(args, make_rules("hornafjardar"), 2048)
    n = len(data["actions"])
    assert n == 2048
    assert data["masks"][np.arange(n), data["actions"]].all()
    assert data["returns"].abs().max() <= 8  # a seat's rest of a deal score: at most the 12 tricks - 4
    if reward == "deal":  # every decision's return is an integer deal score
        assert (data["returns"] == data["returns"].round()).all()


@pytest.mark.parametrize("change, message", [
    ({"reward": "points"}, "--reward must be one of trick, deal"),
    ({"minibatch_size": 0}, "--minibatch-size must be at least 1"),
    ({"p_rule_based": 0.9, "p_snapshot": 0.2}, "must not exceed 1"),
])
def test_bad_arguments_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        check_args(Args(**change))
