"""Game records: format, JSON Lines files, and the validator catching each kind of broken rule at
the right round and trick."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from manni_env.cards import card_from_str, suit_of
from manni_env.engine import GameState
from manni_env.records import (
    FORMAT, RecordError, game_record, read_records, record_deals, record_rules, validate_record, write_records,
)
from manni_env.rules import make_rules


def play(variant: str, seed: int, **options) -> GameState:
    state = GameState(make_rules(variant, **options), seed=seed)
    rng = np.random.default_rng(seed)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state


def record_of(variant: str, seed: int = 1, **options) -> dict:
    record = json.loads(json.dumps(game_record(play(variant, seed, **options), players=["a", "b", "c"])))
    validate_record(record)
    return record


@pytest.fixture(scope="module")
def horn() -> dict:
    return record_of("hornafjardar", 3)


def rejects(record: dict, match: str, round: int | None, trick: int | None = None) -> RecordError:
    with pytest.raises(RecordError, match=match) as info:
        validate_record(record)
    assert (info.value.round, info.value.trick) == (round, trick), str(info.value)
    return info.value


# ----------------------------------------------------------------------------- the format
def test_record_fields(horn):
    assert horn["format"] == FORMAT and horn["variant"] == "hornafjardar" and horn["scoring"] == "plus_minus"
    assert horn["target"] == 10 and horn["seed"] == 3 and horn["players"] == ["a", "b", "c"]
    r = horn["rounds"][0]
    assert r["index"] == 0 and r["dealer"] == horn["first_dealer"]
    assert r["cut_card"] in r["hands"][r["dealer"]]
    assert [len(h) for h in r["hands"]] == [12, 12, 12] and len(r["manni"]) == 16
    assert [e["seat"] for e in r["exchanges"]] == [(r["dealer"] + k) % 3 for k in (1, 2, 3)]
    assert all(set(e) == {"seat", "discards", "drawn"} and len(e["discards"]) == len(e["drawn"]) for e in r["exchanges"])
    assert len(r["tricks"]) == 12 and all(len(t["cards"]) == 3 for t in r["tricks"])
    assert set(horn["final"]) == {"net", "winners", "truncated"}
    assert horn["final"]["net"] == horn["rounds"][-1]["totals"]


@pytest.mark.parametrize("variant", ["basic", "trjamann", "laugarvatn"])
def test_records_of_other_variants(variant):
    record = record_of(variant, 4)
    r = record["rounds"][0]
    assert r["cut_card"] is None
    if variant == "basic":
        assert record["scoring"] == "positive" and all(set(e) == {"seat", "swap"} for e in r["exchanges"])
        assert r["contract"] == {"kind": "trump", "trump": "H", "declarer": None}
    else:
        assert record["scoring"] == "declarer" and record["target"] is None
        assert len(record["rounds"]) == {"trjamann": 12, "laugarvatn": 18}[variant]
        assert r["contract"]["declarer"] == (r["dealer"] + 1) % 3 and r["contract"]["name"]
        assert len(r["tricks"]) == 16 and len(r["manni"]) == 4
        for rnd in record["rounds"]:
            for e in rnd["exchanges"]:
                assert len(e.get("discards", [])) == (4 if e["take"] else 0)


@pytest.mark.parametrize(("variant", "options"), [("hornafjardar", {"target": 5}), ("basic", {"negative": True})])
def test_record_rules_and_deals_rebuild_the_game(variant, options):
    state = play(variant, 6, **options)
    record = json.loads(json.dumps(game_record(state)))
    assert record_rules(record) == make_rules(variant, first_dealer=state.rounds[0].dealer, **options)
    deals = record_deals(record)
    assert [d.hands for d in deals] == [r.hands for r in state.rounds]
    assert [(d.manni, d.cut_card) for d in deals] == [(r.manni, r.cut_card) for r in state.rounds]
    with pytest.raises(RecordError, match="unknown variant"):
        record_rules({**record, "variant": "whist"})
    bad = copy.deepcopy(record)
    bad["rounds"][1]["manni"][0] = "1Z"
    with pytest.raises(RecordError, match="manni: not a card") as info:
        record_deals(bad)
    assert info.value.round == 1


def test_records_round_trip_through_json_lines(tmp_path):
    path = tmp_path / "games.jsonl"
    records = [record_of("hornafjardar", s) for s in range(3)]
    assert write_records(path, records[:2]) == 2
    write_records(path, records[2:])
    assert read_records(path) == records


def test_write_records_never_merges_a_line_after_an_interrupted_write(tmp_path):
    path = tmp_path / "games.jsonl"
    records = [record_of("basic", s) for s in range(2)]
    write_records(path, records[:1])
    text = json.dumps(records[1])
    with path.open("a") as f:
        f.write(text[: len(text) // 2])  # a write cut short: no newline
    write_records(path, records[1:])
    with pytest.raises(RecordError, match=r"games.jsonl:2: not valid JSON") as info:
        read_records(path)
    assert info.value.line == 2
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[2]) == records[1]


# ----------------------------------------------------------------------------- broken records
def test_wrong_format_variant_scoring_target(horn):
    for key, value, match in [
        ("format", "manni-record/2", "format must be 'manni-record/1'"),
        ("variant", "whist", "unknown variant 'whist'; valid variants: hornafjardar, basic"),
        ("scoring", "positive", "scoring 'positive' does not fit variant 'hornafjardar'; expected plus_minus"),
        ("target", 0, "target: must be at least 1, got 0"),
        ("max_deals", 2, "the game ended after round 1, but the record continues"),
        ("players", ["a", "b"], "players: must hold at least 3 items, got 2"),
        ("seed", "7", "seed: must be integer or null, got '7'"),
        ("seed", -1, "seed: must be at least 0, got -1"),
        ("seed", True, "seed: must be integer or null, got True"),
    ]:
        bad = copy.deepcopy(horn)
        bad[key] = value
        with pytest.raises(RecordError, match=match):
            validate_record(bad)


def test_a_different_target_changes_where_the_game_ends(horn):
    bad = copy.deepcopy(horn)
    bad["target"] = 100
    rejects(bad, "the game does not end after round", None)  # the whole game's problem


def test_wrong_dealer(horn):
    bad = copy.deepcopy(horn)
    r = bad["rounds"][1]
    right = r["dealer"]
    r["dealer"] = (right + 1) % 3
    rejects(bad, f"round 1 is dealt by seat {right} \\(the deal passes to the left\\), record says {(right + 1) % 3}", 1)
    bad = copy.deepcopy(horn)
    bad["first_dealer"] = (horn["first_dealer"] + 1) % 3
    rejects(bad, "round 0 is dealt by seat", 0)


def test_hands_that_are_not_a_deal(horn):
    bad = copy.deepcopy(horn)
    r = bad["rounds"][1]
    r["hands"][0][0] = r["hands"][1][0]
    rejects(bad, f"not a valid deal: cards dealt twice: {r['hands'][1][0]}", 1)
    bad = copy.deepcopy(horn)
    bad["rounds"][0]["manni"].pop()
    rejects(bad, "not a valid deal: the Manni has 15 cards", 0)
    bad = copy.deepcopy(horn)
    bad["rounds"][2]["hands"][2][3] = "XY"
    rejects(bad, r"hands\[2\]\[3\]: must be a card such as \"TH\".*, got 'XY'", 2)


def test_cut_card_not_in_the_dealers_hand(horn):
    bad = copy.deepcopy(horn)
    r = bad["rounds"][1]
    r["cut_card"] = r["hands"][(r["dealer"] + 1) % 3][0]
    rejects(bad, r"cut card .* must be in the dealer's \(seat \d\) hand", 1)


def test_contract_not_what_the_cut_implies(horn):
    bad = copy.deepcopy(horn)
    r = bad["rounds"][0]
    r["contract"] = {"kind": "grand" if r["contract"]["kind"] != "grand" else "nullo", "trump": None, "declarer": None}
    rejects(bad, f"wrong contract: the cut card {r['cut_card']} makes it", 0)


def _round_with_exchange(record, at_least):
    for i, r in enumerate(record["rounds"]):
        for j, e in enumerate(r["exchanges"]):
            if len(e["discards"]) >= at_least:
                return i, j
    raise AssertionError("no such exchange")


def test_exchange_over_the_limit(horn):
    bad = copy.deepcopy(horn)
    r = bad["rounds"][0]
    seat = r["exchanges"][0]["seat"]
    r["exchanges"][0]["discards"] = r["hands"][seat][:8]
    rejects(bad, f"exchange 0: seat {seat} exchanges 8 cards, over its limit of 7", 0)


def test_drawn_cards_must_be_the_mannis_top_cards(horn):
    i, j = _round_with_exchange(horn, 2)
    bad = copy.deepcopy(horn)
    e = bad["rounds"][i]["exchanges"][j]
    e["drawn"] = e["drawn"][::-1]
    rejects(bad, f"exchange {j}: seat {e['seat']} drew .* but the next {len(e['drawn'])} Manni cards are", i)


def test_discarding_a_card_not_held(horn):
    i, j = _round_with_exchange(horn, 1)
    bad = copy.deepcopy(horn)
    r = bad["rounds"][i]
    e = r["exchanges"][j]
    other = r["hands"][(e["seat"] + 1) % 3][0]
    e["discards"][0] = other
    rejects(bad, f"seat {e['seat']} discards {other}, which it does not hold", i)


def test_exchange_decisions_out_of_order(horn):
    bad = copy.deepcopy(horn)
    ex = bad["rounds"][1]["exchanges"]
    ex[0], ex[1] = ex[1], ex[0]
    rejects(bad, f"exchange 0: seat {ex[1]['seat']} decides now, record says seat {ex[0]['seat']}", 1)
    bad = copy.deepcopy(horn)
    bad["rounds"][1]["exchanges"].pop()
    rejects(bad, "the record lacks the exchange decision of seat", 1)


def test_playing_a_card_not_held(horn):
    bad = copy.deepcopy(horn)
    trick = bad["rounds"][1]["tricks"][4]
    seat = (trick["leader"] + 1) % 3
    played_earlier = bad["rounds"][1]["tricks"][0]["cards"][0]
    trick["cards"][1] = played_earlier
    rejects(bad, f"seat {seat} played {played_earlier}, which it does not hold", 1, 4)


def _revoke(record):
    """Change one card that follows suit into a card of another suit the same seat plays later."""
    for i, r in enumerate(record["rounds"]):
        tricks = r["tricks"]
        for t, trick in enumerate(tricks):
            led = suit_of(card_from_str(trick["cards"][0]))
            seat = (trick["leader"] + 1) % 3
            if suit_of(card_from_str(trick["cards"][1])) != led:
                continue
            for later in tricks[t + 1 :]:
                k = (seat - later["leader"]) % 3
                if suit_of(card_from_str(later["cards"][k])) != led:
                    trick["cards"][1] = later["cards"][k]
                    return i, t, seat, "CDHS"[led]
    raise AssertionError("no revoke found")


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann"])
def test_revoke_is_rejected(variant):
    bad = record_of(variant, 6)
    i, t, seat, led = _revoke(bad)
    err = rejects(bad, f"seat {seat} played .* but holds .* and must follow suit {led}", i, t)
    assert str(err).startswith(f"round {i}, trick {t}: seat {seat} played")


def test_wrong_trick_winner_and_leader(horn):
    bad = copy.deepcopy(horn)
    trick = bad["rounds"][2]["tricks"][7]
    right = trick["winner"]
    trick["winner"] = (right + 1) % 3
    rejects(bad, f"seat {right} wins the trick with .*, record says seat {(right + 1) % 3}", 2, 7)
    bad = copy.deepcopy(horn)
    trick = bad["rounds"][2]["tricks"][3]
    trick["leader"] = (trick["leader"] + 1) % 3
    rejects(bad, "leads this trick", 2, 3)


def test_wrong_number_of_tricks_or_cards(horn):
    bad = copy.deepcopy(horn)
    bad["rounds"][1]["tricks"].pop()
    rejects(bad, "the record has 11 tricks; a deal has 12", 1, 11)
    bad = copy.deepcopy(horn)
    bad["rounds"][1]["tricks"].append(bad["rounds"][1]["tricks"][0])
    rejects(bad, "a deal has 12 tricks; the record has 13", 1, 12)
    bad = copy.deepcopy(horn)
    bad["rounds"][1]["tricks"][5]["cards"].pop()
    rejects(bad, "cards: must hold at least 3 items, got 2", 1, 5)


@pytest.mark.parametrize("field", ["tricks_won", "points", "plus", "minus", "totals"])
def test_wrong_results(horn, field):
    bad = copy.deepcopy(horn)
    values = bad["rounds"][1][field]
    values[0] += 1
    rejects(bad, f"{field} should be", 1)


@pytest.mark.parametrize("key, value", [("winners", [0, 1, 2]), ("net", [0, 0, 0]), ("truncated", True)])
def test_wrong_final(horn, key, value):
    bad = copy.deepcopy(horn)
    bad["final"][key] = value
    rejects(bad, f"^the game's final {key} should be", None)  # the whole game's, not its last round's


def test_game_continuing_after_it_ended_or_ending_early(horn):
    bad = copy.deepcopy(horn)
    extra = copy.deepcopy(bad["rounds"][-1])
    extra["index"] += 1
    bad["rounds"].append(extra)
    n = len(horn["rounds"])
    rejects(bad, f"the game ended after round {n - 1}, but the record continues", n)
    bad = copy.deepcopy(horn)
    bad["rounds"].pop()
    rejects(bad, f"^the game does not end after round {n - 2}: the record ends early", None)
    bad = copy.deepcopy(horn)
    bad["final"] = None
    rejects(bad, f"^the game ended after round {n - 1}, but the record has no final", None)


def test_truncated_games():
    record = record_of("hornafjardar", 2, max_deals=2)
    assert record["final"]["truncated"] and len(record["rounds"]) == 2
    del record["max_deals"]  # without the field the cap is where a truncated game stopped
    validate_record(record)
    record["final"]["truncated"] = False
    with pytest.raises(RecordError, match="does not end after round 1"):
        validate_record(record)


def test_basic_decision_after_the_swap():
    record = None
    for seed in range(50):
        candidate = record_of("basic", seed)
        found = [(i, r) for i, r in enumerate(candidate["rounds"]) if len(r["exchanges"]) < 3]
        if found:
            record, (i, r) = candidate, found[0]
            break
    assert record is not None
    r["exchanges"].append({"seat": (r["exchanges"][-1]["seat"] + 1) % 3, "swap": False})
    rejects(record, "the exchange is over", i)
    r["exchanges"].pop()
    r["contract"]["trump"] = "C" if r["contract"]["trump"] != "C" else "H"
    rejects(record, "trump rotates H S D C", i)


@pytest.fixture(scope="module")
def trj() -> dict:
    return record_of("trjamann", 9)


def test_announcement_wrong_declarer_and_used_contract(trj):
    bad = copy.deepcopy(trj)
    c = bad["rounds"][0]["contract"]
    c["declarer"] = (c["declarer"] + 1) % 3
    rejects(bad, "forehand \\(seat \\d\\) announces", 0)
    # round 3 has the same declarer as round 0: announcing round 0's contract again is illegal
    bad = copy.deepcopy(trj)
    assert bad["rounds"][3]["contract"]["declarer"] == bad["rounds"][0]["contract"]["declarer"]
    first = bad["rounds"][0]["contract"]
    bad["rounds"][3]["contract"] = dict(first)
    rejects(bad, r"seat \d cannot announce .* \(already played: " + first["name"], 3)
    bad = copy.deepcopy(trj)
    bad["rounds"][0]["contract"].update(kind="trump", trump="C", name="clubs")
    rejects(bad, "cannot announce Trump C", 0)


def test_announcement_pickup_errors():
    record = None
    for seed in range(50):
        candidate = record_of("laugarvatn", seed)
        taken = [(i, r) for i, r in enumerate(candidate["rounds"]) if r["exchanges"][-1]["take"]]
        if taken:
            record, (i, r) = candidate, taken[0]
            break
    assert record is not None
    taker = r["exchanges"][-1]
    bad = copy.deepcopy(record)
    bad["rounds"][i]["exchanges"][-1]["discards"] = taker["discards"][:3]
    rejects(bad, f"seat {taker['seat']} takes the Manni and must discard 4 cards, record has 3", i)
    bad = copy.deepcopy(record)
    bad["rounds"][i]["exchanges"].append({"seat": (taker["seat"] + 1) % 3, "take": True, "discards": []})
    rejects(bad, "the exchange is over", i)  # at most one taker
    bad = copy.deepcopy(record)
    other = r["hands"][(taker["seat"] + 1) % 3][0]
    bad["rounds"][i]["exchanges"][-1]["discards"][0] = other
    rejects(bad, f"seat {taker['seat']} discards {other}, which it does not hold", i)


def test_errors_are_reported_in_game_order(horn):
    """A broken trick in round 1 is reported before a broken deal in round 3."""
    bad = copy.deepcopy(horn)
    bad["rounds"][3]["hands"][0][0] = bad["rounds"][3]["hands"][1][0]
    bad["rounds"][1]["tricks"][2]["winner"] = (bad["rounds"][1]["tricks"][2]["winner"] + 1) % 3
    rejects(bad, "wins the trick", 1, 2)


# ----------------------------------------------------------------------------- hostile input
@pytest.mark.parametrize(
    "edit, match, round",
    [
        (lambda r: r["rounds"][0]["contract"].update(kind=["trump"]), r"contract.kind: must be one of .*, got \['trump'\]", 0),
        (lambda r: r["rounds"][0]["contract"].update(kind={}, trump=[]), r"contract.(kind|trump): must be one of .*, got (\{\}|\[\])", 0),
        (lambda r: r["rounds"][0]["contract"].update(kind="trump", trump=["S"]), r"contract.trump: must be one of .*, got \['S'\]", 0),
        (lambda r: r.update(players=json.loads("[" * 900 + "]" * 900)), r"players: must hold at least 3 items, got 1", None),
        (lambda r: r.update(format="x" * 10_000), r"format must be 'manni-record/1', got 'x+\.\.\.x+'$", None),
    ],
)
def test_wrong_types_and_huge_values_are_record_errors_with_short_messages(trj, edit, match, round):
    bad = copy.deepcopy(trj)
    edit(bad)
    err = rejects(bad, match, round)
    assert len(str(err)) < 300


def test_optional_fields_are_checked_only_when_present(trj, horn):
    """RECORD.md lists contract.name and final.truncated as optional: a record without them is valid."""
    for record in (trj, horn):
        bare = copy.deepcopy(record)
        for r in bare["rounds"]:
            r["contract"].pop("name", None)
        del bare["final"]["truncated"], bare["max_deals"], bare["first_dealer"], bare["seed"], bare["players"]
        validate_record(bare)
    bad = copy.deepcopy(trj)
    bad["rounds"][0]["contract"]["name"] = "grand" if bad["rounds"][0]["contract"]["name"] != "grand" else "nullo"
    rejects(bad, "wrong contract: .* record says name", 0)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"format": ' + "9" * 5000 + "}\n", "not readable JSON: a number has more than 4300 digits"),
        ("[" * 100_000 + "]" * 100_000 + "\n", "not readable JSON: nested too deeply"),
        ('{"format": [1e999999]}\n', None),  # reads as inf: an ordinary wrong value
        ('{"a": "b\x01"}\n', "not valid JSON: Invalid control character at column 9"),  # "at" said once
    ],
)
def test_unreadable_json_lines_are_record_errors(tmp_path, text, message):
    from manni_env.records import iter_record_lines

    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    ((line, item),) = list(iter_record_lines(path))
    if message is None:
        with pytest.raises(RecordError, match="format must be"):
            validate_record(item)
    else:
        assert line == 1 and isinstance(item, RecordError) and str(item) == message


@pytest.mark.parametrize("edit", ["winners-bool", "net-float", "truncated-int", "points-float", "target-float",
                                  "declarer-bool"])
def test_booleans_and_floats_are_not_the_integers_they_equal(edit):
    """``false == 0`` and ``3.0 == 3`` to Python, not to the format: each such stand-in is refused."""
    record = record_of("trjamann", 2)
    final = record["final"]
    if edit == "winners-bool":
        assert final["winners"] in ([0], [1])
        final["winners"] = [bool(final["winners"][0])]
        rejects(record, r"final\.winners\[0\]: must be integer, got True", None)  # by the schema
    elif edit == "net-float":
        final["net"] = [float(v) for v in final["net"]]
        rejects(record, "the game's final net should be", None)
    elif edit == "truncated-int":
        final["truncated"] = int(final["truncated"])
        rejects(record, r"final\.truncated: must be boolean, got 0", None)  # by the schema
    elif edit == "points-float":
        record["rounds"][0]["points"] = [float(v) for v in record["rounds"][0]["points"]]
        rejects(record, "points should be", 0)
    elif edit == "target-float":
        record = record_of("hornafjardar", 3)
        record["target"] = float(record["target"])
        with pytest.raises(RecordError, match="target"):
            validate_record(record)
    else:
        declarers = [i for i, r in enumerate(record["rounds"]) if r["contract"]["declarer"] in (0, 1)]
        record["rounds"][declarers[0]]["contract"]["declarer"] = bool(record["rounds"][declarers[0]]["contract"]["declarer"])
        with pytest.raises(RecordError):
            validate_record(record)

