"""Table-driven rules tests on explicit deals: every worked example of RULES.md and each rule.

Most deals here are built by :func:`build_deal` so that every trick is played in one suit that all
three seats follow, each seat playing its highest remaining card of that suit: trick ``k`` is then
won by ``winners[k]`` whoever leads, which fixes the trick counts of a deal exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.cards import RANKS, SUITS, card_from_str, card_to_str, rank_of, suit_of
from manni_env.engine import (
    Contract,
    GameState,
    IllegalActionError,
    Phase,
    contract_from_cut,
    trick_winner,
)
from manni_env.rules import CONTRACT_SLOTS, VARIANT_TABLE, VARIANTS, make_rules

from helpers.deals import FOLLOW_DEAL, HIGH, NO_ACES, NO_TWOS, NULLO_NO_TWOS, build_deal, counts_winners, deal_with_hands

def skip_exchange(state: GameState) -> None:
    """Everyone keeps the hand / passes the Manni."""
    keep = {Phase.EXCHANGE: A.EXCHANGE_DONE, Phase.SWAP: A.KEEP_HAND, Phase.PICKUP: A.PASS_MANNI}
    while state.phase in keep:
        state.apply(keep[state.phase])


def play_suits(state: GameState, suits: str, order: str) -> None:
    """Play the deal under way as :func:`build_deal` intends."""
    rounds = len(state.rounds)
    while len(state.rounds) == rounds:
        k = sum(state.view(0).tricks_won)
        cards = [c for c in state.hand(state.to_move) if SUITS[suit_of(c)] == suits[k // 4]]
        state.apply(min(cards, key=lambda c: order.index(RANKS[rank_of(c)])))


def play_counts(rules, counts, first_dealer=0, cut=None, order=NO_ACES, announce=None) -> GameState:
    """Play one explicit deal (nobody exchanges) whose trick counts come out as ``counts``."""
    rules = make_rules(rules.variant, **{**rules.options(), "first_dealer": first_dealer})
    winners = counts_winners(counts)
    if rules.variant == "basic":
        suits, pack = "HSD", NO_TWOS
    elif rules.is_announcement:
        suits, pack = "CDHS", HIGH
    else:
        suits, pack = (cut[1] + "CDHS".replace(cut[1], ""))[:3], HIGH
        # the cut card is in trick group `trick` of the first suit; the dealer must win that
        # trick exactly when the cut card is the group's top card
        trick, top = divmod(order.index(cut[0]), 3)
        want = top == 0
        if (winners[trick] == first_dealer) != want:
            k = next(k for k, w in enumerate(winners) if (w == first_dealer) == want)
            winners[trick], winners[k] = winners[k], winners[trick]
    state = GameState(rules, deals=[build_deal(winners, suits, order, pack, first_dealer, cut)])
    skip_exchange(state)
    if announce is not None:
        state.apply(announce)
    play_suits(state, suits, order)
    return state


# ----------------------------------------------------------------------------- scoring
@pytest.mark.parametrize("tricks, score", [(0, 4), (1, 3), (2, 2), (3, 1), (4, 0), (5, -1), (6, -2), (12, -8)])
def test_nullo_score_table(tricks, score):
    rest = 12 - tricks
    state = play_counts(make_rules("hornafjardar"), (tricks, rest // 2, rest - rest // 2), first_dealer=1, cut="3S")
    r = state.rounds[0]
    assert r.contract.kind == "nullo" and r.tricks_won[0] == tricks
    assert r.points[0] == score and sum(r.points) == 0


@pytest.mark.parametrize("tricks", range(13))
def test_nullo_scores_four_minus_tricks(tricks):
    rest = 12 - tricks
    state = play_counts(make_rules("hornafjardar"), (rest // 2, tricks, rest - rest // 2), cut="2C")
    assert state.rounds[0].points[1] == 4 - tricks


@pytest.mark.parametrize("cut", ["6C", "9H", "TS", "KD"])
def test_trump_and_grand_score_tricks_minus_four(cut):
    state = play_counts(make_rules("hornafjardar"), (3, 4, 5), cut=cut)
    r = state.rounds[0]
    assert r.tricks_won == (3, 4, 5) and r.points == (-1, 0, 1)
    assert r.plus == (0, 0, 1) and r.minus == (1, 0, 0) and r.totals == (-1, 0, 1)


@pytest.mark.parametrize("variant", ["trjamann", "laugarvatn"])
def test_announcement_examples(variant):
    # first dealer 2: forehand (the declarer) is seat 0
    spades = play_counts(make_rules(variant), (8, 8, 0), first_dealer=2, order=NO_TWOS,
                         announce=A.ANNOUNCE_SPADES)
    r = spades.rounds[0]
    assert r.contract == Contract("trump", 3, 0, "spades")
    assert r.tricks_won == (8, 8, 0) and r.points == (0, 4, -4)
    nullo = play_counts(make_rules(variant), (2, 7, 7), first_dealer=2, order=NULLO_NO_TWOS,
                        announce=A.ANNOUNCE_NULLO)
    r = nullo.rounds[0]
    assert r.contract == Contract("nullo", None, 0, "nullo")
    assert r.tricks_won == (2, 7, 7) and r.points == (2, -1, -1)
    grand = play_counts(make_rules(variant), (5, 6, 5), first_dealer=0, order=NO_TWOS,
                        announce=A.ANNOUNCE_GRAND)
    assert grand.rounds[0].contract.declarer == 1 and grand.rounds[0].points == (1, -2, 1)


# ----------------------------------------------------------------------------- tricks
@pytest.mark.parametrize(
    "cards, trump, nullo, winner",
    [
        ("AS 2H KS", "H", False, 1),  # a low trump beats the ace of the suit led
        ("AC 3S 2S", "S", False, 1),  # highest trump
        ("9H AH 2S", "S", False, 2),
        ("5C AS 6C", None, False, 2),  # off-suit ace does not count without trump
        ("KD AD QH", None, False, 1),  # Grand: ace high
        ("2D 3D 4D", "C", False, 2),
        ("AH 2H KH", None, True, 2),  # Nullo: ace low, king high
        ("AH 2H 3C", None, True, 1),
        ("AH 3C 4S", None, True, 0),  # an ace led and nobody follows: it wins
        ("TH JH AH", "H", False, 2),
    ],
)
def test_trick_winner(cards, trump, nullo, winner):
    played = [card_from_str(c) for c in cards.split()]
    assert trick_winner(played, None if trump is None else SUITS.index(trump), nullo) == winner


@pytest.mark.parametrize("card", [card_to_str(c) for c in range(52)])
def test_contract_from_cut_for_every_card(card):
    contract = contract_from_cut(card_from_str(card))
    if card[0] in "2345":
        assert contract == Contract("nullo")
    elif card[0] in "6789":
        assert contract == Contract("trump", SUITS.index(card[1]))
    else:
        assert contract == Contract("grand")


def test_follow_suit_and_revoke_rejected_with_state_unchanged():
    state = GameState(make_rules("hornafjardar", first_dealer=2), deals=[FOLLOW_DEAL])
    skip_exchange(state)
    assert state.contract == Contract("grand") and state.to_move == 0
    state.apply(card_from_str("AH"))
    assert state.legal_actions() == [card_from_str("2H")]
    before = state.to_dict()
    with pytest.raises(IllegalActionError, match="must follow suit H"):
        state.apply(card_from_str("AS"))
    with pytest.raises(IllegalActionError, match="does not hold 3C"):
        state.apply(card_from_str("3C"))
    assert state.to_dict() == before
    state.apply(card_from_str("2H"))
    # seat 2 has no heart: any card is legal, and it does not win
    assert state.legal_actions() == sorted(state.hand(2))
    state.apply(card_from_str("2S"))
    assert state.to_move == 0 and state.view(0).tricks_won == (1, 0, 0)
    assert state.view(0).voids[2] == 1 << SUITS.index("H")


def test_trump_wins_over_the_suit_led_in_play():
    deal = deal_with_hands(
        [
            "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H",
            "2H AS KS QS JS TS 9S 8S 7S 6S 5S 4S",
            "3S 2S 7D KD QD JD TD 9D 8D AD 6D 5D",
        ],
        "4D 3D 2D AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
        "7D",
    )
    state = GameState(make_rules("hornafjardar", first_dealer=2), deals=[deal])
    skip_exchange(state)
    assert state.contract == Contract("trump", SUITS.index("D"))
    for card in ("AH", "2H", "5D"):
        state.apply(card_from_str(card))
    assert state.to_move == 2 and state.view(2).tricks_won == (0, 0, 1)


# ----------------------------------------------------------------------------- deal and exchange
def test_cut_card_is_dealt_to_the_dealer_in_random_deals():
    for seed in range(300):
        state = GameState(make_rules("hornafjardar"), seed=seed)
        view = state.view(state.dealer)
        assert view.dealt_hand >> view.cut_card & 1
        assert state.contract == contract_from_cut(view.cut_card)
        for seat in range(3):
            assert bin(state.view(seat).hand).count("1") == 12


@pytest.mark.parametrize(
    "counts, dealer_limit", [((0, 0, 12), 12), ((7, 5, 4), 4), ((3, 2, 0), 11), ((7, 0, 5), 9), ((1, 5, 10), 10)]
)
def test_exchange_limits_and_drawn_cards_are_manni_top_cards(counts, dealer_limit):
    source = GameState(make_rules("hornafjardar"), seed=5)
    deal = source.deal  # a random deal, replayed explicitly
    state = GameState(make_rules("hornafjardar", first_dealer=source.dealer), deals=[deal])
    order = [(state.dealer + k) % 3 for k in (1, 2, 3)]
    used = 0
    for seat, k, limit in zip(order, counts, (7, 5, dealer_limit)):
        assert state.to_move == seat and state.exchange_limit() == limit
        hand = state.hand(seat)
        discards = hand[:k]
        for n, card in enumerate(discards):
            state.apply(card)
            if n + 1 < limit:  # below the limit: still choosing, nothing drawn yet
                assert state.to_move == seat and state.hand(seat) == [c for c in hand if c not in discards[: n + 1]]
                assert state.exchange_limit() == limit - n - 1
        if k < limit:
            state.apply(A.EXCHANGE_DONE)
        assert state.to_move != seat or state.phase == Phase.PLAY  # at the limit it finished by itself
        drawn = deal.manni[used : used + k]
        used += k
        assert state.hand(seat) == sorted(set(hand) - set(discards) | set(drawn))
        assert state.view(seat).drawn == sum(1 << c for c in drawn)
        assert state.rounds == [] and state.deal_exchanges[-1].drawn == drawn
    assert state.phase == Phase.PLAY
    assert state.view(0).exchange_counts == tuple(counts[order.index(s)] for s in range(3))


def test_exchange_over_the_limit_is_impossible():
    state = GameState(make_rules("hornafjardar", first_dealer=0), seed=1)
    seat = state.to_move
    for card in state.hand(seat)[:7]:
        state.apply(card)
    assert state.to_move != seat and state.exchange_limit() == 5  # forehand was done at 7


def test_basic_trump_rotation_and_dealer_rotation():
    rng = np.random.default_rng(3)
    state = GameState(make_rules("basic", target=100, max_deals=9), seed=3)
    first = state.dealer
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    assert state.truncated and len(state.rounds) == 9
    for k, r in enumerate(state.rounds):
        assert r.contract == Contract("trump", SUITS.index("HSDC"[k % 4]))  # RULES.md: H S D C
        assert "HSDC"[k % 4] == SUITS[r.contract.trump]
        assert r.dealer == (first + k) % 3


def test_basic_first_swap_ends_the_exchange_and_the_old_hand_leaves_play():
    state = GameState(make_rules("basic", first_dealer=0), seed=11)
    deal = state.deal
    assert state.to_move == 1
    state.apply(A.KEEP_HAND)
    assert state.to_move == 2
    state.apply(A.SWAP_HAND)
    assert state.phase == Phase.PLAY and state.to_move == 1  # the dealer is never asked
    assert state.hand(2) == sorted(deal.manni)
    view = state.view(0)
    assert view.swapper == 2 and view.passed == (1,)
    rng = np.random.default_rng(0)
    while not state.rounds:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    played = {c for _, cards, _ in state.rounds[0].tricks for c in cards}
    assert played.isdisjoint(deal.hands[2]) and set(deal.manni) <= played
    assert [(e.seat, e.swap) for e in state.rounds[0].exchanges] == [(1, False), (2, True)]


def test_basic_nobody_swaps_leaves_the_manni_unused():
    state = GameState(make_rules("basic", first_dealer=1), seed=4)
    manni = set(state.deal.manni)
    for _ in range(3):
        state.apply(A.KEEP_HAND)
    assert state.phase == Phase.PLAY and state.to_move == 2
    assert all(manni.isdisjoint(state.hand(s)) for s in range(3))


def _basic_game(counts_per_deal, **options):
    rules = make_rules("basic", first_dealer=0, **options)
    deals = [build_deal(counts_winners(c), "HSD", NO_TWOS, NO_TWOS) for c in counts_per_deal]
    state = GameState(rules, deals=deals)
    for _ in counts_per_deal:
        if state.finished:
            break
        skip_exchange(state)
        play_suits(state, "HSD", NO_TWOS)
    return state


def test_basic_tie_at_target_plays_another_deal():
    state = _basic_game([(6, 6, 0), (6, 4, 2)], target=2)
    assert len(state.rounds) == 2 and state.rounds[0].totals == (2, 2, 0)
    assert state.finished and not state.truncated and state.winners == (0,) and state.totals == [4, 2, 0]


def test_hornafjardar_shared_win_and_truncation():
    shared = play_counts(make_rules("hornafjardar", target=2), (6, 6, 0), cut="8S")
    assert shared.finished and not shared.truncated and shared.winners == (0, 1)
    capped = play_counts(make_rules("hornafjardar", target=10, max_deals=1), (5, 4, 3), cut="8S")
    assert capped.finished and capped.truncated and capped.winners == (0,)


def test_first_dealer_from_seed_or_option():
    dealers = {GameState(make_rules(), seed=s).dealer for s in range(30)}
    assert dealers == {0, 1, 2}
    assert all(GameState(make_rules(), seed=s).dealer == GameState(make_rules(), seed=s).dealer for s in range(10))
    for d in range(3):
        for variant in VARIANTS:
            state = GameState(make_rules(variant, first_dealer=d), seed=9)
            assert state.dealer == d and state.to_move == (d + 1) % 3


@pytest.mark.parametrize(
    "variant, options, message",
    [
        ("whist", {}, r"unknown variant 'whist'; valid variants: hornafjardar, basic, trjamann, laugarvatn"),
        ("hornafjardar", {"negative": True}, r"option 'negative' is not valid for variant 'hornafjardar'; valid options: target, max_deals, first_dealer"),
        ("trjamann", {"target": 5}, r"option 'target' is not valid for variant 'trjamann'; valid options: first_dealer"),
        ("basic", {"target": 0}, r"target must be a positive integer, got 0"),
        ("basic", {"target": "5"}, r"target must be a positive integer, got '5'"),
        ("basic", {"negative": 1}, r"negative must be True or False, got 1"),
        ("basic", {"max_deals": 0}, r"max_deals must be a positive integer, got 0"),
        ("laugarvatn", {"first_dealer": 3}, r"first_dealer must be 0, 1, 2 or None"),
        ("hornafjardar", {"first_dealer": True}, r"first_dealer must be 0, 1, 2 or None \(drawn from the seed\), got True"),
        ("basic", {"first_dealer": 1.0}, r"first_dealer must be 0, 1, 2 or None \(drawn from the seed\), got 1.0"),
        ("trjamann", {"first_dealer": "1"}, r"first_dealer must be 0, 1, 2 or None"),
        ("basic", {"target": True}, r"target must be a positive integer, got True"),
        ("basic", {"target": 5.0}, r"target must be a positive integer, got 5.0"),
        ("hornafjardar", {"max_deals": 2.5}, r"max_deals must be a positive integer, got 2.5"),
    ],
)
def test_make_rules_rejects_bad_variants_and_options(variant, options, message):
    with pytest.raises(ValueError, match=message):
        make_rules(variant, **options)


def test_numpy_integers_become_python_ints_and_records_stay_json():
    import json

    from manni_env.records import game_record

    rules = make_rules("basic", target=np.int64(2), max_deals=np.int32(3), first_dealer=np.int64(1))
    assert rules == make_rules("basic", target=2, max_deals=3, first_dealer=1)
    assert all(type(v) is int for k, v in rules.options().items() if k != "negative")
    state = GameState(rules, seed=np.int64(3))
    assert type(state.seed) is int and state == GameState(make_rules("basic", target=2, max_deals=3, first_dealer=1), seed=3)
    while not state.finished:
        state.apply(state.legal_actions()[0])
    record = json.loads(json.dumps(game_record(state)))
    assert record["seed"] == 3 and record["first_dealer"] == 1
    assert GameState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", np.float64(2.0)])
def test_game_seed_must_be_a_non_negative_integer(seed):
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer or None, got"):
        GameState(make_rules(), seed=seed)


# ----------------------------------------------------------------------------- announcement variants
@pytest.mark.parametrize("variant", ["trjamann", "laugarvatn"])
@pytest.mark.parametrize("taker", [0, 1, 2, None])
def test_manni_pickup_at_most_one_taker_then_discard_four(variant, taker):
    state = GameState(make_rules(variant, first_dealer=2), seed=21)
    manni = list(state.deal.manni)
    order = [0, 1, 2]
    for k, seat in enumerate(order):
        assert state.phase == Phase.PICKUP and state.to_move == seat
        assert state.legal_actions() == [A.TAKE_MANNI, A.PASS_MANNI]
        if k == taker:
            state.apply(A.TAKE_MANNI)
            break
        state.apply(A.PASS_MANNI)
    if taker is not None:
        assert state.phase == Phase.DISCARD and len(state.hand(taker)) == 20
        assert set(manni) <= set(state.hand(taker))
        discards = state.hand(taker)[-4:]
        for n, card in enumerate(discards):
            assert state.legal_actions() == state.hand(taker)
            state.apply(card)
            if n < 3:
                assert state.phase == Phase.DISCARD
        assert len(state.hand(taker)) == 16 and state.view(0).taker == taker
        assert state.view(taker).discards == sum(1 << c for c in discards)
    else:
        assert all(set(manni).isdisjoint(state.hand(s)) for s in range(3))
    assert state.phase == Phase.ANNOUNCE and state.to_move == 0  # forehand announces, nobody else is asked


def test_trjamann_suit_is_hearts_or_diamonds_and_used_once():
    state = GameState(make_rules("trjamann", first_dealer=2), seed=2)
    skip_exchange(state)
    assert state.legal_actions() == [A.ANNOUNCE_SPADES, A.ANNOUNCE_HEARTS, A.ANNOUNCE_DIAMONDS,
                                     A.ANNOUNCE_GRAND, A.ANNOUNCE_NULLO]
    with pytest.raises(IllegalActionError):
        state.apply(A.ANNOUNCE_CLUBS)
    state.apply(A.ANNOUNCE_DIAMONDS)
    assert state.contract == Contract("trump", SUITS.index("D"), 0, "suit")
    assert state.used_contracts[0] == ["suit"]


@pytest.mark.parametrize("variant, deals", [("trjamann", 12), ("laugarvatn", 18)])
def test_announcement_games_use_each_contract_once_and_force_the_last(variant, deals):
    rules = make_rules(variant)
    for seed in range(3):
        state = GameState(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while not state.finished:
            if state.phase == Phase.ANNOUNCE:
                seat = state.to_move
                left = [c for c in rules.contracts if c not in state.used_contracts[seat]]
                names = {state_contract_name(state, a) for a in state.legal_actions()}
                assert names == set(left)
                if len(left) == 1 and left[0] != "suit":
                    assert len(state.legal_actions()) == 1
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        assert len(state.rounds) == deals and not state.truncated
        for seat in range(3):
            assert sorted(state.used_contracts[seat]) == sorted(rules.contracts)
            assert sorted(r.contract.name for r in state.rounds if r.contract.declarer == seat) == sorted(rules.contracts)
        for r in state.rounds:
            assert r.contract.declarer == (r.dealer + 1) % 3 and sum(r.tricks_won) == 16 and sum(r.points) == 0
        assert state.winners == tuple(s for s in range(3) if state.totals[s] == max(state.totals))


def state_contract_name(state: GameState, action: int) -> str:
    clone = state.clone()
    clone.apply(action)
    return clone.contract.name


def test_announcing_a_used_contract_is_rejected():
    state = GameState(make_rules("laugarvatn", first_dealer=2), seed=8)
    state.used_contracts[0].append("grand")
    skip_exchange(state)
    assert A.ANNOUNCE_GRAND not in state.legal_actions()
    before = state.to_dict()
    with pytest.raises(IllegalActionError):
        state.apply(A.ANNOUNCE_GRAND)
    assert state.to_dict() == before


def test_the_table_gives_each_variant_its_point_range_and_zero_sum():
    """RULES.md's deal score ranges and which variants' deals are zero-sum, as the table derives them."""
    expected = {("hornafjardar", False): ((-8, 8), True), ("basic", False): ((0, 8), False),
                ("basic", True): ((-4, 8), True), ("trjamann", False): ((-12, 12), True),
                ("laugarvatn", False): ((-12, 12), True)}
    for (variant, negative), (points, zero_sum) in expected.items():
        rules = make_rules(variant, **({"negative": True} if negative else {}))
        assert (rules.deal_points_range, rules.zero_sum) == (points, zero_sum), (variant, negative)
    assert [VARIANT_TABLE[v].title for v in VARIANTS] == ["Hornafjarðarmanni", "Basic Manni", "Trjámann",
                                                           "Laugarvatnsmanni"]


def test_one_table_of_contract_slots():
    """The rules' slot table is the observation's and the vector kernels' (no copy to fall out of step):
    each announced contract has its own slot, Trjámann's suit the hearts slot."""
    from manni_env import observation, vector_kernels

    assert CONTRACT_SLOTS == ("spades", "hearts", "diamonds", "clubs", "grand", "nullo")
    assert observation.CONTRACT_SLOTS is CONTRACT_SLOTS
    assert vector_kernels.NUM_CONTRACT_SLOTS == len(CONTRACT_SLOTS)
    used = next(s for s in observation.ObservationEncoder(make_rules("laugarvatn")).segments
                if s.name == "used_contracts")
    assert used.size == 3 * len(CONTRACT_SLOTS)
    for spec in VARIANT_TABLE.values():
        for row in spec.announcements:
            assert CONTRACT_SLOTS[row.slot] == ("hearts" if row.name == "suit" else row.name), (spec.name, row)
