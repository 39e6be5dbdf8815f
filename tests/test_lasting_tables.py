"""The store that lasts: tables and every move in the database, a restart (a clean stop, or
``kill -9`` mid-deal) that brings the tables back at the move they stopped, people rejoining by
their tokens, and the records exported as JSON Lines that ``manni validate`` accepts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

TestClient = pytest.importorskip("fastapi.testclient").TestClient
pytest.importorskip("sqlalchemy")
pytest.importorskip("websockets")

from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.database import METADATA, Database, database_url  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_agents.play.web.tables import PERSON  # noqa: E402

from helpers.people import choose  # noqa: E402

SHORT = {"variant": "basic", "target": 2}


def _app(tmp_path, lineup, db_path):
    return create_app(GameStore(tmp_path / "records"), lineup, db=Database.open(database_url(str(db_path))))


def _state(ws) -> dict:
    while (message := ws.receive_json())["type"] != "state":
        pass
    return message


def _moves(ws, first: dict, count: int, rng) -> dict:
    """Make ``count`` moves of the person (each as soon as it is the person's turn); the last state."""
    state = first
    while count and not state["table"]["finished"]:
        if state["game"]["your_turn"]:
            ws.send_json({"type": "move", "actions": choose(state["game"], rng)})
            count -= 1
        state = _state(ws)
    return state


def _ann_plays(client, seed: int, count: int, rng) -> tuple[str, str, dict]:
    """A table of Ann (a person, seat 0) and two ``random`` agents, dealt from ``seed``: Ann takes her
    seat, connects and plays up to ``count`` moves (:func:`_moves`); the table's id, her token and the
    last state."""
    table_id = client.post("/api/tables", json={**SHORT, "seats": [PERSON, "random", "random"], "seed": seed}).json()["id"]
    token = client.post(f"/api/tables/{table_id}/seats", json={"name": "Ann"}).json()["token"]
    with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
        ws.send_json({"type": "hello", "token": token})
        return table_id, token, _moves(ws, _state(ws), count, rng)


def test_the_schema_is_the_migrations_and_a_new_database_is_at_the_newest(tmp_path):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    db = Database.open(database_url(str(tmp_path / "new" / "m.sqlite3")))
    with db.engine.connect() as c:
        context = MigrationContext.configure(c)
        assert compare_metadata(context, METADATA) == []
        assert context.get_current_revision() is not None
    Database.open(database_url(str(tmp_path / "new" / "m.sqlite3"))).close()  # opening again migrates nothing


def test_a_table_in_progress_comes_back_after_a_stop_at_the_move_it_stopped(tmp_path, lineup):
    db_path, rng = tmp_path / "db.sqlite3", np.random.default_rng(1)
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        table_id, token, before = _ann_plays(client, 5, 5, rng)
    assert not before["table"]["finished"]
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        info = client.get(f"/api/tables/{table_id}").json()
        assert info["started"] and info["seats"][0]["name"] == "Ann" and not info["seats"][0]["connected"]
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json({"type": "hello", "token": "not-the-token"})
            assert ws.receive_json()["fatal"]
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json({"type": "hello", "token": token})
            after = _state(ws)
            for key in ("hand", "trick", "rounds", "tallies"):
                assert after["game"].get(key) == before["game"].get(key), key
            end = _moves(ws, after, 10_000, rng)
        assert end["table"]["finished"]
        assert client.get(f"/api/tables/{table_id}/replay").status_code == 200
    _export_and_validate(db_path, tmp_path / "export.jsonl", 1)


def test_a_table_stopped_right_after_it_started_comes_back_started(tmp_path):
    from manni_agents.play.web.table_db import TableKeeper, restore_tables
    from manni_agents.play.web.tables import BOT, Table
    from manni_env import make_rules

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    table = Table(make_rules("basic"), [BOT, "random", "random"], stand_in="random")
    TableKeeper(db).attach("t", table)
    table.join("b", bot=True)  # the last open seat: the game starts, the agents play to the bot's turn
    assert table.started and table.state.to_move == 0
    ((_, again, _),) = list(restore_tables(db))  # a restart before the bot's first move
    assert again.started and again.state.to_move == 0 and again.journal.moves == table.journal.moves


def _export_and_validate(db_path: Path, out: Path, games: int) -> None:
    cli = [sys.executable, "-m", "manni_env.cli"]
    exported = subprocess.run([*cli, "records", "export", "--db", str(db_path), str(out)], capture_output=True, text=True,
                              timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert len(out.read_text().splitlines()) == games
    checked = subprocess.run([*cli, "validate", str(out)], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_records_exported_from_the_store_warm_start_a_training_run(tmp_path, lineup, monkeypatch):
    """A game played at a table of the store, exported (``manni records export``) and validated,
    warm-starts ``manni train --warm-start-records``: it imitates the person's decisions, the moves
    the store keeps of the person's seat, in order."""
    pytest.importorskip("torch")
    from sqlalchemy import select

    from manni_agents.play.web.database import MOVES
    from manni_agents.registry import make_agent
    from manni_env.cli import main
    from manni_train import ppo_vector

    from helpers.training import train_args

    db_path, rng = tmp_path / "db.sqlite3", np.random.default_rng(3)
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        table_id, _, end = _ann_plays(client, 8, 10_000, rng)
        assert end["table"]["finished"]
    db = Database.open(database_url(str(db_path)))
    with db.engine.connect() as c:
        person = list(c.execute(select(MOVES.c.action).where(MOVES.c.table_id == table_id, MOVES.c.seat == 0)
                                .order_by(MOVES.c.n)).scalars())
    db.close()
    out = tmp_path / "export.jsonl"
    _export_and_validate(db_path, out, 1)
    imitated = []

    def warm_start(actor, critic, data, args, gen, **options):
        imitated.append(data.actions.tolist())
        return real(actor, critic, data, args, gen, **options)

    real = ppo_vector.warm_start
    monkeypatch.setattr(ppo_vector, "warm_start", warm_start)
    assert main(train_args(tmp_path, "--target", str(SHORT["target"]), "--warm-start-records", str(out),
                           "--warm-start-players", "human", "--bc-samples", "10000")) == 0
    assert len(person) > 10 and imitated == [person]
    agent = make_agent(f"ppo:{tmp_path / 'records' / 'agent'}")  # the run exported its agent
    assert agent.meta["training"]["args"]["warm_start_records"] == [str(out)]


def test_records_export_says_what_is_wrong_in_one_line(tmp_path):
    cli = [sys.executable, "-m", "manni_env.cli", "records", "export"]
    missing = subprocess.run([*cli, "--db", str(tmp_path / "none.sqlite3"), str(tmp_path / "o.jsonl")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no database at" in missing.stderr and "Traceback" not in missing.stderr
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database" * 100)
    junk = subprocess.run([*cli, "--db", str(tmp_path / "junk.sqlite3"), str(tmp_path / "o.jsonl")],
                          capture_output=True, text=True, timeout=60)
    assert junk.returncode == 2 and "cannot open the database" in junk.stderr and "Traceback" not in junk.stderr
    assert not (tmp_path / "o.jsonl").exists()


# ---------------------------------------------------------------------------------- kill -9
def _serve(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "manni_env.cli", "serve", "--port", "0", "--records-dir",
                             str(tmp_path / "records"), "--db", str(tmp_path / "db.sqlite3")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert match, line + proc.stderr.read() if proc.poll() is not None else line
    assert f"database {tmp_path / 'db.sqlite3'}" in line  # the start line names where the database is
    return proc, f"127.0.0.1:{match.group(1)}"


def _http(url: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def _ws_state(ws) -> dict:
    """The newest state pushed to ``ws``: the first to come, then any that follow within 0.3 s."""
    while (message := json.loads(ws.recv(timeout=30)))["type"] != "state":
        pass
    while True:
        try:
            newer = json.loads(ws.recv(timeout=0.3))
        except TimeoutError:
            return message
        if newer["type"] == "state":
            message = newer


def _seated(stack: ExitStack, host: str, table_id: str, people: list[dict]) -> list:
    """Each person's socket at the table, hello said."""
    from websockets.sync.client import connect

    sockets = [stack.enter_context(connect(f"ws://{host}/ws/tables/{table_id}")) for _ in people]
    for ws, person in zip(sockets, people):
        ws.send(json.dumps({"type": "hello", "token": person["token"]}))
    return sockets


def test_a_server_killed_mid_deal_resumes_the_deal_at_the_move_it_stopped(tmp_path):
    rng = np.random.default_rng(2)
    proc, host = _serve(tmp_path)
    try:
        table = _http(f"http://{host}/api/tables", {**SHORT, "seats": [PERSON, PERSON, "random"]})
        people = [_http(f"http://{host}/api/tables/{table['id']}/seats", {"name": n}) for n in ("Ann", "Bo")]
        with ExitStack() as stack:
            sockets = _seated(stack, host, table["id"], people)
            states = [_ws_state(ws) for ws in sockets]
            moved = 0
            while moved < 7:  # moves of both people, each answered (its state pushed) before the kill
                k = next(k for k, state in enumerate(states) if state["game"]["your_turn"])
                sockets[k].send(json.dumps({"type": "move", "actions": choose(states[k]["game"], rng)}))
                moved += 1
                states = [_ws_state(ws) for ws in sockets]
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not states[0]["table"]["finished"]
    proc, host = _serve(tmp_path)
    try:
        info = _http(f"http://{host}/api/tables/{table['id']}")
        assert info["started"] and [s["name"] for s in info["seats"][:2]] == ["Ann", "Bo"]
        with ExitStack() as stack:
            after = [_ws_state(ws) for ws in _seated(stack, host, table["id"], people)]
        for old, new in zip(states, after):
            for key in ("hand", "trick", "rounds", "your_turn", "tallies"):
                assert new["game"].get(key) == old["game"].get(key), key
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_remote_bots_at_tables_killed_mid_deal_lose_no_move_that_was_answered(tmp_path):
    """Four tables of a remote bot and two quick agents play at once (their moves committed
    together), and the server is killed the moment each bot's sixth move is answered."""
    from websockets.sync.client import connect

    from manni_agents.bots import protocol as P
    from manni_agents.play.web.tables import BOT

    proc, host = _serve(tmp_path)
    sent: dict[str, list[int]] = {}

    def play(table_id: str, token: str) -> None:
        """Answer each act with its first legal action until six were sent and the sixth answered."""
        actions = sent[table_id] = []
        with connect(f"ws://{host}/ws/tables/{table_id}") as ws:
            ws.send(json.dumps({"type": "hello", "token": token}))
            while len(actions) < 6:
                message = json.loads(ws.recv(timeout=30))
                if message["type"] == "hello":
                    ws.send(json.dumps({"type": "hello", "protocol": P.PROTOCOL, "name": "b"}))
                elif message["type"] == "act":
                    ws.send(json.dumps({"action": message["legal"][0]}))
                    actions.append(message["legal"][0])
            json.loads(ws.recv(timeout=30))  # the next message comes only after the sixth move is made

    try:
        tables = [_http(f"http://{host}/api/tables", {**SHORT, "seats": [BOT, "random", "random"]})["id"]
                  for _ in range(4)]
        tokens = [_http(f"http://{host}/api/tables/{t}/seats", {"name": "b", "bot": True})["token"] for t in tables]
        with ThreadPoolExecutor(len(tables)) as pool:
            list(pool.map(play, tables, tokens))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    kept = {row["id"]: [m["action"] for m in moves if m["seat"] == 0] for row, moves in db.open_tables()}
    assert {t: kept.get(t) for t in tables} == {t: sent[t] for t in tables}


def test_serve_refuses_a_database_it_cannot_open_in_one_line(tmp_path, capsys):
    from manni_env.cli import main

    (tmp_path / "junk.sqlite3").write_bytes(b"not a database" * 100)
    assert main(["serve", "--records-dir", str(tmp_path), "--db", str(tmp_path / "junk.sqlite3")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("manni serve: error: --db: cannot open the database") and "\n" not in err, err


def test_serve_without_the_database_libraries_names_the_extra_in_one_line(tmp_path):
    """A venv with the web extra of a release before the database (no SQLAlchemy): one line that
    names the extra, not a traceback."""
    code = ("import sys; sys.modules['sqlalchemy'] = None; from manni_env.cli import main; "
            f"sys.exit(main(['serve', '--records-dir', {str(tmp_path)!r}, '--port', '0']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("manni serve: error: the web extra is not installed") and \
        done.stderr.strip().endswith("pip install 'manni-env[web]'") and done.stderr.count("\n") == 1, done.stderr


def test_a_remote_bot_rejoins_its_seat_after_a_restart(tmp_path, lineup):
    from manni_agents.bots import protocol as P
    from manni_agents.play.web.tables import BOT

    db_path = tmp_path / "db.sqlite3"

    def hello(ws, token):
        ws.send_json({"type": "hello", "token": token})
        while ws.receive_json()["type"] != "hello":
            pass
        ws.send_json({"type": "hello", "protocol": P.PROTOCOL, "name": "b"})

    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        table_id = client.post("/api/tables", json={**SHORT, "seats": [BOT, "random", "random"]}).json()["id"]
        token = client.post(f"/api/tables/{table_id}/seats", json={"bot": True}).json()["token"]
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            hello(ws, token)
            for _ in range(3):
                while (message := ws.receive_json())["type"] != "act":
                    pass
                ws.send_json({"action": message["legal"][0]})
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            hello(ws, token)
            while (message := ws.receive_json())["type"] != "bye":
                if message["type"] == "act":
                    ws.send_json({"action": message["legal"][0]})
        info = client.get(f"/api/tables/{table_id}").json()
        assert info["finished"] and info["seats"][0]["strikes"] == 0


def test_a_single_game_comes_back_at_its_move_and_its_record_is_exported(tmp_path, lineup):
    db_path, rng = tmp_path / "db.sqlite3", np.random.default_rng(4)
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        snap = client.post("/api/games", json={**SHORT, "opponents": ["random", "random"], "seat": 1}).json()
        for _ in range(6):
            snap = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rng)}).json()
    assert not snap["finished"]
    with TestClient(_app(tmp_path, lineup, db_path)) as client:
        again = client.get(f"/api/games/{snap['id']}").json()
        for key in ("hand", "trick", "rounds", "your_turn", "deal", "log"):
            assert again[key] == snap[key], key
        while not again["finished"]:
            again = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(again, rng)}).json()
    with TestClient(_app(tmp_path, lineup, db_path)) as client:  # a finished game does not come back
        assert client.get(f"/api/games/{snap['id']}").status_code == 404
    _export_and_validate(db_path, tmp_path / "export.jsonl", 1)


@pytest.mark.parametrize(("db", "says"), [("postgresql://u@127.0.0.1/manni", "driver is not installed"),
                                          ("nosuch://x", "cannot open the database")])
def test_a_database_url_that_cannot_be_opened_is_one_line(tmp_path, db, says):
    done = subprocess.run([sys.executable, "-m", "manni_env.cli", "records", "export", "--db", db, str(tmp_path / "o.jsonl")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_failed_write_is_logged_and_the_game_goes_on(tmp_path, lineup, monkeypatch, caplog):
    from sqlalchemy.exc import OperationalError

    def full_disk(*args, **kwargs):
        raise OperationalError("INSERT", {}, Exception("database or disk is full"))

    app = _app(tmp_path, lineup, tmp_path / "db.sqlite3")
    with TestClient(app) as client:
        table_id = client.post("/api/tables", json={**SHORT, "seats": [PERSON, "random", "random"]}).json()["id"]
        token = client.post(f"/api/tables/{table_id}/seats", json={"name": "Ann"}).json()["token"]
        monkeypatch.setattr(Database, "add_move", full_disk)
        monkeypatch.setattr(Database, "add_single_move", full_disk)
        snap = client.post("/api/games", json={**SHORT, "opponents": ["random", "random"]}).json()
        snap = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, np.random.default_rng(0))})
        assert snap.status_code == 200
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json({"type": "hello", "token": token})
            state = _moves(ws, _state(ws), 3, np.random.default_rng(1))
        assert state["game"] and not state["table"]["closed"]
    assert "not written to the database" in caplog.text and "disk is full" in caplog.text


def test_what_a_restart_brings_back_counts_against_its_creators_share(tmp_path, lineup):
    db_path = tmp_path / "db.sqlite3"

    def app():
        return create_app(GameStore(tmp_path / "records", per_client=1), lineup, tables_per_client=1,
                          db=Database.open(database_url(str(db_path))))

    with TestClient(app()) as client:
        assert client.post("/api/tables", json={**SHORT, "seats": [PERSON, "random", "random"]}).status_code == 201
        assert client.post("/api/games", json={"variant": "basic", "opponents": ["random", "random"]}).status_code == 201
    with TestClient(app()) as client:  # the same client: its table and its game came back, and count
        table = client.post("/api/tables", json={**SHORT, "seats": [PERSON, "random", "random"]})
        game = client.post("/api/games", json={"variant": "basic", "opponents": ["random", "random"]})
        assert table.status_code == game.status_code == 429, (table.text, game.text)
        assert "1 table in progress" in table.json()["error"] and "1 unfinished game," in game.json()["error"]


def test_a_card_play_valued_after_its_move_is_written_into_its_kept_review(tmp_path):
    from manni_agents.play.web.table_db import TableKeeper, restore_tables
    from manni_agents.play.web.tables import Table
    from manni_env import make_rules

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    # no hints: nothing is valued on a move's way, every card play after it
    table = Table(make_rules("hornafjardar"), [PERSON, "ppo", "ppo"], stand_in="ppo", advisor="ppo", seed=5)
    TableKeeper(db).attach("t", table, "198.51.100.7")
    table.join("Ann")
    rng = np.random.default_rng(0)
    while not table.state.rounds:
        table.act(0, [int(rng.choice(table.state.legal_actions()))])

    def kept() -> list[dict]:
        return [m["review"] for _, moves in db.open_tables() for m in moves if m["review"]]

    def valued(reviews: list[dict]) -> list[bool]:
        return ["points" in r for r in reviews if r["phase"] == "play" and not r["forced"]]

    assert valued(kept()) and not any(valued(kept()))  # kept at once, valued after the push
    ((table_id, again, client),) = list(restore_tables(db))  # a restart before value_reviews ran
    assert (table_id, client) == ("t", "198.51.100.7")
    assert all(valued(kept())) and all(valued(again.reviews[0]))  # valued as the table came back
    assert table.value_reviews()
    assert kept() == table.reviews[0] == again.reviews[0]


# ---------------------------------------------------------------------------------- group commit
def _database_with_a_table(tmp_path) -> Database:
    from manni_agents.play.web.table_db import TableKeeper
    from manni_agents.play.web.tables import Table
    from manni_env import make_rules

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    TableKeeper(db).attach("t", Table(make_rules("basic"), [PERSON, "random", "random"], stand_in="random"))
    return db


def _moves_at_once(db: Database, moves: list[int], after) -> dict[int, object]:
    """Each of ``moves`` written by a thread of its own while a transaction holds the database's lock
    (so they queue together); once the lock is free, each thread runs ``after(n)`` when its
    ``add_move`` returned. Each move's result: ``after``'s, or the error ``add_move`` raised."""
    results: dict[int, object] = {}

    def write(n: int) -> None:
        try:
            db.add_move("t", n, 0, n, None, None)
        except Exception as err:  # noqa: BLE001 - the test looks at it
            results[n] = err
            return
        results[n] = after(n)

    with db.lock:  # another table's transaction in progress
        threads = [threading.Thread(target=write, args=(n,)) for n in moves]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(db._moves._batch.rows) < len(moves) and time.monotonic() < deadline:
            time.sleep(0.01)
    for thread in threads:
        thread.join(timeout=10)
    return results


def test_moves_written_at_once_share_one_commit_and_each_returns_once_it_is_committed(tmp_path):
    from sqlalchemy import create_engine, event, select

    from manni_agents.play.web.database import MOVES

    db = _database_with_a_table(tmp_path)
    commits = []
    event.listen(db.engine, "commit", lambda _connection: commits.append(1))
    reader = create_engine(db.engine.url)  # another connection: it sees only what was committed

    def committed(n: int) -> bool:
        with reader.connect() as c:
            return c.execute(select(MOVES.c.n).where(MOVES.c.table_id == "t", MOVES.c.n == n)).first() is not None

    assert _moves_at_once(db, list(range(8)), committed) == {n: True for n in range(8)}
    assert len(commits) == 1  # eight moves, one transaction


def test_a_failed_group_commit_fails_every_move_in_it_and_keeps_none_of_them(tmp_path):
    from sqlalchemy.exc import IntegrityError

    db = _database_with_a_table(tmp_path)
    db.add_move("t", 0, 0, 0, None, None)
    results = _moves_at_once(db, [1, 0], lambda n: "written")  # move 0 again: the transaction fails
    assert all(isinstance(result, IntegrityError) for result in results.values()), results
    assert [m["n"] for _, moves in db.open_tables() for m in moves] == [0]
    db.add_move("t", 1, 0, 1, None, None)  # the next transaction is a fresh one
    assert [m["n"] for _, moves in db.open_tables() for m in moves] == [0, 1]


def test_bot_moves_of_one_turn_of_the_loop_share_one_commit_made_before_any_is_answered(tmp_path):
    import asyncio

    from sqlalchemy import create_engine, event, func, select

    from manni_agents.play.web.database import MOVES
    from manni_agents.play.web.remote_bots import BotMoves
    from manni_agents.play.web.table_db import TableKeeper
    from manni_agents.play.web.tables import BOT, Table
    from manni_env import make_rules

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    keeper = TableKeeper(db)
    tables = {}
    for k in range(4):  # each a remote bot (seat 0, on turn once the agents moved) and two quick agents
        tables[f"t{k}"] = Table(make_rules("basic"), [BOT, "random", "random"], stand_in="random")
        keeper.attach(f"t{k}", tables[f"t{k}"])
        tables[f"t{k}"].join("bot", bot=True)
    inserts = []

    def count_inserts(_connection, _cursor, statement: str, *_) -> None:
        if statement.startswith("INSERT INTO moves"):
            inserts.append(statement)

    event.listen(db.engine, "before_cursor_execute", count_inserts)
    reader = create_engine(db.engine.url)  # another connection: it sees only what was committed
    moves = BotMoves(keeper)

    def kept(table_id: str) -> int:
        with reader.connect() as c:
            return c.execute(select(func.count()).select_from(MOVES).where(MOVES.c.table_id == table_id)).scalar()

    async def move(table_id: str) -> bool:
        table = tables[table_id]
        before = table.journal.moves
        await moves.act(table, 0, table.state.legal_actions()[0])
        return kept(table_id) == table.journal.moves > before  # the bot's move and the agents' replies

    async def all_at_once() -> list[bool]:
        return await asyncio.gather(*(move(table_id) for table_id in tables))

    assert asyncio.run(all_at_once()) == [True] * 4
    assert len(inserts) == 1  # four bots' moves and their agents', one statement in one transaction


def test_a_batch_of_bot_moves_not_committed_is_logged_and_the_game_goes_on(tmp_path, monkeypatch, caplog):
    import asyncio

    from sqlalchemy.exc import OperationalError

    from manni_agents.play.web.remote_bots import BotMoves
    from manni_agents.play.web.table_db import TableKeeper
    from manni_agents.play.web.tables import BOT, Table
    from manni_env import make_rules

    def full_disk(*args, **kwargs):
        raise OperationalError("INSERT", {}, Exception("database or disk is full"))

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    keeper = TableKeeper(db)
    table = Table(make_rules("basic"), [BOT, "random", "random"], stand_in="random")
    keeper.attach("t", table)
    table.join("b", bot=True)
    made = table.journal.moves
    monkeypatch.setattr(Database, "_commit", full_disk)
    asyncio.run(BotMoves(keeper).act(table, 0, table.state.legal_actions()[0]))
    assert table.journal.moves > made and table.state.to_move == 0  # made, and the agents replied
    assert "moves not written to the database" in caplog.text and "disk is full" in caplog.text


def test_a_batch_of_bot_moves_that_fails_otherwise_is_each_movers_error():
    import asyncio
    import contextlib

    from manni_agents.play.web.remote_bots import BotMoves
    from manni_agents.play.web.tables import BOT, Table
    from manni_env import make_rules

    class BrokenKeeper:
        @contextlib.contextmanager
        def deferred(self):
            yield
            raise RuntimeError("the database went away")

    tables = [Table(make_rules("basic"), [BOT, "random", "random"], stand_in="random") for _ in range(2)]
    for table in tables:
        table.join("b", bot=True)
    moves = BotMoves(BrokenKeeper())

    async def both() -> list:
        return await asyncio.wait_for(asyncio.gather(*(moves.act(t, 0, t.state.legal_actions()[0]) for t in tables),
                                                     return_exceptions=True), 10)

    assert [str(outcome) for outcome in asyncio.run(both())] == ["the database went away"] * 2  # none left waiting
