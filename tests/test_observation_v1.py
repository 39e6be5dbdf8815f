"""Observation layout v1: v0 followed by the trick-play segments; their meaning on hand-checked
positions (the vector kernels' equality with this encoder is in test_vector_equivalence.py, the
absence of hidden information in test_observation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.cards import card_from_str
from manni_env.engine import Deal, GameState, Phase
from manni_env.observation import TRICK_PLAY_SEGMENTS, UNSEEN_SCALE, ObservationEncoder, describe, layout_table
from manni_env.rules import VARIANTS, make_rules
from manni_env.vector import VectorManni


def _segment(enc: ObservationEncoder, obs: np.ndarray, name: str) -> np.ndarray:
    seg = next(s for s in enc.segments if s.name == name)
    return obs[seg.offset : seg.offset + seg.size]


def _cards(values: np.ndarray) -> dict[str, float]:
    """Card name -> value of the non-zero entries of a 52-long segment."""
    return {A.action_to_str(int(c)): float(values[c]) for c in np.flatnonzero(values)}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("history", ("summary", "full"))
def test_v1_is_v0_followed_by_the_trick_play_segments(variant, history):
    rules = make_rules(variant)
    v0, v1 = ObservationEncoder(rules, history), ObservationEncoder(rules, history, "v1")
    assert [(s.name, s.offset, s.size) for s in v1.segments[: len(v0.segments)]] == [
        (s.name, s.offset, s.size) for s in v0.segments]
    assert [(s.name, s.size) for s in v1.segments[len(v0.segments):]] == [(n, k) for n, k, _ in TRICK_PLAY_SEGMENTS]
    assert v1.size == v0.size + 214
    assert np.array_equal(v1.low[: v0.size], v0.low) and np.array_equal(v1.high[: v0.size], v0.high)
    assert "`unseen_above`" in layout_table(rules, history, "v1") and "v1" in layout_table(rules, history, "v1")
    state, rng = GameState(rules, seed=3), np.random.default_rng(3)
    buf = np.full(v1.size, 7.0, np.float32)
    for step in range(120):
        for seat in range(3):
            obs = v1.encode(state.view(seat))
            assert obs[: v0.size].tobytes() == v0.encode(state.view(seat)).tobytes()
            assert np.all(obs >= v1.low) and np.all(obs <= v1.high)
        if step % 13 == 0:
            assert np.array_equal(v1.encode(state.view(0), out=buf), v1.encode(state.view(0)))
        state.apply(int(rng.choice(state.legal_actions())))


def _deal(cut: str) -> Deal:
    """Forehand (seat 0, dealer 2): AC 3C-7C 2D-7D; middlehand: 8C-KC 8D-KD; the dealer: the cut
    card and 2H-QH; the Manni: 2C AD KH AH and the other spades."""
    ranks = "23456789TJQKA"
    hands = [["AC"] + [r + "C" for r in ranks[1:6]] + [r + "D" for r in ranks[:6]],
             [r + "C" for r in ranks[6:12]] + [r + "D" for r in ranks[6:12]],
             [cut] + [r + "H" for r in ranks[:11]]]
    manni = ["2C", "AD", "KH", "AH"] + [r + "S" for r in ranks if r + "S" != cut]
    return Deal.from_strs(hands, manni, cut)


def _start(cut: str) -> GameState:
    state = GameState(make_rules("hornafjardar", first_dealer=2), seed=0, deals=[_deal(cut)])
    for _ in range(3):  # every seat keeps its hand
        state.apply(A.EXCHANGE_DONE)
    assert state.phase == Phase.PLAY and state.to_move == 0
    return state


@pytest.mark.parametrize("cut,nullo", [("3S", True), ("7S", False)])
def test_unseen_above_counts_higher_unseen_cards_in_the_trick_order(cut, nullo):
    state = _start(cut)
    enc = ObservationEncoder(state.rules, layout="v1")
    unseen = _segment(enc, enc.encode(state.view(0)), "unseen_above") * UNSEEN_SCALE
    hand = state.hand_mask(0)
    assert all(hand >> card & 1 for card in np.flatnonzero(unseen))  # only cards in hand
    # nullo (ace low): 2C and 8C-KC are above the ace, the ace of diamonds is below every diamond
    # trump spades (ace high): nothing is above the ace of clubs, AD is above every diamond
    expected = {"AC": 7, "3C": 6, "7C": 6, "2D": 6, "7D": 6} if nullo else {"AC": 0, "3C": 6, "7C": 6, "2D": 7, "7D": 7}
    for name, count in expected.items():
        assert round(unseen[card_from_str(name)]) == count, name


def test_trick_play_segments_on_a_nullo_trick():
    """Nullo: AC led, 8C wins trick 1 over it (ace low); 9C led, 3H played: 9C (middlehand) wins so far."""
    state = _start("3S")
    for card in ("AC", "8C", "2H", "9C", "3H"):
        state.apply(card_from_str(card))
    enc = ObservationEncoder(state.rules, layout="v1")
    for seat, rel_winner in ((0, 1), (2, 2)):  # middlehand is seat 0's left, the dealer's right
        obs = enc.encode(state.view(seat))
        assert np.flatnonzero(_segment(enc, obs, "trick_position")).tolist() == [2]
        assert _cards(_segment(enc, obs, "trick_winning_card")) == {"9C": 1.0}
        assert np.flatnonzero(_segment(enc, obs, "trick_winning_seat")).tolist() == [rel_winner]
        assert set(_cards(_segment(enc, obs, "led"))) == {"AC", "9C"}
        assert set(_cards(_segment(enc, obs, "won"))) == {"8C"}
    assert state.to_move == 0
    # seat 0 holds 3C-7C 2D-7D: KC QC JC TC and KD-8D are unseen above them (AD is below, nullo)
    unseen = _cards(_segment(enc, enc.encode(state.view(0)), "unseen_above") * UNSEEN_SCALE)
    assert {k: round(v) for k, v in unseen.items()} == {**{f"{r}C": 4 for r in "34567"},
                                                          **{f"{r}D": 6 for r in "234567"}}
    text = describe(enc.encode(state.view(0)), state.rules, layout="v1")
    assert "cards in the trick: 2; winning so far: 9C (left)" in text
    assert "won tricks this deal: 8C" in text


def test_trick_play_segments_are_empty_before_play():
    state = GameState(make_rules("hornafjardar", first_dealer=2), seed=0, deals=[_deal("7S")])
    enc = ObservationEncoder(state.rules, layout="v1")
    obs = enc.encode(state.view(0))
    for name in ("trick_position", "trick_winning_card", "trick_winning_seat", "led", "won"):
        assert not _segment(enc, obs, name).any(), name


def test_bad_layout_name_is_one_clear_line():
    rules = make_rules()
    for make in (lambda: ObservationEncoder(rules, layout="v2"), lambda: VectorManni(rules, 2, layout="V1")):
        with pytest.raises(ValueError, match=r"^observation layout must be one of v0, v1; got '(v2|V1)'$"):
            make()


def test_v1_env_ids_and_the_layout_option_give_layout_v1_and_v0_keeps_v0():
    import pickle

    import gymnasium
    import pettingzoo
    from pettingzoo.test import api_test

    import manni_env
    from manni_env import manni_v0, manni_v1

    sizes = {"v0": 616, "v1": 830}
    for layout, module, aec_id in (("v0", manni_v0, manni_env.PETTINGZOO_ID), ("v1", manni_v1, manni_env.PETTINGZOO_V1_ID)):
        aec = module.env(variant="basic")
        assert aec.unwrapped.metadata["name"] == f"manni_{layout}"
        assert pettingzoo.make("aec", aec_id).unwrapped.encoder.layout == layout
        aec.reset(seed=0)
        assert aec.observe(aec.agent_selection)["observation"].shape == (sizes[layout],)
        assert pickle.loads(pickle.dumps(module.raw_env())).encoder.layout == layout
        assert gymnasium.make(manni_env.GYM_ID, layout=layout).observation_space.shape == (sizes[layout],)
        for mode in ("NextStep", "SameStep"):
            venv = gymnasium.make_vec(manni_env.GYM_SELF_PLAY_ID, num_envs=2, autoreset_mode=mode, layout=layout)
            assert venv.reset(seed=0)[0]["observation"].shape == (2, sizes[layout])
    api_test(manni_v1.env(variant="trjamann"), num_cycles=100)


def test_layout_command_prints_the_v1_table(capsys):
    from manni_env.cli import main

    assert main(["layout", "--variant", "trjamann", "--layout", "v1"]) == 0
    assert capsys.readouterr().out == layout_table(make_rules("trjamann"), "summary", "v1")
