"""The vector-env duplicate evaluation against the engine, the scalar agents and the arena's statistic."""

from __future__ import annotations

import numpy as np
import pytest

from agents.ppo_agent import DEFAULT_MODEL, CheckpointError, PPOAgent
from agents.rule_based import RuleBasedAgent
from agents.vector_arena import checkpoint_policy, duplicate_score, duplicate_scores
from manni_env.engine import GameState
from manni_env.rules import make_rules
from manni_env.vector import VectorManni


def test_scores_are_the_engines_with_the_scalar_agents_in_every_seat():
    rules = make_rules("hornafjardar")
    deals, seed = 12, 7
    scores = duplicate_scores(checkpoint_policy(DEFAULT_MODEL, rules), rules, deals, seed)
    slots = VectorManni(rules, deals)
    slots.reset(seed)
    ppo, rule_based = PPOAgent(DEFAULT_MODEL), RuleBasedAgent()
    rng = np.random.default_rng(0)
    for i in range(deals):
        for seat in range(3):
            state = GameState(make_rules("hornafjardar", first_dealer=int(slots.dealer[i])), deals=[slots.deal(i)])
            while not state.rounds:
                player = ppo if state.to_move == seat else rule_based
                state.apply(player.act(state.view(state.to_move), rng))
            assert scores[seat, i] == state.rounds[0].points[seat], (i, seat)


def test_the_interval_is_the_mean_over_seatings_per_deal():
    rules = make_rules("basic")
    first_legal = lambda obs, mask: mask.argmax(1)  # noqa: E731
    scores = duplicate_scores(first_legal, rules, 40, 3, baseline="random")
    result = duplicate_score(first_legal, rules, 40, 3, baseline="random")
    assert result.mean == pytest.approx(scores.mean())
    assert result.low < result.mean < result.high


def test_bad_arguments_are_named():
    rules = make_rules("hornafjardar")
    with pytest.raises(ValueError, match="baseline must be one of"):
        duplicate_score(lambda o, m: m.argmax(1), rules, 4, 0, baseline="pimc")
    with pytest.raises(CheckpointError, match="variant"):
        checkpoint_policy(DEFAULT_MODEL, make_rules("basic"))
