"""``manni simulate`` and ``manni validate`` through the command-line entry point."""

from __future__ import annotations

import json

import pytest

from manni_env.cli import main
from manni_env.records import read_records


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
    assert out[-1] == "FAILED: 2 problem(s) in 6 games"


def test_validate_missing_file(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "none.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().out


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
