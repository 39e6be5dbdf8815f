"""Remote bots at tables: manni-bot/1 over the table's WebSocket, the limits and faults of
bot:COMMAND, nothing hidden sent, and ``manni bot connect`` bridging an unchanged bot program."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

TestClient = pytest.importorskip("fastapi.testclient").TestClient
pytest.importorskip("websockets")
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from manni_agents.bots import connect  # noqa: E402
from manni_agents.bots import protocol as P  # noqa: E402
from manni_agents.play.web import remote_bots, tables  # noqa: E402
from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.remote_bots import BotLink, _pending  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import BOT, PERSON, Table  # noqa: E402
from manni_agents.sampler import sample_worlds  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402

from helpers.browser import served  # noqa: E402,F401
from helpers.hidden import twin_with_other_hidden_cards  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BOT = f"{sys.executable} {ROOT / 'examples/bots/simple_bot.py'}"
SHORT = {"variant": "basic", "target": 1}


@pytest.fixture
def client(tmp_path, lineup):
    with TestClient(create_app(GameStore(tmp_path / "records"), lineup)) as c:
        yield c


def _bot_table(client, seats=(BOT, "random", "random")) -> tuple[str, int, str]:
    table_id = client.post("/api/tables", json={**SHORT, "seats": list(seats)}).json()["id"]
    joined = client.post(f"/api/tables/{table_id}/seats", json={"name": "remote", "bot": True})
    assert joined.status_code == 201, joined.text
    return table_id, joined.json()["seat"], joined.json()["token"]


def _hello(ws, token: str, name: str = "test-bot") -> dict:
    ws.send_json({"type": "hello", "token": token})
    assert ws.receive_json()["type"] == "welcome"
    hello = ws.receive_json()
    assert hello == P.hello(remote_bots.TIME_LIMIT)
    ws.send_json({"type": "hello", "protocol": P.PROTOCOL, "name": name})
    return hello


def _play_first_legal(ws) -> list[dict]:
    """Answer every act with its first legal action until bye; every message received."""
    received = []
    while True:
        message = ws.receive_json()
        received.append(message)
        if message["type"] == "act":
            ws.send_json({"action": message["legal"][0]})
        elif message["type"] == "bye":
            return received


def test_a_remote_bot_plays_its_seat_with_the_bot_protocols_messages(client):
    table_id, seat, token = _bot_table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        received = _play_first_legal(ws)
    kinds = [m["type"] for m in received]
    assert kinds[0] == "game" and kinds[-2:] == ["game_end", "bye"] and "act" in kinds and "deal_end" in kinds
    for message in received:
        if message["type"] != "bye":
            P.check_message(message)
            assert message["seat"] == seat
    info = client.get(f"/api/tables/{table_id}").json()
    assert info["finished"] and info["seats"][seat]["strikes"] == 0
    replay = client.get(f"/api/tables/{table_id}/replay").json()
    assert replay["players"][seat] == f"seat {seat} (remote-bot:test-bot)"


def test_a_bot_seat_is_shown_as_a_bot_to_the_people_at_the_table(client):
    table_id = client.post("/api/tables", json={**SHORT, "seats": [PERSON, BOT, "random"]}).json()["id"]
    person = client.post(f"/api/tables/{table_id}/seats", json={"name": "Ann"}).json()
    assert client.post(f"/api/tables/{table_id}/seats", json={"name": "x"}).status_code == 409  # no seat for people
    bot = client.post(f"/api/tables/{table_id}/seats", json={"name": "remote", "bot": True}).json()
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws, client.websocket_connect(f"/ws/tables/{table_id}") as b:
        _hello(b, bot["token"], "clever-bot")
        ws.send_json({"type": "hello", "token": person["token"]})
        assert ws.receive_json()["type"] == "welcome"
        while True:
            state = ws.receive_json()
            seat = state["table"]["seats"][bot["seat"]]
            if seat["connected"]:
                break
    assert seat["bot"] and not seat["person"] and seat["name"] == "clever-bot"
    assert client.post(f"/api/tables/{table_id}/seats", json={"bot": True}).status_code == 409


def test_nothing_sent_to_a_remote_bot_changes_with_the_hidden_cards():
    """At every decision of the bot's seat, tables whose other hands differ (the seat's view kept)
    send the same request; and a twin's messages of the finished deals are the same too."""
    rules = make_rules("hornafjardar", target=3)
    table = Table(rules, [BOT, "random", "random"], stand_in="random", seed=7)
    seat, _ = table.join("bot", bot=True)
    told, rng, compared = BotLink(None, table, seat), np.random.default_rng(0), 0
    while not table.state.finished:
        messages, request, _ = _pending(told)
        if request is None:
            continue
        for world in sample_worlds(table.state.view(seat), rng, 2):
            twin = Table(rules, [BOT, "random", "random"], stand_in="random", seed=7)
            twin.join("bot", bot=True)
            twin.state = world
            shadow = BotLink(None, twin, seat)
            shadow.game_sent, shadow.deals_told = True, len(world.rounds)
            compared += world.hand_mask((seat + 1) % 3) != table.state.hand_mask((seat + 1) % 3)
            assert _pending(shadow)[1] == request
        try:
            twin = twin_with_other_hidden_cards(table.state, seat)
        except AssertionError:  # no card left to swap
            twin = None
        if twin is not None:
            shadow = BotLink(None, Table(rules, [BOT, "random", "random"], stand_in="random", seed=7), seat)
            shadow.table.join("bot", bot=True)
            shadow.table.state = twin
            shadow.game_sent = True
            told_again = BotLink(None, table, seat)
            told_again.game_sent = True
            assert _pending(shadow)[:2] == _pending(told_again)[:2]
        table.act(seat, [request["legal"][0]])
    assert compared > 20


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("quick", [True, False])
def test_a_bot_move_is_made_on_the_event_loop_only_at_a_table_of_quick_agents(client, monkeypatch, quick):
    if not quick:
        monkeypatch.setattr(tables, "QUICK_AGENTS", frozenset())  # random counts as slow
    on_loop = []
    act = Table.act

    def watched(table: Table, seat: int, actions) -> None:
        on_loop.append(_on_event_loop())
        act(table, seat, actions)

    monkeypatch.setattr(Table, "act", watched)
    table_id, _, token = _bot_table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        _play_first_legal(ws)
    assert on_loop and set(on_loop) == {quick}


def test_only_a_table_whose_every_agent_is_quick_is_quick():
    rules = make_rules("basic")
    assert Table(rules, [BOT, "random", "rule_based"], stand_in="ppo").quick
    assert not Table(rules, [BOT, "random", "pimc"], stand_in="rule_based").quick
    assert not Table(rules, [BOT, BOT, "random"], stand_in="pimc").quick  # the stand-in may play a bot's seat


@pytest.mark.parametrize(("answer", "code", "says"), [
    ("not json", 4400, "is not JSON"),
    (json.dumps({"action": 999}), 4400, "illegal action"),
    (json.dumps({"type": "move", "actions": [0], "seat": 1}), 4400, "not an object with \"action\""),
    (b"\x00\x01", 4400, "binary frame"),
    (None, 4408, "timed out"),
])
def test_a_faulty_answer_is_a_strike_and_the_stand_in_plays_the_seat(client, monkeypatch, answer, code, says):
    monkeypatch.setattr(remote_bots, "TIME_LIMIT", 0.3)
    table_id, seat, token = _bot_table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": token})
        ws.receive_json()
        ws.receive_json()
        ws.send_json({"type": "hello", "protocol": P.PROTOCOL, "name": "faulty"})
        while ws.receive_json()["type"] != "act":
            pass
        if isinstance(answer, str):
            ws.send_text(answer)
        elif answer is not None:
            ws.send_bytes(answer)
        error = ws.receive_json()
        assert error["type"] == "error" and error["fatal"] and says in error["message"]
        assert f"bot in seat {seat}" in error["message"] and '"type":"act"' in error["message"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == code
    info = client.get(f"/api/tables/{table_id}").json()
    assert info["seats"][seat]["strikes"] == 1 and info["seats"][seat]["stand_in"] and info["finished"]


def test_a_message_nobody_asked_for_is_a_fault_and_a_second_connection_is_refused(client):
    table_id, seat, token = _bot_table(client, (BOT, PERSON, "random"))
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        with client.websocket_connect(f"/ws/tables/{table_id}") as other:
            other.send_json({"type": "hello", "token": token})
            refused = other.receive_json()
            assert refused["fatal"] and "connected already" in refused["message"]
        ws.send_json({"action": 0})  # the game waits for the person: nothing was asked
        error = ws.receive_json()
        assert error["type"] == "error" and "nobody asked for" in error["message"]
    assert client.get(f"/api/tables/{table_id}").json()["seats"][seat]["strikes"] == 1


def test_a_bot_that_reconnects_with_its_token_plays_on(client):
    table_id, seat, token = _bot_table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        while ws.receive_json()["type"] != "act":
            pass
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        received = _play_first_legal(ws)
    assert [m["type"] for m in received][:2] == ["game", "act"]
    info = client.get(f"/api/tables/{table_id}").json()
    assert info["finished"] and info["seats"][seat]["strikes"] == 0


def _http(url: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def test_manni_bot_connect_bridges_an_unchanged_bot_program(served):
    url, _ = served
    table = _http(f"{url}api/tables", {**SHORT, "seats": [BOT, "random", "random"]})
    lines = []
    code = connect.run(f"{url}#table={table['id']}", PYTHON_BOT, say=lines.append)
    assert code == 0, lines
    assert "to rejoin it: manni bot connect" in lines[0]
    info = _http(f"{url}api/tables/{table['id']}")
    assert info["finished"] and info["seats"][0]["name"] == "simple-python" and info["seats"][0]["strikes"] == 0


def _first_legal_over_a_socket(url: str, table_id: str, token: str) -> list[str]:
    """A remote bot on a real socket answering each act with its first legal action until bye,
    each message awaited 10 s at most; the kinds of message received."""
    from websockets.sync.client import connect as ws_connect

    kinds = []
    with ws_connect(f"{url.replace('http://', 'ws://')}ws/tables/{table_id}", open_timeout=10) as ws:
        ws.send(json.dumps({"type": "hello", "token": token}))
        while not kinds or kinds[-1] != "bye":
            message = json.loads(ws.recv(timeout=10))
            kinds.append(message["type"])
            if message["type"] == "hello":
                ws.send(json.dumps({"type": "hello", "protocol": P.PROTOCOL, "name": "b"}))
            elif message["type"] == "act":
                ws.send(json.dumps({"action": message["legal"][0]}))
    return kinds


def test_a_table_of_remote_bots_and_no_person_plays_to_its_end(served):
    """Each bot's move wakes the table's other bots though no person or spectator is connected (such
    a table stalled after its first bot move: only a push to a person's socket woke them)."""
    url, _ = served
    table = _http(f"{url}api/tables", {**SHORT, "seats": [BOT, BOT, "random"]})
    tokens = [_http(f"{url}api/tables/{table['id']}/seats", {"bot": True})["token"] for _ in range(2)]
    with ThreadPoolExecutor(2) as pool:
        kinds = list(pool.map(lambda token: _first_legal_over_a_socket(url, table["id"], token), tokens))
    assert all(k[-2:] == ["game_end", "bye"] and k.count("act") > 5 for k in kinds), kinds
    info = _http(f"{url}api/tables/{table['id']}")
    assert info["finished"] and [s["strikes"] for s in info["seats"][:2]] == [0, 0]


def test_manni_bot_connect_says_what_is_wrong_in_one_line(served):
    url, _ = served
    bad = subprocess.run([sys.executable, "-m", "manni_env.cli", "bot", "connect", "ftp://x/", PYTHON_BOT],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a table's invite link" in bad.stderr and "Traceback" not in bad.stderr
    gone = subprocess.run([sys.executable, "-m", "manni_env.cli", "bot", "connect", f"{url}#table=nosuch", PYTHON_BOT],
                          capture_output=True, text=True, timeout=60)
    assert gone.returncode == 1 and gone.stderr.strip().count("\n") == 0, gone.stderr
    assert "cannot join the table: no such table" in gone.stderr


def test_a_flood_of_frames_is_one_fault_and_the_table_plays_on(client):
    table_id, seat, token = _bot_table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _hello(ws, token)
        for k in range(200):
            ws.send_text(json.dumps({"action": k}) if k % 2 else "x" * 1000)
        while (message := ws.receive_json())["type"] != "error":
            pass
        assert message["fatal"]
        with pytest.raises(WebSocketDisconnect):
            while True:
                ws.receive_json()
    info = client.get(f"/api/tables/{table_id}").json()
    assert info["seats"][seat]["strikes"] == 1 and info["finished"]


def test_no_token_opens_a_seat_it_was_not_given(client):
    """Another table's bot token, a made-up token, and a person's token answering for the bot."""
    table_id, bot_seat, _ = _bot_table(client, (BOT, PERSON, "random"))
    _, _, other_token = _bot_table(client)
    person = client.post(f"/api/tables/{table_id}/seats", json={"name": "Ann"}).json()
    for token, says in ((other_token, "another table"), ("x" * 24, "unknown seat token")):
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json({"type": "hello", "token": token})
            refused = ws.receive_json()
            assert refused["fatal"] and says in refused["message"]
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": person["token"]})
        assert ws.receive_json() == {"type": "welcome", "seat": person["seat"]}
        ws.send_json({"action": 0})  # a bot's answer from the person's socket is no move at all
        while (message := ws.receive_json())["type"] != "error":
            pass
        assert "unknown message type" in message["message"]
        ws.send_json({"type": "move", "actions": [0], "seat": bot_seat})
        while (message := ws.receive_json())["type"] != "error":
            pass
        assert f"a move for seat {bot_seat} is not yours" in message["message"]
