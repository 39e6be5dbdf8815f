"""Tables under hostile clients (``manni serve``): fair deals by construction, and the bounds of
docs/bounds.md on table sockets and table creation, each tested at its bound."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from unittest import mock

import pytest

pytest.importorskip("fastapi")
TestClient = pytest.importorskip("fastapi.testclient").TestClient
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import PERSON, Table  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402


@pytest.fixture
def client(tmp_path, lineup):
    with TestClient(create_app(GameStore(tmp_path / "records"), lineup)) as c:
        yield c


def test_a_table_with_other_people_refuses_a_chosen_seed(client):
    body = {"variant": "basic", "target": 1, "seats": [PERSON, PERSON, "random"], "seed": 3}
    response = client.post("/api/tables", json=body)
    assert response.status_code == 400 and "fresh seed" in response.json()["error"]
    with pytest.raises(ValueError, match="know every hand"):
        Table(make_rules("basic"), [PERSON, "random", PERSON], stand_in="random", seed=3)


def test_a_table_of_one_person_and_agents_deals_from_its_seed_and_says_so(client):
    body = {"variant": "basic", "target": 1, "seats": [PERSON, "random", "random"], "seed": 3}
    response = client.post("/api/tables", json=body)
    assert response.status_code == 201 and response.json()["seed"] == 3
    table_id = response.json()["id"]
    token = client.post(f"/api/tables/{table_id}/seats", json={"name": "A"}).json()["token"]
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": token})
        assert ws.receive_json()["type"] == "welcome"
        state = ws.receive_json()
    assert state["table"]["seed"] == 3
    expected = GameState(make_rules("basic", target=1), seed=3)
    hand = sorted(h["action"] for h in state["game"]["hand"])
    assert hand == sorted(expected.hand(0))  # the seeded deal


def test_nobody_at_a_table_of_people_learns_its_fresh_seed_before_the_end(client):
    seed = 8_765_432_109_876_543
    with mock.patch("manni_agents.play.web.tables.fresh_seed", return_value=seed):
        created = client.post("/api/tables", json={"variant": "basic", "target": 1, "seats": [PERSON, PERSON, "random"]})
    assert created.status_code == 201 and created.json()["seed"] is None
    table_id = created.json()["id"]
    tokens = [client.post(f"/api/tables/{table_id}/seats", json={"name": n}).json()["token"] for n in "AB"]
    frames = [created.text, client.get(f"/api/tables/{table_id}").text]
    with ExitStack() as stack:
        for token in [*tokens, None]:
            ws = stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}"))
            ws.send_json({"type": "hello", "token": token} if token else {"type": "watch"})
            frames += [json.dumps(ws.receive_json()), json.dumps(ws.receive_json())]
    assert all(str(seed) not in frame for frame in frames)
    assert json.loads(frames[-1])["game"]["seed"] is None


def test_fresh_seeds_are_too_many_to_search():
    from manni_agents.play.web.tables import fresh_seed

    assert max(fresh_seed() for _ in range(64)) >= 2**40  # not a 32-bit seed one could find from one's own hand


def _table(client, seats=(PERSON, PERSON, "random")) -> tuple[str, str]:
    table_id = client.post("/api/tables", json={"variant": "basic", "target": 1, "seats": list(seats)}).json()["id"]
    return table_id, client.post(f"/api/tables/{table_id}/seats", json={"name": "A"}).json()["token"]


def _welcomed(ws, token: str | None) -> dict:
    ws.send_json({"type": "hello", "token": token} if token else {"type": "watch"})
    assert ws.receive_json()["type"] == "welcome"
    return ws.receive_json()


def test_a_socket_that_never_says_hello_is_closed_at_the_deadline(client, monkeypatch):
    monkeypatch.setattr("manni_agents.play.web.table_api.HELLO_SECONDS", 0.3)
    table_id, _ = _table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        error = ws.receive_json()
        assert error["fatal"] and "no hello within 0.3 s" in error["message"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 4408


def test_silent_sockets_count_against_the_cap_and_free_it_when_closed(tmp_path, lineup, monkeypatch):
    monkeypatch.setattr("manni_agents.play.web.table_api.MAX_SOCKETS", 3)
    with TestClient(create_app(GameStore(tmp_path), lineup)) as client, ExitStack() as stack:
        table_id, _ = _table(client)
        silent = [stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}")) for _ in range(3)]
        with client.websocket_connect(f"/ws/tables/{table_id}") as extra:
            error = extra.receive_json()
            assert error["fatal"] and "3 table connections are open" in error["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                extra.receive_json()
            assert closed.value.code == 1013
        silent[0].close()
        for _ in range(100):  # the server counts it out when its handler ends
            with client.websocket_connect(f"/ws/tables/{table_id}") as again:
                again.send_json({"type": "watch"})
                if again.receive_json()["type"] == "welcome":
                    break
        else:
            pytest.fail("a closed connection never made room for a new one")


def test_a_seat_takes_at_most_its_bound_of_connections(client, monkeypatch):
    monkeypatch.setattr("manni_agents.play.web.table_api.MAX_SEAT_SOCKETS", 2)
    table_id, token = _table(client)
    with ExitStack() as stack:
        for _ in range(2):
            _welcomed(stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}")), token)
        with client.websocket_connect(f"/ws/tables/{table_id}") as third:
            third.send_json({"type": "hello", "token": token})
            error = third.receive_json()
            assert error["fatal"] and "2 connections open" in error["message"]


@pytest.mark.parametrize("frame", [b"\x00\xff binary", "[" * 4000, "{" * 2000, '{"type": ' * 400 + "1" + "}" * 400,
                                   "\ud800", "nul\x00l", "1e999999"])
def test_binary_frames_and_garbage_get_the_documented_error_and_the_socket_stays_open(client, frame):
    table_id, token = _table(client, (PERSON, "random", "random"))
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        state = _welcomed(ws, token)
        if isinstance(frame, bytes):
            ws.send_bytes(frame)
        else:
            ws.send_text(frame.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
        error = ws.receive_json()
        assert error["type"] == "error" and "fatal" not in error and "\n" not in error["message"]
        assert "JSON object" in error["message"] or "unknown message type" in error["message"]
        ws.send_json({"type": "start"})  # still served: a seated person's message gets its answer
        assert ws.receive_json()["type"] == "error"  # (this table has started: nothing to start)
    assert state["game"] is not None


def test_a_binary_hello_is_refused_with_the_documented_error(client):
    table_id, _ = _table(client)
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_bytes(b"\x00")
        error = ws.receive_json()
        assert error["fatal"] and "binary frames are not read" in error["message"]


def test_a_connection_lost_mid_broadcast_ends_quietly(tmp_path, lineup):
    """The close race: the push after the welcome finds the client gone (the server's send fails,
    as uvicorn's does), and the handler, next reading the socket, ends without an exception."""
    app = create_app(GameStore(tmp_path), lineup)
    with TestClient(app) as client:
        table_id, _ = _table(client)
        _race(app, table_id)


def _race(app, table_id: str) -> None:
    incoming = [{"type": "websocket.connect"}, {"type": "websocket.receive", "text": '{"type": "watch"}'}]
    sent: list[dict] = []

    async def receive() -> dict:
        if incoming:
            return incoming.pop(0)
        await asyncio.sleep(3600)  # a client that says nothing more

    async def send(message: dict) -> None:
        if len(sent) == 2:  # the accept and the welcome went out; the first push finds the client gone
            raise OSError("connection reset")
        sent.append(message)

    scope = {"type": "websocket", "path": f"/ws/tables/{table_id}", "raw_path": b"", "root_path": "", "scheme": "ws",
             "query_string": b"", "headers": [], "client": ("127.0.0.1", 1), "server": ("testserver", 80),
             "subprotocols": [], "asgi": {"version": "3.0"}}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 5))
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send"]
    assert json.loads(sent[1]["text"])["type"] == "welcome"


def test_the_server_bounds_its_connections_below_its_open_files(tmp_path, lineup):
    resource = pytest.importorskip("resource")
    from manni_agents.play.web.app import MAX_CONNECTIONS, server
    from manni_agents.play.web.table_api import MAX_SOCKETS

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        limit = server(create_app(GameStore(tmp_path), lineup)).config.http.gate.limit
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)
    assert MAX_SOCKETS < limit <= MAX_CONNECTIONS and limit < soft


def test_anonymous_posts_cannot_take_every_table(tmp_path, lineup):
    from manni_agents.play.web.tables import TABLES_PER_CLIENT

    app = create_app(GameStore(tmp_path), lineup)
    body = {"variant": "basic", "seats": [PERSON, PERSON, PERSON], "grace_seconds": 3600}
    with TestClient(app, client=("10.0.0.1", 1)) as one, TestClient(app, client=("10.0.0.2", 1)) as other:
        answers = [one.post("/api/tables", json=body) for _ in range(32)]
        assert [a.status_code for a in answers] == [201] * TABLES_PER_CLIENT + [429] * (32 - TABLES_PER_CLIENT)
        assert "the most one client may create" in answers[-1].json()["error"]
        assert other.post("/api/tables", json=body).status_code == 201  # the others still create tables


def test_a_table_nobody_joins_is_dropped_soon_whatever_its_grace():
    from manni_agents.play.web.tables import JOIN_SECONDS

    from helpers.clock import Clock

    clock = Clock()
    table = Table(make_rules("basic"), [PERSON, PERSON, PERSON], stand_in="random", grace_seconds=3600, clock=clock)
    assert table.next_deadline() == JOIN_SECONDS
    clock.now = JOIN_SECONDS - 1
    assert not table.tick()
    clock.now = JOIN_SECONDS
    assert table.tick() and table.closed


def test_host_and_origin_checks_refuse_other_sites(tmp_path, lineup):
    from manni_agents.play.web.origin import allowed_hosts

    hosts = allowed_hosts("127.0.0.1", ["manni.example:8000"])
    assert {"localhost", "127.0.0.1", "::1", "manni.example"} <= hosts
    app = create_app(GameStore(tmp_path), lineup, hosts=hosts)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert client.get("/api/options").status_code == 200
        assert client.get("/api/options", headers={"host": "[::1]:8000"}).status_code == 200
        rebound = client.get("/api/options", headers={"host": "attacker.example"})
        assert rebound.status_code == 421 and "attacker.example" in rebound.json()["error"]
        lan = client.post("/api/tables", json={"variant": "basic"},
                          headers={"host": "192.168.1.5:8000", "origin": "http://192.168.1.5:8000"})
        assert lan.status_code == 201  # an address, and a page the server itself served under it
        other = client.post("/api/tables", json={"variant": "basic"},
                            headers={"host": "192.168.1.5:8000", "origin": "http://192.168.1.6"})
        assert other.status_code == 403
        evil = {"origin": "http://attacker.example"}
        assert client.post("/api/tables", json={"variant": "basic"}, headers=evil).status_code == 403
        created = client.post("/api/tables", json={"variant": "basic"}, headers={"origin": "http://127.0.0.1:8000"})
        assert created.status_code == 201
        path = f"ws://127.0.0.1:8000/ws/tables/{created.json()['id']}"
        for origin in ("http://attacker.example", "null"):
            with pytest.raises(WebSocketDisconnect) as refused:
                with client.websocket_connect(path, headers={"origin": origin}):
                    pass
            assert refused.value.code == 1008
        named = {"host": "manni.example:8000", "origin": "http://manni.example:8000"}
        with client.websocket_connect(path, headers=named) as ws:
            ws.send_json({"type": "watch"})
            assert ws.receive_json()["type"] == "welcome"


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1:8001", "http://localhost:8000",
                                    "http://127.0.0.1", "null", "http://127.0.0.1:8000/x",
                                    "http://127.0.0.1:99999", "file://", "http://user@127.0.0.1:8000"])
def test_only_the_servers_own_origin_may_post_or_open_a_socket(tmp_path, lineup, origin):
    """Another port of the same machine, another allowed name of it, ``null``: other origins. (The
    scheme is not compared: one port speaks one protocol, so an ``https`` page of the same name and
    port is this server behind a TLS proxy.)"""
    from manni_agents.play.web.origin import allowed_hosts

    app = create_app(GameStore(tmp_path), lineup, hosts=allowed_hosts("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        refused = client.post("/api/tables", json={"variant": "basic"}, headers={"origin": origin})
        assert refused.status_code == 403 and "this server is '127.0.0.1:8000'" in refused.json()["error"]
        own = client.post("/api/tables", json={"variant": "basic"}, headers={"origin": "http://127.0.0.1:8000"})
        assert own.status_code == 201
        path = f"ws://127.0.0.1:8000/ws/tables/{own.json()['id']}"
        with pytest.raises(WebSocketDisconnect) as closed:
            with client.websocket_connect(path, headers={"origin": origin}):
                pass
        assert closed.value.code == 1008
        with client.websocket_connect(path, headers={"origin": "http://127.0.0.1:8000"}) as ws:
            ws.send_json({"type": "watch"})
            assert ws.receive_json()["type"] == "welcome"


def test_the_default_port_may_be_written_or_not():
    from manni_agents.play.web.origin import same_origin

    assert same_origin("http://manni.example", "manni.example:80")
    assert same_origin("https://manni.example", "manni.example")  # behind a TLS proxy that keeps Host
    assert same_origin("http://[::1]:8000", "[::1]:8000")
    assert not same_origin("http://manni.example", "manni.example:8000")
    assert not same_origin("https://manni.example:8443", "manni.example")


@pytest.mark.parametrize("host", ["", " "])
def test_an_empty_host_is_refused(tmp_path, lineup, host):
    from manni_agents.play.web.origin import allowed_hosts

    app = create_app(GameStore(tmp_path), lineup, hosts=allowed_hosts("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for method in ("GET", "POST"):
            answer = client.request(method, "/api/tables" if method == "POST" else "/api/options",
                                    json={"variant": "basic"} if method == "POST" else None,
                                    headers={"host": host, "origin": "http://"})
            assert answer.status_code == 400
            assert answer.json()["error"] == "the request names no host: a Host header is required"


def test_a_server_on_every_address_answers_to_this_machines_name():
    import socket

    from manni_agents.play.web.origin import allowed_hosts

    assert socket.gethostname().lower() in allowed_hosts("0.0.0.0")
    assert "0.0.0.0" not in allowed_hosts("0.0.0.0")


def test_a_message_at_the_bound_is_read_and_one_past_it_refused(client):
    from manni_agents.play.web.table_api import MAX_MESSAGE

    table_id, token = _table(client, (PERSON, "random", "random"))
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        _welcomed(ws, token)
        start = '{"type": "start"}'
        ws.send_text(start + " " * (MAX_MESSAGE - len(start)))  # read: the table has started already
        assert ws.receive_json()["message"] == "the game has already started"
        ws.send_text(start + " " * (MAX_MESSAGE + 1 - len(start)))
        assert ws.receive_json()["message"] == f"message too long ({MAX_MESSAGE + 1} characters; at most {MAX_MESSAGE})"


# ----------------------------------------------------------------------------- a share per client
def test_a_burst_of_hellos_for_one_seat_passes_its_cap_no_further(client, monkeypatch):
    """Hellos sent together are counted as they are read, not once their seat is connected (a slow
    connect widens the window they once all passed through): exactly MAX_SEAT_SOCKETS get in."""
    import time

    from manni_agents.play.web.table_api import MAX_SEAT_SOCKETS

    connect = Table.connect
    monkeypatch.setattr(Table, "connect", lambda table, seat: (time.sleep(0.2), connect(table, seat)))
    table_id, token = _table(client)
    with ExitStack() as stack:
        sockets = [stack.enter_context(client.websocket_connect(f"/ws/tables/{table_id}"))
                   for _ in range(MAX_SEAT_SOCKETS + 2)]
        for ws in sockets:
            ws.send_json({"type": "hello", "token": token})
        firsts = [ws.receive_json() for ws in sockets]
    assert sum(f["type"] == "welcome" for f in firsts) == MAX_SEAT_SOCKETS
    assert sum(f.get("fatal", False) for f in firsts) == 2


def test_one_client_holds_at_most_its_share_of_table_sockets(tmp_path, lineup, monkeypatch):
    """Re-opening at each hello deadline once let one address hold all 512 table sockets."""
    monkeypatch.setattr("manni_agents.play.web.table_api.SOCKETS_PER_CLIENT", 2)
    app = create_app(GameStore(tmp_path), lineup)
    with TestClient(app) as client, ExitStack() as stack:
        other = TestClient(app, client=("192.0.2.7", 40000))
        table_id, _ = _table(client)
        path = f"/ws/tables/{table_id}"
        silent = [stack.enter_context(client.websocket_connect(path)) for _ in range(2)]  # at the share
        with client.websocket_connect(path) as extra:  # past it
            error = extra.receive_json()
            assert error["fatal"] and error["message"] == ("you have 2 table connections open, the most one client "
                                                           "may have: close some tabs")
            with pytest.raises(WebSocketDisconnect) as closed:
                extra.receive_json()
            assert closed.value.code == 1013
        with other.websocket_connect(path) as ws:  # another client still gets in
            ws.send_json({"type": "watch"})
            assert ws.receive_json()["type"] == "welcome"
        silent[0].send_json({"type": "watch"})
        assert silent[0].receive_json()["type"] == "welcome"


def test_one_client_has_at_most_its_share_of_games(tmp_path, lineup):
    """One address could lock all 32 games, kept alive by a GET every 29 minutes."""
    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    store = GameStore(tmp_path, max_games=32, idle_seconds=1800, clock=clock, per_client=2)
    app = create_app(store, lineup)
    with TestClient(app) as client:
        other = TestClient(app, client=("2001:db8::1", 40000))
        same_64 = TestClient(app, client=("2001:db8::2", 40000))
        body = {"variant": "basic"}
        ids = [client.post("/api/games", json=body).json()["id"] for _ in range(2)]  # at the share
        refused = client.post("/api/games", json=body)  # past it
        assert refused.status_code == 429
        assert refused.json()["error"].startswith("you have 2 unfinished games, the most one client may have")
        assert other.post("/api/games", json=body).status_code == 201
        assert other.post("/api/games", json=body).status_code == 201
        assert same_64.post("/api/games", json=body).status_code == 429  # one IPv6 /64 is one client
        clock.now = 1799.0
        assert client.get(f"/api/games/{ids[0]}").status_code == 200  # kept alive
        clock.now = 1800.0  # the other one expires
        assert client.post("/api/games", json=body).status_code == 201
        assert client.post("/api/games", json=body).status_code == 429


def test_client_key_groups_an_ipv6_64_and_unmaps_ipv4():
    from manni_agents.play.web.limits import client_key

    assert client_key("203.0.113.9") == "203.0.113.9"
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff:2") == "2001:db8::/64"
    assert client_key("2001:db8:0:1::1") != client_key("2001:db8::1")
    assert client_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert client_key(None) is None
