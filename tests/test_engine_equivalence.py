"""The engine's fast paths against straightforward reference code.

``legal_actions`` (suit tables), ``is_legal``, the inlined trick-play path of ``apply``, ``clone``
(field-wise copy), ``view`` (built without the dataclass __init__) and the random deal (slicing) are
checked step by step, over seeded random games of every variant, against plain bit loops,
``copy.deepcopy``, the general ``apply`` path, the ``SeatView`` constructor and the dealing loops
as RULES.md describes them.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from manni_env import VARIANTS, GameState, IllegalActionError, Phase, make_rules
from manni_env import actions as A
from manni_env.cards import cards_of, suit_cards
from manni_env.rules import ANNOUNCED_CONTRACTS
from manni_env.view import SeatView

ANNOUNCE_NAMES = {
    "trjamann": {A.ANNOUNCE_SPADES: "spades", A.ANNOUNCE_HEARTS: "suit", A.ANNOUNCE_DIAMONDS: "suit",
                 A.ANNOUNCE_GRAND: "grand", A.ANNOUNCE_NULLO: "nullo"},
    "laugarvatn": {A.ANNOUNCE_SPADES: "spades", A.ANNOUNCE_HEARTS: "hearts", A.ANNOUNCE_DIAMONDS: "diamonds",
                   A.ANNOUNCE_CLUBS: "clubs", A.ANNOUNCE_GRAND: "grand", A.ANNOUNCE_NULLO: "nullo"},
}


def bits(mask: int) -> list[int]:
    return [c for c in range(mask.bit_length()) if mask >> c & 1]


def reference_legal(state: GameState) -> list[int]:
    """Legal actions from RULES.md, written as plainly as possible."""
    d = state._d
    if d.phase == Phase.GAME_OVER:
        return []
    hand = bits(d.hands[d.to_move])
    if d.phase == Phase.PLAY:
        follow = [c for c in hand if d.trick and c // 13 == d.led_suit]
        return follow or hand
    if d.phase == Phase.EXCHANGE:
        return hand + [A.EXCHANGE_DONE]
    if d.phase == Phase.SWAP:
        return [A.KEEP_HAND, A.SWAP_HAND]
    if d.phase == Phase.PICKUP:
        return [A.TAKE_MANNI, A.PASS_MANNI]
    if d.phase == Phase.DISCARD:
        return hand
    used = state.used_contracts[d.to_move]
    return [a for a, name in ANNOUNCE_NAMES[state.rules.variant].items() if name not in used]


def reference_deal(rules, seed: int):
    """The first deal of ``GameState(rules, seed)``, dealt card by card from the same shuffle."""
    rng = np.random.default_rng(seed)
    dealer = int(rng.integers(3))
    order = ((dealer + 1) % 3, (dealer + 2) % 3, dealer)
    deck = iter(rng.permutation(np.array(bits(rules.pack))).tolist())
    hands: list[list[int]] = [[], [], []]
    manni: list[int] = []
    if rules.variant == "hornafjardar":  # [4 Manni, 3 f, 3 m, 3 dealer] four times
        for _ in range(4):
            manni += [next(deck) for _ in range(4)]
            for seat in order:
                hands[seat] += [next(deck) for _ in range(3)]
    elif rules.variant == "basic":  # packets of four: f, m, dealer, Manni, three times
        for _ in range(3):
            for seat in order:
                hands[seat] += [next(deck) for _ in range(4)]
            manni += [next(deck) for _ in range(4)]
    else:  # one at a time to f, m, dealer; the last four form the Manni
        for i in range(48):
            hands[order[i % 3]].append(next(deck))
        manni = list(deck)
    return dealer, hands, manni


def shared_mutables(a: GameState, b: GameState) -> list[str]:
    """Names of mutable parts that two states share (a clone must share none)."""
    shared = [k for k, v in vars(a).items() if isinstance(v, (list, dict, np.random.Generator)) and v is getattr(b, k)]
    if a.rng.bit_generator is b.rng.bit_generator:
        shared.append("rng.bit_generator")
    if a._d is b._d:
        return shared + ["d"]
    for f in dataclasses.fields(a._d):
        value = getattr(a._d, f.name)
        if isinstance(value, list) and value is getattr(b._d, f.name):
            shared.append(f"d.{f.name}")
    shared += [f"d.exchanges[{i}]" for i, e in enumerate(a._d.exchanges) if e is b._d.exchanges[i]]
    return shared


def play_out(state: GameState, rng: np.random.Generator) -> list[int]:
    actions = []
    while not state.finished:
        legal = state.legal_actions()
        actions.append(legal[int(rng.integers(len(legal)))])
        state.apply(actions[-1])
    return actions


def test_cards_of_and_suit_cards_match_bit_loops():
    rng = np.random.default_rng(0)
    for width in (0, 1, 13, 26, 52, 60):
        for _ in range(300):
            mask = int(rng.integers(2**62)) & ((1 << width) - 1)
            assert cards_of(mask) == bits(mask)
            for suit in range(4):
                assert list(suit_cards(mask, suit)) == [c for c in bits(mask) if c // 13 == suit]


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_deal_matches_reference_dealing(variant):
    rules = make_rules(variant)
    for seed in range(5):
        state = GameState(rules, seed=seed)
        dealer, hands, manni = reference_deal(rules, seed)
        assert state.dealer == dealer
        assert [list(h) for h in state.deal.hands] == hands
        assert list(state.deal.manni) == manni
        if variant == "hornafjardar":
            assert state.deal.cut_card == hands[dealer][-1]  # the bottom card goes to the dealer


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_paths_match_reference_step_by_step(variant):
    rules = make_rules(variant, **({"target": 4} if variant in ("hornafjardar", "basic") else {}))
    for seed in (1, 2):
        state = GameState(rules, seed=seed)
        twin = GameState(rules, seed=seed)  # driven through apply's general path (numpy ints)
        rng = np.random.default_rng([seed, 7])
        step = 0
        while not state.finished:
            legal = state.legal_actions()
            assert legal == reference_legal(state)
            assert [a for a in range(-2, A.NUM_ACTIONS + 2) if state.is_legal(a)] == legal
            for seat in range(3):
                view = state.view(seat)
                assert set(vars(view)) == {f.name for f in dataclasses.fields(SeatView)}
                assert SeatView(**vars(view)) == view
                assert view.dealt_hand == sum(1 << c for c in state.deal.hands[seat])
                assert view.legal_actions == (tuple(legal) if seat == state.to_move else ())
            illegal = [c for c in range(52) if c not in legal]
            if illegal:  # rejected by both apply paths, nothing changed
                card = illegal[int(rng.integers(len(illegal)))]
                for bad in (card, np.int64(card)):
                    with pytest.raises(IllegalActionError):
                        state.apply(bad)
                assert state.legal_actions() == legal
            action = legal[int(rng.integers(len(legal)))]
            state.apply(action)
            twin.apply(np.int64(action))
            step += 1
            if step % 25 == 0:
                assert state.to_dict() == twin.to_dict()
        assert state.to_dict() == twin.to_dict()
        if variant in ANNOUNCED_CONTRACTS:
            assert all(sorted(u) == sorted(ANNOUNCED_CONTRACTS[variant]) for u in state.used_contracts)


@pytest.mark.parametrize("variant", VARIANTS)
def test_clone_matches_deepcopy_and_is_independent(variant):
    state = GameState(make_rules(variant), seed=11)
    rng = np.random.default_rng(3)
    for checkpoint in range(6):
        for _ in range(int(rng.integers(1, 40))):  # stop at assorted phases and trick positions
            if state.finished:
                break
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        before = state.to_dict()
        clone, reference = state.clone(), copy.deepcopy(state)
        assert clone.to_dict() == before
        assert shared_mutables(clone, state) == []
        # both copies continue identically, new deals (from the copied generator) included
        actions = play_out(clone, np.random.default_rng(checkpoint))
        for a in actions:
            reference.apply(a)
        assert clone.to_dict() == reference.to_dict()
        assert state.to_dict() == before
