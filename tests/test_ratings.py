"""Ratings for people and bots on one list: players are a name and a token, every deal at a table
is rated from points minus par (openskill), and /api/ratings and /leaderboard show each rating's
uncertainty and the deals it rests on."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

TestClient = pytest.importorskip("fastapi.testclient").TestClient
pytest.importorskip("sqlalchemy")

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.database import Database, database_url, migrate  # noqa: E402
from manni_agents.play.web.ratings import rate_deal  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import BOT, PERSON  # noqa: E402
from manni_agents.bots import protocol as P  # noqa: E402

from helpers.people import choose  # noqa: E402

SHORT = {"variant": "hornafjardar", "target": 2}


@pytest.fixture
def db(tmp_path) -> Database:
    return Database.open(database_url(str(tmp_path / "db.sqlite3")))


@pytest.fixture
def client(tmp_path, lineup, db):
    with TestClient(create_app(GameStore(tmp_path / "records"), lineup, db=db)) as c:
        yield c


def test_a_player_is_a_name_and_a_token_kept_only_as_its_hash(client, tmp_path):
    made = client.post("/api/players", json={"name": "Ann", "kind": "person"})
    assert made.status_code == 201 and len(made.json()["token"]) >= 24
    assert client.post("/api/players", json={"name": "Ann"}).status_code == 409
    assert client.post("/api/players", json={"name": "Ann", "kind": "bot"}).status_code == 201  # another kind
    bad = client.post("/api/players", json={"name": "a\x00b"})
    assert bad.status_code == 400 and "printable" in bad.json()["error"]
    assert client.post("/api/players", json={"name": "x", "kind": "agent"}).status_code == 422
    kept = sqlite3.connect(tmp_path / "db.sqlite3").execute("select token from players").fetchall()
    assert made.json()["token"] not in {t for (t,) in kept}


def _play(client, table_id: str, token: str, rng) -> None:
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": token})
        while True:
            message = ws.receive_json()
            if message["type"] != "state" or not message["game"]:
                continue
            if message["table"]["finished"]:
                return
            if message["game"]["your_turn"]:
                ws.send_json({"type": "move", "actions": choose(message["game"], rng)})


def test_people_bots_and_agents_are_rated_on_one_list_from_points_against_par(client):
    person = client.post("/api/players", json={"name": "Ann"}).json()
    bot = client.post("/api/players", json={"name": "firstlegal", "kind": "bot"}).json()
    tables = [client.post("/api/tables", json={**SHORT, "seats": seats}).json()["id"]
              for seats in ([PERSON, "random", "random"], [BOT, "random", "random"])]
    wrong = client.post(f"/api/tables/{tables[0]}/seats", json={"player": bot["token"]})
    assert wrong.status_code == 400 and "person player" in wrong.json()["error"]
    assert client.post(f"/api/tables/{tables[0]}/seats", json={"player": "nope"}).status_code == 404
    seat = client.post(f"/api/tables/{tables[0]}/seats", json={"player": person["token"]}).json()
    _play(client, tables[0], seat["token"], np.random.default_rng(3))
    bot_seat = client.post(f"/api/tables/{tables[1]}/seats", json={"bot": True, "player": bot["token"]}).json()
    with client.websocket_connect(f"/ws/tables/{tables[1]}") as ws:
        ws.send_json({"type": "hello", "token": bot_seat["token"]})
        while (message := ws.receive_json())["type"] != "bye":
            if message["type"] == "hello":
                ws.send_json({"type": "hello", "protocol": P.PROTOCOL, "name": "renamed"})
            elif message["type"] == "act":
                ws.send_json({"action": message["legal"][0]})
    assert client.get(f"/api/tables/{tables[1]}").json()["seats"][0]["name"] == "firstlegal"
    listed = {(r["name"], r["kind"]): r for r in client.get("/api/ratings").json()["players"]}
    deals = [len(client.get(f"/api/tables/{t}/replay").json()["deals"]) for t in tables]
    assert set(listed) == {("Ann", "person"), ("firstlegal", "bot"), ("random", "agent")}
    assert listed["Ann", "person"]["games"] == deals[0] and listed["firstlegal", "bot"]["games"] == deals[1]
    assert listed["random", "agent"]["games"] == sum(deals)
    for row in listed.values():
        assert row["sigma"] < 25 / 3 and row["ordinal"] == pytest.approx(row["mu"] - 3 * row["sigma"], abs=5e-3)
    page = client.get("/leaderboard").text
    assert "firstlegal" in page and "mu − 3σ" in page


def test_copies_of_an_agent_share_one_rating_and_a_deal_without_people_is_not_rated(db):
    ann = db.add_player("Ann", "person", "t" * 64, 25.0, 25 / 3)
    ppo = db.agent_player("ppo", 25.0, 25 / 3)
    assert not rate_deal(db, [ppo, ppo, None], [10, 0, 0], [5, 5, 0], "table", "x", 1)
    assert rate_deal(db, [ann, ppo, ppo], [10, 0, 0], [5, 5, 0], "table", "x", 1)
    rows = {r["name"]: r for r in db.ratings(10)}
    assert rows["Ann"]["mu"] > 25 > rows["ppo"]["mu"] and rows["Ann"]["games"] == rows["ppo"]["games"] == 1


def test_two_long_agent_specs_that_start_alike_are_two_players(db):
    """A name holds 24 characters: two ``ppo:runs/…/agent`` specs cut there would share one rating."""
    first, second = "ppo:runs/league_2026_run_a/agent", "ppo:runs/league_2026_run_b/agent"
    a, b = db.agent_player(first, 25.0, 25 / 3), db.agent_player(second, 25.0, 25 / 3)
    assert a != b and db.agent_player(first, 25.0, 25 / 3) == a
    names = {db.player(player_id=player)["name"] for player in (a, b)}
    assert len(names) == 2 and all(len(name) <= 24 and name.startswith("ppo:runs/league") for name in names)


def test_the_leaderboard_escapes_names(client):
    client.post("/api/players", json={"name": "<b>x</b>"})
    assert "<b>x" not in client.get("/leaderboard").text


def test_an_older_database_is_migrated_and_keeps_its_tables(tmp_path):
    url = database_url(str(tmp_path / "old.sqlite3"))
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    migrate(engine, "0001")
    with engine.begin() as c:
        c.execute(text("insert into games (table_id, finished, record) values ('t', 0, '{}')"))
    engine.dispose()
    db = Database.open(url)
    assert list(db.records()) == [{}] and db.ratings(5) == []


def test_one_client_makes_a_bounded_number_of_players(tmp_path, lineup, db):
    from manni_agents.play.web.ratings import PLAYERS_PER_HOUR

    with TestClient(create_app(GameStore(tmp_path / "records"), lineup, db=db)) as client:
        codes = [client.post("/api/players", json={"name": f"p{k}"}).status_code for k in range(PLAYERS_PER_HOUR + 1)]
    assert codes == [201] * PLAYERS_PER_HOUR + [429]
