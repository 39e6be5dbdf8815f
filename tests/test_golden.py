"""Golden playthroughs (tests/golden/*.jsonl, see make_golden.py there): the engine regenerates each
file exactly from its seeds, and both the engine and the vector env, replaying a file's deals and
actions, reproduce every legal-action list, observation digest, deal result and reward in it; and
the seeded arena runs of tests/golden/arena/ (make_arena_golden.py there) replay their game records
and results byte for byte.

The vector half skips, naming the reason, while ``VectorManni`` cannot play a variant or explicit
deals yet; it runs as soon as it can.
"""

from __future__ import annotations

import json

import pytest
from golden.make_arena_golden import RUNS as ARENA_RUNS
from golden.make_arena_golden import paths_of as arena_paths
from golden.make_arena_golden import play as play_arena
from golden.make_golden import GOLDEN, deal_line, digest, path_of, render, result_line
from helpers.two_paths import RESULT_FIELDS, open_path

from manni_env.actions import action_from_str, action_to_str
from manni_env.engine import Deal
from manni_env.env import outcome_rewards
from manni_env.rules import make_rules

# history of the observation checked, and the reward mode checked with it
MODES = [("summary", "deal"), ("full", "outcome")]
# (path, mode): the vector env's Python execution of its kernels, and its slot 0 of three, once per file
REPLAYS = [(p, m) for p in ("engine", "vector") for m in MODES]
REPLAYS += [(p, MODES[0]) for p in ("vector-python", "vector-slots")]


def read_lines(name: str) -> list[dict]:
    with open(path_of(name), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("name", GOLDEN)
def test_engine_regenerates_golden_file(name):
    expected = path_of(name).read_text(encoding="utf-8").splitlines()
    actual = render(name).splitlines()
    for n, (want, got) in enumerate(zip(expected, actual), 1):
        assert got == want, f"{name}.jsonl line {n} differs (rewrite with tests/golden/make_golden.py if intended)"
    assert len(actual) == len(expected), f"{name}.jsonl: {len(expected)} lines, the engine plays {len(actual)}"


def golden_deals(lines: list[dict]) -> list[Deal]:
    return [Deal.from_strs([h.split() for h in line["hands"]], line["manni"].split(), line["cut"])
            for line in lines if "deal" in line]


@pytest.mark.parametrize("path_name, mode", REPLAYS, ids=[f"{p}-{h}-{r}" for p, (h, r) in REPLAYS])
@pytest.mark.parametrize("name", GOLDEN)
def test_replay_reproduces_golden_file(name, path_name, mode):
    history, reward = mode
    lines = read_lines(name)
    head = lines[0]
    # the first dealer comes from the file (the game drew it from its seed)
    rules = make_rules(**{**head["rules"], "first_dealer": lines[1]["dealer"]})
    path = open_path(path_name, rules, golden_deals(lines), history, reward)
    other = {h for h, _ in MODES} - {history}
    contract = step = None
    deals = 0
    for n, want in enumerate(lines[1:], 2):
        where = f"{name}.jsonl line {n} ({path_name}, history={history}, reward={reward})"
        if "deal" in want:
            view = path.view(path.to_move)
            got = deal_line(view.deal_index, view.dealer, path.deal(), view.contract)
        elif "seat" in want:
            seat = path.to_move
            got = {"seat": seat, "phase": path.phase.name.lower(),
                   "legal": " ".join(action_to_str(a) for a in path.legal()),
                   "action": want["action"], history: digest(path.observation())}
            want = {k: v for k, v in want.items() if k not in other}
            if got == want:
                contract = path.view(seat).contract
                step = path.step(action_from_str(want["action"]))
                if "deal_end" not in lines[n]:
                    assert step.deal_end is None and step.rewards == (0.0, 0.0, 0.0), f"{where}: {step}"
        elif "deal_end" in want:
            assert step.deal_end is not None, f"{where}: the deal did not end"
            got = {"deal_end": deals, "contract": contract.describe(), "declarer": contract.declarer,
                   **{k: list(step.deal_end[k]) for k in RESULT_FIELDS}}
            deals += 1
            if reward == "deal":
                paid = step.deal_end["points"]
            else:
                paid = outcome_rewards(step.winners) if step.terminated or step.truncated else (0, 0, 0)
            assert step.rewards == tuple(float(p) for p in paid), f"{where}: rewards {step.rewards}"
        else:
            assert step.terminated or step.truncated, f"{where}: the game did not end"
            got = result_line(deals, True, step.truncated, step.winners, step.deal_end["totals"])
        assert got == want, where


@pytest.mark.parametrize("name", ARENA_RUNS)
def test_arena_run_is_unchanged(name):
    """Same seeds, same games and same results: the seeded arena runs of tests/golden/arena/ replay
    byte for byte (make_arena_golden.py; the measured time per move left out)."""
    records, result = play_arena(name)
    expected_records, expected_result = (path.read_text() for path in arena_paths(name))
    assert records == expected_records, f"arena/{name}.jsonl differs (rewrite with tests/golden/make_arena_golden.py if intended)"
    assert result == expected_result, f"arena/{name}.json differs (rewrite with tests/golden/make_arena_golden.py if intended)"
