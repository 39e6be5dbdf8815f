"""What ``manni serve`` teaches: the variants from the rules table with names and one line each, the
rules page rendered from the project's rules text, and the replay library of the games the server
saved (newest first, each by the byte offset of its line; a line being written is left out)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.library import saved_game, saved_games  # noqa: E402
from manni_agents.play.web.lineup import Lineup  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.records import game_record, write_records  # noqa: E402
from manni_env.rules import VARIANT_TABLE, make_rules  # noqa: E402


def random_record(variant: str, seed: int, deals: int = 1) -> dict:
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    while not state.finished and len(state.rounds) < deals:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return json.loads(json.dumps(game_record(state, players=["random", "rule_based", "ppo"])))


@pytest.fixture
def store(tmp_path) -> GameStore:
    return GameStore(tmp_path / "records", max_games=4)


@pytest.fixture
def client(store):
    with TestClient(create_app(store, Lineup())) as c:
        yield c


def test_variants_come_from_the_rules_table_with_names_and_rules_links(client) -> None:
    rows = client.get("/api/variants").json()["variants"]
    assert [r["id"] for r in rows] == list(VARIANT_TABLE)
    names = {r["id"]: r["name"] for r in rows}
    assert names["hornafjardar"] == "Hornafjarðarmanni" and names["basic"] == "Basic Manni"
    assert all(len(r["description"]) > 40 and r["rules"].startswith("/rules#") for r in rows)
    assert {r["id"]: (r["pack"], r["hand"], r["manni"]) for r in rows} == {
        name: (bin(s.pack).count("1"), s.hand_size, s.manni_size) for name, s in VARIANT_TABLE.items()}
    page = client.get("/rules")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for r in rows:  # every variant's link lands on a heading of the rules text that names it
        anchor = r["rules"].split("#")[1]
        heading = page.text.split(f'id="{anchor}">')[1].split("</h2>")[0]
        assert f"<code>{r['id']}</code>" in heading
    assert "<table>" in page.text and "Hornafjarðarmanni" in page.text and "`" not in page.text.split("<main")[1]


def test_the_library_lists_the_saved_games_newest_first_and_replays_them(client, store) -> None:
    assert client.get("/api/library").json() == {"games": []}
    records = [random_record("basic", 1), random_record("trjamann", 2, deals=2)]
    store.records_path.parent.mkdir(parents=True, exist_ok=True)
    write_records(store.records_path, records)
    with store.records_path.open("a") as f:
        f.write('{"format": "manni-record/1", "rounds": [')  # a line being written: no newline yet
    games = client.get("/api/library").json()["games"]
    assert [g["variant"] for g in games] == ["trjamann", "basic"] and games[1]["index"] == 0
    assert [g["deals"] for g in games] == [2, 1]
    replay = client.get(f"/api/library/{games[0]['index']}").json()
    assert replay["variant"] == "trjamann" and len(replay["deals"]) == 2 and replay["par"] is not None
    assert saved_game(store.records_path, games[0]["index"]) == records[1]
    for bad in (1, games[0]["index"] + 3, 10**9):  # not the start of a line, past the end
        response = client.get(f"/api/library/{bad}")
        assert response.status_code == 404 and "no saved game starts at" in response.json()["error"]
    assert client.get("/api/library/-1").status_code == 422


def test_the_library_reads_only_the_end_of_a_long_file(tmp_path, monkeypatch) -> None:
    from manni_agents.play.web import library

    path = tmp_path / "games.jsonl"
    records = [random_record("basic", seed) for seed in range(4)]
    write_records(path, records)
    line = len(json.dumps(records[0])) + 1
    monkeypatch.setattr(library, "LIBRARY_BYTES", 2 * line + 5)  # the last two lines and part of one more
    games = saved_games(path)
    assert len(games) == 2 and all(saved_game(path, g["index"]) in records[2:] for g in games)
