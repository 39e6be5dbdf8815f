"""The published JSON Schemas (manni_env/schemas/): valid schemas, in step with the code's vocabulary,
met by everything the project writes, and failing, with a located one-line message, on what breaks them."""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import numpy as np
import pytest

from manni_agents.bots import protocol as P
from manni_agents.random_agent import RandomAgent
from manni_env import actions as A
from manni_env.cards import SUITS, card_to_str
from manni_env.engine import GameState
from manni_env.records import RecordError, game_record, validate_record
from manni_env.rules import VARIANTS, ContractKind, make_rules
from manni_env.schemas import BOT, RECORD, problem, schema

BOT_MESSAGES = ("hello", "game", "act", "deal_end", "game_end", "bye")


def played(variant: str, seed: int) -> GameState:
    """A whole game of random players (a short one where the variant has a target)."""
    rules = make_rules(variant, **({"target": 3} if "target" in make_rules(variant).options() else {}))
    state, agent, rng = GameState(rules, seed=seed), RandomAgent(), np.random.default_rng(seed)
    while not state.finished:
        state.apply(agent.act(state.view(state.to_move), rng))
    return state


@pytest.mark.parametrize("name", [RECORD, BOT])
def test_the_schemas_are_valid_draft_2020_12(name):
    jsonschema.Draft202012Validator.check_schema(schema(name))
    assert schema(name)["title"] == name.replace("-1", "/1")


def test_the_schemas_name_what_the_code_names():
    """Enumerations of the schemas, checked against the code they restate."""
    for name in (RECORD, BOT):
        card = schema(name)["$defs"]["card"]["pattern"]
        assert all(re.search(card, card_to_str(c)) for c in range(52)) and not re.search(card, "1Z")
        contract = schema(name)["$defs"]["contract"]["properties"]
        assert contract["kind"]["enum"] == [k.label for k in ContractKind]
        assert contract["trump"]["enum"] == [*SUITS, None]
    defs = schema(BOT)["$defs"]
    assert defs["action"]["maximum"] == A.NUM_ACTIONS - 1
    assert set(defs["act"]["properties"]["phase"]["enum"]) == set(P.PHASE_NAMES.values()) - {"game_over"}
    assert defs["protocol"]["const"] == P.PROTOCOL
    assert set(BOT_MESSAGES) | {"hello_answer", "act_answer"} <= set(defs)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_record_and_message_the_project_writes_fits(variant):
    state = played(variant, 5)
    record = json.loads(json.dumps(game_record(state, players=["a", "b", "c"])))
    assert problem(RECORD, record) is None
    rules, seen = state.rules, set()
    messages = [P.hello(10.0), P.game(rules, 1, 10.0), P.bye()]
    replay = GameState(rules, seed=5)
    agent, rng = RandomAgent(), np.random.default_rng(5)
    while not replay.finished:  # the same game again, asking for every decision's request
        view = replay.view(replay.to_move)
        messages.append(P.act(view))
        replay.apply(agent.act(view, rng))
    messages += [P.deal_end(r, 0) for r in replay.rounds] + [P.game_end(replay.rounds[-1], 2, replay.winners)]
    for message in messages:
        P.check_message(json.loads(P.encode(message)))
        seen.add(message.get("phase", message["type"]))
    assert {"hello", "game", "bye", "play", "deal_end", "game_end"} <= seen
    for answer, definition in (({"type": "hello", "protocol": P.PROTOCOL, "name": "x"}, "hello_answer"),
                               ({"action": 3}, "act_answer"), ({"action": "TH", "note": 1}, "act_answer")):
        assert problem(BOT, answer, definition) is None


@pytest.mark.parametrize(("edit", "match", "round", "trick"), [
    (lambda r: r.pop("scoring"), "the record: missing field 'scoring'", None, None),
    (lambda r: r["rounds"][1].update(dealer=3), "dealer: must be at most 2, got 3", 1, None),
    (lambda r: r["rounds"][0]["tricks"][4].update(winner="1"), "winner: must be integer, got '1'", 0, 4),
    (lambda r: r["rounds"][0]["tricks"][2]["cards"].__setitem__(1, "ZZ"), r"cards\[1\]: must be a card", 0, 2),
    (lambda r: r["final"].update(net=[1, 2]), r"final.net: must hold at least 3 items, got 2", None, None),
])
def test_a_record_breaking_the_schema_is_one_located_line(edit, match, round, trick):
    record = json.loads(json.dumps(game_record(played("hornafjardar", 2))))
    validate_record(copy.deepcopy(record))
    edit(record)
    with pytest.raises(RecordError, match=match) as info:
        validate_record(record)
    assert (info.value.round, info.value.trick) == (round, trick) and "\n" not in str(info.value)


def test_a_message_breaking_the_schema_is_refused():
    state = GameState(make_rules("basic"), seed=1)
    bad = {**P.act(state.view(state.to_move)), "legal": [99]}
    with pytest.raises(ValueError, match=r"the act message breaks the manni-bot/1 schema: legal\[0\]: must be at most 62"):
        P.check_message(bad)
    with pytest.raises(ValueError, match="answer's action is not an action number or name: 3.5"):
        P.parse_action(b'{"action": 3.5}', (3,))
    with pytest.raises(ValueError, match=r"hello answer is not .*missing field 'name'"):
        P.parse_hello(b'{"type": "hello", "protocol": "manni-bot/1"}')
