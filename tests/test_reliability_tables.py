"""Tables under hostile clients (``manni serve``): fair deals by construction, and the bounds of
docs/reliability.md on table sockets and table creation, each tested at its bound."""

from __future__ import annotations

import json
from contextlib import ExitStack
from unittest import mock

import pytest

pytest.importorskip("fastapi")
TestClient = pytest.importorskip("fastapi.testclient").TestClient

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.lineup import Lineup  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import PERSON, Table  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402


@pytest.fixture(scope="module")
def lineup() -> Lineup:
    return Lineup()


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
