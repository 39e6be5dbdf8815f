"""Scripted edge cases on explicit deals, each run by one test body on both paths: the engine and
the vector env, with its default backend and with its kernels run by Python (see
helpers/two_paths.py; on the vector path every step is also checked against the engine).

Ties at the target, the deal cap, exchange limits, the Basic swap, the Manni pickup, every
announcement of whole Trjámann and Laugarvatnsmanni games, the ace-low Nullo trick, RULES.md's
worked examples and illegal actions in every phase (rejected, nothing changed). Deals whose trick
counts are fixed come from helpers/deals.py's ``build_deal``. Every case runs on every path: a
vector env that cannot play a variant fails the test.
"""

from __future__ import annotations

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.cards import RANKS, SUITS, card_from_str, cards_of, mask_of, rank_of, suit_of
from manni_env.engine import Contract, Deal, GameState
from manni_env.rules import ANNOUNCEMENT_VARIANTS, Phase, Rules, make_rules

from helpers.deals import FOLLOW_DEAL, HIGH, NO_ACES, NO_TWOS, NULLO_NO_TWOS, WORKED_GAME, build_deal, counts_winners
from helpers.two_paths import StepResult, open_path

paths = pytest.mark.parametrize("path_name", ["engine", "vector", "vector-python"])
KEEP = {Phase.EXCHANGE: A.EXCHANGE_DONE, Phase.SWAP: A.KEEP_HAND, Phase.PICKUP: A.PASS_MANNI}


# ----------------------------------------------------------------------------- helpers
def keep_hands(path) -> None:
    """Everyone keeps the hand / passes the Manni."""
    while path.phase in KEEP:
        path.step(KEEP[path.phase])


def play_suits(path, suits: str, order: str) -> StepResult:
    """Play the deal under way as ``build_deal`` intends; returns the step that ends it."""
    while True:
        view = path.view(path.to_move)
        k = sum(view.tricks_won)
        cards = [c for c in cards_of(view.hand) if SUITS[suit_of(c)] == suits[k // 4]]
        step = path.step(min(cards, key=lambda c: order.index(RANKS[rank_of(c)])))
        if step.deal_end is not None:
            return step


def cut_deal(counts: tuple[int, int, int], dealer: int, cut: str) -> tuple[Deal, str]:
    """A Hornafjarðarmanni deal, cut card ``cut`` dealt to ``dealer``, whose trick counts come out
    as ``counts`` when nobody exchanges; returns it and the suits its tricks are played in."""
    winners = counts_winners(counts)
    suits = (cut[1] + "CDHS".replace(cut[1], ""))[:3]
    # the cut card is in trick group `trick` of the first suit; the dealer must win that trick
    # exactly when the cut card is the group's top card
    trick, top = divmod(NO_ACES.index(cut[0]), 3)
    if (winners[trick] == dealer) != (top == 0):
        k = next(k for k, w in enumerate(winners) if (w == dealer) == (top == 0))
        winners[trick], winners[k] = winners[k], winners[trick]
    return build_deal(winners, suits, NO_ACES, HIGH, dealer, cut), suits


def random_deal(rules: Rules, seed: int) -> tuple[Deal, int]:
    """A random deal of ``rules`` and its dealer (from an engine game of that seed)."""
    state = GameState(rules, seed=seed)
    return state.deal, state.dealer


def floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


# ----------------------------------------------------------------------------- RULES.md's worked examples
@paths
def test_worked_game_of_rules_md(path_name):
    deals = [build_deal(w, suits, NO_ACES, dealer=dealer, cut=cut) for cut, dealer, suits, w, *_ in WORKED_GAME]
    path = open_path(path_name, make_rules("hornafjardar", first_dealer=2), deals)
    contracts = [Contract("trump", SUITS.index("H")), Contract("nullo"), Contract("grand")]
    for (cut, dealer, suits, _, tricks, score, plus, minus), contract in zip(WORKED_GAME, contracts):
        view = path.view(path.to_move)
        assert (view.dealer, view.contract, view.cut_card) == (dealer, contract, card_from_str(cut))
        keep_hands(path)
        step = play_suits(path, suits, NO_ACES)
        end = step.deal_end
        assert (end["tricks_won"], end["points"], end["plus"], end["minus"]) == (tricks, score, plus, minus)
        assert step.rewards == floats(score)
    assert step.terminated and not step.truncated and step.winners == (0,)
    assert step.deal_end["totals"] == (10, -3, -7) and path.phase == Phase.GAME_OVER and path.legal() == []


@paths
@pytest.mark.parametrize("variant", ANNOUNCEMENT_VARIANTS)
@pytest.mark.parametrize("announce, counts, order, first_dealer, contract, points", [
    (A.ANNOUNCE_SPADES, (8, 8, 0), NO_TWOS, 2, Contract("trump", SUITS.index("S"), 0, "spades"), (0, 4, -4)),
    (A.ANNOUNCE_NULLO, (2, 7, 7), NULLO_NO_TWOS, 2, Contract("nullo", None, 0, "nullo"), (2, -1, -1)),
    (A.ANNOUNCE_GRAND, (5, 6, 5), NO_TWOS, 0, Contract("grand", None, 1, "grand"), (1, -2, 1)),
])
def test_announcement_examples_of_rules_md(path_name, variant, announce, counts, order, first_dealer, contract,
                                           points):
    deal = build_deal(counts_winners(counts), "CDHS", order, HIGH)
    path = open_path(path_name, make_rules(variant, first_dealer=first_dealer), [deal])
    keep_hands(path)
    assert path.phase == Phase.ANNOUNCE and path.to_move == (first_dealer + 1) % 3
    path.step(announce)
    assert path.view(0).contract == contract
    step = play_suits(path, "CDHS", order)
    assert step.deal_end["tricks_won"] == counts and step.deal_end["points"] == points
    assert step.rewards == floats(points) and not (step.terminated or step.truncated)


@paths
@pytest.mark.parametrize("negative, points", [(False, (2, 0, 0)), (True, (2, 0, -2))])
def test_basic_scoring(path_name, negative, points):
    deal = build_deal(counts_winners((6, 4, 2)), "HSD", NO_TWOS, NO_TWOS)
    rules = make_rules("basic", negative=negative, first_dealer=0)
    assert rules.scoring == ("negative" if negative else "positive")
    path = open_path(path_name, rules, [deal])
    keep_hands(path)
    step = play_suits(path, "HSD", NO_TWOS)
    assert step.deal_end["points"] == step.deal_end["totals"] == points and step.rewards == floats(points)


# ----------------------------------------------------------------------------- ties at the target, deal cap
@paths
@pytest.mark.parametrize("reward, paid", [("deal", (2, 2, -4)), ("outcome", (0.5, 0.5, -1))])
def test_hornafjardar_two_reach_the_target_in_one_deal_and_share_the_win(path_name, reward, paid):
    deal, suits = cut_deal((6, 6, 0), dealer=0, cut="8S")
    path = open_path(path_name, make_rules("hornafjardar", target=2, first_dealer=0), [deal], reward=reward)
    keep_hands(path)
    step = play_suits(path, suits, NO_ACES)
    assert step.deal_end["plus"] == (2, 2, 0) and step.deal_end["totals"] == (2, 2, -4)
    assert step.terminated and not step.truncated and step.winners == (0, 1) and step.rewards == paid


@paths
def test_hornafjardar_two_reach_the_target_and_the_higher_result_wins_alone(path_name):
    # target 4: both seat 0 and seat 1 reach plus 4 in the third deal; seat 0 has a minus of 1
    plan = [((6, 6, 0), 0, "8S"), ((5, 3, 4), 1, "3C"), ((6, 5, 1), 2, "7H")]  # trump, Nullo, trump
    deals = [cut_deal(counts, dealer, cut) for counts, dealer, cut in plan]
    path = open_path(path_name, make_rules("hornafjardar", target=4, first_dealer=0), [d for d, _ in deals],
                     reward="outcome")
    ends = []
    for _, suits in deals:
        keep_hands(path)
        ends.append(play_suits(path, suits, NO_ACES))
    assert [e.deal_end["points"] for e in ends] == [(2, 2, -4), (-1, 1, 0), (2, 1, -3)]
    assert not any(e.terminated or e.truncated for e in ends[:2]) and ends[0].rewards == ends[1].rewards == (0, 0, 0)
    last = ends[-1]
    assert last.deal_end["plus"] == (4, 4, 0) and last.deal_end["minus"] == (1, 0, 7)
    assert last.deal_end["totals"] == (3, 4, -7) and last.terminated and last.winners == (1,)
    assert last.rewards == (-0.5, 1.0, -0.5)


def _basic_game(path_name, counts_per_deal, **options):
    deals = [build_deal(counts_winners(c), "HSD", NO_TWOS, NO_TWOS) for c in counts_per_deal]
    path = open_path(path_name, make_rules("basic", first_dealer=0, **options), deals, reward="outcome")
    ends = []
    for _ in counts_per_deal:
        keep_hands(path)
        ends.append(play_suits(path, "HSD", NO_TWOS))
    return ends


@paths
def test_basic_tie_on_top_at_the_target_plays_another_deal(path_name):
    first, second = _basic_game(path_name, [(6, 6, 0), (6, 4, 2)], target=2)
    assert first.deal_end["totals"] == (2, 2, 0) and not (first.terminated or first.truncated)
    assert second.deal_end["totals"] == (4, 2, 0) and second.terminated and not second.truncated
    assert second.winners == (0,) and second.rewards == (1.0, -0.5, -0.5)


@paths
def test_basic_tie_at_the_cap_is_truncated_with_shared_winners(path_name):
    first, second = _basic_game(path_name, [(6, 6, 0), (6, 6, 0)], target=2, max_deals=2)
    assert not (first.truncated or first.terminated)
    assert second.truncated and not second.terminated and second.winners == (0, 1)
    assert second.rewards == (0.5, 0.5, -1.0)


@paths
@pytest.mark.parametrize("target, counts, truncated, winners, paid", [
    (10, (5, 4, 3), True, (0,), (1, -0.5, -0.5)),  # nobody reached 10: the cap truncates
    (10, (4, 4, 4), True, (0, 1, 2), (0, 0, 0)),  # all tied at the cap
    (2, (6, 6, 0), False, (0, 1), (0.5, 0.5, -1)),  # the target reached in the last deal allowed ends the game
])
def test_hornafjardar_deal_cap(path_name, target, counts, truncated, winners, paid):
    deal, suits = cut_deal(counts, dealer=1, cut="9D")
    rules = make_rules("hornafjardar", target=target, max_deals=1, first_dealer=1)
    path = open_path(path_name, rules, [deal], reward="outcome")
    keep_hands(path)
    step = play_suits(path, suits, NO_ACES)
    assert (step.truncated, step.terminated) == (truncated, not truncated)
    assert step.winners == winners and step.rewards == paid


# ----------------------------------------------------------------------------- exchange, swap, pickup
@paths
@pytest.mark.parametrize("counts, limits", [
    ((7, 5, 4), (7, 5, 4)),  # everyone to the limit: each exchange ends by itself, the dealer takes the rest
    ((0, 0, 12), (7, 5, 12)),  # EXCHANGE_DONE with nothing chosen; the dealer may take a whole hand
    ((2, 5, 9), (7, 5, 9)),  # the dealer's limit is what is left in the Manni
])
def test_exchange_limits(path_name, counts, limits):
    deal, dealer = random_deal(make_rules("hornafjardar"), seed=5)
    path = open_path(path_name, make_rules("hornafjardar", first_dealer=dealer), [deal])
    order = [(dealer + k) % 3 for k in (1, 2, 3)]
    used = 0
    for seat, k, limit in zip(order, counts, limits):
        view = path.view(seat)
        assert path.phase == Phase.EXCHANGE and path.to_move == seat and view.exchange_limit == limit
        hand = cards_of(view.hand)
        assert path.legal() == hand + [A.EXCHANGE_DONE]
        discards = hand[len(hand) - k:]
        for n, card in enumerate(discards):
            path.step(card)
            if n + 1 < limit:  # still choosing, nothing drawn yet
                view = path.view(seat)
                assert path.to_move == seat and view.pending == tuple(discards[: n + 1])
                assert view.exchange_limit == limit - n - 1 and view.drawn == 0
                assert cards_of(view.hand) == [c for c in hand if c not in discards[: n + 1]]
        if k < limit:
            path.step(A.EXCHANGE_DONE)
        drawn = deal.manni[used : used + k]  # from the top of the Manni, in order
        used += k
        view = path.view(seat)
        assert path.to_move != seat or path.phase == Phase.PLAY  # at the limit it ended by itself
        assert view.drawn == mask_of(drawn) and view.discards == mask_of(discards) and view.pending == ()
        assert cards_of(view.hand) == sorted(set(hand) - set(discards) | set(drawn))
        assert view.exchange_counts[seat] == k and view.manni_used == used
    assert path.phase == Phase.PLAY and path.to_move == order[0]
    assert path.view(order[1]).exchange_counts == tuple(counts[order.index(s)] for s in range(3))


@paths
@pytest.mark.parametrize("swapper", [0, 1, 2, None])  # who swaps, in decision order
def test_basic_first_swap_ends_the_exchange(path_name, swapper):
    deal, dealer = random_deal(make_rules("basic"), seed=11)
    path = open_path(path_name, make_rules("basic", first_dealer=dealer), [deal])
    order = [(dealer + k) % 3 for k in (1, 2, 3)]
    for k, seat in enumerate(order):
        assert path.phase == Phase.SWAP and path.to_move == seat and path.legal() == [A.KEEP_HAND, A.SWAP_HAND]
        if k == swapper:
            path.step(A.SWAP_HAND)
            break
        path.step(A.KEEP_HAND)
    assert path.phase == Phase.PLAY and path.to_move == order[0]  # nobody after the swapper is asked
    kept = order if swapper is None else order[:swapper]
    for seat in range(3):
        view = path.view(seat)
        assert view.passed == tuple(kept) and view.swapper == (None if swapper is None else order[swapper])
        if swapper is None or seat != order[swapper]:
            assert view.hand == mask_of(deal.hands[seat]) and view.drawn == view.discards == 0
        else:  # the swapped-out hand is out of play
            assert view.hand == view.drawn == mask_of(deal.manni) and view.discards == mask_of(deal.hands[seat])


def random_deals(rules: Rules, count: int, seed: int) -> list[Deal]:
    """``count`` random deals of an announcement variant (no cut card), from an owned generator."""
    rng = np.random.default_rng(seed)
    h = rules.hand_size
    deals = []
    for _ in range(count):
        cards = rng.permutation(cards_of(rules.pack)).tolist()
        deals.append(Deal(tuple(tuple(cards[i * h : (i + 1) * h]) for i in range(3)), tuple(cards[3 * h :])))
    return deals


@paths
@pytest.mark.parametrize("variant", ANNOUNCEMENT_VARIANTS)
@pytest.mark.parametrize("taker", [0, 1, 2, None])  # who takes the Manni (first dealer 2: seats = decision order)
def test_manni_pickup_and_discard_of_four(path_name, variant, taker):
    rules = make_rules(variant, first_dealer=2)
    (deal,) = random_deals(rules, 1, seed=21)
    path = open_path(path_name, rules, [deal])
    manni = mask_of(deal.manni)
    for seat in range(3):
        assert path.phase == Phase.PICKUP and path.to_move == seat and path.legal() == [A.TAKE_MANNI, A.PASS_MANNI]
        if seat == taker:
            path.step(A.TAKE_MANNI)
            break
        path.step(A.PASS_MANNI)
    passed = tuple(range(3 if taker is None else taker))
    if taker is not None:
        hand = mask_of(deal.hands[taker]) | manni
        # two Manni cards and the two lowest cards of the own hand go
        discards = [*deal.manni[:2], *sorted(deal.hands[taker])[:2]]
        for n, card in enumerate(discards):
            view = path.view(taker)
            assert path.phase == Phase.DISCARD and path.to_move == taker and view.pending == tuple(discards[:n])
            assert view.hand == hand and view.drawn == manni and path.legal() == cards_of(hand)
            path.step(card)
            hand ^= 1 << card
        view = path.view(taker)
        assert view.hand == hand and view.discards == mask_of(discards) and bin(hand).count("1") == 16
    assert path.phase == Phase.ANNOUNCE and path.to_move == 0  # forehand announces, nobody else is asked
    for seat in range(3):
        view = path.view(seat)
        assert view.taker == taker and view.passed == passed
        if seat != taker:
            assert view.hand == mask_of(deal.hands[seat]) and view.drawn == view.discards == 0


# ----------------------------------------------------------------------------- every announcement
# the order in which each seat announces its contracts; Trjámann's "suit" is hearts for seats 0 and
# 2, diamonds for seat 1 (announced last, when both are still legal)
S, H, D, C, G, N = (A.ANNOUNCE_SPADES, A.ANNOUNCE_HEARTS, A.ANNOUNCE_DIAMONDS, A.ANNOUNCE_CLUBS,
                    A.ANNOUNCE_GRAND, A.ANNOUNCE_NULLO)
SCHEDULES = {
    "trjamann": ([H, N, S, G], [S, G, N, D], [N, H, G, S]),
    "laugarvatn": ([S, H, D, C, G, N], [N, G, C, D, H, S], [G, C, N, H, S, D]),
}


@paths
@pytest.mark.parametrize("variant", ANNOUNCEMENT_VARIANTS)
def test_every_announcement_of_a_whole_game(path_name, variant):
    rules = make_rules(variant, first_dealer=1)
    spec = rules.spec
    n_deals = 3 * len(spec.contracts)
    path = open_path(path_name, rules, random_deals(rules, n_deals, seed=7))
    schedule = [list(s) for s in SCHEDULES[variant]]
    ends = []
    while path.phase != Phase.GAME_OVER:
        phase, seat = path.phase, path.to_move
        legal = path.legal()
        if phase == Phase.PICKUP:  # vary who takes the Manni: nobody, forehand, middlehand, dealer
            deal_index, decision = path.view(seat).deal_index, len(path.view(seat).passed)
            action = A.TAKE_MANNI if (deal_index + decision) % 4 == 0 else A.PASS_MANNI
        elif phase == Phase.DISCARD:
            action = legal[-1]
        elif phase == Phase.ANNOUNCE:
            view = path.view(seat)
            assert seat == (view.dealer + 1) % 3  # forehand announces
            used = view.used_contracts[seat]
            assert legal == [a.action for a in spec.announcements if a.name not in used]
            if len(used) == len(spec.contracts) - 1:  # the last contract is forced
                assert len(legal) == (2 if spec.announcement(legal[0]).name == "suit" else 1)
            for action in {a.action for a in spec.announcements if a.name in used}:
                before = path.snapshot()
                with pytest.raises(ValueError):
                    path.step(action)
                assert path.snapshot() == before
            action = schedule[seat].pop(0)
        else:
            action = legal[0]
        step = path.step(action)
        if phase == Phase.ANNOUNCE:
            row = spec.announcement(action)
            assert path.view(seat).contract == Contract(row.kind, row.trump, seat, row.name)
        if step.deal_end is not None:
            ends.append(step)
    assert schedule == [[], [], []] and len(ends) == n_deals
    assert all(sum(e.deal_end["tricks_won"]) == 16 and sum(e.deal_end["points"]) == 0 for e in ends)
    assert not any(e.terminated or e.truncated for e in ends[:-1])
    last = ends[-1]
    totals = last.deal_end["totals"]
    assert last.terminated and not last.truncated
    assert last.winners == tuple(s for s in range(3) if totals[s] == max(totals))


# ----------------------------------------------------------------------------- tricks
# dealer 2, forehand 0 leads KH; seat 1 holds AH, seat 2 QH and the cut card
ACE_LOW_HANDS = [
    "KH 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC",
    "AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
    "QH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS",
]
ACE_LOW_MANNI = "KC AC KD AD 2H 3H 4H 5H 6H 7H 8H 9H TH JH KS AS"


@paths
@pytest.mark.parametrize("cut, winner", [("3S", 0), ("TS", 1), ("7S", 1)])  # Nullo: the ace is low
def test_nullo_ace_is_low_in_play(path_name, cut, winner):
    deal = Deal.from_strs([h.split() for h in ACE_LOW_HANDS], ACE_LOW_MANNI.split(), cut)
    path = open_path(path_name, make_rules("hornafjardar", first_dealer=2), [deal])
    keep_hands(path)
    assert path.view(0).contract.nullo == (cut == "3S")
    for card in ("KH", "AH", "QH"):
        path.step(card_from_str(card))
    view = path.view(winner)
    assert path.to_move == view.leader == winner and view.tricks_won == tuple(int(s == winner) for s in range(3))


def _not_held(path) -> int:
    hand = path.view(path.to_move).hand
    return next(c for c in range(52) if not hand >> c & 1 and path.view(0).rules.pack >> c & 1)


def _held(path) -> int:
    return cards_of(path.view(path.to_move).hand)[0]


# (case, rules, deal, actions before, illegal actions); "held" / "not held": a card the seat on turn holds / lacks
ILLEGAL = [
    ("exchange", make_rules("hornafjardar", first_dealer=2), FOLLOW_DEAL, [],
     [A.KEEP_HAND, A.TAKE_MANNI, A.ANNOUNCE_GRAND, "not held", 63, -1]),
    ("follow suit", make_rules("hornafjardar", first_dealer=2), FOLLOW_DEAL, ["exchange_done"] * 3 + ["AH"],
     ["AS", "3C", "KH", A.EXCHANGE_DONE, 63]),
    ("swap", make_rules("basic", first_dealer=0), None, [], [A.EXCHANGE_DONE, A.PASS_MANNI, "held", 63]),
    ("pickup", make_rules("trjamann", first_dealer=2), None, [], [A.KEEP_HAND, A.ANNOUNCE_SPADES, "held", -1]),
    ("discard", make_rules("laugarvatn", first_dealer=2), None, ["pass_manni", "take_manni"],
     [A.TAKE_MANNI, A.PASS_MANNI, A.EXCHANGE_DONE, "not held"]),
    ("announce", make_rules("trjamann", first_dealer=2), None, ["pass_manni"] * 3,
     [A.ANNOUNCE_CLUBS, A.TAKE_MANNI, "held", 63]),
]


@paths
@pytest.mark.parametrize("case, rules, deal, before, illegal", ILLEGAL, ids=[c[0] for c in ILLEGAL])
def test_illegal_actions_are_rejected_and_change_nothing(path_name, case, rules, deal, before, illegal):
    if deal is None:
        deal = random_deals(rules, 1, seed=3)[0] if rules.is_announcement else random_deal(rules, seed=3)[0]
    path = open_path(path_name, rules, [deal])
    for action in before:
        path.step(A.action_from_str(action))
    snapshot, legal, obs = path.snapshot(), path.legal(), path.observation().copy()
    for action in illegal:
        if isinstance(action, str):
            action = {"held": _held, "not held": _not_held}.get(action, lambda _: card_from_str(action))(path)
        assert action not in legal
        with pytest.raises(ValueError):
            path.step(action)
        assert path.snapshot() == snapshot and path.legal() == legal
        assert path.observation().tobytes() == obs.tobytes()
    if case == "follow suit":
        assert legal == [card_from_str("2H")]
    path.step(legal[0])  # a legal action still works


@pytest.mark.parametrize("action", [True, False, 53.0, 1.0, "1", None, np.float64(2.0)])
def test_is_legal_refuses_what_apply_refuses(action):
    state = GameState(make_rules("hornafjardar"), seed=1)
    while state.legal_actions() == [] or not any(state.is_legal(a) for a in (0, 1, 52, 53)):
        state.apply(state.legal_actions()[0])
    assert not state.is_legal(action)
    assert all(state.is_legal(np.int64(a)) for a in state.legal_actions())
