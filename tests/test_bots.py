"""``bot:COMMAND`` agents over manni-bot/1: messages, no hidden information, faults, shutdown, commands."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from manni_agents.bots import protocol as P
from manni_agents.bots.agent import BotAgent, BotError
from manni_agents.envs import single_agent_env
from manni_agents.evaluation.arena import run_arena
from manni_agents.evaluation.match import play_game
from manni_agents.play.terminal import play_terminal
from manni_agents.play.web.lineup import Lineup
from manni_agents.random_agent import RandomAgent
from manni_agents.registry import make_agent
from manni_agents.sampler import sample_worlds
from manni_env import actions as A
from manni_env.cards import card_from_str, card_to_str, cards_of
from manni_env.engine import GameState
from manni_env.rules import VARIANTS, make_rules

from helpers.interrupts import alive, interrupt_when_written, manni

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BOT = f"{sys.executable} {ROOT / 'examples/bots/simple_bot.py'}"
NODE_BOT = f"node {ROOT / 'examples/bots/simple_bot.js'}"
PERL_BOT = f"perl {ROOT / 'examples/bots/simple_bot.pl'}"
FAULTY = f"{sys.executable} {ROOT / 'tests/bots/faulty_bot.py'}"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
needs_perl = pytest.mark.skipif(shutil.which("perl") is None or subprocess.run(["perl", "-MJSON::PP", "-e", "1"]).returncode,
                                reason="perl with JSON::PP is not installed")
CARD = re.compile(r"^[2-9TJQKA][CDHS]$")


def positions(variant: str, seed: int, every: int = 3):
    """Positions of one random game of ``variant`` (every ``every``-th decision)."""
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    n = 0
    while not state.finished and len(state.rounds) < 2:
        if n % every == 0:
            yield state.clone()
        legal = state.legal_actions()
        state.apply(legal[rng.integers(len(legal))])
        n += 1


# ---------------------------------------------------------------------------------- messages
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_request_does_not_change_with_the_hidden_cards(variant):
    """Other seats' hands, their discards and the Manni redrawn (the seat's view kept): the same request."""
    changed = 0
    for state in positions(variant, seed=11):
        seat = state.to_move
        request = P.act(state.view(seat))
        for world in sample_worlds(state.view(seat), np.random.default_rng(1), 2):
            others = [world.hand_mask(s) for s in range(3) if s != seat]
            changed += others != [state.hand_mask(s) for s in range(3) if s != seat]
            assert P.act(world.view(seat)) == request
    assert changed > 10  # the worlds really hid other cards


def test_a_deal_end_does_not_change_with_the_hidden_cards():
    state = GameState(make_rules("hornafjardar"), seed=3)
    play_game(state, [RandomAgent()] * 3, [np.random.default_rng(s) for s in range(3)], max_deals=1)
    result = state.rounds[0]
    other = dataclasses.replace(result, hands=(result.hands[1], result.hands[2], result.hands[0]), manni=result.manni[::-1],
                                exchanges=[dataclasses.replace(e, discards=e.drawn, drawn=e.discards) for e in result.exchanges])
    for seat in range(3):
        assert P.deal_end(other, seat) == P.deal_end(result, seat)
        assert P.game_end(other, seat, (0,)) == P.game_end(result, seat, (0,))


def card_names(message) -> set[str]:
    if isinstance(message, str):
        return {message} if CARD.match(message) else set()
    values = message.values() if isinstance(message, dict) else message if isinstance(message, list) else []
    return set().union(*map(card_names, values)) if values else set()


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_card_a_bot_is_told_of_is_one_its_seat_has_seen(variant, tmp_path):
    """A whole transcript: each card named is in the seat's own cards or was played or cut (shown)."""
    transcript = tmp_path / "t.jsonl"
    bot = make_agent(f"bot:transcript={transcript}:{PYTHON_BOT}")
    rules = make_rules(variant, **({"target": 2} if variant in ("hornafjardar", "basic") else {}))
    state = GameState(rules, seed=5)
    played: set[str] = set()  # cards played in the deal under way, from the true game
    snapshots: list[set[str]] = []

    deals = [0]

    def observer(state, seat, phase, action):
        if phase.name == "PLAY":
            played.add(card_to_str(action))
        if len(state.rounds) > deals[0]:  # a new deal: nothing of it is played yet
            deals[0] = len(state.rounds)
            played.clear()

    class Watched:
        name = "watched"

        def act(self, view, rng):
            snapshots.append(set(played))
            return bot.act(view, rng)

        def reset(self):
            bot.reset()

        def deal_over(self, *args):
            bot.deal_over(*args)

    play_game(state, [RandomAgent(), Watched(), RandomAgent()], [np.random.default_rng(s) for s in range(3)],
              observer=observer)
    bot.close()
    sent = [json.loads(line[2:]) for line in transcript.read_text().splitlines() if line.startswith("> ")]
    requests = [m for m in sent if m["type"] == "act"]
    assert len(requests) == len(snapshots)
    for message, seen in zip(requests, snapshots):
        allowed = set(message["own"]["dealt"]) | set(message["own"]["drawn"]) | seen
        allowed |= {message["cut_card"]} if message["cut_card"] else set()
        assert card_names(message) <= allowed, message
    assert {m["type"] for m in sent} == {"hello", "game", "act", "deal_end", "game_end", "bye"}
    assert sent[-2]["type"] == "game_end" and sent[-2]["totals"] == list(state.totals)
    assert sum(m["type"] == "deal_end" for m in sent) == len(state.rounds)


def test_history_names_the_public_decisions_in_order():
    state = GameState(make_rules("basic", first_dealer=2), seed=1)
    state.apply(A.KEEP_HAND)  # seat 0 (forehand) keeps, seat 1 swaps
    state.apply(A.SWAP_HAND)
    first = state.legal_actions()[0]
    state.apply(first)
    request = P.act(state.view(1))
    assert request["history"] == [[0, A.KEEP_HAND, "keep_hand"], [1, A.SWAP_HAND, "swap_hand"], [0, first, card_to_str(first)]]
    assert request["phase"] == "play" and request["seat"] == 1 and request["contract"]["kind"] == "trump"
    assert request["legal_names"] == [card_to_str(a) for a in request["legal"]]
    assert [card_from_str(c) for c in request["hand"]] == cards_of(state.hand_mask(1))
    assert request["own"]["discards"] == sorted(request["own"]["discards"], key=card_from_str)

    horn = GameState(make_rules("hornafjardar", first_dealer=0), seed=2)
    horn.apply(horn.legal_actions()[0])
    horn.apply(A.EXCHANGE_DONE)  # seat 1 exchanged one card, publicly
    view = horn.view(2)
    assert P.act(view)["history"] == [[1, A.EXCHANGE_DONE, "exchange_done", 1]]
    assert P.act(view)["own"]["pending"] == [] and P.act(view)["cut_card"] == card_to_str(view.cut_card)


@pytest.mark.parametrize("line, message", [
    (b"{not json", "answer is not JSON"),
    (b'{"move": 3}', 'not an object with "action"'),
    (b'{"action": "zz"}', "answer names no action"),
    (b'{"action": true}', "not an action number or name"),
    (b'{"action": 51}', "illegal action 51 (legal: 0, 52)"),
])
def test_bad_answers_are_named(line, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        P.parse_action(line, (0, 52))
    assert P.parse_action(b'{"action": "2c"}', (0, 52)) == 0 and P.parse_action(b'{"action": 52}', (0, 52)) == 52


# ---------------------------------------------------------------------------------- the spec
@pytest.mark.parametrize("spec, message", [
    ("bot", "bot needs a command line"),
    ("bot:time_limit=1:", "bot needs a command line after its options"),
    ("bot:time_limit=0:python3 x.py", "option time_limit='0': must be a positive number"),
    ("bot:speed=1:python3 x.py", "unknown option 'speed'"),
    ("bot:on_error=ignore:python3 x.py", "must be one of stop, fallback"),
    ("bot:no-such-program-here --x", "bot program 'no-such-program-here' not found"),
    ("bot:python3 'unclosed", "not a command line"),
])
def test_bad_specs_are_refused_before_any_process_starts(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_agent(spec)


def test_options_and_name():
    bot = make_agent(f"bot:time_limit=2.5,on_error=fallback:{PYTHON_BOT}")
    assert (bot.time_limit, bot.on_error, bot.command, bot.start_limit) == (2.5, "fallback", PYTHON_BOT, 10.0)
    assert bot.name == f"bot:time_limit=2.5,on_error=fallback:{PYTHON_BOT}"


# ---------------------------------------------------------------------------------- faults
FAULTS = ["slow", "crash", "silent", "garbage", "illegal"]
REASONS = {"slow": "timed out after 0.3 s", "silent": "timed out after 0.3 s", "crash": "exited with code 3",
           "garbage": 'answer is not an object with "action"', "illegal": "illegal action 99"}


@pytest.mark.parametrize("mode", FAULTS)
def test_a_failing_bot_stops_the_arena_naming_bot_seat_and_request(mode, tmp_path):
    marker = f"marker-{tmp_path.name}"
    spec = f"bot:time_limit=0.3:{FAULTY} {mode} 2"
    good = f"bot:{FAULTY} good 0 {marker}"
    start = time.monotonic()
    with pytest.raises(BotError) as stop:
        run_arena([spec, good, "random"], make_rules("basic"), deals=1, seed=0, progress=False)
    assert time.monotonic() - start < 5
    assert _running(marker) == []  # the good bot is stopped too
    text = str(stop.value)
    assert text.startswith(f"bot {spec!r} (faulty-{mode}) in seat ")
    assert REASONS[mode] in text and 'request: {"type":"act"' in text
    assert ("; stderr log: " if mode == "crash" else "; nothing on stderr") in text  # a log only of something
    if mode == "crash":
        assert "(ends: faulty bot: crashing on purpose)" in text


@pytest.mark.parametrize("mode", FAULTS)
def test_with_fallback_a_failing_bot_gets_strikes_and_the_game_goes_on(mode):
    bot = make_agent(f"bot:time_limit=0.3,on_error=fallback:{FAULTY} {mode} 4")
    state = GameState(make_rules("basic"), seed=0)
    start = time.monotonic()
    times = play_game(state, [bot, RandomAgent(), RandomAgent()], [np.random.default_rng(s) for s in range(3)], max_deals=1)
    bot.close()
    assert len(state.rounds) == 1
    assert bot.strikes == times.moves[0] // 5 and bot.strikes >= 1  # every 5th answer fails, then a restart
    assert all(REASONS[mode] in fault for fault in bot.faults)
    assert time.monotonic() - start < 2 + bot.strikes * 0.6


def test_strikes_are_counted_in_the_arena_result():
    spec = f"bot:time_limit=0.3,on_error=fallback:{FAULTY} illegal 4"
    result = run_arena([spec, "random", "random"], make_rules("basic"), deals=1, seed=0, progress=False)
    struck = {a.spec: a.strikes for a in result.agents}
    assert struck["random"] == 0 and struck[spec] >= 6
    assert f"Strikes (a failing bot's moves played by the fallback): faulty-illegal {struck[spec]} of" in result.to_markdown()
    assert result.to_dict()["agents"][0]["strikes"] == struck[spec]


def test_a_bot_that_never_answers_hello_times_out_at_start_quoting_hello():
    bot = make_agent(f"bot:start_limit=0.3:{FAULTY} mute")
    state = GameState(make_rules("basic"), seed=0)
    with pytest.raises(BotError, match=r"timed out after 0.3 s at hello \(no answer; .*flush after each line") as stop:
        bot.act(state.view(state.to_move), np.random.default_rng(0))
    assert 'request: {"type":"hello"' in str(stop.value) and '"type":"act"' not in str(stop.value)


# ---------------------------------------------------------------------------------- hostile bots
@pytest.mark.parametrize("mode, reason", [
    ("nested", "answer too long ("),
    ("deep", f"answer nests deeper than {P.MAX_DEPTH} levels"),
    ("deep-hello", f"hello answer nests deeper than {P.MAX_DEPTH} levels"),
    ("huge", "answer too long ("),
])
@pytest.mark.parametrize("on_error", ["stop", "fallback"])
def test_nested_and_huge_answers_are_protocol_errors(mode, reason, on_error):
    """Neither a RecursionError nor a quadratic read of a 20 MB line: one clean fault, at once."""
    bot = make_agent(f"bot:on_error={on_error},start_limit=5:{FAULTY} {mode}")
    state = GameState(make_rules("basic"), seed=0)
    start = time.monotonic()
    try:
        bot.act(state.view(state.to_move), np.random.default_rng(0))
        assert on_error == "fallback" and bot.strikes == 1
        text = bot.faults[0]
    except BotError as err:
        assert on_error == "stop"
        text = str(err)
    assert time.monotonic() - start < 3
    assert reason in text and "Recursion" not in text
    if mode == "deep-hello":
        assert 'request: {"type":"hello"' in text
    bot.close()


def test_an_over_long_line_is_found_in_linear_time():
    """A 20 MB answer is refused after about MAX_LINE_BYTES read, however it arrives."""
    from manni_agents.bots.process import BotProcess, StderrLog

    command = f"{sys.executable} -c \"import sys; sys.stdout.write('x' * 20_000_000 + chr(10)); sys.stdout.flush()\""
    proc = BotProcess(command, StderrLog(command))
    start = time.monotonic()
    with pytest.raises(Exception, match=r"answer too long \(\d[\d,]* bytes without a newline > 65,536\)"):
        proc.receive(time.monotonic() + 10)
    assert time.monotonic() - start < 1
    proc.close()


def test_a_log_file_only_for_a_bot_that_writes_to_stderr(tmp_path):
    quiet, loud = tmp_path / "quiet", tmp_path / "loud"
    state = GameState(make_rules("basic"), seed=0)
    rng = np.random.default_rng(0)
    for where, mode in ((quiet, "good"), (loud, "flood")):
        bot = make_agent(f"bot:log={where}:{FAULTY} {mode}")
        bot.act(state.view(state.to_move), rng)
        bot.close()
    assert quiet.is_dir() and list(quiet.iterdir()) == []
    [log] = loud.iterdir()
    assert log.name.startswith("faulty_bot.py-") and log.stat().st_size > 0


def test_a_bot_flooding_stderr_gets_a_bounded_log_with_its_tail(tmp_path):
    from manni_agents.bots.process import LOG_CAP_BYTES, LOG_TAIL_BYTES

    bot = make_agent(f"bot:log={tmp_path}:{FAULTY} flood")
    state = GameState(make_rules("basic"), seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):  # 12 MB of stderr
        state.apply(bot.act(state.view(state.to_move), rng))
    bot.close()
    [log] = tmp_path.iterdir()
    text = log.read_bytes()
    assert len(text) <= LOG_CAP_BYTES + LOG_TAIL_BYTES + 200
    assert b"bytes of this process's stderr are not logged" in text and text.endswith(b"flood 3 done\n")


def test_a_bot_that_crashes_at_start_shows_its_stderr_in_the_check():
    done = subprocess.run(manni("bot", "check", f"{FAULTY} start-crash", "--variant", "basic"), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    assert first.startswith("FAIL  hello: exited with code 1 at hello; request: {\"type\":\"hello\"")
    assert "(ends: faulty bot: cannot start on purpose)" in first


def test_nested_bots_in_the_commands_are_one_line_not_a_traceback(tmp_path):
    check = subprocess.run(manni("bot", "check", f"{FAULTY} deep-hello", "--variant", "basic"), capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 1 and "Traceback" not in check.stdout + check.stderr
    assert check.stdout.startswith(f"FAIL  hello: hello answer nests deeper than {P.MAX_DEPTH} levels")
    arena = subprocess.run(manni("arena", f"bot:on_error=fallback:{FAULTY} nested 2", "random", "random", "--variant",
                                 "basic", "--deals", "1", "--no-progress", "--out", str(tmp_path / "a")),
                           capture_output=True, text=True, timeout=60)
    assert arena.returncode == 0 and "Traceback" not in arena.stderr
    assert json.loads((tmp_path / "a" / "result.json").read_text())["agents"][0]["strikes"] > 0


@pytest.mark.skipif(shutil.which("setsid") is None, reason="setsid is not installed")
@pytest.mark.parametrize("mode", ["fork", "fork-exit"])
def test_closing_a_bot_stops_what_it_started_outside_its_process_group(mode, tmp_path):
    marker = f"marker-{tmp_path.name}"
    bot = make_agent(f"bot:on_error=fallback:{FAULTY} {mode} 0 {marker}")
    state = GameState(make_rules("basic"), seed=0)
    bot.act(state.view(state.to_move), np.random.default_rng(0))
    bot.close()
    time.sleep(0.2)
    assert _running(marker) == []


def test_a_bot_started_by_a_passing_thread_dies_with_its_owner_not_the_thread(tmp_path):
    """A server starts bots in worker threads that come and go: the bot outlives the thread, but
    not a SIGKILL of the server."""
    marker = f"marker-{tmp_path.name}"
    script = f"""
import threading, time
from manni_agents.registry import make_agent
from manni_env.rules import make_rules
bots = []
def start():
    bot = make_agent({f"bot:{FAULTY} deaf 0 {marker}"!r})
    bot.start_game(make_rules("basic"), 0)
    bots.append(bot)
thread = threading.Thread(target=start)
thread.start()
thread.join()
print(bots[0]._proc.proc.pid, flush=True)
time.sleep(60)
"""
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(owner.stdout.readline())
        time.sleep(0.3)
        assert alive(pid)  # the thread that started it is gone
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_bot_that_ignores_bye_and_sigterm_is_killed_on_close():
    bot = make_agent(f"bot:{FAULTY} deaf")
    bot.start_game(make_rules("basic"), 0)
    pid = bot._proc.proc.pid
    start = time.monotonic()
    bot.close()
    assert time.monotonic() - start < 2 and not alive(pid)


def test_ctrl_c_leaves_no_bot_processes(tmp_path):
    records = tmp_path / "r.jsonl"
    marker = f"marker-{tmp_path.name}"
    spec = f"bot:{FAULTY} good 0 {marker}"
    stopped = interrupt_when_written(
        manni("arena", spec, spec, "rule_based", "--deals", "400", "--workers", "2", "--records", str(records),
              "--no-progress"), records)
    assert stopped.code == 130
    time.sleep(0.5)
    assert _running(marker) == []


def _running(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and marker in _cmdline(p) and alive(int(p.name))]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------------------- everywhere an agent is
@pytest.mark.parametrize("command", [PYTHON_BOT, pytest.param(NODE_BOT, marks=needs_node),
                                     pytest.param(PERL_BOT, marks=needs_perl)])
def test_example_bots_pass_the_check(command):
    done = subprocess.run(manni("bot", "check", command, "--time-limit", "5"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("PASS") for line in lines[:-1]) and lines[-1] == f"{len(lines) - 1} of {len(lines) - 1} checks passed"
    for phase in ("exchange, a discard chosen", "basic swap", "trjamann pickup", "discard", "announce", "the last card",
                  "whole game"):
        assert any(phase in line for line in lines), phase


@pytest.mark.parametrize("mode, check, last", [("illegal", "FAIL  hornafjardar exchange: bot ", "2 of 8 checks passed; 6 failed"),
                                               ("mute", "FAIL  hello: timed out after 0.5 s", "0 of 1 checks passed; 1 failed")])
def test_the_check_fails_a_faulty_bot(mode, check, last):
    done = subprocess.run(manni("bot", "check", f"{FAULTY} {mode}", "--time-limit", "0.5", "--start-limit", "0.5",
                                "--variant", "hornafjardar"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert check in done.stdout and done.stdout.splitlines()[-1] == last


@needs_node
def test_example_bots_play_an_arena():
    specs = [f"bot:{PYTHON_BOT}", f"bot:{NODE_BOT}", "rule_based"]
    result = run_arena(specs, make_rules("trjamann"), deals=2, seed=1, progress=False)
    again = run_arena(specs, make_rules("trjamann"), deals=2, seed=1, progress=False, workers=2)
    assert [a.deal_score for a in result.agents] == [a.deal_score for a in again.agents]
    assert all(a.moves > 0 and a.strikes == 0 for a in result.agents)


def test_bots_in_simulate_gymnasium_and_the_web_lineup(tmp_path):
    records = tmp_path / "g.jsonl"
    done = subprocess.run(manni("simulate", "--variant", "basic", "--target", "2", "--games", "2", "--records", str(records),
                                "--agents", f"bot:{PYTHON_BOT}", "random", "rule_based", "--no-progress"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["players"][0] for line in records.read_text().splitlines()] == [f"bot:{PYTHON_BOT}"] * 2

    env = single_agent_env("basic", opponents=[f"bot:{PYTHON_BOT}", "random"], seed=0)
    _, info = env.reset(seed=0)
    for _ in range(30):
        legal = np.flatnonzero(info["action_mask"])
        _, _, over, _, info = env.step(int(legal[0]))
        if over:
            break
    bots = [p for p in env.unwrapped.policies if isinstance(p, BotAgent)]
    assert [b.bot_name for b in bots] == ["simple-python"]

    lineup = Lineup([f"bot:{PYTHON_BOT}"])
    assert all(f"bot:{PYTHON_BOT}" in lineup.choices[v] for v in VARIANTS)


def test_a_person_plays_against_a_bot_in_the_terminal():
    from helpers.people import ScriptedPerson

    person = ScriptedPerson(seed=2)
    state = play_terminal(make_rules("basic", target=2), [f"bot:{PYTHON_BOT}", "random"], seat=1, seed=4,
                          input_fn=person.input, output_fn=person.output)
    assert state.finished and "Game over after" in "\n".join(person.screen)


def test_a_finished_web_game_stops_its_bots():
    from manni_agents.play.web.game import WebGame

    game = WebGame(make_rules("basic", target=1), [f"bot:{PYTHON_BOT}", "random"], seat=1, seed=3)
    bot = game.policies[0]
    while not game.state.finished:
        assert bot._proc is not None and bot._proc.alive
        game.act([game.state.legal_actions()[0]])
    assert bot._proc is None


def test_a_finished_table_stops_its_bots():
    from manni_agents.play.web.tables import PERSON, Table

    table = Table(make_rules("basic", target=1), [PERSON, f"bot:{PYTHON_BOT}", "random"], stand_in="random", seed=3)
    seat, _ = table.join("A")  # the only open seat: the game starts
    bot = table.policies[1]
    while not table.state.finished:
        table.act(seat, [table.state.legal_actions()[0]])
        assert table.state.finished or (bot._proc is not None and bot._proc.alive)
    assert bot.bot_name == "simple-python" and bot._proc is None


# ---------------------------------------------------------------------------------- the guide
GUIDE = ROOT / "docs/bot-reference.md"  # the reference page holds the tables


def _guide_rows(*first_cells: str) -> dict[str, list[str]]:
    """The guide's table rows whose first cell is one of ``first_cells``, by that cell."""
    rows = {}
    for line in GUIDE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] in first_cells:
            rows[cells[0]] = cells[1:]
    return rows


def test_the_guides_variant_table_is_the_rules_table():
    from manni_env.cards import RANKS, SUITS, TWOS
    from manni_env.rules import VARIANT_TABLE, ContractKind

    rows = _guide_rows(*(f"`{v}`" for v in VARIANTS))
    assert list(rows) == [f"`{v}`" for v in VARIANTS]
    for variant, spec in VARIANT_TABLE.items():
        pack, hand, manni, contracts, ace = rows[f"`{variant}`"]
        assert pack == f"{spec.pack.bit_count()} cards" + (" (no twos)" if not spec.pack & TWOS else "")
        assert (int(hand), int(manni)) == (spec.hand_size, spec.manni_size)
        kinds = set(spec.cut_kinds) | {a.kind for a in spec.announcements} | ({ContractKind.TRUMP} if spec.trump_rotation else set())
        assert ace == ("low" if ContractKind.NULLO in kinds else "no nullo")
        if spec.cut_kinds:
            for kind in set(spec.cut_kinds):
                ranks = [RANKS[r] for r, k in enumerate(spec.cut_kinds) if k == kind]
                assert f"{ranks[0]}–{ranks[-1]} {kind.label}" in contracts
        if spec.trump_rotation:
            assert ", ".join(SUITS[t] for t in spec.trump_rotation) in contracts
        if spec.announcements:
            assert contracts.startswith("announced: ") and [c.split(" (")[0] for c in contracts[11:].split(", ")] == list(spec.contracts)


def test_the_guides_card_numbers_and_rank_order_are_the_engines():
    from manni_env.engine import trick_winner

    ranks = _guide_rows("rank")["rank"]
    suits = _guide_rows("suit")["suit"]
    numbers = {"rank": _guide_rows("`rank`")["`rank`"], "suit": _guide_rows("`suit`")["`suit`"]}
    for r, name in enumerate(ranks):
        for s, suit in enumerate(suits):
            assert A.action_from_str(name + suit[0]) == int(numbers["suit"][s]) * 13 + int(numbers["rank"][r])
    text = GUIDE.read_text()
    for name, number in re.findall(r"`(\w\w)` = (\d+)", text):
        assert A.action_from_str(name) == int(number)
    ace, king, two = (card_from_str(c) for c in ("AS", "KS", "2S"))
    assert trick_winner([ace, king, two], None, nullo=False) == 0 and trick_winner([ace, king, two], None, nullo=True) == 1
    assert "the ace is the lowest card of its suit" in text


@pytest.mark.parametrize("answer", [b'{"action": 34}', b'{"action": "TH"}', b'{"action": "th"}', b'{"action": "10H"}'])
def test_the_guides_answer_forms_are_accepted(answer):
    assert P.parse_action(answer, (34, 52)) == 34
    assert P.parse_action(b'{"action": "exchange_done"}', (34, 52)) == 52
    for refused in (b'{"action": 34.0}', b'{"action": "34"}', b'{"action": true}'):
        with pytest.raises(ValueError):
            P.parse_action(refused, (34, 52))


def test_a_bot_works_when_the_process_has_over_1024_descriptors_open():
    """A server with many connections: the bot's pipes get descriptors beyond select()'s 1024."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 1200:
        pytest.skip(f"the descriptor limit is {soft}")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        bot = make_agent(f"bot:{PYTHON_BOT}")
        state = GameState(make_rules("basic"), seed=0)
        assert bot.act(state.view(state.to_move), np.random.default_rng(0)) in state.legal_actions()
        assert bot._proc.proc.stdout.fileno() > 1024
        bot.close()
    finally:
        for fd in held:
            os.close(fd)


# ---------------------------------------------------------------------------------- the lines sent
class _Recorder(RandomAgent):
    """A random player that builds every message a bot in its seat would be sent."""

    def __init__(self):
        super().__init__()
        self.messages: list[dict] = []

    def act(self, view, rng):
        self.messages.append(P.act(view))
        return super().act(view, rng)

    def deal_over(self, seat, result, winners):
        self.messages.append(P.deal_end(result, seat))
        if winners is not None:
            self.messages.append(P.game_end(result, seat, winners))


@pytest.mark.parametrize("variant", VARIANTS)
def test_lines_to_a_bot_are_compact_in_a_fixed_key_order_within_the_stated_bound(variant):
    """Every message is compact JSON, keys in the schema's order; ``legal`` is never empty; no line
    is longer than :func:`protocol.longest_line`, and the reference states that bound."""
    from manni_env.schemas import schema

    rules = make_rules(variant)
    bound = P.longest_line(rules)
    required = {name: d.get("required") for name, d in schema(P.BOT)["$defs"].items()}
    longest = 0
    for seed in range(2):
        players = [_Recorder() for _ in range(3)]
        play_game(GameState(rules, seed=seed), players, [np.random.default_rng([seed, k]) for k in range(3)])
        sent = [P.hello(10.0), P.game(rules, 0, 10.0), *(m for p in players for m in p.messages), P.bye()]
        for message in sent:
            line = P.encode(message)
            assert line == (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
            assert list(message) == required[message["type"]]
            assert message["type"] != "act" or message["legal"]
            longest = max(longest, len(line))
    assert 1000 < longest <= bound < 4096
    reference = (ROOT / "docs/bot-reference.md").read_text()
    assert f"| {rules.spec.title} | {bound:,} |" in reference


def test_the_pages_state_the_longest_line_of_any_variant():
    longest = f"{max(P.longest_line(make_rules(v)) for v in VARIANTS):,} bytes"
    for page in ("docs/bot-protocol.md", "docs/bot-reference.md", "docs/bounds.md"):
        assert longest in (ROOT / page).read_text(), page
