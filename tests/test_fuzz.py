"""The fuzz suite: hostile input for every surface, within a fixed budget (a few seconds each).

Hypothesis (derandomized, so every run tries the same inputs) drives the engine, the GameState
dict reader, the records validator and reader, a bot's answer lines, ``name=value`` option lists
(``--opponent-mix``, an agent spec's options), the AEC and Gymnasium envs
and the OpenSpiel game; a seeded generator sends a fixed budget of requests to ``manni serve``'s
app through Starlette's TestClient, of odd text in uploads, and of raw TCP openings to a real
server on 127.0.0.1; Hypothesis sends it ``Host`` and ``Origin`` headers. Each input is either accepted or refused with the surface's documented error and the
state unchanged; anything else fails. The counts are printed at the end of the run
(``tests/helpers/fuzzing.py``).
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from helpers.fuzzing import clear, tally
from helpers.serving import serving
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manni_agents.bots import protocol as P
from manni_env.engine import GameState
from manni_env.records import RecordError, game_record, iter_record_lines, validate_record
from manni_env.rules import VARIANTS, make_rules

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

#: JSON-like values: what a hostile file or request can hold
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=8,
)
#: what a caller may pass as an action
ODD_ACTIONS = (st.integers(0, 62) | st.integers(-2**40, 2**40) | st.floats(allow_nan=True) | st.text(max_size=3) | st.none()
               | st.booleans() | st.lists(st.integers(0, 62), max_size=2))


def _played(variant: str, seed: int, steps: int) -> GameState:
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.finished:
            break
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state


def _finished_record(variant: str, seed: int) -> dict:
    options = {"target": 3} if variant in ("hornafjardar", "basic") else {}
    state = GameState(make_rules(variant, **options), seed=seed)
    rng = np.random.default_rng(seed)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return json.loads(json.dumps(game_record(state, players=["random"] * 3)))


RECORDS = {v: _finished_record(v, 1) for v in VARIANTS}


def _paths(value, prefix=()):
    """Every (path, value) inside a JSON value."""
    yield prefix, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _mutate(value, index: int, new):
    """A copy of ``value`` with the ``index``-th inner value (mod their count, root excluded) replaced by ``new``."""
    value = copy.deepcopy(value)
    paths = [p for p, _ in _paths(value) if p]
    *parents, last = paths[index % len(paths)]
    target = value
    for key in parents:
        target = target[key]
    target[last] = new
    return value


# ----------------------------------------------------------------------------- engine
@FUZZ
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 50), steps=st.integers(0, 120),
       action=st.just("a legal one") | ODD_ACTIONS, pick=st.integers(0, 60))
def test_engine_apply_accepts_legal_actions_and_refuses_the_rest_unchanged(variant, seed, steps, action, pick):
    state = _played(variant, seed, steps)
    before = state.to_dict()
    legal = state.legal_actions()
    if action == "a legal one" and legal:
        action = legal[pick % len(legal)]
    try:
        state.apply(action)
    except ValueError as err:
        tally("engine apply", clear(err))
        assert clear(err) and state.to_dict() == before
        return
    tally("engine apply", False)
    assert type(action) is int and action in legal


@FUZZ
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 20), steps=st.integers(0, 80), index=st.integers(0, 10**6),
       value=JSON)
def test_gamestate_from_dict_refuses_what_no_game_reaches(variant, seed, steps, index, value):
    data = _mutate(_played(variant, seed, steps).to_dict(), index, value)
    try:
        state = GameState.from_dict(data)
    except ValueError as err:
        tally("GameState.from_dict", clear(err))
        assert clear(err)
        return
    tally("GameState.from_dict", False)
    if not state.finished:  # a state that is read plays on (or refuses with a clear error)
        legal = state.legal_actions()
        assert legal
        try:
            state.apply(legal[0])
        except ValueError as err:
            assert clear(err)


# ----------------------------------------------------------------------------- records
@FUZZ
@given(variant=st.sampled_from(VARIANTS), index=st.integers(0, 10**6), value=JSON)
def test_a_mutated_record_is_valid_or_a_record_error(variant, index, value):
    record = _mutate(RECORDS[variant], index, value)
    try:
        validate_record(record)
    except RecordError as err:
        tally("records validate", clear(err))
        assert clear(err)
        return
    tally("records validate", False)


@settings(FUZZ, max_examples=30)
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_read_as_records_or_record_errors(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "x.jsonl"
    path.write_bytes(data)
    try:
        items = list(iter_record_lines(path, max_line=100))
    except UnicodeDecodeError:
        tally("records read", True)
        return
    for _, item in items:
        assert isinstance(item, (dict, RecordError))
        tally("records read", isinstance(item, RecordError))
        if isinstance(item, RecordError):
            assert clear(item)
        else:
            try:
                validate_record(item)
            except RecordError as err:
                assert clear(err)


# ----------------------------------------------------------------------------- bot answers
#: answer lines nested up to 5,000 deep (a line under the 64 KiB that is read at all)
NESTED = st.integers(1, 5000).map(lambda n: ("[" * n + "]" * n).encode()) | st.integers(1, 5000).map(
    lambda n: ('{"action":' * n).encode())


@settings(FUZZ, max_examples=80)
@given(line=st.binary(max_size=200) | NESTED | JSON.map(lambda v: json.dumps(v).encode())
       | JSON.map(lambda v: json.dumps({"type": "hello", "protocol": "manni-bot/1", "action": v, "name": v,
                                         "version": v}).encode()))
def test_any_bot_answer_line_is_an_answer_or_a_clear_error(line):
    """A bot's answer or hello line: parsed, or one ValueError line (never a RecursionError)."""
    for parse in (lambda: P.parse_action(line, (0, 34, 52)), lambda: P.parse_hello(line)):
        try:
            parse()
        except ValueError as err:
            assert clear(err), err
            tally("bot answers", True)
        else:
            tally("bot answers", False)


#: ``name=value`` lists: items of known and unknown names, odd separators and values, and any text
OPTION_ITEM = (st.tuples(st.sampled_from(["snapshot", "rule_based", "random", "worlds"]), st.sampled_from(["=", " = "]),
                         st.sampled_from(["0.2", "1/3", "0", "1", "2"]))
               | st.tuples(st.sampled_from(["random", "worlds", "x", ""]), st.sampled_from(["=", "==", ""]),
                           st.sampled_from(["1/0", "-1", "nan", "inf", ""]) | st.text(max_size=3)))
OPTION_TEXT = st.lists(OPTION_ITEM.map("".join), max_size=3).map(",".join) | st.text(max_size=12)


@settings(FUZZ, max_examples=120)
@given(text=OPTION_TEXT)
def test_any_option_list_is_read_or_refused_in_one_line(text):
    """``--opponent-mix`` and an agent spec's options, one parser: a mix of shares from 0 to 1 summing
    to at most 1 and options of the declared names, or one ValueError line."""
    from manni_agents.spec_options import parse_options, positive_int
    from manni_train.args import OPPONENT_KINDS, parse_opponent_mix

    for parse in (lambda: parse_opponent_mix(text), lambda: parse_options(text, {"worlds": positive_int})):
        try:
            read = parse()
        except ValueError as err:
            assert clear(err), err
            tally("option lists", True)
        else:
            assert set(read) <= {*OPPONENT_KINDS, "worlds"}
            assert all(0 <= v <= 1 for k, v in read.items() if k != "worlds") and sum(
                v for k, v in read.items() if k != "worlds") <= 1 + 1e-9
            tally("option lists", False)


# ----------------------------------------------------------------------------- envs
@settings(FUZZ, max_examples=40)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 30), steps=st.integers(0, 40), action=ODD_ACTIONS)
def test_aec_env_step_refuses_bad_actions_unchanged(variant, seed, steps, action):
    from manni_env.env import raw_env

    env = raw_env(variant=variant)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        agent = env.agent_selection
        if not env.agents or env.terminations[agent] or env.truncations[agent]:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    if not env.agents or env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
        return
    before = env.game.to_dict()
    try:
        env.step(action)
    except ValueError as err:
        tally("AEC env step", clear(err))
        assert clear(err) and env.game.to_dict() == before
        return
    tally("AEC env step", False)
    assert isinstance(action, int) and not isinstance(action, bool)


@settings(FUZZ, max_examples=40)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 30), action=st.just("a legal one") | ODD_ACTIONS)
def test_gymnasium_step_refuses_bad_actions_unchanged(variant, seed, action):
    import gymnasium as gym

    env = gym.make("manni_env/Manni-v0", variant=variant, opponents=("random", "random"), illegal_action="raise")
    env.reset(seed=seed)
    if action == "a legal one":
        action = int(np.flatnonzero(env.unwrapped.action_masks())[0])
    before = env.unwrapped.state.to_dict()
    try:
        env.step(action)
    except ValueError as err:
        tally("Gymnasium step", clear(err))
        assert clear(err) and env.unwrapped.state.to_dict() == before
        return
    tally("Gymnasium step", False)
    assert isinstance(action, int) and not isinstance(action, bool)


# ----------------------------------------------------------------------------- OpenSpiel
@settings(FUZZ, max_examples=40)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 30), steps=st.integers(0, 60),
       action=st.integers(0, 200))
def test_openspiel_apply_refuses_impossible_actions_unchanged(variant, seed, steps, action):
    pytest.importorskip("pyspiel")
    from manni_env import openspiel_game as osg

    state = osg.load_game(variant).new_initial_state()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        outcomes = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(int(rng.choice(outcomes)))
    before = (str(state), state.history())
    try:
        state.apply_action(action)
    except ValueError as err:  # the engine's IllegalActionError is one
        tally("OpenSpiel apply_action", clear(err))
        assert clear(err) and (str(state), state.history()) == before
        return
    tally("OpenSpiel apply_action", False)
    assert before[1] + [action] == state.history()


@settings(FUZZ, max_examples=40)
@given(text=st.text(alphabet="0123456789\n-=_abc", max_size=200) | st.text(max_size=50))
def test_openspiel_deserialize_refuses_anything_but_a_history(text):
    pytest.importorskip("pyspiel")
    from manni_env import openspiel_game as osg

    game = osg.load_game("basic")
    try:
        state = game.deserialize_state(text)
    except ValueError as err:
        tally("OpenSpiel deserialize_state", clear(err))
        assert clear(err)
        return
    tally("OpenSpiel deserialize_state", False)
    assert state.serialize() == "".join(f"{a}\n" for a in state.history())


# ----------------------------------------------------------------------------- manni serve
HTTP_BUDGET = 300


def _random_json(rng: np.random.Generator, depth: int = 0):
    """A random JSON-like value (infinity too), nested at most three deep."""
    kind = int(rng.integers(8 if depth < 3 else 5))
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(2))
    if kind == 2:
        return int(rng.integers(-10**6, 10**6)) * int(rng.choice([1, 10**15]))
    if kind == 3:
        return float(rng.normal())
    if kind == 4:
        return "".join(map(chr, rng.integers(32, 0x2FF, size=int(rng.integers(0, 8)))))
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    if kind == 6:
        keys = ("variant", "opponents", "seat", "seed", "target", "negative", "actions", "x")
        return {k: _random_json(rng, depth + 1) for k in keys[: int(rng.integers(0, 8))]}
    return math.inf


def _request(rng: np.random.Generator, game_id: str, upload: bytes) -> tuple[str, str, dict]:
    """One hostile request: (method, path, keyword arguments for the TestClient)."""
    choice = int(rng.integers(9))
    odd_id = rng.choice([game_id, "nope", "../../etc/passwd", "%00", "x" * 300, "🂡"])
    if choice == 0:
        body = {"variant": rng.choice(["basic", "hornafjardar", "trjamann", "laugarvatn", "chess", ""]),
                "seat": int(rng.integers(-2, 5)), "seed": int(rng.integers(-5, 2**40)),
                "opponents": list(rng.choice(["random", "rule_based", "ppo", "ppo:/etc/passwd", "pimc:worlds=999999"],
                                             size=int(rng.integers(0, 4))))}
        return "POST", "/api/games", {"json": body}
    if choice == 1:
        return "POST", "/api/games", {"content": json.dumps(_random_json(rng), allow_nan=True).encode(),
                                      "headers": {"content-type": "application/json"}}
    if choice == 2:
        actions = [int(a) for a in rng.integers(-3, 70, size=int(rng.integers(0, 20)))]
        return "POST", f"/api/games/{odd_id}/actions", {"json": {"actions": actions}}
    if choice == 3:
        return "POST", f"/api/games/{odd_id}/actions", {"content": rng.bytes(int(rng.integers(0, 200)))}
    if choice == 4:
        return "GET", rng.choice([f"/api/games/{odd_id}", f"/api/games/{odd_id}/replay", "/api/options", "/",
                                  f"/api/records/{int(rng.integers(-3, 5))}", "/static/../app.py", "/api/records/x"]), {}
    if choice == 5:
        cut = upload[: int(rng.integers(0, len(upload)))]
        data = bytearray(upload if rng.random() < 0.3 else cut)
        for _ in range(int(rng.integers(0, 6))):
            if data:
                data[int(rng.integers(len(data)))] = int(rng.integers(256))
        return "POST", f"/api/replay?game={int(rng.integers(-1, 3))}", {"content": bytes(data)}
    if choice == 6:
        return "POST", "/api/games", {"content": b"{" * int(rng.integers(1, 100_000)),
                                      "headers": {"content-type": "application/json"}}
    if choice == 7:
        return str(rng.choice(["PUT", "DELETE", "PATCH"])), rng.choice(["/api/games", "/api/replay", "/"]), {}
    return "POST", "/api/replay?game=abc", {"content": rng.bytes(int(rng.integers(0, 3000)))}


def test_http_fuzz_of_manni_serve_within_a_fixed_budget(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    rng = np.random.default_rng(23)
    store = GameStore(tmp_path / "records", max_games=8, idle_seconds=600)
    upload = "".join(json.dumps(r) + "\n" for r in RECORDS.values()).encode()
    app = create_app(store, Lineup(), records=list(RECORDS.values()), max_upload_bytes=100_000)
    with TestClient(app, raise_server_exceptions=False) as client:
        game_id = client.post("/api/games", json={"variant": "basic", "seed": 1}).json()["id"]
        for _ in range(HTTP_BUDGET):
            method, path, kwargs = _request(rng, game_id, upload)
            response = client.request(method, path, **kwargs)
            assert response.status_code < 500, (method, path, response.status_code, response.text[:300])
            assert len(response.content) < 2_000_000
            refused = response.status_code >= 400
            if refused and path.startswith("/api"):
                error = response.json()["error"]
                assert isinstance(error, str) and error and "Traceback" not in error
            tally("manni serve HTTP", refused)


SOCKET_BUDGET = 300


def _frame(rng: np.random.Generator, legal: list[int]) -> tuple[str, str | bytes]:
    """One hostile table-socket frame: ("text" | "bytes", payload); now and then a legal move, so
    the game moves on and later garbage meets other phases."""
    choice = int(rng.integers(9))
    if choice == 0:
        return "bytes", rng.bytes(int(rng.integers(0, 300)))
    if choice == 1:
        return "text", json.dumps(_random_json(rng), allow_nan=True)
    if choice == 2:
        actions = _random_json(rng) if rng.random() < 0.5 else [int(a) for a in rng.integers(-3, 70, size=int(rng.integers(0, 20)))]
        message = {"type": rng.choice(["move", "start", "hello", "watch", "", "MOVE"]), "actions": actions}
        if rng.random() < 0.3:
            message["seat"] = int(rng.integers(-1, 4))
        return "text", json.dumps(message, allow_nan=True)
    if choice == 3:
        opener = str(rng.choice(["[", "{\"a\":", "{\"type\": "]))
        return "text", opener * int(rng.integers(1, 4096 // len(opener)))
    if choice == 4:
        return "text", "x" * int(rng.integers(4097, 60_000))  # over the 4 KiB message bound, under the frame bound
    if choice == 5:
        return "text", "".join(map(chr, rng.integers(1, 0xD7FF, size=int(rng.integers(0, 200)))))
    if choice == 6:
        return "text", rng.choice(["", "null", "[]", "1e999999", "NaN", "\"move\"", "{}", "{\"type\": null}"])
    if choice == 7 and legal:
        return "text", json.dumps({"type": "move", "actions": [int(rng.choice(legal))]})
    return "text", json.dumps({"type": "move", "actions": [int(rng.integers(0, 63))]})


def test_table_socket_fuzz_within_a_fixed_budget(tmp_path):
    """Garbage over a seated person's table socket: every frame gets one answer, a state or an
    error naming the problem (never a fatal one: the socket stays open), and no traceback; garbage
    as the first message is refused with a fatal error and close code 4400."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    rng = np.random.default_rng(42)
    app = create_app(GameStore(tmp_path / "records"), Lineup())
    with TestClient(app) as client:  # server exceptions raise here: a traceback fails the test
        created = client.post("/api/tables", json={"variant": "basic", "seats": ["person", "random", "random"], "seed": 1})
        table_id = created.json()["id"]
        token = client.post(f"/api/tables/{table_id}/seats", json={"name": "fuzz"}).json()["token"]
        for _ in range(20):  # garbage before hello
            with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
                kind, payload = _frame(rng, [])
                ws.send_bytes(payload) if kind == "bytes" else ws.send_text(payload)
                answer = ws.receive_json()
                if answer["type"] == "welcome":  # a frame that happened to be a valid hello (watch)
                    tally("table socket", False)
                    continue
                assert answer["type"] == "error" and answer["fatal"] and clear(Exception(answer["message"]))
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_json()
                assert closed.value.code == 4400
                tally("table socket", True)
        with client.websocket_connect(f"/ws/tables/{table_id}") as ws:
            ws.send_json({"type": "hello", "token": token})
            assert ws.receive_json()["type"] == "welcome"
            state = ws.receive_json()
            for _ in range(SOCKET_BUDGET):
                game = state["game"]
                legal = [h["action"] for h in game["hand"] if h["legal"]] + [b["action"] for b in game["buttons"]]
                kind, payload = _frame(rng, legal if game["your_turn"] else [])
                ws.send_bytes(payload) if kind == "bytes" else ws.send_text(payload)
                answer = ws.receive_json()
                assert answer["type"] in ("error", "state") and "fatal" not in answer, answer
                if answer["type"] == "error":
                    assert clear(Exception(answer["message"])) and len(answer["message"]) < 300
                else:
                    state = answer
                tally("table socket", answer["type"] == "error")


# ----------------------------------------------------------------------------- manni serve: Host, Origin, uploads, raw TCP
HEADER = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@FUZZ
@given(origin=HEADER | st.sampled_from(["null", "http://127.0.0.1:8000", "http://[::1]:8000", "http://127.0.0.1:80"]),
       host=HEADER | st.sampled_from(["", "127.0.0.1:8000", "[::1]:8000", "localhost", "[::1", "a:b:c"]))
def test_host_and_origin_headers_are_answered_never_500(origin, host):
    """Any printable ``Host`` and ``Origin``: the server's own origin passes, anything else gets
    400, 403 or 421 with an error line; the origin check itself never raises."""
    pytest.importorskip("fastapi")
    from manni_agents.play.web.origin import same_origin

    assert isinstance(same_origin(origin, host), bool)
    status = _host_check_status(host, origin)
    assert status in (201, 400, 403, 421), (host, origin, status)
    tally("manni serve Host and Origin", status != 201)


def _host_check_status(host: str, origin: str) -> int:
    """The status of a table creation with these headers, through the HostCheck middleware alone."""
    import asyncio

    from manni_agents.play.web.origin import HostCheck, allowed_hosts

    async def created(scope, receive, send):
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "POST", "path": "/api/tables",
             "headers": [(b"host", host.encode("latin-1")), (b"origin", origin.encode("latin-1"))]}
    asyncio.run(HostCheck(created, allowed_hosts("127.0.0.1"))(scope, receive, send))
    return sent[0]["status"]


ODD_TEXT = ["\ud800", "\udfff", "x\udc00y", "a" * 100_000, "\x00\x1f", "🂡" * 50, "\u2028", ""]


def test_uploads_of_records_with_odd_text_are_answered_never_500(tmp_path):
    """A valid record with one string (a name, a field, a key) replaced by odd text: lone
    surrogates, 100,000 characters, control characters, a line separator. Answered 200 (a name)
    or 400 (not text), within a small answer, never 500."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    rng = np.random.default_rng(52)
    record = RECORDS["basic"]
    with TestClient(create_app(GameStore(tmp_path / "records"), Lineup()), raise_server_exceptions=False) as client:
        for _ in range(40):
            odd = copy.deepcopy(record)
            text = str(rng.choice(ODD_TEXT))
            where = int(rng.integers(4))
            if where == 0:
                odd["players"] = ["a", "b", "c"]
                odd["players"][int(rng.integers(3))] = text
            elif where == 1:
                odd["final"][text] = text
            elif where == 2:
                odd[text] = [text]
            else:
                odd["variant"] = text
            body = (json.dumps(record) + "\n" + json.dumps(odd) + "\n").encode()
            answer = client.post(f"/api/replay?game={int(rng.integers(2))}", content=body)
            assert answer.status_code in (200, 400), (where, text[:20], answer.status_code, answer.text[:300])
            assert len(answer.content) < 2_000_000
            if answer.status_code == 400:
                assert clear(Exception(answer.json()["error"]))
            tally("manni serve odd text", answer.status_code == 400)


RAW_BUDGET = 60


def _raw_head(rng: np.random.Generator) -> bytes:
    """A hostile start of a connection: garbage, a cut or mangled request head, a huge header."""
    head = b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n"
    choice = int(rng.integers(6))
    if choice == 0:
        return rng.bytes(int(rng.integers(1, 300)))
    if choice == 1:
        return head[: int(rng.integers(1, len(head)))]
    if choice == 2:
        data = bytearray(head + b'{"variant": "basic"}')
        for _ in range(int(rng.integers(1, 6))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
        return bytes(data)
    if choice == 3:
        return b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * int(rng.integers(10_000, 200_000)) + b"\r\n\r\n"
    if choice == 4:
        return head + b'{"var'  # a body cut short
    return b"GET /api/variants HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def test_raw_tcp_fuzz_of_the_connection_layer(tmp_path, monkeypatch, caplog):
    """Garbage, cut and mangled heads, huge headers and short bodies over real TCP connections,
    all at once: each is answered with a status below 500 or closed, within the deadlines, and the
    server logs no traceback."""
    pytest.importorskip("uvicorn")
    import socket

    from manni_agents.play.web import connections
    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    monkeypatch.setattr(connections, "HEAD_SECONDS", 0.5)
    monkeypatch.setattr(connections, "BODY_SECONDS", 0.5)
    rng = np.random.default_rng(12)
    with serving(create_app(GameStore(tmp_path / "web"), Lineup())) as (port, _):
        clients = []
        for _ in range(RAW_BUDGET):
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
            try:
                client.sendall(_raw_head(rng))
            except OSError:  # the server refused it before it was all sent
                pass
            clients.append(client)
        for client in clients:
            data = b""
            try:
                while chunk := client.recv(65536):
                    data += chunk
            except OSError:
                pass
            client.close()
            status = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else None
            assert status is None or status < 500, data[:300]
            tally("manni serve raw TCP", status is None or status >= 400)
    assert "Traceback" not in caplog.text
