"""The observation encoder: layout, values, describe round trip, no hidden information."""

from __future__ import annotations

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.cards import card_from_str, card_to_str, cards_of, mask_of, sort_for_display
from manni_env.engine import Deal, GameState, Phase
from manni_env.observation import (
    CONTRACT_SLOTS,
    HISTORIES,
    LAYOUT_VARIANTS,
    LAYOUTS,
    ObservationEncoder,
    StateEncoder,
    describe,
    layout_table,
    score_scale,
)
from manni_env.rules import VARIANTS, make_rules

SEAT_NAMES = ("me", "left", "right")


def random_views(variant: str, seed: int, games: int = 1, **options):
    """(state, view of the seat on turn) at every decision of random games."""
    rules = make_rules(variant, **options)
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = GameState(rules, seed=seed * 100 + g)
        while not state.finished:
            yield state, state.view(state.to_move)
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        yield state, state.view(0)


def segment(enc: ObservationEncoder, obs: np.ndarray, name: str) -> np.ndarray:
    o = enc.offset[name]
    size = next(s.size for s in enc.segments if s.name == name)
    return obs[o : o + size]


def hand_text(mask: int) -> str:
    cards = sort_for_display(cards_of(mask))
    return " ".join(card_to_str(c) for c in cards) if cards else "-"


def test_each_layout_names_the_variants_of_its_one_hot(monkeypatch):
    """The variant one-hot is as wide as the layout's list of variants, not the variant table, and
    a variant the layout does not name has none of its bits (engine encoder and vector env alike)."""
    from manni_env.vector import VectorManni

    assert set(LAYOUT_VARIANTS) == set(LAYOUTS)
    for layout in LAYOUTS:
        assert LAYOUT_VARIANTS[layout] == ("hornafjardar", "basic", "trjamann", "laugarvatn")  # frozen
        for variant in VARIANTS:
            enc = ObservationEncoder(make_rules(variant), layout=layout)
            state = GameState(enc.rules, seed=1)
            hot = np.flatnonzero(segment(enc, enc.encode(state.view(state.to_move)), "variant"))
            assert hot.tolist() == [LAYOUT_VARIANTS[layout].index(variant)] == [enc.variant_slot]
    monkeypatch.setitem(LAYOUT_VARIANTS, "v1", ("basic", "trjamann", "laugarvatn"))  # a layout without it
    rules = make_rules("hornafjardar")
    enc = ObservationEncoder(rules, layout="v1")
    state = GameState(rules, seed=1)
    obs = enc.encode(state.view(state.to_move))
    assert enc.variant_slot is None
    assert not segment(enc, obs, "variant").any() and segment(enc, obs, "variant").size == 3
    assert describe(obs, rules, layout="v1").splitlines()[0] == "variant: - (not named by layout v1)"
    vector = VectorManni(rules, num_envs=2, layout="v1").reset(seed=1)[0]
    assert vector.shape == (2, enc.size) and not vector[:, enc.offset["variant"] : enc.offset["variant"] + 3].any()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("history", HISTORIES)
def test_layout_offsets_are_contiguous_and_sum_to_size(variant, history):
    rules = make_rules(variant)
    enc = ObservationEncoder(rules, history)
    offset = 0
    for seg in enc.segments:
        assert seg.offset == offset and seg.size > 0 and seg.meaning
        offset += seg.size
    assert offset == enc.size
    assert len({s.name for s in enc.segments}) == len(enc.segments)
    table = layout_table(rules, history)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(enc.segments)
    assert "| `hand` | 0 | 52 |" in table
    # one shared layout: only the full history depends on the variant
    summary = [(s.name, s.offset, s.size) for s in ObservationEncoder(make_rules("hornafjardar")).segments]
    assert [(s.name, s.offset, s.size) for s in enc.segments[: len(summary)]] == summary
    if history == "full":
        assert enc.segments[-1].size == 3 * rules.tricks_per_deal * 55
    state = StateEncoder(rules, history)
    assert sum(s.size for s in state.segments) == state.size == len(state.low) == len(state.high)


@pytest.mark.parametrize("variant", VARIANTS)
def test_values_in_bounds_and_out_argument(variant):
    rules = make_rules(variant)
    for history in HISTORIES:
        enc = ObservationEncoder(rules, history)
        buf = np.full(enc.size, 7.0, np.float32)
        for i, (_, view) in enumerate(random_views(variant, seed=1)):
            obs = enc.encode(view)
            assert obs.dtype == np.float32 and obs.shape == (enc.size,)
            assert np.all(obs >= enc.low) and np.all(obs <= enc.high)
            if i % 7 == 0:
                assert np.array_equal(enc.encode(view, out=buf), obs)


@pytest.mark.parametrize("variant", VARIANTS)
def test_mask_equals_legal_actions(variant):
    enc = ObservationEncoder(make_rules(variant))
    for state, _ in random_views(variant, seed=2):
        for seat in range(3):
            mask = enc.action_mask(state.view(seat))
            assert mask.dtype == np.int8 and mask.shape == (A.NUM_ACTIONS,)
            expected = state.legal_actions() if seat == state.to_move else []
            assert np.flatnonzero(mask).tolist() == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_describe_round_trip_on_random_games(variant):
    rules = make_rules(variant)
    enc = ObservationEncoder(rules, "full")
    for i, (state, view) in enumerate(random_views(variant, seed=3)):
        if i % 5:
            continue
        text = describe(enc.encode(view), rules, "full")
        lines = dict(line.split(": ", 1) for line in text.splitlines())
        assert lines["variant"] == variant
        assert lines["hand"] == hand_text(view.hand)
        assert lines["discards"] == hand_text(view.discards)
        rel = [(view.seat + r) % 3 for r in range(3)]
        assert lines["totals"] == ", ".join(f"{SEAT_NAMES[r]} {view.totals[rel[r]]}" for r in range(3))
        assert lines["plus"] == ", ".join(f"{SEAT_NAMES[r]} {view.plus[rel[r]]}" for r in range(3))
        assert lines["tricks won"] == ", ".join(f"{SEAT_NAMES[r]} {view.tricks_won[rel[r]]}" for r in range(3))
        assert lines["deal"] == str(view.deal_index)
        assert lines["played this deal"] == "; ".join(
            f"{SEAT_NAMES[r]} {hand_text(view.played[rel[r]])}" for r in range(3))
        plays = [f"{SEAT_NAMES[view.relative(s)]} {card_to_str(c)}" for s, c in view.plays]
        assert lines["history"] == (", ".join(plays) or "-")
        if view.contract is not None:
            assert lines["contract"].startswith(view.contract.describe())
        if view.phase == Phase.GAME_OVER:
            assert lines["phase"].startswith("game over")


def test_describe_known_position():
    """An explicit Hornafjarðarmanni deal: cut 7H (trump hearts), seat 0 is forehand and leads."""
    rules = make_rules("hornafjardar", first_dealer=2)
    ranks = "23456789TJQKA"
    deal = Deal.from_strs(
        [[r + "C" for r in ranks[1:]], [r + "D" for r in ranks[:-1]], ["2C"] + [r + "H" for r in ranks[:11]]],
        ["AD", "KH", "AH"] + [r + "S" for r in ranks],
        "7H",
    )
    state = GameState(rules, seed=0, deals=[deal])
    for _ in range(3):  # every seat keeps its hand
        state.apply(A.EXCHANGE_DONE)
    state.apply(card_from_str("AC"))  # seat 0 leads the ace of clubs
    state.apply(card_from_str("2D"))  # seat 1 has no clubs
    enc = ObservationEncoder(rules)
    text = describe(enc.encode(state.view(2)), rules)  # the dealer's view
    assert "contract: Trump H" in text
    assert "cut card: 7H (dealt to me)" in text
    assert "dealer: me" in text
    assert "trick: led by left, suit C: left AC, right 2D" in text
    assert "void in: right C" in text
    assert f"hand: {hand_text(state.hand_mask(2))}" in text
    assert "exchanged: me 0, left 0, right 0" in text


def test_describe_rejects_wrong_size():
    rules = make_rules("basic")
    with pytest.raises(ValueError, match="shape"):
        describe(np.zeros(5), rules)


def test_history_full_slots_in_play_order():
    rules = make_rules("basic")
    enc = ObservationEncoder(rules, "full")
    for state, view in random_views("basic", seed=4):
        if view.phase == Phase.PLAY and len(view.plays) >= 5:
            break
    hist = segment(enc, enc.encode(view), "history").reshape(-1, 55)
    assert hist[len(view.plays):].sum() == 0
    for i, (seat, card) in enumerate(view.plays):
        assert np.flatnonzero(hist[i][:52]).tolist() == [card]
        assert np.flatnonzero(hist[i][52:]).tolist() == [view.relative(seat)]


def test_used_contract_slots():
    for variant in ("trjamann", "laugarvatn"):
        rules = make_rules(variant)
        enc = ObservationEncoder(rules)
        for state, view in random_views(variant, seed=5):
            if state.deal_index >= 3 and view.phase == Phase.PLAY:
                break
        used = segment(enc, enc.encode(view), "used_contracts").reshape(3, 6)
        slot = {name: i for i, name in enumerate(CONTRACT_SLOTS)} | {"suit": 1}
        for seat in range(3):
            expected = sorted(slot[name] for name in view.used_contracts[seat])
            assert np.flatnonzero(used[view.relative(seat)]).tolist() == expected


def test_score_scaling():
    assert score_scale(make_rules("basic", target=5)) == 5
    assert score_scale(make_rules("laugarvatn")) == 32


@pytest.mark.parametrize("variant", VARIANTS)
def test_state_encoder_holds_every_hand_and_the_public_observation(variant):
    rules = make_rules(variant)
    enc = StateEncoder(rules)
    for i, (state, _) in enumerate(random_views(variant, seed=6)):
        if i % 9:
            continue
        vec = enc.encode(state)
        assert vec.shape == (enc.size,) and np.all(vec >= enc.low) and np.all(vec <= enc.high)
        hands = vec[:156].reshape(3, 52)
        for seat in range(3):
            assert mask_of(np.flatnonzero(hands[seat]).tolist()) == state.hand_mask(seat)
        obs0 = enc.observation.encode(state.view(0))
        o = next(s for s in enc.segments if s.name == "played")
        assert np.array_equal(vec[o.offset : o.offset + o.size],
                              segment(enc.observation, obs0, "played"))


# ------------------------------------------------------------------------ hidden information
def _hidden_twin(variant: str, seed: int, swaps: int = 3) -> tuple[Deal, Deal]:
    """Two first deals with seat 0 as forehand that differ only in cards seat 0 never sees: a few
    same-suit swaps between the opponents' hands and the Manni cards seat 0 cannot draw
    (Hornafjarðarmanni: below the top seven; the dealer keeps the cut card)."""
    rules = make_rules(variant, first_dealer=2)
    deal = GameState(rules, seed=seed).deal
    keep = 7 if variant == "hornafjardar" else 0
    places = [list(deal.hands[1]), list(deal.hands[2]), list(deal.manni[keep:])]
    rng = np.random.default_rng(seed)
    done = 0
    while done < swaps:
        p, q = rng.choice(3, size=2, replace=False)
        i = int(rng.integers(len(places[p])))
        same_suit = [j for j, c in enumerate(places[q]) if c // 13 == places[p][i] // 13]
        if places[p][i] == deal.cut_card or not same_suit:
            continue
        j = same_suit[int(rng.integers(len(same_suit)))]
        if places[q][j] == deal.cut_card:
            continue
        places[p][i], places[q][j] = places[q][j], places[p][i]
        done += 1
    twin = Deal((deal.hands[0], tuple(places[0]), tuple(places[1])), deal.manni[:keep] + tuple(places[2]),
                deal.cut_card)
    return deal, twin


@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_ignores_hidden_cards(variant):
    """Two games that differ only in opponents' hidden cards give seat 0 identical observations
    and masks at every step, while the same public actions stay legal in both."""
    rules = make_rules(variant, first_dealer=2)
    encoders = [ObservationEncoder(rules, h, layout) for layout in LAYOUTS for h in HISTORIES]
    reached = []
    for seed in range(6):
        deal_a, deal_b = _hidden_twin(variant, seed)
        a = GameState(rules, seed=seed, deals=[deal_a])
        b = GameState(rules, seed=seed, deals=[deal_b])
        rng = np.random.default_rng(seed)
        steps = opponent_differs = 0
        while not a.finished:
            for enc in encoders:
                assert np.array_equal(enc.encode(a.view(0)), enc.encode(b.view(0))), f"step {steps}"
            assert np.array_equal(encoders[0].action_mask(a.view(0)), encoders[0].action_mask(b.view(0)))
            opponent_differs += not np.array_equal(encoders[0].encode(a.view(1)), encoders[0].encode(b.view(1)))
            if a.to_move == 0 and a.phase in (Phase.SWAP, Phase.PICKUP):
                choice = [A.KEEP_HAND if a.phase == Phase.SWAP else A.PASS_MANNI]  # the Manni stays unseen
            else:
                choice = sorted(set(a.legal_actions()) & set(b.legal_actions()))
            if not choice:
                break
            action = choice[int(rng.integers(len(choice)))]
            a.apply(action)
            b.apply(action)
            steps += 1
        reached.append(steps)
        assert opponent_differs > 0  # the twins really differ in what the others know
    assert max(reached) >= 25 and sum(reached) >= 100  # deep into trick play


def test_layout_command_prints_the_generated_table(capsys):
    from manni_env.cli import main

    assert main(["layout", "--variant", "basic", "--history", "full"]) == 0
    assert capsys.readouterr().out == layout_table(make_rules("basic"), "full")
    assert main(["layout", "--state"]) == 0
    assert capsys.readouterr().out == StateEncoder(make_rules()).layout_table()
