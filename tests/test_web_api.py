"""``manni serve``'s JSON API (FastAPI TestClient): play, hidden information, saved records,
replay, and bad input answered with clear JSON errors."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
TestClient = pytest.importorskip("fastapi.testclient").TestClient  # needs httpx2 (or httpx)

from manni_agents import ppo_agent  # noqa: E402
from manni_agents.play.web.app import create_app  # noqa: E402
from manni_agents.play.web.game import WebGame  # noqa: E402
from manni_agents.play.web.lineup import Lineup, strongest_shipped_agent  # noqa: E402
from manni_agents.play.web.replay import build_replay  # noqa: E402
from manni_agents.play.web.store import GameStore  # noqa: E402
from manni_env.cli import main  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.records import game_record, read_records, validate_record  # noqa: E402
from manni_env.rules import VARIANTS, make_rules  # noqa: E402

from helpers.clock import Clock  # noqa: E402
from helpers.people import choose  # noqa: E402

CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path, clock) -> GameStore:
    return GameStore(tmp_path / "records", max_games=4, idle_seconds=600, clock=clock)


def simulated_records(variant: str = "basic", games: int = 2, **options) -> list[dict]:
    records = []
    for seed in range(games):
        state = GameState(make_rules(variant, **options), seed=seed)
        rng = np.random.default_rng(seed)
        while not state.finished:
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        records.append(json.loads(json.dumps(game_record(state, players=["random"] * 3))))
    return records


@pytest.fixture
def client(store, lineup):
    with TestClient(create_app(store, lineup, records=simulated_records(), max_upload_bytes=200_000)) as c:
        yield c


def card_tokens(value) -> set[str]:
    if isinstance(value, str):
        return set(CARD.findall(value))
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*map(card_tokens, value)) if value else set()
    return set()


def assert_only_known_cards(snap: dict, game: WebGame) -> None:
    """Every card the page gets is the person's own (held, drawn, discarded), played this deal,
    the cut card, or the previous deal's last trick (before this deal's first card)."""
    from manni_env.cards import card_to_str, cards_of

    state, view = game.state, game.state.view(game.seat)
    known = cards_of(view.hand | view.drawn | view.discards) + [c for _, c in view.plays]
    if view.cut_card is not None:
        known.append(view.cut_card)
    if not view.plays and state.rounds:
        known += list(state.rounds[-1].tricks[-1][1])
    # (the game's id is a random URL-safe token: "KS-dhw2Dindqkus8" reads as a card, and is none)
    visible = card_tokens({k: v for k, v in snap.items() if k not in ("id", "log", "rounds")})
    assert visible <= {card_to_str(c) for c in known}


def play_game(client, store, body: dict, seed: int, max_requests: int = 2000) -> dict:
    """Create a game and play the person's moves at random until it is over; checks what the
    page gets after every move."""
    rng = np.random.default_rng(seed)
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    snap = response.json()
    game = store.get(snap["id"])
    for _ in range(max_requests):
        assert_only_known_cards(snap, game)
        assert (snap["seed"] is not None) == snap["finished"]  # the seed would reveal every deal
        if snap["finished"]:
            return snap
        assert snap["your_turn"] and snap["prompt"]
        response = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rng)})
        assert response.status_code == 200, response.text
        snap = response.json()
    raise AssertionError("the game did not end")


# ----------------------------------------------------------------------------- opponents
def test_without_a_shipped_agent_the_default_is_rule_based(tmp_path, monkeypatch):
    monkeypatch.setattr(ppo_agent, "MODELS_DIR", tmp_path)  # no shipped agents at all
    assert strongest_shipped_agent("basic") == "rule_based"
    assert "ppo" not in Lineup().choices["basic"]


def test_default_opponent_is_the_strongest_shipped_agent_of_the_variant(client, lineup):
    agents = client.get("/api/options").json()["agents"]
    assert {v: agents[v]["default"] for v in agents} == {v: "ppo" for v in VARIANTS}  # a shipped agent each
    assert all("ppo" in agents[v]["choices"] for v in VARIANTS)
    assert {"random", "rule_based", "pimc"} <= set(agents["laugarvatn"]["choices"])
    with pytest.raises(ValueError, match="no such checkpoint file"):
        Lineup(["ppo:no/such/model"])


# ----------------------------------------------------------------------------- play
@pytest.mark.parametrize(("body", "deals"), [
    ({"variant": "hornafjardar", "target": 2, "seed": 1}, None),
    ({"variant": "basic", "target": 2, "negative": True, "seat": 2, "seed": 2}, None),
    ({"variant": "trjamann", "seat": 1, "opponents": ["random", "rule_based"], "seed": 3}, 12),
    ({"variant": "laugarvatn", "opponents": ["random", "random"], "seed": 4}, 18),
])
def test_whole_games_through_the_api_are_saved_as_valid_records(client, store, body, deals, capsys):
    snap = play_game(client, store, body, seed=3)
    assert snap["finished"] and snap["saved"] and snap["winners"]
    assert snap["prompt"].startswith("Game over")
    assert deals is None or len(snap["rounds"]) == deals
    last = snap["rounds"][-1]
    assert last["totals"] == snap["totals"] and sum(last["tricks_won"]) in (12, 16)
    [record] = read_records(store.records_path)
    validate_record(record)
    assert record["players"][body.get("seat", 0)] == "human" and record["variant"] == body["variant"]
    assert record["final"]["net"] == snap["totals"]
    assert main(["validate", str(store.records_path)]) == 0
    assert "OK: 1 game\n" in capsys.readouterr().out


def test_a_multi_card_exchange_is_one_request(client, store):
    snap = client.post("/api/games", json={"variant": "hornafjardar", "seed": 5}).json()
    assert snap["phase"] == "exchange" and snap["select"] == {"max": 7, "exact": False, "done": 52}
    three = [h["action"] for h in snap["hand"][:3]]
    after = client.post(f"/api/games/{snap['id']}/actions", json={"actions": [*three, 52]}).json()
    assert after["exchange_counts"][0] == 3 and len(after["drawn"]) == 3
    assert not {h["card"] for h in snap["hand"][:3]} & {h["card"] for h in after["hand"]}
    assert "you exchange 3 cards" in after["log"]


def test_illegal_moves_are_refused_and_change_nothing(client):
    snap = client.post("/api/games", json={"variant": "basic", "seed": 2}).json()
    url = f"/api/games/{snap['id']}"
    while snap["phase"] != "play":  # keep the hand until the play starts
        snap = client.post(url + "/actions", json={"actions": [53]}).json()
    before = client.get(url).json()
    illegal = [h["action"] for h in snap["hand"] if not h["legal"]]
    legal = [h["action"] for h in snap["hand"] if h["legal"]]
    cases = [
        ([illegal[0]] if illegal else [0], 400, "illegal action"),
        ([legal[0], legal[-1]], 400, "comes after your decision is complete"),
        ([52], 400, "illegal action 52 (exchange_done)"),
        ([99], 422, "actions.0: Input should be less than 63"),
        (["TH"], 422, "actions.0: Input should be a valid integer"),
        ([True], 422, "valid integer"),
        ([], 422, "List should have at least 1 item"),
    ]
    for actions, status, message in cases:
        response = client.post(url + "/actions", json={"actions": actions})
        assert response.status_code == status and message in response.json()["error"], (actions, response.text)
    assert client.get(url).json() == before


@pytest.mark.parametrize(("request_args", "status", "message"), [
    ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 422, "JSON decode error"),
    ({"json": {"variant": "whist"}}, 422, "variant: Input should be 'hornafjardar', 'basic', 'trjamann' or 'laugarvatn'"),
    ({"json": {"variant": "basic", "opponents": ["ppo:/etc/passwd", "random"]}}, 400,
     "opponent 'ppo:/etc/passwd' is not offered for basic; choose one of: "),  # the registry's names
    ({"json": {"variant": "basic", "opponents": ["random"]}}, 422, "opponents: List should have at least 2 items"),
    ({"json": {"variant": "hornafjardar", "negative": True}}, 400, "option 'negative' is not valid for variant 'hornafjardar'"),
    ({"json": {"variant": "trjamann", "target": 5}}, 400, "option 'target' is not valid for variant 'trjamann'"),
    ({"json": {"target": 10_000}}, 422, "target: Input should be less than or equal to 100"),
    ({"json": {"seat": 3}}, 422, "seat: Input should be less than or equal to 2"),
    ({"json": {"seed": -1}}, 422, "seed: Input should be greater than or equal to 0"),
    ({"json": {"cheat": True}}, 422, "cheat: Extra inputs are not permitted"),
])
def test_bad_new_game_requests_get_clear_errors(client, store, request_args, status, message):
    response = client.post("/api/games", **request_args)
    assert response.status_code == status and message in response.json()["error"], response.text
    assert len(store) == 0


def test_unknown_games_paths_and_methods_are_json_errors_without_tracebacks(client):
    paths = ["/api/games/nope", "/api/games/../../pyproject.toml", "/static/../pyproject.toml",
             "/static/%2e%2e/%2e%2e/pyproject.toml", "/static/..%2F..%2Fpyproject.toml", "/api/records/7", "/nothing"]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 404 and "error" in response.json(), path
        assert "Traceback" not in response.text and "[project]" not in response.text
    assert client.delete("/api/games").status_code == 405
    assert client.get("/static/app.js").status_code == 200 and "text/html" in client.get("/").headers["content-type"]


def test_a_bug_is_a_generic_500_without_traceback(store, lineup, monkeypatch):
    def broken(self):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(WebGame, "snapshot", broken)
    with TestClient(create_app(store, lineup), raise_server_exceptions=False) as c:
        response = c.post("/api/games", json={"variant": "basic"})
    assert response.status_code == 500 and response.json() == {"error": "internal server error (details are in the server's log)"}


def test_concurrent_games_do_not_interfere(client, store):
    """Two games moved in alternation end exactly as each one played alone."""
    def solo(body, seed):
        rng, snap = np.random.default_rng(seed), client.post("/api/games", json=body).json()
        while not snap["finished"]:
            snap = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rng)}).json()
        return snap

    bodies = [{"variant": "basic", "target": 2, "seed": 11}, {"variant": "basic", "target": 2, "seed": 11, "seat": 1}]
    rngs = [np.random.default_rng(1), np.random.default_rng(2)]
    snaps = [client.post("/api/games", json=b).json() for b in bodies]
    while not all(s["finished"] for s in snaps):
        for k, snap in enumerate(snaps):
            if not snap["finished"]:
                snaps[k] = client.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rngs[k])}).json()
    assert snaps[0]["id"] != snaps[1]["id"]
    for k in range(2):
        alone = solo(bodies[k], k + 1)
        assert [r["tricks_won"] for r in alone["rounds"]] == [r["tricks_won"] for r in snaps[k]["rounds"]]
        assert alone["totals"] == snaps[k]["totals"]


def test_store_is_bounded_and_idle_games_expire_and_are_saved(client, store, clock):
    ids = []
    for k in range(4):
        snap = client.post("/api/games", json={"variant": "trjamann", "opponents": ["random", "random"], "seed": k}).json()
        ids.append(snap["id"])
    full = client.post("/api/games", json={"variant": "basic"})
    assert full.status_code == 429 and "4 games are in progress" in full.json()["error"]
    rng = np.random.default_rng(0)
    snap = client.get(f"/api/games/{ids[0]}").json()
    while len(snap["rounds"]) < 2:  # two finished deals in game 0
        snap = client.post(f"/api/games/{ids[0]}/actions", json={"actions": choose(snap, rng)}).json()
    clock.now = 500
    client.get(f"/api/games/{ids[1]}")  # keeps game 1 alive
    clock.now = 700
    assert client.post("/api/games", json={"variant": "basic"}).status_code == 201  # room again
    assert client.get(f"/api/games/{ids[0]}").status_code == 404
    assert "expired after 10 minutes idle" in client.get(f"/api/games/{ids[2]}").json()["error"]
    assert client.get(f"/api/games/{ids[1]}").status_code == 200
    [record] = read_records(store.records_path)  # game 0 had finished deals; games 2, 3 had none
    validate_record(record)
    assert record["final"] is None and len(record["rounds"]) == len(snap["rounds"]) and record["seed"] == 0


def test_a_full_store_makes_room_by_dropping_a_finished_game(client, store):
    done = play_game(client, store, {"variant": "basic", "target": 1, "seed": 1}, seed=1)
    running = [client.post("/api/games", json={"variant": "basic"}).json()["id"] for _ in range(3)]
    assert client.post("/api/games", json={"variant": "basic"}).status_code == 201  # takes the finished game's place
    assert client.get(f"/api/games/{done['id']}").status_code == 404
    assert all(client.get(f"/api/games/{i}").status_code == 200 for i in running)
    assert client.post("/api/games", json={"variant": "basic"}).status_code == 429
    assert len(read_records(store.records_path)) == 1


def test_games_in_progress_are_saved_when_the_server_stops(store, lineup):
    with TestClient(create_app(store, lineup)) as c:
        snap = c.post("/api/games", json={"variant": "basic", "seed": 4}).json()
        rng = np.random.default_rng(0)
        while not snap["rounds"]:
            snap = c.post(f"/api/games/{snap['id']}/actions", json={"actions": choose(snap, rng)}).json()
    [record] = read_records(store.records_path)
    validate_record(record)
    assert record["final"] is None and record["seed"] == 4


# ----------------------------------------------------------------------------- replay
def test_replay_of_a_game_played_here_shows_the_ppo_agents_probabilities(client, store):
    snap = play_game(client, store, {"variant": "hornafjardar", "target": 1, "seed": 8, "seat": 1}, seed=8)
    replay = client.get(f"/api/games/{snap['id']}/replay").json()
    assert replay["players"] == ["seat 0 (ppo)", "seat 1 (human)", "seat 2 (ppo)"]
    frames = replay["frames"]
    decisions = [f for f in frames if f["kind"] != "deal"]
    assert len([f for f in frames if f["kind"] == "deal"]) == len(snap["rounds"]) == len(replay["deals"])
    for f in decisions:
        if f["seat"] == 1:
            assert f["probabilities"] is None
        else:
            probs = f["probabilities"]
            assert sum(probs.values()) == pytest.approx(1, abs=1e-3)
            assert f["action"] == max(probs, key=probs.get)  # the greedy agent played its most likely action
    assert [len(h) for h in frames[0]["hands"]] == [12, 12, 12]
    plays = [f for f in decisions if f["kind"] == "play"]
    assert len(plays) == 36 * len(snap["rounds"])
    assert frames[-1]["deal_over"]["totals"] == snap["totals"] and frames[-1]["hands"] == [[], [], []]
    # the saved record carries the probabilities: its replay from the file is the same
    text = store.records_path.read_bytes()
    uploaded = client.post("/api/replay", content=text).json()
    assert uploaded["replay"] == replay and uploaded["games"][0]["players"] == ["ppo", "human", "ppo"]


def test_replay_is_refused_while_the_game_runs(client):
    snap = client.post("/api/games", json={"variant": "basic"}).json()
    response = client.get(f"/api/games/{snap['id']}/replay")
    assert response.status_code == 409 and "still running" in response.json()["error"]


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann", "laugarvatn"])
def test_replay_frames_follow_the_record(variant):
    options = {"target": 2} if variant in ("hornafjardar", "basic") else {}
    [record] = simulated_records(variant, games=1, **options)
    replay = build_replay(record)
    frames = replay["frames"]
    deal_frames = [i for i, f in enumerate(frames) if f["kind"] == "deal"]
    assert [d["first_frame"] for d in replay["deals"]] == deal_frames
    for i, r in enumerate(record["rounds"]):
        start = deal_frames[i]
        end = deal_frames[i + 1] if i + 1 < len(deal_frames) else len(frames)
        deal = frames[start:end]
        assert deal[0]["hands"] == [sorted(h, key=_display) for h in r["hands"]]
        winners = [f["trick_winner"] for f in deal if f["trick_winner"] is not None]
        assert winners == [t["winner"] for t in r["tricks"]]
        played = [f["action"] for f in deal if f["kind"] == "play"]
        assert played == [c for t in r["tricks"] for c in t["cards"]]
        assert deal[-1]["deal_over"]["points"] == r["points"] and deal[-1]["tricks_won"] == r["tricks_won"]
        plays = [f for f in deal if f["kind"] == "play"]
        size = len(r["hands"][0])
        assert [sum(map(len, f["hands"])) for f in plays] == list(range(3 * size - 1, -1, -1))  # cards conserved
    assert frames[-1]["totals"] == record["rounds"][-1]["totals"]


def _display(card: str) -> tuple[int, int]:
    return (-"CDHS".index(card[1]), -"23456789TJQKA".index(card[0]))


def test_server_records_file_and_uploads(client):
    records = simulated_records()
    assert [g["deals"] for g in client.get("/api/options").json()["records"]] == [len(r["rounds"]) for r in records]
    assert client.get("/api/records/1").json() == build_replay(records[1])
    body = "\n".join(json.dumps(r) for r in records).encode() + b"\n\n"
    data = client.post("/api/replay?game=1", content=body).json()
    assert len(data["games"]) == 2 and data["replay"] == build_replay(records[1])
    assert client.post("/api/replay?game=2", content=body).json() == {"error": "no game 2: the file holds 2 (from 0)"}


def _edited(path: list, value) -> bytes:
    record = simulated_records(games=1)[0]
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(record).encode()


@pytest.mark.parametrize(("body", "status", "message"), [
    (b"", 400, "the file holds no records"),
    (b"\xff\xfe", 400, "not UTF-8 text"),
    (b'{"format": "manni-record/1"}\n{oops', 400, "line 2: not valid JSON"),
    (b"[1, 2]", 400, "line 1: a record is a JSON object, got list"),
    (b"[" * 150_000 + b"]" * 150_000, 413, "larger than 200,000 bytes"),
    (b"[" * 50_000 + b"]" * 50_000, 400, "line 1: not a usable JSON record"),
    (b'{"format": "chess"}', 400, "game 0: format must be 'manni-record/1'"),
    (_edited(["rounds", 0, "tricks", 3, "winner"], 7), 400, "game 0: round 0, trick 3: winner: must be at most 2, got 7"),
    (_edited(["probabilities"], [["nonsense"]]), 400, "'probabilities' must be a list per deal"),
])
def test_bad_uploads_get_clear_errors(client, body, status, message):
    response = client.post("/api/replay", content=body)
    assert response.status_code == status and message in response.json()["error"], response.text
    assert "Traceback" not in response.text


# ----------------------------------------------------------------------------- the command
def test_serve_command_refuses_bad_setups_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(simulated_records(games=1)[0])[:-20] + "\n")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = str(taken.getsockname()[1])
    cases = [
        (["--records", str(bad)], f"{bad}:1: not valid JSON"),
        (["--records", str(tmp_path / "missing.jsonl")], "cannot read"),
        (["--agent", "nobody"], "unknown agent 'nobody'"),
        (["--port", "70000"], "--port must be in 0..65535"),
        (["--max-games", "0"], "--max-games must be at least 1"),
        (["--host", "127.0.0.1", "--port", port], f"cannot listen on 127.0.0.1:{port}"),
    ]
    try:
        for args, message in cases:
            assert main(["serve", "--records-dir", str(tmp_path), *args]) == 2
            err = capsys.readouterr().err.strip()
            assert err.startswith("manni serve: error: ") and message in err and "\n" not in err, err
    finally:
        taken.close()


def test_serve_command_serves_and_keeps_the_games_in_progress_across_ctrl_c(tmp_path):
    pytest.importorskip("uvicorn")

    def serve() -> tuple[subprocess.Popen, str]:
        proc = subprocess.Popen([sys.executable, "-m", "manni_env.cli", "serve", "--port", "0", "--records-dir",
                                 str(tmp_path)], cwd=Path(__file__).parents[1], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        return proc, re.match(r"Manni at (http://127\.0\.0\.1:\d+/) ", line).group(1)

    def call(url: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def stop(proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()

    proc, url = serve()
    try:
        rng = np.random.default_rng(0)
        snap = call(url + "api/games", {"variant": "basic", "seed": 9})
        while not snap["rounds"]:
            snap = call(f"{url}api/games/{snap['id']}/actions", {"actions": choose(snap, rng)})
        stop(proc)
        proc, url = serve()  # the database brings the game back at the move it stopped
        again = call(f"{url}api/games/{snap['id']}")
        assert again["hand"] == snap["hand"] and again["rounds"] == snap["rounds"] and again["deal"] == snap["deal"]
        while not again["finished"]:
            again = call(f"{url}api/games/{snap['id']}/actions", {"actions": choose(again, rng)})
        stop(proc)
    finally:
        proc.kill()
        proc.wait()
    [record] = read_records(tmp_path / "games.jsonl")
    validate_record(record)
    assert record["seed"] == 9 and record["final"] is not None
