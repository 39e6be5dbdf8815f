"""``manni league``: cells, the leaderboard's numbers, kept cells, incremental runs, reproducibility, errors."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from manni_agents.evaluation.arena import Interval
from manni_agents.evaluation.league import cell_dir
from manni_env.cli import main

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BOT = f"bot:{sys.executable} {ROOT / 'examples/bots/simple_bot.py'}"


def league(out: Path, *args: str) -> int:
    return main(["league", *args, "--deals", "2", "--seed", "3", "--out", str(out), "--no-progress"])


def board(out: Path, variant: str = "basic") -> dict:
    return json.loads((out / variant / "leaderboard.json").read_text())


def without_times(data: dict) -> list[dict]:
    return [{k: v for k, v in s.items() if k != "ms_per_move"} for s in data["standings"]]


def test_leaderboard_numbers_come_from_the_cells(tmp_path, capsys):
    assert league(tmp_path, "random", "rule_based", PYTHON_BOT, "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert printed.count("] ") >= 6 and "League basic: rank, agent" in printed
    assert "X − Y" not in printed and "simple-python (" + PYTHON_BOT + ")" in printed  # a summary, the bot by its name
    assert {p.name for p in (tmp_path / "basic").iterdir() if p.is_file()} == {"leaderboard.md", "leaderboard.json", "leaderboard.png"}
    data = board(tmp_path)
    assert sorted(s["spec"] for s in data["standings"]) == sorted(["random", "rule_based", PYTHON_BOT])
    means = [s["deal_score"]["mean"] for s in data["standings"]]
    assert means == sorted(means, reverse=True)
    for s in data["standings"]:
        others = [o for o in ("random", "rule_based", PYTHON_BOT) if o != s["spec"]]
        cells = [json.loads((cell_dir(tmp_path, "basic", s["spec"], y) / "result.json").read_text()) for y in others]
        scores = [c["agents"][0]["deal_score"] for c in cells]
        assert s["deal_score"]["mean"] == pytest.approx(sum(x["mean"] for x in scores) / 2)
        half = math.sqrt(sum((x["mean"] - x["low"]) ** 2 for x in scores)) / 2
        assert s["deal_score"]["low"] == pytest.approx(s["deal_score"]["mean"] - half)
        assert (s["cells"], s["deals"], s["strikes"]) == (2, 4, 0)
        assert s["ordinal"] == pytest.approx(s["mu"] - 3 * s["sigma"]) and s["moves"] > 0
    text = (tmp_path / "basic" / "leaderboard.md").read_text()
    first = data["standings"][0]
    assert f"| 1 | `{first['label']}` | {Interval(**first['deal_score']).text()} | {first['mu']:.2f} |" in text
    assert {s["spec"]: s["label"] for s in data["standings"]}[PYTHON_BOT] == "simple-python"
    assert "| `simple-python` | " in text and "X − Y" in text  # the matrix is in the file
    assert "[random_vs_rule_based/result.md](random_vs_rule_based/result.md)" in text


def test_adding_an_agent_plays_only_its_cells_and_matches_a_fresh_league(tmp_path, capsys):
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    assert league(grown, "random", "rule_based", "--variant", "trjamann") == 0
    stamp = (cell_dir(grown, "trjamann", "random", "rule_based") / "result.json").stat().st_mtime_ns
    capsys.readouterr()
    assert league(grown, "random", "rule_based", "pimc:worlds=2", "--variant", "trjamann") == 0
    printed = capsys.readouterr().out
    assert printed.count("kept ") == 2 and "[4/4]" in printed
    assert (cell_dir(grown, "trjamann", "random", "rule_based") / "result.json").stat().st_mtime_ns == stamp
    assert league(fresh, "random", "rule_based", "pimc:worlds=2", "--variant", "trjamann") == 0
    assert without_times(board(grown, "trjamann")) == without_times(board(fresh, "trjamann"))


def test_every_variant(tmp_path):
    assert league(tmp_path, "random", "rule_based", "--variant", "all") == 0
    assert all((tmp_path / v / "leaderboard.png").stat().st_size > 0 for v in ("hornafjardar", "basic", "trjamann", "laugarvatn"))


@pytest.mark.parametrize("args, message", [
    (["random"], "expected two or more distinct agent specs"),
    (["random", "random"], "expected two or more distinct agent specs"),
    (["random", "nonsense"], "unknown agent 'nonsense'"),
    (["random", "bot:no-such-program"], "bot program 'no-such-program' not found"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        league(tmp_path, *args)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "hornafjardar").exists()


def test_a_kept_cell_of_other_settings_needs_force(tmp_path, capsys):
    assert league(tmp_path, "random", "rule_based", "--variant", "basic") == 0
    with pytest.raises(SystemExit):
        main(["league", "random", "rule_based", "--variant", "basic", "--deals", "2", "--seed", "4", "--out", str(tmp_path),
              "--no-progress"])
    assert "holds a result of other settings" in capsys.readouterr().err


def test_ctrl_c_keeps_the_finished_deals_and_the_next_run_resumes_the_cell(tmp_path, capsys, monkeypatch):
    """The next run plays only the deals an interrupted cell lacks, and the league equals one never
    interrupted; ``--force`` plays the cell in full."""
    from manni_agents.evaluation.arena import ArenaInterrupted
    import manni_agents.evaluation.arena as arena_module
    import manni_agents.evaluation.league as league_module

    real = league_module.run_arena

    def stopped_in_the_second_cell(agents, rules, deals, seed, **kwargs):
        if agents[0] == "rule_based":  # the second cell: 1 of its 2 deals, then Ctrl-C
            partial = real(agents, rules, 1, seed, **kwargs)
            partial.settings["units_requested"] = deals
            raise ArenaInterrupted(1, deals, partial)
        return real(agents, rules, deals, seed, **kwargs)

    monkeypatch.setattr(league_module, "run_arena", stopped_in_the_second_cell)
    assert league(tmp_path, "random", "rule_based", "--variant", "basic") == 130
    assert "manni league: interrupted" in capsys.readouterr().err
    assert "1 of 2 deals (interrupted)" in (tmp_path / "basic" / "leaderboard.md").read_text()
    monkeypatch.setattr(league_module, "run_arena", real)
    played = []
    play_units = arena_module._play_units

    def recorded(players, specs, rules, seed, mode, start, stop, want_records):
        played.extend((specs[0], unit) for unit in range(start, stop))
        return play_units(players, specs, rules, seed, mode, start, stop, want_records)

    monkeypatch.setattr(arena_module, "_play_units", recorded)
    assert league(tmp_path, "random", "rule_based", "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert "kept random vs rule_based" in printed
    assert "resuming rule_based vs random ×2: 1 of its 2 deals kept from an interrupted run" in printed
    assert "[1/1] rule_based vs random ×2: 2 deals (1 kept), seed 3" in printed
    assert played == [("rule_based", 1)]
    assert "(interrupted)" not in (tmp_path / "basic" / "leaderboard.md").read_text()
    assert league(tmp_path / "fresh", "random", "rule_based", "--variant", "basic") == 0
    assert without_times(board(tmp_path)) == without_times(board(tmp_path / "fresh"))
    played.clear()
    assert league(tmp_path, "random", "rule_based", "--variant", "basic", "--force") == 0
    assert played == [(x, unit) for x in ("random", "rule_based") for unit in (0, 1)]


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP"])
def test_a_stop_signal_keeps_the_finished_deals_as_ctrl_c_does(tmp_path, capsys, monkeypatch, signum):
    """``kill``, ``timeout`` or a closed terminal in the middle of a cell: its finished deals are kept."""
    import os
    import signal

    import manni_agents.evaluation.arena as arena_module

    real = arena_module._play_units

    def stopped_at_unit_1(players, specs, rules, seed, mode, start, stop, want_records):
        if start == 1:
            os.kill(os.getpid(), getattr(signal, signum))
        return real(players, specs, rules, seed, mode, start, stop, want_records)

    monkeypatch.setattr(arena_module, "_play_units", stopped_at_unit_1)
    before = signal.getsignal(getattr(signal, signum))
    assert league(tmp_path, "random", "rule_based", "--variant", "basic") == 130
    assert "manni league: interrupted" in capsys.readouterr().err
    assert "1 of 2 deals (interrupted)" in (tmp_path / "basic" / "leaderboard.md").read_text()
    assert signal.getsignal(getattr(signal, signum)) == before  # (put back as it was)


def test_a_cell_is_played_again_when_its_bot_or_checkpoint_changes(tmp_path, capsys):
    import numpy as np

    from manni_agents.ppo_agent import load_checkpoint, save_checkpoint

    bot = tmp_path / "bot.py"
    bot.write_text((ROOT / "examples/bots/simple_bot.py").read_text())
    for suffix in (".safetensors", ".json"):
        (tmp_path / f"net{suffix}").write_bytes((ROOT / f"agents/models/basic_ppo{suffix}").read_bytes())
    specs = [f"bot:{sys.executable} {bot}", f"ppo:{tmp_path / 'net'}"]
    out = tmp_path / "league"
    assert league(out, *specs, "--variant", "basic") == 0
    capsys.readouterr()
    assert league(out, *specs, "--variant", "basic") == 0
    assert capsys.readouterr().out.count("kept ") == 2
    bot.write_text(bot.read_text().replace('"name": "simple-python"', '"name": "simple-python", "version": "2"'))
    assert league(out, *specs, "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert "kept " not in printed and printed.count(" again: ") == 2
    assert "bot version None → 2" in printed and "script sha256" in printed and "simple-python 2 (" in printed
    layers, meta = load_checkpoint(tmp_path / "net")  # retrained in place
    layers[-1] = (layers[-1][0], layers[-1][1] + np.float32(1e-3))
    save_checkpoint(tmp_path / "net", layers, meta)
    assert league(out, *specs, "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert printed.count(" again: ") == 2 and "weights sha256" in printed
    players = json.loads((cell_dir(out, "basic", *specs) / "players.json").read_text())["players"]
    assert [p["spec"] for p in players] == specs and players[0]["bot_version"] == "2"


def test_a_recompiled_bot_is_played_again(tmp_path, capsys):
    """A bot run as an executable of its own (a compiled program) is keyed by the executable's content:
    rebuilt with the same ``hello``, its cells are played again."""
    bot = tmp_path / "mybot"
    source = (ROOT / "examples/bots/simple_bot.py").read_text()
    bot.write_text(f"#!{sys.executable}\n{source}")
    bot.chmod(0o755)
    specs = ["random", f"bot:{bot}"]
    out = tmp_path / "league"
    assert league(out, *specs, "--variant", "basic") == 0
    assert league(out, *specs, "--variant", "basic") == 0
    assert capsys.readouterr().out.count("kept ") == 2
    bot.write_text(f"#!{sys.executable}\n{source}\n# rebuilt\n")
    assert league(out, *specs, "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert "kept " not in printed and printed.count(" again: ") == 2 and "executable sha256" in printed
    players = json.loads((cell_dir(out, "basic", *specs) / "players.json").read_text())["players"]
    assert "unknown" not in players[1] and len(players[1]["executable_sha256"]) == 64


def test_a_bot_whose_code_cannot_be_hashed_is_played_every_run_and_says_why(tmp_path, capsys, monkeypatch):
    (tmp_path / "simple_bot.py").write_text((ROOT / "examples/bots/simple_bot.py").read_text())
    monkeypatch.chdir(tmp_path)
    specs = ["random", f"bot:{sys.executable} -m simple_bot"]
    for _ in range(2):
        assert league(tmp_path / "league", *specs, "--variant", "basic") == 0
    printed = capsys.readouterr().out
    assert "kept " not in printed and printed.count(" again: cannot tell whether it changed (bot:") == 2
    assert "names no file besides its program" in printed


def test_a_bot_that_cannot_start_is_one_line_with_its_stderr(tmp_path, capsys):
    faulty = f"bot:{sys.executable} {ROOT / 'tests/bots/faulty_bot.py'} start-crash"
    assert league(tmp_path, "random", faulty, "--variant", "basic") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"manni league: bot {faulty!r} at its start: exited with code 1")
    assert "cannot start on purpose" in err and not (tmp_path / "basic").exists()


def test_the_arena_and_the_league_name_a_bot_alike(tmp_path, capsys):
    """A bot goes by the name it gives in ``hello`` in the arena's table and the league's, with its
    spec beside it; another agent by its spec."""
    assert main(["arena", PYTHON_BOT, "random", "random", "--variant", "basic", "--deals", "2", "--workers", "2",
                 "--out", str(tmp_path / "arena"), "--no-progress"]) == 0
    arena = capsys.readouterr().out
    assert "| simple-python | 1 |" in arena and f"simple-python is `{PYTHON_BOT}`" in arena
    assert "| simple-python − random |" in arena
    agents = json.loads((tmp_path / "arena" / "result.json").read_text())["agents"]
    assert [(a["spec"], a["label"]) for a in agents] == [(PYTHON_BOT, "simple-python"), ("random", "random")]
    assert league(tmp_path / "league", PYTHON_BOT, "random", "--variant", "basic") == 0
    assert "| `simple-python` |" in (tmp_path / "league" / "basic" / "leaderboard.md").read_text()


def test_what_a_bot_command_runs_is_hashed_or_said_unknown(tmp_path):
    from manni_agents.evaluation.league import bot_code

    script = tmp_path / "bot.py"
    script.write_text("print()\n")
    assert set(bot_code(f"{sys.executable} {script}")) == {"executable_sha256", "script_sha256"}
    assert set(bot_code(sys.executable)) == {"executable_sha256"}  # a program of its own: a compiled bot
    assert bot_code(f"{sys.executable} -m bot")["unknown"].startswith("its command names no file besides its program")
    assert bot_code(str(tmp_path / "gone"))["unknown"] == f"{tmp_path / 'gone'} cannot be read (No such file or directory)"
