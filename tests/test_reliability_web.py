"""Hostile use of ``manni serve`` (issue 23's items 1-4): bounded request bodies and replays, startup
checks with one error line and exit code 2, and what is saved when the server stops."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
TestClient = pytest.importorskip("fastapi.testclient").TestClient

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.limits import DISCARD_BYTES, MAX_JSON_BYTES, BodySizeLimit, ReplayGuard  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_env.cli import main  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.records import game_record, read_records, validate_record  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402

from helpers.browser import served  # noqa: E402,F401 (served: a server on a loopback port)

WEB_DOCS = Path(__file__).parents[1] / "docs" / "web.md"  # the documentation of manni serve


def long_game(deals: int, variant: str = "basic") -> dict:
    """The record of a random game of exactly ``deals`` deals."""
    state = GameState(make_rules(variant, target=10**6, max_deals=deals), seed=deals)
    rng = np.random.default_rng(deals)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return json.loads(json.dumps(game_record(state, players=["random"] * 3)))


@pytest.fixture
def store(tmp_path) -> GameStore:
    return GameStore(tmp_path / "records", max_games=4, idle_seconds=600)


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


# ----------------------------------------------------------------------------- item 1: replay bounds
def test_a_replay_of_too_many_deals_is_refused_with_the_limit(store, lineup):
    app = create_app(store, lineup, records=[long_game(12)], max_upload_bytes=2_000_000, replays=ReplayGuard(10))
    with TestClient(app) as client:
        upload = client.post("/api/replay?game=0", content=jsonl(long_game(12)))
        assert upload.status_code == 413
        assert upload.json()["error"] == ("the game has 12 deals; this server replays games of at most 10 deals "
                                          "(manni serve --max-replay-deals)")
        assert client.get("/api/records/0").status_code == 413
        ok = client.post("/api/replay?game=0", content=jsonl(long_game(10)))
        assert ok.status_code == 200 and len(ok.json()["replay"]["deals"]) == 10


def test_the_default_replay_limit_bounds_a_very_long_game(store, lineup):
    record = long_game(201)
    with TestClient(create_app(store, lineup, max_upload_bytes=10_000_000)) as client:
        response = client.post("/api/replay?game=0", content=jsonl(record))
    assert response.status_code == 413 and "at most 200 deals" in response.json()["error"]


def test_replays_at_once_are_bounded(store, lineup):
    guard = ReplayGuard(slots=1)
    with TestClient(create_app(store, lineup, records=[long_game(2)], replays=guard)) as client:
        with guard.slot():  # another replay is being built
            busy = client.get("/api/records/0")
            upload = client.post("/api/replay?game=0", content=jsonl(long_game(2)))
        assert busy.status_code == upload.status_code == 503
        assert busy.headers["retry-after"] == "1" and "the most this server builds at once" in busy.json()["error"]
        assert client.get("/api/records/0").status_code == 200  # the slot is free again


# ----------------------------------------------------------------------------- item 2: JSON body size
def test_a_large_json_body_is_refused_before_it_is_read(store, lineup):
    with TestClient(create_app(store, lineup)) as client:
        big = b'{"variant": "basic", "x": "' + b"a" * (MAX_JSON_BYTES + 10) + b'"}'
        response = client.post("/api/games", content=big, headers={"content-type": "application/json"})
        assert response.status_code == 413
        assert response.json()["error"] == f"the request body is larger than {MAX_JSON_BYTES:,} bytes, the most this server reads"
        assert len(store) == 0
        assert client.post("/api/games", json={"variant": "basic"}).status_code == 201


def test_a_large_chunked_json_body_is_a_413(store, lineup):
    def body():
        yield b'{"variant": "basic", "x": "'
        for _ in range(50):
            yield b"a" * 10_000
        yield b'"}'

    with TestClient(create_app(store, lineup)) as client:
        response = client.post("/api/games", content=body(), headers={"content-type": "application/json"})
    assert response.status_code == 413 and "larger than 65,536 bytes" in response.json()["error"]
    assert len(store) == 0


def test_a_large_body_without_content_length_is_cut_off_while_read():
    """A chunked body (no Content-Length) is stopped once it passes the limit, not read whole: the
    app reads no more than the limit, and the rest is thrown away up to DISCARD_BYTES only."""
    read: list[int] = []
    received = 0

    async def app(scope, receive, send):
        while True:
            message = await receive()
            read.append(len(message.get("body", b"")))
            if not message.get("more_body"):
                break

    async def receive():  # an endless body
        nonlocal received
        received += 600
        return {"type": "http.request", "body": b"x" * 600, "more_body": True}

    limited = BodySizeLimit(app, limit=1000)
    scope = {"type": "http", "path": "/api/games", "headers": []}
    from starlette.exceptions import HTTPException

    with pytest.raises(HTTPException) as info:
        asyncio.run(limited(scope, receive, lambda message: None))
    assert info.value.status_code == 413 and sum(read) <= 1000
    assert DISCARD_BYTES < received <= 1000 + DISCARD_BYTES + 1200


# ----------------------------------------------------------------------------- item 3: startup checks
@pytest.mark.parametrize("args, message", [
    (["--max-upload-mb", "nan"], "argument --max-upload-mb: must be a finite number above 0, got 'nan'"),
    (["--max-upload-mb", "inf"], "argument --max-upload-mb: must be a finite number above 0, got 'inf'"),
    (["--idle-minutes", "nan"], "argument --idle-minutes: must be a finite number above 0, got 'nan'"),
    (["--idle-minutes", "-1"], "argument --idle-minutes: must be a finite number above 0"),
    (["--max-replay-deals", "0"], "--max-replay-deals must be at least 1"),
    (["--games-per-client", "0"], "--games-per-client must be at least 1"),
    (["--records", "/dev/full"], "--records: /dev/full is not a regular file"),
    (["--records-dir", "/proc/x"], "--records-dir: cannot save games in /proc/x"),
])
def test_serve_refuses_bad_settings_with_one_line_and_exit_2(args, message, tmp_path, capsys):
    if "/proc/x" in args and not Path("/proc").is_dir():
        pytest.skip("needs /proc")
    argv = ["serve", "--port", "0", *(["--records-dir", str(tmp_path)] if "--records-dir" not in args else []), *args]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)


def test_serve_refuses_a_records_dir_that_is_a_file(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["serve", "--port", "0", "--records-dir", str(blocker / "sub")]) == 2
    assert "--records-dir: cannot save games in" in capsys.readouterr().err


# ----------------------------------------------------------------------------- item 4: saved on stop
def _finish_a_deal(client, rng) -> dict:
    from helpers.people import choose

    snap = client.post("/api/games", json={"variant": "basic", "seed": 4}).json()
    while not snap["rounds"]:
        snap = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rng)}).json()
    return snap


def test_stopping_saves_the_finished_deals_of_a_game_and_the_docs_say_so(store, lineup):
    with TestClient(create_app(store, lineup)) as client:
        snap = _finish_a_deal(client, np.random.default_rng(0))
        fresh = client.post("/api/games", json={"variant": "basic", "seed": 5}).json()
        assert not fresh["rounds"]
    [record] = read_records(store.records_path)  # the game in its first deal has nothing to save
    validate_record(record)
    assert record["seed"] == 4 and record["final"] is None and len(record["rounds"]) == len(snap["rounds"])
    text = " ".join(WEB_DOCS.read_text().split())
    assert "the finished deals of an unfinished one when it expires" in text
    assert "a game still in its first deal is not saved" in text


def test_concurrent_uploads_keep_their_answers(store, lineup):
    """Two uploads at once, each within the limits: both answered (200, or 503 when the slot is taken)."""
    record = long_game(3)
    codes: list[int] = []
    with TestClient(create_app(store, lineup, replays=ReplayGuard(slots=2))) as client:
        threads = [threading.Thread(target=lambda: codes.append(
            client.post("/api/replay?game=0", content=jsonl(record)).status_code)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(codes) == [200, 200]


@pytest.mark.parametrize(("path", "size", "chunked"), [("/api/games", 20_000_000, False), ("/api/games", 3_000_000, True),
                                                       ("/api/replay", 20_000_000, False)])
def test_an_oversized_body_gets_its_413_without_a_connection_reset(served, path, size, chunked):
    """A real server on loopback: the client sends the whole body and reads the 413 (no reset)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(served[0])
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        framing = b"Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}".encode()
        sock.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     + framing + b"\r\n\r\n")
        chunk = b"x" * 65536
        sent = 0
        while sent < size:
            piece = chunk[: size - sent]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
        answer = b""
        while not answer.endswith(b"}") or b"\r\n\r\n" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"error"' in answer


# ----------------------------------------------------------------------------- lone surrogates
def test_a_lone_surrogate_is_refused_by_validate_and_never_answers_500(store, lineup, tmp_path, capsys, caplog):
    """``"\\ud800"`` is valid JSON but not text: ``manni validate`` refuses the record, the server
    does not start with it, and an upload holding one is answered (never a 500 or a traceback)."""
    from manni_env.records import RecordError

    record = long_game(1)
    bad = json.loads(json.dumps(record))
    bad["players"][0] = "\ud800"
    with pytest.raises(RecordError, match=r"players\[0\]: a string holds a lone surrogate"):
        validate_record(bad)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(jsonl(record, bad))
    assert main(["validate", str(path)]) == 1
    assert "bad.jsonl:2: players[0]: a string holds a lone surrogate" in capsys.readouterr().out
    assert main(["serve", "--port", "0", "--records-dir", str(tmp_path / "r"), "--records", str(path)]) == 2
    assert "bad.jsonl:2: players[0]: a string holds a lone surrogate" in capsys.readouterr().err
    invalid = {"variant": "\ud800", "players": ["\ud800", "b", "c"], "rounds": [], "\udc00": "x"}
    app = create_app(store, lineup, records=[record, invalid])  # as if a file had slipped past validation
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/api/options").status_code == 200
        upload = client.post("/api/replay?game=1", content=jsonl(record, bad))
        assert upload.status_code == 400 and "game 1: players[0]: a string holds a lone surrogate" in upload.json()["error"]
        listed = client.post("/api/replay?game=0", content=jsonl(record, invalid))
        assert listed.status_code == 200 and listed.json()["games"][1]["variant"] == "?"
    assert "Traceback" not in caplog.text and "error while serving" not in caplog.text


# ----------------------------------------------------------------------------- what one upload may cost
def test_a_huge_player_name_is_shown_cut_and_costs_no_more_than_a_short_one(store, lineup):
    """A 4.9 MB name once gave an 843 MB answer: names are shown cut to NAME_SHOWN characters, and
    the record's fields beyond the format (in ``final`` too) are not copied into the answer."""
    from manni_agents.play.web.replay import NAME_SHOWN

    record = long_game(3)
    at, past, huge = (json.loads(json.dumps(record)) for _ in range(3))
    at["players"][0] = "a" * NAME_SHOWN
    past["players"][0] = "b" * (NAME_SHOWN + 1)
    huge["players"][0] = "c" * 4_900_000
    huge["final"]["extra"] = "d" * 50_000
    with TestClient(create_app(store, lineup)) as client:
        sizes = []
        for game in (at, past, huge):
            answer = client.post("/api/replay?game=0", content=jsonl(game))
            assert answer.status_code == 200
            sizes.append(len(answer.content))
            data = answer.json()
        seat = client.post("/api/replay?game=0", content=jsonl(at)).json()["replay"]["players"][0]
    assert seat == f"seat 0 ({'a' * NAME_SHOWN})"
    assert data["replay"]["players"][0] == f"seat 0 ({'c' * (NAME_SHOWN - 1)}…)"
    assert data["games"][0]["players"][0] == "c" * (NAME_SHOWN - 1) + "…"
    assert "extra" not in data["replay"]["final"]
    assert sizes[1] == sizes[2]  # a name past the bound: the same answer whatever its length


def test_an_upload_lists_its_first_1000_games_and_reads_no_further(store, lineup):
    """A valid record then 1.66 M ``{}`` lines once gave a 120 MB answer: the games listed (and
    parsed) stop at MAX_LISTED."""
    from manni_agents.play.web.replay import MAX_LISTED

    record = jsonl(long_game(1))
    with TestClient(create_app(store, lineup)) as client:
        at = client.post("/api/replay?game=0", content=record + b"{}\n" * (MAX_LISTED - 1)).json()
        assert len(at["games"]) == MAX_LISTED and at["more_games"] is False
        past = client.post("/api/replay?game=0", content=record + b"{}\n" * MAX_LISTED).json()
        assert len(past["games"]) == MAX_LISTED and past["more_games"] is True
        beyond = client.post(f"/api/replay?game={MAX_LISTED}", content=record + b"{}\n" * MAX_LISTED)
        assert beyond.status_code == 404
        assert beyond.json()["error"] == f"no game {MAX_LISTED}: this server reads the first {MAX_LISTED:,} games of a file"
        flood = client.post("/api/replay?game=0", content=record + b"{}\n" * 1_660_000)
        assert flood.status_code == 200 and len(flood.content) < 300_000


def test_a_replay_answer_is_bounded_in_bytes_and_time(store, lineup):
    record = long_game(4)
    with TestClient(create_app(store, lineup, records=[record])) as client:
        size = len(client.get("/api/records/0").content)
    with TestClient(create_app(store, lineup, records=[record], replays=ReplayGuard(max_bytes=size))) as client:
        assert client.get("/api/records/0").status_code == 200  # at the bound
    with TestClient(create_app(store, lineup, records=[record], replays=ReplayGuard(max_bytes=size - 1))) as client:
        past = client.get("/api/records/0")
        assert past.status_code == 413
        assert past.json()["error"] == f"the replay is {size:,} bytes of JSON; this server sends at most {size - 1:,}"
    with TestClient(create_app(store, lineup, records=[record], replays=ReplayGuard(seconds=1e-9))) as client:
        slow = client.get("/api/records/0")
        assert slow.status_code == 413
        assert slow.json()["error"] == ("the replay was still building at deal 1 of 4: this server spends at most "
                                        "1e-09 s on one replay")
        assert client.post("/api/replay?game=0", content=jsonl(record)).status_code == 413
