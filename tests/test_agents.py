"""Agents: registry, legality in every variant, determinism, and rule_based beating random."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.base import Policy
from manni_agents.registry import available_agents, make_agent, register_agent
from manni_agents.rule_based import RuleBasedAgent, choose_card, estimate_tricks, exchange_plan, mean_estimate
from manni_agents.rule_based_kernels import _MEAN_ESTIMATES, monte_carlo_mean
from manni_env import GameState, Phase, make_rules
from manni_env import actions as A
from manni_env.cards import FULL_PACK, PACK_48, card_from_str, mask_of
from helpers.global_rngs import disturb_global_rngs

VARIANTS = ("hornafjardar", "basic", "trjamann", "laugarvatn")


def cards(text: str) -> int:
    return mask_of(card_from_str(c) for c in text.split())


def play(state: GameState, agents: list[Policy], rngs: list[np.random.Generator], deals: int | None = None) -> list[int]:
    """Play ``state`` in place (``deals`` deals, or to the end); every action must be legal."""
    actions = []
    while not state.finished and (deals is None or len(state.rounds) < deals):
        view = state.view(state.to_move)
        action = agents[state.to_move].act(view, rngs[state.to_move])
        assert action in view.legal_actions, (agents[state.to_move].name, action, view.legal_actions)
        state.apply(action)
        actions.append(action)
    return actions


# ----------------------------------------------------------------------------- registry
def test_registry_names_and_specs() -> None:
    assert {"random", "rule_based", "pimc"} <= set(available_agents())
    for spec in ("random", "rule_based", "pimc", "pimc:worlds=4,rollout=random", " pimc:time_budget=0.5 "):
        agent = make_agent(spec)
        assert isinstance(agent, Policy)
        assert agent.name == spec.strip()
    agent = make_agent("pimc:worlds=4,rollout=random,time_budget=0.25")
    assert (agent.worlds, agent.rollout, agent.time_budget) == (4, "random", 0.25)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "unknown agent 'nope'.*valid agents: .*pimc.*random.*rule_based"),
        ("", "non-empty"),
        ("random:3", "takes no argument"),
        ("rule_based:x", "takes no argument"),
        ("pimc:worlds=0", "worlds=.*positive integer"),
        ("pimc:worlds=abc", "worlds="),
        ("pimc:depth=3", "unknown option 'depth'"),
        ("pimc:rollout=mcts", "rollout must be one of rule_based, random"),
        ("pimc:time_budget=-1", "time_budget=.-1.: must be a positive number"),
        ("pimc:worlds", "name=value"),
        ("pimc:worlds=2,worlds=3", "given twice"),
    ],
)
def test_bad_specs_are_rejected(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_register_agent() -> None:
    register_agent("test_first_legal", lambda arg: _FirstLegal())
    assert "test_first_legal" in available_agents()
    assert make_agent("test_first_legal").name == "test_first_legal"
    with pytest.raises(ValueError, match="without ':'"):
        register_agent("a:b", lambda arg: _FirstLegal())


class _FirstLegal:
    name = "first"

    def act(self, view, rng):
        return view.legal_actions[0]

    def reset(self):
        pass


# ----------------------------------------------------------------------------- legality
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_and_rule_based_play_only_legal_actions(variant: str) -> None:
    for seed in range(4):
        agents = [make_agent("rule_based"), make_agent("random"), make_agent("rule_based")]
        agents = agents[seed % 3 :] + agents[: seed % 3]
        state = GameState(make_rules(variant), seed=seed)
        play(state, agents, [np.random.default_rng([seed, s]) for s in range(3)])
        assert state.finished


@pytest.mark.parametrize("variant", VARIANTS)
def test_pimc_plays_only_legal_actions(variant: str) -> None:
    agents = [make_agent("pimc:worlds=2"), make_agent("pimc:worlds=2,rollout=random"), make_agent("random")]
    state = GameState(make_rules(variant), seed=5)
    play(state, agents, [np.random.default_rng([5, s]) for s in range(3)], deals=2)
    assert len(state.rounds) == 2


def test_rule_based_makes_every_kind_of_decision() -> None:
    """Across many games the rule-based player reaches every non-card decision and both answers
    of the Basic swap."""
    seen = set()
    for variant in VARIANTS:
        for seed in range(6):
            state = GameState(make_rules(variant), seed=seed)
            agent = RuleBasedAgent()
            while not state.finished and len(state.rounds) < 3:
                action = agent.act(state.view(state.to_move))
                seen.add(action if action >= 52 else "card")
                state.apply(action)
    assert {"card", A.EXCHANGE_DONE, A.KEEP_HAND, A.SWAP_HAND, A.TAKE_MANNI} <= seen
    assert len(seen & {A.ANNOUNCE_SPADES, A.ANNOUNCE_HEARTS, A.ANNOUNCE_GRAND, A.ANNOUNCE_NULLO}) >= 3


# ----------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("spec", ["random", "rule_based", "pimc:worlds=3"])
def test_same_seed_same_actions(spec: str) -> None:
    runs = []
    for _ in range(2):
        disturb_global_rngs(123)  # the agents must not use the global generators
        state = GameState(make_rules("hornafjardar"), seed=9)
        agents = [make_agent(spec) for _ in range(3)]
        runs.append(play(state, agents, [np.random.default_rng([9, s]) for s in range(3)], deals=1))
        disturb_global_rngs(456)
    assert runs[0] == runs[1]


# ----------------------------------------------------------------------------- rule_based behaviour
def test_rule_based_card_play_examples() -> None:
    nullo = dict(trump=None, nullo=True, gone=0, voids=(0, 0, 0), pack=FULL_PACK)
    # Nullo: duck under the current winner with the highest card that still loses (ace is low)
    assert choose_card(cards("AH 5H 9H KH"), 2, [card_from_str("TH"), card_from_str("2C")], 2, **nullo) == card_from_str("9H")
    assert choose_card(cards("AH KH"), 2, [card_from_str("2H"), card_from_str("3C")], 2, **nullo) == card_from_str("AH")
    # Nullo, void in the suit led: shed the king, not the ace (ace is the lowest card)
    assert choose_card(cards("AS KS 3D"), 1, [card_from_str("5C")], 0, **nullo) == card_from_str("KS")
    grand = dict(trump=None, nullo=False, gone=0, voids=(0, 0, 0), pack=FULL_PACK)
    # Grand, last to play: win as cheaply as possible; cannot win: play the lowest
    assert choose_card(cards("4S 9S QS AS"), 2, [card_from_str("8S"), card_from_str("TS")], 3, **grand) == card_from_str("QS")
    assert choose_card(cards("4S 9S 2C"), 2, [card_from_str("KS"), card_from_str("TS")], 3, **grand) == card_from_str("4S")
    # Grand, leading: cash the sure winner (the highest remaining card of a suit)
    assert choose_card(cards("AD 3C 5C 7C"), 0, [], -1, **grand) == card_from_str("AD")
    # Trump hearts, void in the suit led: ruff with the lowest trump that wins
    trump = dict(trump=2, nullo=False, gone=0, voids=(0, 0, 0), pack=FULL_PACK)
    assert choose_card(cards("3H 8H QH 2C"), 2, [card_from_str("AD"), card_from_str("5H")], 1, **trump) == card_from_str("8H")


def test_rule_based_exchange_and_swap() -> None:
    # Grand: keep aces and the long suit, throw the short low cards
    hand = cards("AS KS QS JS 9S 7S AH 2D 3D 4C 5C 6C")
    plan = exchange_plan(hand, "grand", None, 7, FULL_PACK, 12)
    assert set(plan) == set(card_from_str(c) for c in "2D 3D 4C 5C 6C".split())
    # Nullo: discard high cards first, keep the low ones
    plan = exchange_plan(cards("KS QS 2S 3H AH 4D 5D 6D 2C 3C 4C KC"), "nullo", None, 5, FULL_PACK, 12)
    assert {card_from_str(c) for c in ("KS", "QS", "KC")} <= set(plan[:3])
    assert not {card_from_str(c) for c in ("2S", "AH", "2C")} & set(plan)
    # Basic: swap a weak hand, keep a strong one (hearts trump in deal 0)
    mean = mean_estimate("trump", PACK_48, 12)
    assert estimate_tricks(cards("3C 4C 5C 6C 7D 8D 9D 3S 4S 5S 6S 7S"), "trump", 2, 12) < mean
    assert estimate_tricks(cards("AH KH QH JH TH AS KS AC KC AD 3C 4D"), "trump", 2, 12) > mean


@pytest.mark.parametrize("key", sorted(_MEAN_ESTIMATES, key=str))
def test_precomputed_mean_estimates(key) -> None:
    assert monte_carlo_mean(*key) == pytest.approx(mean_estimate(*key), abs=1e-4)


def test_rule_based_announces_its_best_unused_contract() -> None:
    from manni_agents.rule_based import contract_gain

    hand = cards("AS KS QS JS TS 9S 8S 7S AH KH AD KD AC KC 2H 3H")
    state = GameState(make_rules("trjamann", first_dealer=2), seed=0)
    agent = RuleBasedAgent()
    while state.phase != Phase.ANNOUNCE:
        state.apply(agent.act(state.view(state.to_move)))
    view = state.view(state.to_move)
    action = agent.act(view)
    gains = {
        a: contract_gain(view.hand, *{A.ANNOUNCE_SPADES: ("trump", 3), A.ANNOUNCE_HEARTS: ("trump", 2),
                                      A.ANNOUNCE_DIAMONDS: ("trump", 1), A.ANNOUNCE_GRAND: ("grand", None),
                                      A.ANNOUNCE_NULLO: ("nullo", None)}[a], FULL_PACK, 16)
        for a in view.legal_actions
    }
    assert gains[action] == max(gains.values())
    assert contract_gain(hand, "trump", 3, FULL_PACK, 16) > contract_gain(hand, "nullo", None, FULL_PACK, 16)


# ----------------------------------------------------------------------------- strength
def mean_score_difference(variant: str, strong: str, weak: str, deals: range) -> float:
    """Mean over deals (each under 3 seatings: ``strong`` in every seat once, ``weak`` in the other
    two) of the strong seat's deal points minus the mean of the two weak seats' points."""
    total = 0.0
    for deal in deals:
        for seat in range(3):
            agents = [make_agent(strong if s == seat else weak) for s in range(3)]
            state = GameState(make_rules(variant), seed=deal)
            play(state, agents, [np.random.default_rng([deal, seat, s]) for s in range(3)], deals=1)
            p = state.rounds[0].points
            total += p[seat] - (sum(p) - p[seat]) / 2
    return total / (3 * len(deals))


@pytest.mark.parametrize("variant, margin", [("hornafjardar", 2.5), ("basic", 0.6), ("trjamann", 3.0), ("laugarvatn", 3.0)])
def test_rule_based_beats_random(variant: str, margin: float) -> None:
    assert mean_score_difference(variant, "rule_based", "random", range(60)) > margin


def test_pimc_time_budget_and_evaluation() -> None:
    from manni_agents.pimc import PIMCAgent

    state = GameState(make_rules("hornafjardar"), seed=2)
    rule_based = RuleBasedAgent()
    while state.phase != Phase.PLAY:
        state.apply(rule_based.act(state.view(state.to_move)))
    view = state.view(state.to_move)
    best, means, used = PIMCAgent(worlds=1000, time_budget=0.01).evaluate(view, np.random.default_rng(0))
    assert 1 <= used < 1000
    assert set(means) == set(view.legal_actions) and means[best] == max(means.values())
    best, means, used = PIMCAgent(worlds=3).evaluate(view, np.random.default_rng(0))
    assert used == 3 and best in view.legal_actions
