"""The belief sampler: every sampled world is consistent with the observing seat's view."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from manni_agents import sampler
from manni_agents.random_agent import RandomAgent
from manni_agents.rule_based import RuleBasedAgent
from manni_agents.sampler import sample_worlds
from manni_env import GameState, Phase, make_rules
from manni_env.cards import SUIT_MASKS, cards_of

from helpers.hidden import twin_with_other_hidden_cards

VARIANTS = ("hornafjardar", "basic", "trjamann", "laugarvatn")
RULE_BASED, RANDOM = RuleBasedAgent(), RandomAgent()


def advance(state: GameState, steps: int, rng: np.random.Generator, p_rule_based: float = 0.7) -> None:
    """Play ``steps`` actions (a mix of rule-based and random choices) unless the game ends."""
    for _ in range(steps):
        if state.finished:
            return
        agent = RULE_BASED if rng.random() < p_rule_based else RANDOM
        state.apply(agent.act(state.view(state.to_move), rng))


def out_of_play(state: GameState) -> int:
    """Cards of the deal that are in no hand and not played: discards and the unused Manni."""
    d = state._d
    return state.rules.pack & ~(d.hands[0] | d.hands[1] | d.hands[2] | d.played[0] | d.played[1] | d.played[2])


def check_world(true: GameState, world: GameState, seat: int, rng: np.random.Generator) -> None:
    view = true.view(seat)
    assert world.view(seat) == view
    assert set(vars(world)) == set(vars(true))  # the sampler sets every attribute the engine has
    d, w = true._d, world._d
    w.deal.check(world.rules, world.dealer)  # sizes, pack, no duplicates, the cut card with the dealer
    for s in range(3):
        # an opponent that is choosing discards the seat cannot see is modelled as not having begun
        pending = len(d.pending) if s != seat and s == d.to_move else 0
        assert w.hands[s].bit_count() == d.hands[s].bit_count() + pending
        for suit in range(4):
            if view.voids[s] >> suit & 1:
                assert not w.hands[s] & SUIT_MASKS[suit]
        assert w.discards[s].bit_count() == d.discards[s].bit_count() - pending
        assert w.drawn[s].bit_count() == d.drawn[s].bit_count()
    held = [w.hands[s] | w.played[s] for s in range(3)]
    assert sum(h.bit_count() for h in held) == (held[0] | held[1] | held[2]).bit_count()  # disjoint
    pending = len(d.pending) if d.to_move != seat else 0
    assert out_of_play(world).bit_count() == out_of_play(true).bit_count() - pending
    if world.rules.variant == "hornafjardar" and not any(w.played[s] >> w.deal.cut_card & 1 for s in range(3)):
        dealer = world.dealer
        assert (w.hands[dealer] | w.discards[dealer]) >> w.deal.cut_card & 1
        assert not w.drawn[dealer] >> w.deal.cut_card & 1
    deal_index = world.deal_index
    while world.deal_index == deal_index and not world.finished:
        world.apply(RANDOM.act(world.view(world.to_move), rng))
    assert len(world.rounds) == 1


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 10**6), steps=st.integers(0, 200))
def test_every_sampled_world_is_consistent(variant: str, seed: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    state = GameState(make_rules(variant), seed=seed)
    advance(state, steps, rng)
    if state.finished:
        return
    for seat in range(3):
        for world in sample_worlds(state.view(seat), rng, 2):
            check_world(state, world, seat, rng)


def first_state(variant: str, condition, max_seeds: int = 200, max_steps: int = 400) -> tuple[GameState, int]:
    """The first state (over seeds, step by step) where ``condition(state)`` holds."""
    for seed in range(max_seeds):
        rng = np.random.default_rng(seed)
        state = GameState(make_rules(variant), seed=seed)
        for _ in range(max_steps):
            if state.finished:
                break
            if condition(state):
                return state, seed
            advance(state, 1, rng)
    raise AssertionError("no state met the condition")


@pytest.mark.parametrize(
    "variant, condition",
    [
        ("hornafjardar", lambda s: s.phase == Phase.EXCHANGE and len(s._d.pending) >= 2),
        ("hornafjardar", lambda s: s.phase == Phase.PLAY and s._d.exchange_counts[s.dealer] >= 6 and len(s._d.tricks) >= 4),
        ("basic", lambda s: s._d.swapper is not None and len(s._d.tricks) >= 3),
        ("trjamann", lambda s: s.phase == Phase.DISCARD and len(s._d.pending) == 2),
        ("laugarvatn", lambda s: s._d.taker is not None and s._d.voids[(s._d.taker + 1) % 3] and len(s._d.tricks) >= 6),
    ],
    ids=["mid-exchange", "dealer-exchanged-many", "basic-swap", "pickup-discard", "taker-and-voids"],
)
@pytest.mark.parametrize("exact", [False, True], ids=["rejection", "exact"])
def test_special_situations(variant, condition, exact, monkeypatch) -> None:
    if exact:
        monkeypatch.setattr(sampler, "REJECTION_TRIES", 0)
    state, seed = first_state(variant, condition)
    rng = np.random.default_rng(seed + 1)
    for seat in range(3):
        for world in sample_worlds(state.view(seat), rng, 4):
            check_world(state, world, seat, rng)


def test_cut_card_discarded_with_probability_k_over_12(monkeypatch) -> None:
    """Before any card is played, a dealer who exchanged k cards discarded the cut card with
    probability k/12 (uniform labelled worlds); both sampling methods agree."""
    state, _ = first_state(
        "hornafjardar", lambda s: s.phase == Phase.PLAY and 3 <= s._d.exchange_counts[s.dealer] <= 9 and not s._d.plays
    )
    k = state._d.exchange_counts[state.dealer]
    view = state.view(state.forehand)
    n = 3000
    for tries in (sampler.REJECTION_TRIES, 0):
        monkeypatch.setattr(sampler, "REJECTION_TRIES", tries)
        worlds = sample_worlds(view, np.random.default_rng(5), n)
        freq = sum(w._d.discards[state.dealer] >> state.deal.cut_card & 1 for w in worlds) / n
        sigma = (k / 12 * (1 - k / 12) / n) ** 0.5
        assert abs(freq - k / 12) < 4 * sigma, (tries, freq, k / 12)


def test_uniform_over_consistent_splits(monkeypatch) -> None:
    """Late in a deal where the seat took the Manni (so only the two opponents' hands are hidden),
    every split of the unseen cards that respects the shown voids is equally likely."""

    def condition(s: GameState) -> bool:
        d = s._d
        if s.phase != Phase.PLAY or d.taker is None or d.trick or len(d.tricks) < 13:
            return False
        a, b = (d.taker + 1) % 3, (d.taker + 2) % 3
        return bool(d.voids[a] | d.voids[b]) and 3 <= _consistent_splits(s, d.taker)[1] <= 12

    state, _ = first_state("trjamann", condition)
    seat = state._d.taker
    splits, count = _consistent_splits(state, seat)
    a = (seat + 1) % 3
    view = state.view(seat)
    n = 200 * count
    for tries in (sampler.REJECTION_TRIES, 0):
        monkeypatch.setattr(sampler, "REJECTION_TRIES", tries)
        seen = Counter(w._d.hands[a] for w in sample_worlds(view, np.random.default_rng(11), n))
        assert set(seen) == splits
        expected = n / count
        chi2 = sum((seen[h] - expected) ** 2 / expected for h in splits)
        assert chi2 < count - 1 + 5 * (2 * (count - 1)) ** 0.5, (seen, expected)


def _consistent_splits(state: GameState, seat: int) -> tuple[set[int], int]:
    """Opponent ``seat+1``'s possible hands, by brute force over the unseen cards."""
    d = state._d
    a, b = (seat + 1) % 3, (seat + 2) % 3
    unseen = cards_of(d.hands[a] | d.hands[b])
    void = [sum(SUIT_MASKS[s] for s in range(4) if d.voids[x] >> s & 1) for x in (a, b)]
    splits = set()
    for combo in itertools.combinations(unseen, d.hands[a].bit_count()):
        ha = sum(1 << c for c in combo)
        hb = (d.hands[a] | d.hands[b]) & ~ha
        if not ha & void[0] and not hb & void[1]:
            splits.add(ha)
    return splits, len(splits)


def test_bad_requests_are_rejected() -> None:
    state = GameState(make_rules("basic"), seed=1)
    with pytest.raises(ValueError, match="non-negative"):
        sample_worlds(state.view(0), np.random.default_rng(0), -1)
    while not state.finished:
        state.apply(state.legal_actions()[0])
    with pytest.raises(ValueError, match="game is over"):
        sample_worlds(state.view(0), np.random.default_rng(0), 1)


def test_worlds_do_not_depend_on_hidden_cards() -> None:
    """Two true states that the seat cannot tell apart give the same sampled worlds."""
    state = GameState(make_rules("hornafjardar"), seed=4)
    rng = np.random.default_rng(0)
    advance(state, 40, rng)
    seat = state.to_move
    other = twin_with_other_hidden_cards(state, seat)
    w1 = sample_worlds(state.view(seat), np.random.default_rng(3), 3)
    w2 = sample_worlds(other.view(seat), np.random.default_rng(3), 3)
    assert [w._d.hands for w in w1] == [w._d.hands for w in w2]
