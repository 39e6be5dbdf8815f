"""The vector-env duplicate evaluation against the engine, the scalar agents and the arena's statistic."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.evaluation import vector_arena
from manni_agents.evaluation.vector_arena import (checkpoint_policy, duplicate_margin, duplicate_score, duplicate_scores,
                                                  duplicate_seat_scores)
from manni_agents.ppo_agent import DEFAULT_MODEL, CheckpointError, PPOAgent
from manni_agents.rule_based import RuleBasedAgent
from manni_agents.vector_policy import NetworkPolicy, RandomPolicy, VectorPolicy, act_seats, make_vector_policy
from manni_env.engine import GameState
from manni_env.observation import ObservationEncoder
from manni_env.rules import VARIANTS, make_rules
from manni_env.vector import VectorManni


class _Recording(VectorManni):
    """A vector env that records each slot's actions up to the end of its first deal."""

    made: list[_Recording] = []

    def reset(self, seed=None, **kwargs):
        out = super().reset(seed=seed, **kwargs)
        self.moves = [[] for _ in range(self.num_envs)]
        self.first_over = np.zeros(self.num_envs, bool)
        self.made.append(self)
        return out

    def step(self, actions):
        for i in np.flatnonzero(~self.first_over).tolist():
            self.moves[i].append(int(actions[i]))
        out = super().step(actions)
        self.first_over |= out[-1]["deal_over"]
        return out


def _engine_deal(rules, deal, dealer: int, seat: int, act) -> tuple[list[int], int]:
    """Play ``deal`` in the engine, ``act(view)`` in ``seat`` and RuleBasedAgent in the others:
    (the actions, ``seat``'s points)."""
    state = GameState(make_rules(rules.variant, **{**rules.options(), "first_dealer": dealer}), deals=[deal])
    rule_based, moves = RuleBasedAgent(), []
    while not state.rounds:
        view = state.view(state.to_move)
        moves.append(act(view) if state.to_move == seat else rule_based.act(view))
        state.apply(moves[-1])
    return moves, state.rounds[0].points[seat]


@pytest.mark.parametrize("variant", VARIANTS)
def test_vector_arena_plays_the_engines_moves_and_scores(variant, monkeypatch):
    """Every seating of every deal: the same moves and deal score as the engine with the scalar
    agents, the policy a fixed random linear function of the observation (masked argmax)."""
    rules = make_rules(variant)
    deals, seed = 8, 11
    encoder = ObservationEncoder(rules)
    weights = np.random.default_rng(3).normal(size=(encoder.size, 63))

    policy = NetworkPolicy(lambda obs, mask: obs @ weights, "linear")

    monkeypatch.setattr(vector_arena, "VectorManni", _Recording)
    monkeypatch.setattr(_Recording, "made", [])
    scores = duplicate_scores(policy, rules, deals, seed)
    slots = VectorManni(rules, deals)
    slots.reset(seed=seed)
    assert len(_Recording.made) == 3  # one env per seat of the policy
    for seat, venv in enumerate(_Recording.made):
        for i in range(deals):
            moves, points = _engine_deal(rules, slots.deal(i), int(slots.dealer[i]), seat,
                                         lambda view: int(np.where(_mask(view), encoder.encode(view) @ weights,
                                                                   -np.inf).argmax()))
            assert venv.moves[i] == moves, (seat, i)
            assert scores[seat, i] == points, (seat, i)


def _mask(view) -> np.ndarray:
    mask = np.zeros((1, 63), bool)
    mask[0, list(view.legal_actions)] = True
    return mask


def test_scores_are_the_engines_with_the_ppo_checkpoint():
    rules = make_rules("hornafjardar")
    deals, seed = 6, 7
    scores = duplicate_scores(checkpoint_policy(DEFAULT_MODEL, rules), rules, deals, seed)
    slots = VectorManni(rules, deals)
    slots.reset(seed=seed)
    ppo, rng = PPOAgent(DEFAULT_MODEL), np.random.default_rng(0)
    for i in range(deals):
        for seat in range(3):
            _, points = _engine_deal(rules, slots.deal(i), int(slots.dealer[i]), seat, lambda v: ppo.act(v, rng))
            assert scores[seat, i] == points, (i, seat)


@pytest.mark.parametrize("variant", ["basic", "laugarvatn"])
def test_the_interval_is_the_mean_over_seatings_per_deal(variant):
    rules = make_rules(variant)
    first_legal = NetworkPolicy(lambda obs, mask: np.zeros(mask.shape), "first legal")
    scores = duplicate_scores(first_legal, rules, 40, 3, baseline="random")
    result = duplicate_score(first_legal, rules, 40, 3, baseline="random")
    assert result.mean == pytest.approx(scores.mean())
    assert result.low < result.mean < result.high


@pytest.mark.parametrize("variant", ["basic", "trjamann"])
def test_the_margin_is_the_score_minus_the_opponents(variant):
    rules = make_rules(variant)
    first_legal = NetworkPolicy(lambda obs, mask: np.zeros(mask.shape), "first legal")
    seats = duplicate_seat_scores(first_legal, rules, 40, 3, baseline="random")
    assert (seats[..., 0] == duplicate_scores(first_legal, rules, 40, 3, baseline="random")).all()
    margin = duplicate_margin(seats)
    own = seats[..., 0].mean(0)
    assert margin.mean == pytest.approx((own - seats[..., 1:].mean((0, 2))).mean())
    if rules.zero_sum:
        assert margin.mean == pytest.approx(1.5 * own.mean())
    else:  # Basic's floor: everyone scores >= 0, so the margin is far below 1.5 x the score
        assert (seats >= 0).all() and margin.mean < own.mean()


def test_bad_arguments_are_named():
    rules = make_rules("hornafjardar")
    with pytest.raises(ValueError, match="'pimc' does not act in batches on the vector env"):
        duplicate_score(RandomPolicy(), rules, 4, 0, baseline="pimc")
    with pytest.raises(ValueError, match="deals must be at least 1"):
        duplicate_score(RandomPolicy(), rules, 0, 0)
    with pytest.raises(CheckpointError, match="variant"):
        checkpoint_policy(DEFAULT_MODEL, make_rules("basic"))


class _Seats:
    """A controller that plays ``inner``'s moves and records, per env, the seats it was asked to play."""

    def __init__(self, inner: VectorPolicy):
        self.inner, self.name, self.seats = inner, inner.name, {}

    def act(self, venv, games, obs, mask, rng):
        self.seats.setdefault(venv, set()).update(venv.to_move[games].tolist())  # keeps venv: no id reuse
        return self.inner.act(venv, games, obs, mask, rng)


def test_two_different_opponents_sit_both_ways_round_the_policy():
    rules = make_rules("trjamann")
    policy, after, before = (_Seats(make_vector_policy(s, rules)) for s in ("ppo", "rule_based", "random"))
    scores = duplicate_scores(policy.inner, rules, 10, 5, (after.inner, before.inner))
    assert scores.shape == (6, 10)
    recorded = duplicate_scores(policy, rules, 10, 5, (after, before))
    assert np.array_equal(recorded, scores)  # the recorders play their agents' moves
    envs = list(policy.seats)  # one env per seating, in order
    for i, env in enumerate(envs):
        seat, swapped = divmod(i, 2)
        first, second = (before, after) if swapped else (after, before)
        assert policy.seats[env] == {seat}
        assert first.seats[env] == {(seat + 1) % 3} and second.seats[env] == {(seat + 2) % 3}


def test_an_opponent_spec_is_the_same_as_its_controller():
    rules = make_rules("basic")
    policy = RandomPolicy()
    by_spec = duplicate_scores(policy, rules, 12, 4, "ppo")
    by_controller = duplicate_scores(policy, rules, 12, 4, make_vector_policy("ppo", rules))
    assert by_spec.shape == (3, 12) and np.array_equal(by_spec, by_controller)


def test_act_seats_asks_each_controller_once_for_exactly_its_games_in_order():
    rules = make_rules("hornafjardar")
    venv = VectorManni(rules, 9)
    obs, mask, _ = venv.reset(seed=2)
    calls = []

    class Constant:
        def __init__(self, code):
            self.name, self.code = f"c{code}", code

        def act(self, venv, games, obs_, mask_, rng):
            calls.append((self.code, games.tolist()))
            assert obs_ is obs and mask_ is mask  # every game's rows, not copied
            return np.full(games.size, 10 + self.code)

    who = np.array([2, 0, 5, 2, 1, 0, 5, 2, 1])
    out = np.full(9, -1)
    act_seats({2: Constant(2), 0: Constant(0), 7: Constant(7), 1: Constant(1)}, who, venv, obs, mask,
              np.random.default_rng(0), out)
    assert calls == [(2, [0, 3, 7]), (0, [1, 5]), (1, [4, 8])]  # the mapping's order; no call without games
    assert out.tolist() == [12, 10, -1, 12, 11, 10, -1, 12, 11]  # code 5 has no controller: untouched
