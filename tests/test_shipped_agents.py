"""The shipped agents: one per variant, loadable by name, legal and deterministic play."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from manni_agents import ppo_agent
from manni_agents.commands.play import DEFAULT_OPPONENTS, FALLBACK_OPPONENTS, default_opponents
from manni_agents.evaluation.match import play_game
from manni_agents.ppo_agent import CheckpointError, PPOAgent, checkpoint_paths, shipped_model, shipped_variants
from manni_agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.records import game_record
from manni_env.rules import VARIANTS, make_rules


def test_every_variant_has_a_shipped_agent():
    assert shipped_variants() == VARIANTS
    for variant in VARIANTS:
        weights, meta = checkpoint_paths(shipped_model(variant))
        assert weights.stat().st_size < 5_000_000
        agent = PPOAgent(shipped_model(variant))
        assert agent.meta["variant"] == variant
        training = agent.meta["training"]
        assert training["command"] and training["args"]["seed"] is not None and training["wall_time_s"] > 0


def play(spec: str, variant: str, seed: int) -> dict:
    """A whole game (at most 4 deals) of ``spec`` against rule_based and random, as a record."""
    rules = make_rules(variant)
    state = GameState(rules, seed=seed)
    agents = [make_agent(spec, rules), make_agent("rule_based"), make_agent("random")]
    play_game(state, agents, [np.random.default_rng([seed, k]) for k in range(3)], max_deals=4)
    return game_record(state)


@pytest.mark.parametrize("variant", VARIANTS)
def test_ppo_plays_the_variants_own_agent_legally_and_deterministically(variant):
    record = play("ppo", variant, seed=3)  # play_game raises on an illegal action
    assert record["rounds"] and record == play("ppo", variant, seed=3)
    assert play(f"ppo:{variant}", variant, seed=3) == record  # the same network by its variant's name
    assert play("ppo:sample", variant, seed=3) == play("ppo:sample", variant, seed=3)


def test_ppo_variant_names_and_errors(tmp_path, monkeypatch):
    state = GameState(make_rules("basic"), seed=0)
    with pytest.raises(CheckpointError, match="trained for variant 'hornafjardar', cannot play 'basic'"):
        make_agent("ppo:hornafjardar", make_rules("basic"))
    assert make_agent("ppo:basic,sample").sample
    # a models folder with only the Hornafjarðarmanni agent: ppo refuses the others by name
    weights, meta = checkpoint_paths(shipped_model("hornafjardar"))
    shutil.copy(weights, tmp_path)
    shutil.copy(meta, tmp_path)
    monkeypatch.setattr(ppo_agent, "MODELS_DIR", tmp_path)
    assert shipped_variants() == ("hornafjardar",)
    agent = make_agent("ppo")
    with pytest.raises(CheckpointError, match="no shipped ppo agent for variant 'basic'; shipped: hornafjardar"):
        agent.act(state.view(state.to_move), np.random.default_rng(0))
    with pytest.raises(ValueError, match="no shipped ppo agent for variant 'trjamann'"):
        make_agent("ppo:trjamann")
    assert default_opponents("basic") == FALLBACK_OPPONENTS and default_opponents("hornafjardar") == DEFAULT_OPPONENTS


def test_manni_play_seats_the_shipped_agent_in_every_variant():
    for variant in VARIANTS:
        assert default_opponents(variant) == DEFAULT_OPPONENTS == ("ppo", "ppo")
