"""The ``search`` agent: loading, batched rollouts equal to the engine's, legality, determinism and
use of only what the seat may know."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.ppo_agent import CheckpointError, PPOAgent
from manni_agents.registry import make_agent
from manni_agents.sampler import sample_worlds
from manni_agents.search import SearchAgent
from manni_env import GameState, Phase, make_rules

from helpers.hidden import twin_with_other_hidden_cards

VARIANTS = ("hornafjardar", "basic", "trjamann", "laugarvatn")
PPO = make_agent("ppo")


def to_play(state: GameState, plays: int, rng: np.random.Generator) -> GameState:
    """Advance ``state`` with the shipped network until ``plays`` cards of the deal are down and a
    seat with more than one legal card is on turn."""
    while not (state.phase == Phase.PLAY and len(state.view(0).plays) >= plays and len(state.legal_actions()) > 1):
        state.apply(PPO.act(state.view(state.to_move), rng))
    return state


def test_specs_and_options() -> None:
    agent = make_agent("search")
    assert isinstance(agent, SearchAgent) and agent.name == "search"
    assert (agent.worlds, agent.weighting) == (16, "uniform")
    agent = make_agent(" search:worlds=4,weighting=policy,model=basic ", make_rules("basic"))
    assert (agent.worlds, agent.weighting, agent.name) == (4, "policy", "search:worlds=4,weighting=policy,model=basic")
    assert isinstance(agent.network, PPOAgent) and agent.network.meta["variant"] == "basic"


@pytest.mark.parametrize(("spec", "message"), [
    ("search:worlds=0", "bad agent spec 'search:worlds=0': option worlds='0': must be a positive integer"),
    ("search:worlds=many", "option worlds='many'"),
    ("search:weighting=softmax", "weighting must be one of uniform, policy"),
    ("search:depth=2", "unknown option 'depth'; valid options: worlds, weighting, model"),
    ("search:worlds=2,worlds=3", "given twice"),
    ("search:model=no/such/model", "no such checkpoint file"),
])
def test_bad_specs_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)


def test_a_network_of_another_variant_is_refused() -> None:
    with pytest.raises(CheckpointError, match="trained for variant 'basic', cannot play 'trjamann'"):
        make_agent("search:model=basic", make_rules("trjamann"))
    with pytest.raises(ValueError, match="worlds must be a positive integer"):
        SearchAgent(worlds=True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_rollouts_equal_the_engine(variant: str) -> None:
    """Loaded worlds encode exactly as the engine's views, and every batched play-out scores what
    the engine gives when the network plays the same world to the end of the deal."""
    rules = make_rules(variant)
    rollouts = make_agent("search")._rollouts_for(rules)
    encoder = rollouts.network.encoder_for(rules)
    rng = np.random.default_rng(7)
    for plays in (0, 14, 25):
        view = (state := to_play(GameState(rules, seed=plays), plays, rng)).view(state.to_move)
        worlds = sample_worlds(view, rng, 2)
        template = rollouts.load(view, worlds)
        for seat in range(3):
            obs, mask = rollouts._observe(template, np.full(2, seat))
            for w, world in enumerate(worlds):
                assert np.array_equal(obs[w], encoder.encode(world.view(seat)))
                assert np.array_equal(mask[w], encoder.action_mask(world.view(seat)))
        cards = np.array(view.legal_actions)
        outcomes = rollouts.play_out(template, cards, view.seat).reshape(2, cards.size)
        for w, world in enumerate(worlds):
            for j, card in enumerate(cards.tolist()):
                game = world.clone()
                game.apply(card)
                while not game.rounds:
                    game.apply(PPO.act(game.view(game.to_move), rng))
                points = game.rounds[0].points
                assert outcomes[w, j] == points[view.seat] - (sum(points) - points[view.seat]) / 2


@pytest.mark.parametrize("variant", VARIANTS)
def test_plays_only_legal_actions(variant: str) -> None:
    """Whole deals with the search in every seat (one of them weighting its worlds)."""
    agents = [make_agent("search:worlds=2"), make_agent("search:worlds=3,weighting=policy"), make_agent("search:worlds=1")]
    rng = np.random.default_rng(3)
    searched = 0
    for seed in range(2):
        state = GameState(make_rules(variant), seed=seed)
        while not state.rounds:
            view = state.view(state.to_move)
            action = agents[state.to_move].act(view, rng)
            assert action in view.legal_actions
            searched += view.phase == Phase.PLAY and len(view.legal_actions) > 1
            state.apply(action)
    assert searched >= 10


def test_other_decisions_are_the_networks() -> None:
    agent, rng = make_agent("search"), np.random.default_rng(0)
    for variant in VARIANTS:
        state = GameState(make_rules(variant), seed=5)
        while state.phase != Phase.PLAY:
            view = state.view(state.to_move)
            assert agent.act(view, rng) == PPO.act(view, rng)
            state.apply(PPO.act(view, rng))
    with pytest.raises(ValueError, match="search evaluates card play"):
        agent.evaluate(GameState(make_rules("trjamann"), seed=1).view(0), rng)


@pytest.mark.parametrize("weighting", ["uniform", "policy"])
def test_same_seed_same_choice(weighting: str) -> None:
    view = (state := to_play(GameState(make_rules("laugarvatn"), seed=2), 10, np.random.default_rng(1))).view(state.to_move)
    spec = f"search:worlds=4,weighting={weighting}"
    first, second = (make_agent(spec).evaluate(view, np.random.default_rng(9)) for _ in range(2))
    assert first[0] == second[0] and first[1] == second[1] and np.array_equal(first[2], second[2])
    assert len(first[1]) == len(view.legal_actions) and first[0] == max(first[1], key=lambda a: (first[1][a], -a))



@pytest.mark.parametrize(("variant", "weighting"), [("hornafjardar", "policy"), ("trjamann", "uniform"),
                                                    ("basic", "policy"), ("laugarvatn", "uniform")])
def test_hidden_cards_do_not_change_the_decision(variant: str, weighting: str) -> None:
    state = to_play(GameState(make_rules(variant), seed=11), 9, np.random.default_rng(4))
    seat = state.to_move
    twin = twin_with_other_hidden_cards(state, seat)
    agent = make_agent(f"search:worlds=6,weighting={weighting}")
    one = agent.evaluate(state.view(seat), np.random.default_rng(21))
    other = agent.evaluate(twin.view(seat), np.random.default_rng(21))
    assert one[0] == other[0] and one[1] == other[1] and np.array_equal(one[2], other[2])
