"""The OpenSpiel games (OpenSpiel's own random-simulation checks) and the ``ismcts`` agent."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from manni_agents.evaluation.arena import run_arena  # noqa: E402
from manni_agents.registry import make_agent  # noqa: E402
from manni_agents.sampler import sample_worlds  # noqa: E402
from manni_env import openspiel_game as osg  # noqa: E402
from manni_env.engine import GameState, Phase  # noqa: E402
from manni_env.observation import ObservationEncoder  # noqa: E402
from manni_env.rules import VARIANTS, make_rules  # noqa: E402

WHOLE_GAMES = [("hornafjardar", {"target": 2}), ("basic", {"target": 2, "negative": True}), ("basic", {"target": 2}),
               ("trjamann", {}), ("laugarvatn", {})]


@pytest.mark.parametrize("variant", VARIANTS)
def test_openspiel_random_simulation_of_a_deal(variant):
    game = osg.load_game(variant)
    assert game.get_type().short_name == f"python_manni_{variant}"
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize("variant,options", WHOLE_GAMES)
def test_openspiel_random_simulation_of_a_whole_game(variant, options):
    pyspiel.random_sim_test(osg.load_game(variant, episode="game", **options), num_sims=1, serialize=False,
                            verbose=False)


def _random_play(state, rng: np.random.Generator, decisions: int):
    """Sample chance outcomes by their probabilities and play uniformly random legal actions."""
    done = 0
    while not state.is_terminal() and done < decisions:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            done += 1
    return state


def test_chance_deals_the_engine_deal_and_the_engine_plays_it():
    game = osg.load_game("hornafjardar")
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]  # the first dealer
    state.apply_action(2)
    outcomes = state.chance_outcomes()
    assert [c for c, _ in outcomes] == list(range(52)) and all(p == pytest.approx(1 / 52) for _, p in outcomes)
    cards = np.random.default_rng(0).permutation(52).tolist()
    for card in cards:
        state.apply_action(card)
    engine = state.engine()
    assert not engine.rounds and engine.dealer == 2 and state.current_player() == 0  # the forehand decides
    # forehand (seat 0) got the first 12 cards, middlehand the next, the dealer the next with the cut card last
    assert engine.hand(0) == sorted(cards[:12]) and engine.hand(1) == sorted(cards[12:24])
    assert engine.hand(2) == sorted(cards[24:36]) and engine.view(0).cut_card == cards[35]
    rng = np.random.default_rng(1)
    replay = GameState(make_rules("hornafjardar", first_dealer=2), deals=[osg._deal_of(game.rules, 2, cards)])
    while not state.is_terminal():
        action = state.legal_actions()[int(rng.integers(len(state.legal_actions())))]
        replay.apply(action)
        state.apply_action(action)
    assert state.returns() == [float(p) for p in replay.rounds[0].points]
    assert sum(state.returns()) == 0
    fixed = osg.load_game("basic", first_dealer=1).new_initial_state()
    assert len(fixed.chance_outcomes()) == 48  # no dealer chance node; Basic's 48-card pack


def test_game_episode_deals_every_deal_by_chance():
    game = osg.load_game("trjamann", episode="game")
    rng = np.random.default_rng(3)
    state = _random_play(game.new_initial_state(), rng, 10**6)
    engine = state.engine()
    assert engine.finished and len(engine.rounds) == 12
    assert state.returns() in ([1.0, -0.5, -0.5], [-0.5, 1.0, -0.5], [-0.5, -0.5, 1.0], [0.5, 0.5, -1.0],
                               [0.5, -1.0, 0.5], [-1.0, 0.5, 0.5], [0.0, 0.0, 0.0])
    chance = [a for p, a in zip(_players(game, state.history()), state.history()) if p == pyspiel.PlayerId.CHANCE]
    assert len(chance) == 1 + 12 * 52  # the first dealer, then every card of every deal
    dealt = [sorted([c for hand in r.hands for c in hand] + list(r.manni)) for r in engine.rounds]
    assert all(d == list(range(52)) for d in dealt)
    for k, result in enumerate(engine.rounds):
        cards = chance[1 + 52 * k : 1 + 52 * (k + 1)]
        assert result.manni == tuple(cards[48:])  # the Manni: the last four cards dealt, top first


def _players(game, history):
    state = game.new_initial_state()
    players = []
    for action in history:
        players.append(state.current_player())
        state.apply_action(action)
    return players


@pytest.mark.parametrize("variant", VARIANTS)
def test_tensors_and_strings_are_the_seats_information(variant):
    game = osg.load_game(variant)
    rng = np.random.default_rng(7)
    state = _random_play(game.new_initial_state(), rng, 20)
    engine = state.engine()
    summary, full = ObservationEncoder(engine.rules), ObservationEncoder(engine.rules, "full")
    for seat in range(3):
        view = engine.view(seat)
        assert np.array_equal(np.array(state.observation_tensor(seat), np.float32), summary.encode(view))
        assert np.array_equal(np.array(state.information_state_tensor(seat), np.float32), full.encode(view))
    # a world that differs only in what seat s cannot see looks the same to seat s
    s = state.current_player()
    world = game.state_from(sample_worlds(engine.view(s), rng, 1)[0])
    assert world.information_state_string(s) == state.information_state_string(s)
    assert world.observation_tensor(s) == state.observation_tensor(s)
    assert world.legal_actions() == state.legal_actions()
    others = [p for p in range(3) if p != s]
    assert any(world.information_state_string(p) != state.information_state_string(p) for p in others)


def test_terminal_strings_and_returns_of_a_deal():
    game = osg.load_game("basic", target=5)
    state = _random_play(game.new_initial_state(), np.random.default_rng(2), 10**6)
    assert state.is_terminal() and min(state.returns()) >= 0  # Basic's default scoring
    for seat in range(3):
        text = state.information_state_string(seat)
        assert text.startswith("Deal 1") and "tricks:" in text and "points" in text
        assert not any(state.information_state_tensor(seat))  # documented: zeros once the deal is over


def test_bad_parameters():
    with pytest.raises(ValueError, match="episode must be one of deal, game"):
        osg.load_game("hornafjardar", episode="match")
    with pytest.raises(ValueError, match="unknown variant"):
        osg.game_name("whist")
    with pytest.raises(pyspiel.SpielError):
        osg.load_game("trjamann", target=5)  # not a parameter of the game
    game = osg.load_game("basic")
    with pytest.raises(ValueError, match="cannot be a 'basic' state"):
        game.state_from(GameState(make_rules("hornafjardar"), seed=0))


def test_ismcts_agent_plays_legal_reproducible_moves():
    agent = make_agent("ismcts:iterations=20")
    assert agent.iterations == 20 and agent.name == "ismcts:iterations=20"
    for variant in ("hornafjardar", "laugarvatn"):
        state = GameState(make_rules(variant), seed=4)
        moves = 0
        while state.phase != Phase.PLAY or len(state.view(0).plays) < 6:
            view = state.view(state.to_move)
            action = agent.act(view, np.random.default_rng(moves))
            assert action in view.legal_actions
            assert action == agent.act(view, np.random.default_rng(moves))  # same generator, same choice
            state.apply(action)
            moves += 1
    with pytest.raises(ValueError, match="unknown option 'worlds'"):
        make_agent("ismcts:worlds=3")
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("ismcts:iterations=0")


def test_ismcts_in_the_arena():
    result = run_arena(["ismcts:iterations=10", "rule_based", "random"], make_rules("basic"), deals=1, seed=0,
                       progress=False)
    assert "ismcts:iterations=10" in result.to_markdown()
