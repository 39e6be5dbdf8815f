"""Tables for people (``manni serve``): the WebSocket protocol through Starlette's TestClient,
seat privacy by a frame audit against the engine, rejoin and the grace period, hints, the review,
and bad input answered with clear messages that change nothing."""

from __future__ import annotations

import json
import re
import time
from contextlib import ExitStack, nullcontext
from unittest import mock

import numpy as np
import pytest

pytest.importorskip("fastapi")
TestClient = pytest.importorskip("fastapi.testclient").TestClient

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.replay import build_replay  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import PERSON, Table, TableError, TableFull, TableStore  # noqa: E402
from manni_env.cards import card_to_str  # noqa: E402
from manni_env.records import read_records, validate_record  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402

from helpers.clock import Clock  # noqa: E402

CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")


@pytest.fixture
def store(tmp_path) -> GameStore:
    return GameStore(tmp_path / "records")


@pytest.fixture
def client(store, lineup):
    with TestClient(create_app(store, lineup)) as c:
        yield c


def new_table(client, deal_seed: int | None = None, **body) -> str:
    """A new table (two people and ppo by default); ``deal_seed`` pins the server's fresh seed (no
    client can choose the seed of a table with other people)."""
    with mock.patch("manni_agents.play.web.tables.fresh_seed", return_value=deal_seed) if deal_seed is not None \
            else nullcontext():
        response = client.post("/api/tables", json={"variant": "basic", "target": 1, "seats": [PERSON, PERSON, "ppo"],
                                                    **body})
    assert response.status_code == 201, response.text
    assert response.json()["invite"] == f"/#table={response.json()['id']}"
    return response.json()["id"]


def join(client, table_id: str, name: str) -> tuple[int, str]:
    response = client.post(f"/api/tables/{table_id}/seats", json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()["seat"], response.json()["token"]


def hello(ws, token: str | None) -> dict:
    ws.send_json({"type": "hello", "token": token} if token else {"type": "watch"})
    welcome = ws.receive_json()
    assert welcome["type"] == "welcome", welcome
    return ws.receive_json()


def latest(ws, message: dict, version: int | None = None) -> dict:
    """Read state messages until one of at least ``version`` (the pushes of other seats' moves)."""
    while message["type"] != "state" or (version is not None and message["version"] < version):
        message = ws.receive_json()
    return message


def choose(game: dict, rng: np.random.Generator) -> list[int]:
    cards = [h["action"] for h in game["hand"] if h["legal"]]
    if game["select"]:
        n = game["select"]["max"] if game["select"]["exact"] else int(rng.integers(game["select"]["max"] + 1))
        picks = [int(c) for c in rng.choice(cards, size=n, replace=False)]
        return picks + ([game["select"]["done"]] if game["select"]["done"] is not None and n < game["select"]["max"] else [])
    moves = cards + [b["action"] for b in game["buttons"]]
    return [int(moves[int(rng.integers(len(moves)))])]


class Audit:
    """Wraps :meth:`Table.message`: every message is checked, when it is built, against what its
    seat may know (its own cards now and before, cards played, the cut card)."""

    def __init__(self, monkeypatch):
        self.held: dict[int, set[str]] = {0: set(), 1: set(), 2: set()}
        self.checked = {0: 0, 1: 0, 2: 0, None: 0}
        original_message, original_apply = Table.message, Table._apply

        def apply(table, action, person):
            for s in range(3):
                self.held[s] |= {card_to_str(c) for c in table.state.hand(s)}
            original_apply(table, action, person)

        def message(table, seat):
            out = original_message(table, seat)
            self.check(table, seat, out)
            return out

        monkeypatch.setattr(Table, "_apply", apply)
        monkeypatch.setattr(Table, "message", message)

    def check(self, table: Table, seat: int | None, message: dict) -> None:
        state = table.state
        public = {card_to_str(c) for r in state.rounds for _, cards, _ in r.tricks for c in cards}
        public |= {card_to_str(c) for _, c in state.view(0).plays}
        public |= {card_to_str(r.cut_card) for r in state.rounds if r.cut_card is not None}
        if state.view(0).cut_card is not None:
            public.add(card_to_str(state.view(0).cut_card))
        known = set(public)
        if seat is not None:
            self.held[seat] |= {card_to_str(c) for c in state.hand(seat)}
            known |= self.held[seat]
        shown = set(CARD.findall(json.dumps(message)))
        assert shown <= known, f"seat {seat} was sent cards it may not know: {sorted(shown - known)}"
        self.checked[seat] += 1


def play_out(sockets: dict, states: dict, rng, turns: int = 400, hints: bool = True) -> dict:
    """Random legal moves for the seated people (``sockets`` keyed by seat, ``None`` for a
    spectator) until the game is over or ``turns`` moves were made; returns the last states."""
    for _ in range(turns):
        game = states[None]["game"] if None in states else next(iter(states.values()))["game"]
        if game["finished"]:
            break
        seat = game["to_move"]
        mover = states[seat]
        assert mover["game"]["your_turn"] and mover["game"]["seat"] == seat
        legal = {h["action"] for h in mover["game"]["hand"] if h["legal"]} | {b["action"] for b in mover["game"]["buttons"]}
        if mover["game"]["select"] and mover["game"]["select"]["done"] is not None:
            legal.add(mover["game"]["select"]["done"])
        if hints:
            assert {h["action"] for h in mover["hints"]} == legal
            assert sum(h["p"] for h in mover["hints"]) == pytest.approx(1, abs=1e-3)
        else:
            assert mover["hints"] is None
        assert all(states[s]["hints"] is None for s in states if s != seat)
        sockets[seat].send_json({"type": "move", "actions": choose(mover["game"], rng)})
        mine = latest(sockets[seat], sockets[seat].receive_json())
        states = {s: mine if s == seat else latest(ws, ws.receive_json(), mine["version"]) for s, ws in sockets.items()}
    return states


def connect_all(client, table_id: str, tokens: dict, stack) -> tuple[dict, dict]:
    """Open a socket per seat token (and a spectator's, key ``None``); all in sync."""
    sockets, states = {}, {}
    for seat, token in tokens.items():
        sockets[seat] = stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}"))
        states[seat] = hello(sockets[seat], token)
    version = states[seat]["version"]
    return sockets, {s: st if st["version"] >= version else latest(sockets[s], sockets[s].receive_json(), version)
                     for s, st in states.items()}


def test_two_people_an_agent_and_a_spectator_play_a_whole_game_with_a_frame_audit(client, store, monkeypatch):
    audit = Audit(monkeypatch)
    table_id = new_table(client, hints=True, deal_seed=3)
    seat_a, token_a = join(client, table_id, "Anna")
    info = client.get(f"/api/tables/{table_id}").json()
    assert seat_a == 0 and not info["started"] and info["open_seats"] == 1
    seat_b, token_b = join(client, table_id, "  Bjarni\n ")
    info = client.get(f"/api/tables/{table_id}").json()
    assert seat_b == 1 and info["started"] and [s["name"] for s in info["seats"]] == ["Anna", "Bjarni", "seat 2 (ppo)"]
    assert token_a not in json.dumps(info) and token_b not in json.dumps(info)
    with ExitStack() as stack:
        sockets, states = connect_all(client, table_id, {0: token_a, 1: token_b, None: None}, stack)
        assert [s["connected"] for s in states[0]["table"]["seats"]] == [True, True, False]
        assert states[None]["game"]["hand"] == [] and states[None]["hints"] is None
        assert len(states[0]["game"]["hand"]) == len(states[1]["game"]["hand"]) == 12
        states = play_out(sockets, states, np.random.default_rng(0))
        assert states[0]["game"]["finished"] and states[None]["game"]["finished"]
        for seat in (0, 1):
            review = states[seat]["review"]
            assert review["deal"] == len(states[seat]["game"]["rounds"]) and len(review["decisions"]) >= 4
            for d in review["decisions"]:
                assert d["seat"] == seat and d["differs"] == (d["action"] != d["agent"]) and d["p_agent"] >= d["p_action"]
            assert review["differs"] == sum(d["differs"] for d in review["decisions"])
        assert states[None]["review"] is None
    assert min(audit.checked[s] for s in (0, 1, None)) > 20
    [record] = read_records(store.records_path)  # saved when the game ended
    validate_record(record)
    assert record["players"] == ["human", "human", "ppo"] and record["seed"] == 3
    replay = build_replay(record)
    reviewed = [f for f in replay["frames"] if f["agent_choice"] is not None]
    assert reviewed and {f["seat"] for f in reviewed} == {0, 1}
    last = [f for f in reviewed if f["deal"] == len(record["rounds"]) and f["seat"] == 0]
    assert [f["action"] for f in last] == [d["action"] for d in states[0]["review"]["decisions"]]
    assert [f["agent_choice"] for f in last] == [d["agent"] for d in states[0]["review"]["decisions"]]


def test_a_table_says_what_it_is_to_whoever_has_its_link(client):
    """The invite link's page reads the table's public info: the variant's name, summary and rules
    link, how the game ends, the rule options and whether hints are on."""
    table_id = new_table(client, hints=True, negative=True)
    info = client.get(f"/api/tables/{table_id}").json()
    assert (info["name"], info["rules"], info["end"], info["hints"]) == ("Basic Manni", "/rules#basic",
                                                                        "until a total reaches 1", True)
    assert info["options"] == make_rules("basic", target=1, negative=True).options() and info["summary"]
    assert client.get(info["rules"].split("#")[0]).status_code == 200


def test_without_hints_nobody_gets_any(client):
    table_id = new_table(client, seats=[PERSON, "ppo", "rule_based"])
    _, token = join(client, table_id, "Solo")
    with ExitStack() as stack:
        sockets, states = connect_all(client, table_id, {0: token}, stack)
        assert states[0]["table"]["hints"] is False
        play_out(sockets, states, np.random.default_rng(1), turns=6, hints=False)


def test_bad_input_gets_clear_messages_and_changes_nothing(client):
    table_id = new_table(client, hints=True, deal_seed=4)
    other_id = new_table(client)
    _, token_a = join(client, table_id, "A")
    _, token_b = join(client, table_id, "B")
    _, other_token = join(client, other_id, "C")
    assert client.get("/api/tables/nope").status_code == 404
    assert "no such table" in client.post("/api/tables/nope/seats", json={"name": "x"}).json()["error"]
    full = client.post(f"/api/tables/{table_id}/seats", json={"name": "third"})
    assert full.status_code == 409 and "full" in full.json()["error"]
    assert client.post("/api/tables", json={"seats": ["ppo", "ppo", "ppo"]}).status_code == 400
    assert "not offered" in client.post("/api/tables", json={"seats": [PERSON, "nope", "ppo"]}).json()["error"]
    assert client.post("/api/tables", json={"seats": [PERSON], "hints": True}).status_code == 422
    for first, problem in [({"type": "hello", "token": other_token}, "another table"),
                           ({"type": "hello", "token": "x" * 24}, "unknown seat token"),
                           ({"type": "hello"}, "needs the seat token"), ({"type": "dance"}, "bad")]:
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json(first)
            reply = ws.receive_json()
            assert reply["type"] == "error" and reply["fatal"] and problem in reply["message"], reply
    with client.websocket_connect("/ws/tables/nope") as ws:
        ws.send_json({"type": "watch"})
        assert "no such table" in ws.receive_json()["message"]
    with ExitStack() as stack:
        sockets, states = connect_all(client, table_id, {0: token_a, 1: token_b, None: None}, stack)
        seat = states[0]["game"]["to_move"]
        other = 1 - seat
        mover = states[seat]["game"]
        legal = [h["action"] for h in mover["hand"] if h["legal"]] + [b["action"] for b in mover["buttons"]]
        illegal = next(h["action"] for h in mover["hand"] if not h["legal"]) if not mover["buttons"] else 51
        before = states[seat]["version"]
        for ws, message, problem in [
            (sockets[other], {"type": "move", "actions": [legal[0]]}, "not your turn"),
            (sockets[seat], {"type": "move", "actions": [legal[0]], "seat": other}, f"a move for seat {other}"),
            (sockets[seat], {"type": "move", "actions": [illegal]}, ""),
            (sockets[seat], {"type": "move", "actions": []}, "actions"),
            (sockets[seat], {"type": "move", "actions": [999]}, "actions"),
            (sockets[None], {"type": "move", "actions": [legal[0]]}, "spectators"),
            (sockets[seat], {"type": "start"}, "already started"),
            (sockets[seat], {"type": "cheat"}, "unknown message type"),
            (sockets[seat], ["move"], "JSON object"),
        ]:
            ws.send_json(message) if not isinstance(message, list) else ws.send_text(json.dumps(message))
            reply = ws.receive_json()
            assert reply["type"] == "error" and problem in reply["message"] and "fatal" not in reply, (message, reply)
        sockets[seat].send_text("x" * 5000)
        assert "too long" in sockets[seat].receive_json()["message"]
        assert client.get(f"/api/tables/{table_id}/replay").status_code == 409
        sockets[seat].send_json({"type": "move", "actions": [legal[0]]})  # still its turn: nothing changed
        assert latest(sockets[seat], sockets[seat].receive_json())["version"] == before + 1


def test_a_move_chosen_before_the_game_went_on_is_refused_and_changes_nothing(client):
    """A second click that arrives after the first move was made carries the count of moves it was
    chosen after: refused, where without it the seat's next decision could take a stale card."""
    table_id = new_table(client, deal_seed=4)
    _, token_a = join(client, table_id, "A")
    _, token_b = join(client, table_id, "B")
    with ExitStack() as stack:
        sockets, states = connect_all(client, table_id, {0: token_a, 1: token_b}, stack)
        seat = states[0]["game"]["to_move"]
        before = states[seat]
        move = choose(before["game"], np.random.default_rng(0))
        sockets[seat].send_json({"type": "move", "actions": move, "after": before["moves"] + 1})
        reply = sockets[seat].receive_json()
        assert reply["type"] == "error" and "gone on since" in reply["message"], reply
        sockets[seat].send_json({"type": "move", "actions": move, "after": before["moves"]})
        made = latest(sockets[seat], sockets[seat].receive_json())
        assert made["version"] == before["version"] + 1 and made["moves"] > before["moves"]
        sockets[seat].send_json({"type": "move", "actions": move, "after": before["moves"]})  # the second click
        reply = sockets[seat].receive_json()
        assert reply["type"] == "error" and "gone on since" in reply["message"], reply
        sockets[seat].send_json({"type": "move", "actions": move, "after": -1})
        assert "after" in sockets[seat].receive_json()["message"]
        assert client.get(f"/api/tables/{table_id}").json()["seats"] == made["table"]["seats"]
        spectator = stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}"))
        assert hello(spectator, None)["moves"] == made["moves"]  # nothing changed since


def test_rejoin_within_the_grace_period_keeps_seat_hand_and_turn(client):
    table_id = new_table(client, deal_seed=5, grace_seconds=60)
    _, token_a = join(client, table_id, "A")
    _, token_b = join(client, table_id, "B")
    with ExitStack() as stack:
        sockets, states = connect_all(client, table_id, {0: token_a, 1: token_b}, stack)
        states = play_out(sockets, states, np.random.default_rng(2), turns=5, hints=False)
        with client.websocket_connect(f"/ws/tables/{table_id}") as again:  # a second tab of seat 0
            assert hello(again, token_a)["game"]["hand"] == states[0]["game"]["hand"]
        sockets[0].close()
        gone = latest(sockets[1], sockets[1].receive_json(), states[1]["version"] + 3)
        assert [s["connected"] for s in gone["table"]["seats"]] == [False, True, False]
        assert not gone["table"]["seats"][0]["stand_in"]
        with client.websocket_connect(f"/ws/tables/{table_id}") as back:
            state = hello(back, token_a)
            assert state["seat"] == 0 and state["game"]["hand"] == states[0]["game"]["hand"]
            assert state["game"]["to_move"] == states[0]["game"]["to_move"]
            assert state["game"]["your_turn"] == states[0]["game"]["your_turn"]
            assert state["table"]["seats"][0]["connected"]


def test_after_the_grace_period_an_agent_plays_the_seat_until_the_person_returns(tmp_path):
    clock = Clock()
    with mock.patch("manni_agents.play.web.tables.fresh_seed", return_value=7):
        table = Table(make_rules("basic", target=1), [PERSON, PERSON, "ppo"], stand_in="ppo", advisor="ppo",
                      grace_seconds=120, clock=clock)
    (a, token_a), (b, token_b) = table.join("A"), table.join("B")
    table.connect(a), table.connect(b)
    assert table.started and table.seat_of(token_a) == a and table.seat_of(token_b) == b
    with pytest.raises(TableError, match="not one of this table's"):
        table.seat_of(token_a[:-1] + ("B" if token_a.endswith("A") else "A"))
    table.disconnect(a)
    clock.now = 119.0
    assert not table.tick() and table.next_deadline() == 120.0
    if table.state.to_move != a:  # make it A's turn: B moves
        table.act(b, [table.state.legal_actions()[0]])
    assert table.state.to_move == a
    with pytest.raises(TableError, match="not your turn"):
        table.act(b, [table.state.legal_actions()[0]])
    decisions = sum(map(len, table.probabilities))
    clock.now = 120.0
    assert table.tick() and table.seats[a].stand_in and not table.closed
    assert sum(map(len, table.probabilities)) > decisions  # the stand-in agent moved for A
    assert not table.reviews[-1] or all(r["seat"] == b for r in table.reviews[-1])  # not A's review
    assert table.message(a)["table"]["seats"][a]["stand_in"]
    table.connect(a)  # back: A plays again
    assert not table.seats[a].stand_in
    table.disconnect(a)
    clock.now = 200.0
    table.disconnect(b)
    clock.now = 240.0
    assert table.tick() and table.seats[a].stand_in and not table.closed  # B still within the grace period
    clock.now = 320.0
    assert table.tick() and table.closed
    store = TableStore(GameStore(tmp_path), max_tables=1)
    table_id = store.add(table)
    with pytest.raises(Exception, match="tables are in progress"):
        store.add(table)
    assert store.finish(table_id) == bool(table.state.rounds)
    with pytest.raises(TableError, match="over"):
        store.get(table_id)


def test_a_table_nobody_joins_expires_and_a_full_table_refuses_a_fourth_person():
    clock = Clock()
    table = Table(make_rules("trjamann"), [PERSON, "random", "random"], stand_in="rule_based", grace_seconds=60,
                  clock=clock)
    clock.now = 59.0
    assert not table.tick()
    clock.now = 60.0
    assert table.tick() and table.closed
    table = Table(make_rules("trjamann"), [PERSON, PERSON, "random"], stand_in="rule_based", clock=clock)
    seat, _ = table.join("A")
    table.start(seat)  # starts with the stand-in agent in the open seat
    assert table.started and table.seats[1].spec == "rule_based"
    with pytest.raises(TableFull, match="full"):
        table.join("B")
    with pytest.raises(ValueError, match="hints need"):
        Table(make_rules("basic"), [PERSON, "random", "random"], stand_in="random", hints=True)


def test_a_spectator_never_sees_a_hand_and_seats_see_only_their_own(client, monkeypatch):
    """The audit with other hidden cards: the same table dealt from other seeds."""
    for seed in (11, 12):
        audit = Audit(monkeypatch)
        table_id = new_table(client, deal_seed=seed, hints=True, variant="hornafjardar", target=None)
        _, token_a = join(client, table_id, "A")
        _, token_b = join(client, table_id, "B")
        with ExitStack() as stack:
            sockets, states = connect_all(client, table_id, {0: token_a, 1: token_b, None: None}, stack)
            play_out(sockets, states, np.random.default_rng(seed), turns=30)
        assert audit.checked[None] > 10
        monkeypatch.undo()


def test_the_server_hands_an_absent_seat_to_the_agent_and_closes_a_table_everybody_left(client, store):
    """The grace period on the server's own timer (1 s here): the others are told, the stand-in
    agent plays, and a table left by everybody is over, its record saved."""
    table_id = new_table(client, deal_seed=6, grace_seconds=1)
    _, token_a = join(client, table_id, "A")
    _, token_b = join(client, table_id, "B")
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws_b:
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws_a:
            hello(ws_a, token_a)
            state = latest(ws_b, hello(ws_b, token_b))
        while not state["table"]["seats"][0]["stand_in"]:  # pushed when A's grace period ends
            state = latest(ws_b, ws_b.receive_json())
        assert not state["table"]["seats"][0]["connected"] and state["game"]["to_move"] != 0
        while not state["game"]["finished"]:  # B plays on against two agents
            ws_b.send_json({"type": "move", "actions": choose(state["game"], np.random.default_rng(0))})
            state = latest(ws_b, ws_b.receive_json())
    deadline = time.monotonic() + 10
    while client.get(f"/api/tables/{table_id}").status_code == 200:
        assert time.monotonic() < deadline, "the table everybody left was not closed"
        time.sleep(0.1)
    assert "over" in client.get(f"/api/tables/{table_id}").json()["error"]
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": token_a})
        assert "over" in ws.receive_json()["message"]
    [record] = read_records(store.records_path)
    assert record["players"] == ["human", "human", "ppo"] and record["final"]["winners"]
