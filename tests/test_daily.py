"""The daily duplicate challenge: the same deals for everybody from the date and a secret shown
only after the day, each deal played once and scored against par and every other result, results
and replays only after one's own, and GET /api/daily."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

TestClient = pytest.importorskip("fastapi.testclient").TestClient
pytest.importorskip("sqlalchemy")

from manni_agents.play.web import daily  # noqa: E402
from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.daily import deal_seed, matchpoints  # noqa: E402
from manni_agents.play.web.database import Database, database_url  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402

from manni_env.records import validate_record  # noqa: E402

from helpers.people import choose  # noqa: E402
from helpers.serving import serving  # noqa: E402

TODAY = dt.date(2026, 12, 4)


@pytest.fixture
def client(tmp_path, lineup, monkeypatch):
    monkeypatch.setattr(daily, "utc_today", lambda: TODAY)
    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    with TestClient(create_app(GameStore(tmp_path / "records"), lineup, db=db, daily_deals=2)) as c:
        yield c


def _player(client, name: str, kind: str = "person") -> str:
    return client.post("/api/players", json={"name": name, "kind": kind}).json()["token"]


def _play(client, started: dict, seed: int) -> dict:
    """Play the started deal with random legal moves; the first state of the game."""
    rng, first = np.random.default_rng(seed), None
    with client.websocket_connect(f"/ws/tables/{started['table']}") as ws:
        ws.send_json({"type": "hello", "token": started["token"]})
        while True:
            message = ws.receive_json()
            if message["type"] != "state" or not message["game"]:
                continue
            first = first or message
            if message["table"]["finished"]:
                return first
            if message["game"]["your_turn"]:
                ws.send_json({"type": "move", "actions": choose(message["game"], rng)})


def test_everybody_gets_the_same_deals_from_a_secret_shown_once_the_day_is_over(client, monkeypatch):
    ann, bo = _player(client, "Ann"), _player(client, "Bo")
    status = client.get("/api/daily").json()
    assert status["day"] == "2026-12-04" and status["deals"] == 2 and status["secret"] is None
    first = [client.post("/api/daily/deals", json={"player": p}).json() for p in (ann, bo)]
    assert [f["deal"] for f in first] == [1, 1] and first[0]["table"] != first[1]["table"]
    info = client.get(f"/api/tables/{first[0]['table']}").json()
    assert info["seed"] is None  # the seed of a daily deal is never shown at its table
    hands = [_play(client, f, k)["game"]["hand"] for k, f in enumerate(first)]
    assert hands[0] == hands[1]
    record = client.get(f"/api/tables/{first[0]['table']}/replay").json()
    monkeypatch.setattr(daily, "utc_today", lambda: TODAY + dt.timedelta(days=1))
    assert client.get("/api/daily").json()["secret"] is None
    past = client.get("/api/daily", params={"day": "2026-12-04"}).json()
    assert past["over"] and past["secret"] and record["seed"] == deal_seed(past["secret"], 1)
    tomorrow = client.post("/api/daily/deals", json={"player": ann}).json()
    assert tomorrow["day"] == "2026-12-05" and tomorrow["deal"] == 1  # a new day, new deals
    assert client.get("/api/daily", params={"day": "2026-12-09"}).status_code == 404
    assert client.get("/api/daily", params={"day": "tomorrow"}).status_code == 422


def test_each_deal_is_played_once_and_in_order(client):
    ann = _player(client, "Ann")
    deals = [client.post("/api/daily/deals", json={"player": ann}) for _ in range(3)]
    assert [d.status_code for d in deals] == [201, 201, 409]
    assert [d.json()["deal"] for d in deals[:2]] == [1, 2] and [d.json()["seat"] for d in deals[:2]] == [0, 1]
    assert "played all 2 deals" in deals[2].json()["error"]
    assert client.post("/api/daily/deals", json={"player": "nobody"}).status_code == 404


def test_results_and_replays_open_once_you_finished_the_deal(client):
    ann, bo = _player(client, "Ann"), _player(client, "Bo")
    started = client.post("/api/daily/deals", json={"player": ann}).json()
    _play(client, started, 1)
    mine = client.get("/api/daily/deals/1", headers={"authorization": f"Bearer {ann}"})
    assert mine.status_code == 200 and [r["name"] for r in mine.json()["results"]] == ["Ann"]
    replay_url = mine.json()["results"][0]["replay"]
    assert client.get("/api/daily/deals/1", headers={"authorization": f"Bearer {bo}"}).status_code == 403
    assert client.get(replay_url, headers={"authorization": f"Bearer {bo}"}).status_code == 403
    assert client.get(replay_url).status_code == 401
    bo_started = client.post("/api/daily/deals", json={"player": bo}).json()
    assert client.get("/api/daily/deals/1", headers={"authorization": f"Bearer {bo}"}).status_code == 403  # playing
    _play(client, bo_started, 2)
    results = client.get("/api/daily/deals/1", headers={"authorization": f"Bearer {bo}"}).json()["results"]
    assert {r["name"] for r in results} == {"Ann", "Bo"} and sorted(r["matchpoints"] for r in results) in ([0, 100], [50, 50])
    for r in results:
        assert r["score"] == r["points"] - r["par"]
    assert client.get(replay_url, headers={"authorization": f"Bearer {bo}"}).json()["deals"]
    board = client.get("/api/daily").json()
    assert {r["name"] for r in board["leaderboard"]} == {"Ann", "Bo"} and board["entries"][0]["finished"] == 2
    assert "Daily challenge 2026-12-04" in client.get("/daily").text


def test_matchpoints_count_each_other_result_and_ties_half():
    assert matchpoints([3]) == [50.0]
    assert matchpoints([3, 1, 1, 0]) == [100.0, 50.0, 50.0, 0.0]


@pytest.fixture
def served_with_db(tmp_path, lineup):
    """The URL of a server with a database (2 daily deals) in a thread on a free 127.0.0.1 port."""
    app = create_app(GameStore(tmp_path / "records"), lineup, db=Database.open(database_url(str(tmp_path / "s.sqlite3"))),
                     daily_deals=2)
    with serving(app) as (port, _):
        yield f"http://127.0.0.1:{port}"


def test_a_connected_bot_plays_every_deal_of_the_day_with_manni_bot_connect(served_with_db, monkeypatch, tmp_path):
    import json
    import sys
    import urllib.request
    from pathlib import Path

    from manni_agents.bots import connect

    url = served_with_db
    bot = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'examples/bots/simple_bot.py'}"
    lines: list[str] = []
    with pytest.raises(connect.ConnectError, match="MANNI_PLAYER_TOKEN"):
        connect.run(f"{url}/#daily", bot, say=lines.append)
    token = connect.post(f"{url}/api/players", {"name": "simple", "kind": "bot"})["token"]
    monkeypatch.setenv(connect.PLAYER_TOKEN, token)
    assert connect.run(f"{url}/#daily", bot, say=lines.append) == 0
    assert [line.split(",")[0] for line in lines[:2]] == [f"deal {k} of 2 of {daily.utc_today()}" for k in (1, 2)]
    assert "played all 2 deals" in lines[-1]
    with urllib.request.urlopen(f"{url}/api/daily", timeout=30) as answer:
        board = json.loads(answer.read())["leaderboard"]
    assert board[0]["name"] == "simple" and board[0]["kind"] == "bot" and board[0]["deals"] == 2
    records = list(Database.open(database_url(str(tmp_path / "s.sqlite3"))).records())
    assert len(records) == 2
    for record in records:
        validate_record(record)


def test_garbage_to_the_new_routes_is_a_clear_4xx_never_a_500(client):
    """Random bodies, paths, queries and tokens for the players', ratings' and daily routes."""
    rng = np.random.default_rng(5)
    token = _player(client, "Ann")
    junk = [None, 0, -1, 2**70, "", "x" * 300, "\x00", [], {}, {"a": [1]}, True, 1.5, "2026-02-30", "../../etc"]
    printables = [j for j in junk if str(j).isprintable()]  # for URLs and headers

    def printable():
        return printables[int(rng.integers(len(printables)))]
    for _ in range(300):
        pick = lambda: junk[int(rng.integers(len(junk)))]  # noqa: E731
        kind = int(rng.integers(6))
        if kind == 0:
            answer = client.post("/api/players", json={"name": pick(), "kind": pick()})
        elif kind == 1:
            answer = client.post("/api/daily/deals", json={"player": pick(), **({"x": 1} if rng.random() < 0.3 else {})})
        elif kind == 2:
            answer = client.get(f"/api/daily/deals/{printable()}", headers={"authorization": f"Bearer {token}"})
        elif kind == 3:
            answer = client.get("/api/daily", params={"day": pick()})
        elif kind == 4:
            answer = client.get(f"/api/daily/replays/{printable()}", headers={"authorization": str(printable())})
        else:
            answer = client.get("/api/ratings", params={"limit": pick()})
        assert answer.status_code < 500, (kind, answer.text)
        if answer.status_code >= 400:
            assert set(answer.json()) == {"error"} and "\n" not in answer.json()["error"]
