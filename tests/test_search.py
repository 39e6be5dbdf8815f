"""The ``search`` agent: loading, batched rollouts equal to the engine's, legality, determinism and
use of only what the seat may know."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from manni_agents.ppo_agent import CheckpointError, PPOAgent
from manni_agents.registry import make_agent
from manni_agents.sampler import sample_worlds
from manni_agents.search import DEFAULT_TEMPERATURE, SearchAgent, effective_worlds, tempered_weights
from manni_env import GameState, Phase, make_rules

from helpers.hidden import twin_with_other_hidden_cards
from helpers.search_positions import network, to_play

VARIANTS = ("hornafjardar", "basic", "trjamann", "laugarvatn")
PPO = network()  # the network as search plays it


def test_specs_and_options() -> None:
    agent = make_agent("search")
    assert isinstance(agent, SearchAgent) and agent.name == "search"
    assert (agent.worlds, agent.weighting) == (16, "uniform")
    agent = make_agent(" search:worlds=4,weighting=policy,model=basic ", make_rules("basic"))
    assert (agent.worlds, agent.weighting, agent.name) == (4, "policy", "search:worlds=4,weighting=policy,model=basic")
    assert isinstance(agent.network, PPOAgent) and agent.network.meta["variant"] == "basic"
    # the network plays plain in search, though the shipped Basic Manni checkpoint says symmetric
    assert agent.network.meta["play"] == "symmetric" and not agent.network.symmetric
    assert not make_agent("search").network.agent_for(make_rules("basic")).symmetric
    assert agent.temperature == DEFAULT_TEMPERATURE and make_agent("search").temperature is None
    assert make_agent("search:weighting=policy,temperature=2.5").temperature == 2.5
    assert SearchAgent(weighting="policy", temperature=3).temperature == 3.0


@pytest.mark.parametrize(("spec", "message"), [
    ("search:worlds=0", "bad agent spec 'search:worlds=0': option worlds='0': must be a positive integer"),
    ("search:worlds=many", "option worlds='many'"),
    ("search:weighting=softmax", "weighting must be one of uniform, policy"),
    ("search:depth=2", "unknown option 'depth'; valid options: worlds, weighting, temperature, model"),
    ("search:weighting=policy,temperature=0", "option temperature='0': must be a positive number"),
    ("search:weighting=policy,temperature=-2", "option temperature='-2': must be a positive number"),
    ("search:weighting=policy,temperature=hot", "option temperature='hot'"),
    ("search:weighting=policy,temperature=inf", "option temperature='inf': must be a finite number"),
    ("search:temperature=2", "temperature applies to weighting=policy only, got it with weighting=uniform"),
    ("search:weighting=uniform,temperature=1", "temperature applies to weighting=policy only"),
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
    for temperature in (0, -1.0, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="temperature must be a positive finite number"):
            SearchAgent(weighting="policy", temperature=temperature)


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
        outcomes = rollouts.play_out(template, [cards, cards]).reshape(2, cards.size, 3)
        for w, world in enumerate(worlds):
            for j, card in enumerate(cards.tolist()):
                game = world.clone()
                game.apply(card)
                while not game.rounds:
                    game.apply(PPO.act(game.view(game.to_move), rng))
                assert outcomes[w, j].tolist() == list(game.rounds[0].points)


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


@pytest.mark.parametrize("weighting", ["uniform", "policy", "policy,temperature=3"])
def test_same_seed_same_choice(weighting: str) -> None:
    view = (state := to_play(GameState(make_rules("laugarvatn"), seed=2), 10, np.random.default_rng(1))).view(state.to_move)
    spec = f"search:worlds=4,weighting={weighting}"
    first, second = (make_agent(spec).evaluate(view, np.random.default_rng(9)) for _ in range(2))
    assert first[0] == second[0] and first[1] == second[1] and np.array_equal(first[2], second[2])
    assert len(first[1]) == len(view.legal_actions) and first[0] == max(first[1], key=lambda a: (first[1][a], -a))


@pytest.mark.parametrize(("variant", "weighting"), [("hornafjardar", "policy"), ("trjamann", "uniform"),
                                                    ("basic", "policy"), ("laugarvatn", "uniform"),
                                                    ("trjamann", "policy,temperature=4"),
                                                    ("laugarvatn", "policy,temperature=1")])
def test_hidden_cards_do_not_change_the_decision(variant: str, weighting: str) -> None:
    state = to_play(GameState(make_rules(variant), seed=11), 9, np.random.default_rng(4))
    seat = state.to_move
    twin = twin_with_other_hidden_cards(state, seat)
    agent = make_agent(f"search:worlds=6,weighting={weighting}")
    one = agent.evaluate(state.view(seat), np.random.default_rng(21))
    other = agent.evaluate(twin.view(seat), np.random.default_rng(21))
    assert one[0] == other[0] and one[1] == other[1] and np.array_equal(one[2], other[2])


@pytest.mark.parametrize("variant", VARIANTS)
def test_likelihood_is_the_networks_probability_of_the_opponents_plays(variant: str) -> None:
    """In the true deal loaded as a world, the log-likelihood is the sum of the network's log
    probabilities of the opponents' cards, as the engine's views gave them while the deal was played."""
    rules, rng = make_rules(variant), np.random.default_rng(6)
    state, log_p = GameState(rules, seed=8), {s: 0.0 for s in range(3)}
    while not (state.phase == Phase.PLAY and len(state.view(0).plays) >= 22 and len(state.legal_actions()) > 1):
        view = state.view(state.to_move)
        card = PPO.act(view, rng)
        if view.phase == Phase.PLAY:
            log_p[view.seat] += np.log(PPO.action_probabilities(view)[card])
        state.apply(card)
    seat = state.to_move
    view = state.view(seat)
    rollouts = SearchAgent(weighting="policy")._rollouts_for(rules)
    got = rollouts.log_likelihoods(view, rollouts.load(view, [state, state]))
    want = sum(log_p[s] for s in range(3) if s != seat)
    assert want < -0.1  # the opponents' plays were not all forced or certain
    assert got == pytest.approx([want, want], abs=1e-3)


def test_tempering_flattens_the_weights() -> None:
    """On the same worlds, a higher temperature never lowers the effective worlds; temperature 1 is
    the plain likelihood, a huge one weights the worlds uniformly; log-weights scale by 1/T."""
    state = to_play(GameState(make_rules("trjamann"), seed=4), 24, np.random.default_rng(2))
    view = state.view(state.to_move)
    worlds, temperatures = 8, (1, 1.5, 4, 1e9)
    log_likelihoods = SearchAgent(worlds=worlds, weighting="policy").log_likelihoods(view, np.random.default_rng(5))
    specs = [f"search:worlds={worlds},weighting=policy,temperature={t}" for t in temperatures]
    evaluated = [make_agent(spec).evaluate(view, np.random.default_rng(5)) for spec in specs]
    weights = [w for _, _, w in evaluated]
    plain = np.exp(log_likelihoods - log_likelihoods.max())
    assert np.allclose(weights[0], plain / plain.sum(), rtol=1e-12, atol=0)
    ess = [effective_worlds(w) for w in weights]
    assert ess[0] < worlds / 2 and ess[-1] > worlds - 1e-6
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(ess))
    uniform = make_agent(f"search:worlds={worlds}").evaluate(view, np.random.default_rng(5))
    assert evaluated[-1][1] == pytest.approx(uniform[1], abs=1e-6)
    kept = weights[0] > 1e-200
    for t, w in zip(temperatures[1:3], weights[1:3]):
        assert np.allclose(np.log(w[kept] / w[kept][0]), np.log(weights[0][kept] / weights[0][kept][0]) / t)


@pytest.mark.parametrize(("weights", "effective"), [([1, 1, 1, 1], 4), ([0.25] * 4, 4), ([5, 0, 0], 1),
                                                    ([3, 1], 1.6), ([0.5, 0.5, 0, 0], 2)])
def test_effective_worlds(weights: list[float], effective: float) -> None:
    assert effective_worlds(np.array(weights, float)) == pytest.approx(effective)


@pytest.mark.parametrize("weights", [[], [0, 0], [1, -1, 1], [[1, 1]]])
def test_effective_worlds_refuses_what_are_not_weights(weights: list) -> None:
    with pytest.raises(ValueError, match="weights must be a non-empty row of non-negative numbers"):
        effective_worlds(np.array(weights, float))


def test_tempered_weights_in_log_space() -> None:
    """Log-likelihoods far below exp's range still give proper weights, as the likelihoods ** (1/T)."""
    weights = tempered_weights(np.array([-5000.0, -5000.0 - np.log(4), -6000.0]), 2)
    assert weights == pytest.approx([2 / 3, 1 / 3, 0], abs=1e-12) and weights.sum() == pytest.approx(1)


@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
def test_card_values_are_the_searchs_worlds_own_points_from_the_view_only(variant: str) -> None:
    """The card values are the seat's expected deal points over the worlds evaluate samples (in a
    zero-sum deal its outcome is 1.5 x the points); a seat that cannot tell two deals apart gets
    the same values; the best card costs nothing, every other card costs its shortfall."""
    state = to_play(GameState(make_rules(variant), seed=4), 4, np.random.default_rng(3))
    seat = state.to_move
    agent = make_agent("search:worlds=6")
    values = agent.card_values(state.view(seat), np.random.default_rng(9))
    assert sorted(values.points) == sorted(state.legal_actions()) and values.worlds == 6
    assert values.effective == pytest.approx(6.0)
    twin = twin_with_other_hidden_cards(state, seat)
    assert agent.card_values(twin.view(seat), np.random.default_rng(9)) == values
    best, outcomes, _ = agent.evaluate(state.view(seat), np.random.default_rng(9))
    if variant == "hornafjardar":
        assert outcomes == pytest.approx({a: 1.5 * p for a, p in values.points.items()})
        assert values.cost(best) == pytest.approx(0, abs=1e-12)  # two cards may tie up to rounding
    costs = {a: values.cost(a) for a in values.points}
    assert min(costs.values()) == 0 and all(c == pytest.approx(values.best - values.points[a]) for a, c in costs.items())
