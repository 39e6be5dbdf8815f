"""The ``manni`` command: its subcommands (found through entry points), ``manni simulate`` and
``manni validate``."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from helpers.cli import usage_error
from helpers.interrupts import interrupt_when_written, manni

from manni_env import cli
from manni_env.cli import main
from manni_env.records import read_records
from manni_env.text import count

COMMANDS = {"validate", "layout", "simulate", "arena", "play", "serve", "train", "distill", "bot", "league", "records"}


def test_every_command_is_listed_and_has_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in COMMANDS)
    assert set(cli.build_parser()._subparsers._group_actions[0].choices) == COMMANDS
    for name in COMMANDS:
        with pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0
        assert f"usage: manni {name}" in capsys.readouterr().out


def test_installed_commands_are_the_declared_entry_points():
    """Fails on a stale install: after changing the entry points, run pip install -e . again."""
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"][cli.ENTRY_POINT_GROUP]
    installed = {ep.name: ep.value for ep in cli.entry_points(group=cli.ENTRY_POINT_GROUP)}
    assert installed == declared, "stale install: run pip install -e . (or make setup) again"
    assert not {t.partition(":")[0] for t in declared.values()} & {t.partition(":")[0] for t in cli.CORE_COMMANDS}
    assert all(not t.startswith("manni_env.") for t in declared.values())  # the layers above add theirs


def test_a_broken_plugin_is_a_warning_and_the_other_commands_work(monkeypatch, capsys):
    broken = EntryPoint("broken", "no_such_package.commands:register", cli.ENTRY_POINT_GROUP)
    real = cli.entry_points
    monkeypatch.setattr(cli, "entry_points", lambda group: [*real(group=group), broken])
    assert set(cli.build_parser()._subparsers._group_actions[0].choices) == COMMANDS
    assert "manni: warning: command 'broken' (no_such_package.commands:register) is unavailable" in capsys.readouterr().err


def test_unknown_arguments_are_an_error_for_commands_that_take_none(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["validate", str(tmp_path / "x.jsonl"), "--bogus"])
    assert info.value.code == 2
    assert "manni: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def simulate(tmp_path, *args: str, name: str = "games.jsonl") -> str:
    path = str(tmp_path / name)
    assert main(["simulate", "--records", path, "--no-progress", *args]) == 0
    return path


@pytest.mark.parametrize(
    "options",
    [
        ["--variant", "hornafjardar", "--target", "5"],
        ["--variant", "basic", "--negative", "--max-deals", "3"],
        ["--variant", "trjamann", "--first-dealer", "1"],
        ["--variant", "laugarvatn"],
    ],
)
def test_simulate_then_validate(tmp_path, capsys, options):
    path = simulate(tmp_path, *options, "--games", "4", "--seed", "7")
    records = read_records(path)
    assert len(records) == 4 and all(r["variant"] == options[1] for r in records)
    assert all(r["players"] == ["random", "random", "random"] and r["final"] for r in records)
    assert main(["validate", path]) == 0
    assert capsys.readouterr().out.strip().endswith("OK: 4 games")


def test_simulate_is_deterministic_and_game_i_does_not_depend_on_games(tmp_path):
    a = read_records(simulate(tmp_path, "--games", "3", "--seed", "11", name="a.jsonl"))
    b = read_records(simulate(tmp_path, "--games", "5", "--seed", "11", name="b.jsonl"))
    c = read_records(simulate(tmp_path, "--games", "3", "--seed", "12", name="c.jsonl"))
    assert a == b[:3] and a != c
    assert len({r["seed"] for r in b}) == 5


def test_simulate_with_named_agents(tmp_path):
    path = simulate(tmp_path, "--variant", "basic", "--target", "3", "--games", "2", "--agents", "random", "rule_based", "random")
    assert read_records(path)[0]["players"] == ["random", "rule_based", "random"]
    assert main(["validate", path]) == 0


@pytest.mark.parametrize(
    "options, message",
    [
        (["--variant", "trjamann", "--target", "5"], "option 'target' is not valid for variant 'trjamann'; valid options: first_dealer"),
        (["--variant", "hornafjardar", "--negative"], "option 'negative' is not valid for variant 'hornafjardar'"),
        (["--target", "0"], "target must be a positive integer, got 0"),
        (["--first-dealer", "5"], "first_dealer must be 0, 1, 2"),
        (["--variant", "whist"], "invalid choice: 'whist'"),
        (["--agents", "random", "nobody", "random"], "unknown agent 'nobody'"),
    ],
)
def test_bad_options_exit_with_code_2_and_a_message(tmp_path, capsys, options, message):
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--records", str(tmp_path / "x.jsonl"), "--games", "1", *options])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_validate_reports_each_problem_with_file_line_round_and_trick(tmp_path, capsys):
    path = simulate(tmp_path, "--games", "3", "--seed", "1")
    lines = open(path).read().splitlines()
    bad = json.loads(lines[1])
    bad["rounds"][0]["tricks"][4]["winner"] = (bad["rounds"][0]["tricks"][4]["winner"] + 1) % 3
    lines[1] = json.dumps(bad)
    lines[2] = lines[2][:100]  # a line cut short
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["validate", path, str(broken)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{broken}:2: round 0, trick 4: seat ")
    assert out[1].startswith(f"{broken}:3: not valid JSON")
    assert out[-1] == "FAILED: 2 problems (4 valid games in 6 lines)"


def test_validate_of_two_games_one_broken_counts_both_in_words(tmp_path, capsys):
    path = simulate(tmp_path, "--games", "2", "--seed", "1")
    first, second = open(path).read().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text(first + "\n" + second.replace('"rounds"', '"rounds\x01"', 1) + "\n")
    capsys.readouterr()
    assert main(["validate", str(broken)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{broken}:2: not valid JSON: Invalid control character at column ") and " at at " not in out[0]
    assert out[1] == "FAILED: 1 problem (1 valid game in 2 lines)"
    assert main(["validate", path]) == 0 and capsys.readouterr().out.strip() == "OK: 2 games"


def test_validate_missing_file(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "none.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().out


def test_validate_fails_on_a_file_without_games(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert main(["validate", str(empty), "/dev/null"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{empty}: no games (the file holds no records)", "/dev/null: no games (the file holds no records)",
                   "FAILED: 2 problems (0 valid games in 0 lines)"]


def test_validate_reports_unreadable_lines_without_a_traceback(tmp_path, capsys):
    path = simulate(tmp_path, "--variant", "trjamann", "--games", "1", "--seed", "2")
    good = json.loads(open(path).read())
    kind = json.loads(json.dumps(good))
    kind["rounds"][0]["contract"]["kind"] = ["trump"]
    seed = dict(good, seed=-1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([
        '{"format": ' + "9" * 5000 + "}", "[" * 100_000 + "]" * 100_000, json.dumps(kind), json.dumps(seed), json.dumps(good),
    ]) + "\n")
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{bad}:1: not readable JSON: a number has more than 4300 digits"
    assert out[1] == f"{bad}:2: not readable JSON: nested too deeply"
    assert out[2] == f"{bad}:3: round 0: contract.kind: must be one of \"nullo\", \"trump\", \"grand\", got ['trump']"
    assert out[3] == f"{bad}:4: seed: must be at least 0, got -1"
    assert out[4] == "FAILED: 4 problems (1 valid game in 5 lines)"


# ----------------------------------------------------------------------------- bad input, interrupts
@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "-1"], "argument --seed: must be 0 or more, got -1"),
        (["--seed", "x"], "argument --seed: expected a whole number, got 'x'"),
        (["--games", "-2"], "argument --games: must be 0 or more, got -2"),
        (["--agents", "pimc:worlds=abc", "random", "random"], "bad agent spec 'pimc:worlds=abc': option worlds='abc'"),
        (["--agents", "ppo:hornafjardar", "random", "random", "--variant", "basic"], "trained for variant 'hornafjardar', cannot play 'basic'"),
        (["--first-dealer", "1.0"], "argument --first-dealer: invalid int value: '1.0'"),
    ],
)
def test_simulate_rejects_bad_arguments_before_playing(tmp_path, capsys, args, message):
    path = tmp_path / "x.jsonl"
    assert message in usage_error(capsys, ["simulate", "--records", str(path), "--games", "1", *args])
    assert not path.exists()


def test_simulate_records_file_is_checked_first_and_needs_append_to_grow(tmp_path, capsys):
    assert "--records: expected a file name, got ''" in usage_error(capsys, ["simulate", "--records", ""])
    assert f"--records: {tmp_path} is a directory" in usage_error(capsys, ["simulate", "--records", str(tmp_path)])
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert f"{blocker} is not a directory" in usage_error(capsys, ["simulate", "--records", str(blocker / "a.jsonl")])
    path = simulate(tmp_path, "--games", "2", name="new/dir/games.jsonl")  # missing directories are created
    before = open(path).read()
    assert "already exists; pass --append" in usage_error(capsys, ["simulate", "--records", path, "--games", "1"])
    assert open(path).read() == before
    assert main(["simulate", "--records", path, "--games", "1", "--seed", "4", "--append", "--no-progress"]) == 0
    assert len(read_records(path)) == 3


def test_train_without_the_train_extra_names_it(monkeypatch, capsys):
    import sys

    for trainer in ("manni_train.ppo_vector", "manni_train.ppo_sb3", "manni_train.rllib_ppo"):  # the default trainer imports afresh
        monkeypatch.delitem(sys.modules, trainer, raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    assert "training needs the 'train' extra, which lacks torch: pip install 'manni-env[train]'" in usage_error(capsys, ["train"])
    for module in ("manni_train.distill", "manni_train.demonstrations"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    error = usage_error(capsys, ["distill"])
    assert error.startswith("manni distill: error: training needs the 'train' extra, which lacks torch")


def test_the_ray_trainer_without_ray_names_the_rllib_extra(monkeypatch, capsys):
    import sys

    monkeypatch.delitem(sys.modules, "manni_train.ray_vector", raising=False)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    error = usage_error(capsys, ["train", "--trainer", "ray"])
    assert "training needs the 'rllib' extra, which lacks ray: pip install 'manni-env[rllib]'" in error


def test_validate_into_a_closed_pipe_stops_quietly(tmp_path):
    import subprocess

    junk = tmp_path / "junk.jsonl"
    junk.write_text("x\n" * 20_000)  # 20,000 problem lines: far more than a pipe holds
    proc = subprocess.Popen(manni("validate", str(junk)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().endswith(b"not valid JSON: Expecting value at column 1\n")
    proc.stdout.close()  # as `| head -1` does
    assert proc.wait(timeout=60) == 1
    assert proc.stderr.read() == b""


def test_ctrl_c_in_simulate_keeps_the_finished_games(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    run = interrupt_when_written(manni("simulate", "--games", "100000", "--records", str(path), "--no-progress"), path)
    games = len(read_records(path))
    assert run.code == 130 and run.err == f"manni simulate: interrupted; kept {count(games, 'finished game')} in {path}\n"
    assert run.seconds < 10
    assert main(["validate", str(path)]) == 0 and capsys.readouterr().out.strip() == f"OK: {count(games, 'game')}"


def test_version(capsys):
    import importlib.metadata

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    try:
        expected = importlib.metadata.version("manni-env")
    except importlib.metadata.PackageNotFoundError:
        from manni_env import __version__ as expected
    assert capsys.readouterr().out.strip() == f"manni {expected}"
