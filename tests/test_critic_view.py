"""``--critic deal``: the critic reads the cards hidden from the seat, the actor and the exported agent
never do (train/critic_view.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from manni_agents.registry import make_agent  # noqa: E402
from manni_env.observation import ObservationEncoder  # noqa: E402
from manni_env.rules import VARIANTS, make_rules  # noqa: E402
from manni_env.vector import VectorManni, random_legal_actions  # noqa: E402
from manni_train.critic_view import UNSEEN_SIZE, pack_flags, unseen_cards, unseen_size  # noqa: E402
from manni_train.demonstrations import collect_demonstrations  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_seat_its_hidden_cards_and_the_played_cards_make_up_the_pack(variant):
    rules = make_rules(variant)
    venv = VectorManni(rules, 8)
    enc = ObservationEncoder(rules)
    hand, played = enc.offset["hand"], enc.offset["played"]
    pack = pack_flags(rules)
    obs, mask, to_move = venv.reset(seed=3)
    rng = np.random.default_rng(0)
    games = np.arange(8)
    for _ in range(120):
        unseen = unseen_cards(venv.state, pack, games, to_move).astype(bool).reshape(8, 3, 52)
        own = obs[:, hand:hand + 52].astype(bool)
        seen_played = obs[:, played:played + 156].reshape(8, 3, 52).astype(bool).any(1)
        parts = np.stack([own, *unseen.transpose(1, 0, 2), seen_played], 1)  # (8, 5, 52)
        assert (parts.sum(1) <= 1).all()  # no card in two places
        assert (parts.any(1) == pack).all()  # every card of the pack somewhere
        # the next seat's hand is its hand: what that seat's own observation shows
        left = (to_move + 1) % 3
        assert np.array_equal(unseen[:, 0], venv.observe(games, left)[:, hand:hand + 52].astype(bool))
        obs, mask, to_move, *_ = venv.step(random_legal_actions(mask, rng))


def test_demonstrations_keep_the_hidden_cards_of_each_decision():
    rules = make_rules("trjamann")
    plain = collect_demonstrations(rules, 400, seed=4)
    deal = collect_demonstrations(rules, 400, seed=4, critic="deal")
    rows = deal.rows(slice(0, 400))
    assert "unseen" not in plain.rows(slice(0, 10)) and rows["unseen"].shape == (400, UNSEEN_SIZE)
    assert np.array_equal(rows["obs"], plain.rows(slice(0, 400))["obs"])  # the same decisions
    # each decision's own hand, hidden cards and played cards make up the pack, each card once
    enc = ObservationEncoder(rules)
    own = rows["obs"][:, :52].astype(bool)
    played = rows["obs"][:, enc.offset["played"]:enc.offset["played"] + 156].reshape(400, 3, 52).astype(bool)
    parts = np.concatenate([own[:, None], rows["unseen"].astype(bool).reshape(400, 3, 52), played], 1)
    assert (parts.sum(1) == pack_flags(rules)).all()


def test_a_deal_critic_run_exports_an_actor_that_reads_the_observation_only(tmp_path):
    rules = make_rules("hornafjardar")
    result = train(Args(critic="deal", total_steps=600, num_envs=8, num_steps=16, hidden=[16], eval_every=0,
                        eval_deals=4, bc_samples=300, bc_epochs=1, final_eval_deals=0, torch_threads=1,
                        progress_bar=False, runs_dir=str(tmp_path), run_name="deal"))
    meta = json.loads(result.agent.with_suffix(".json").read_text())
    size = ObservationEncoder(rules).size
    assert meta["obs_size"] == size and meta["training"]["args"]["critic"] == "deal"
    agent = make_agent(f"ppo:{result.agent}")
    assert agent.layers[0][0].shape == (16, size)  # the first layer reads the observation, nothing more
    assert unseen_size("deal") == UNSEEN_SIZE and unseen_size("seat") == 0


def test_a_bad_critic_view_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--critic must be one of seat, deal, got 'oracle'"):
        train(Args(critic="oracle", total_steps=100, runs_dir=str(tmp_path), run_name="bad"))
