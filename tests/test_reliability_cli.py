"""Hostile use of the command line (issue 23's items 10-12): one error line and exit code 2 for an
unusable output path, bounded reading of records files, ``play --save`` keeping the game on
Ctrl-C and ``q``, and ``arena`` naming its three agents."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from manni_agents.play.terminal import play_terminal
from manni_env import records as records_module
from manni_env.cli import main
from manni_env.records import read_records, validate_record
from manni_env.rules import make_rules


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in "\n".join(err)
    return err[-1]


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


UNUSABLE = [
    ("/proc/x.jsonl", "cannot create /proc/x.jsonl"),
    ("/dev/full", "/dev/full is not a regular file"),
]


@pytest.mark.parametrize("path, message", UNUSABLE)
def test_simulate_records_that_cannot_be_written_are_one_error_line(path, message, capsys):
    assert _exit_code(["simulate", "--games", "1", "--records", path, "--no-progress"]) == 2
    assert message in _error(capsys)


@pytest.mark.parametrize("path, message", UNUSABLE)
def test_arena_records_that_cannot_be_written_are_one_error_line(path, message, capsys):
    argv = ["arena", "random", "random", "random", "--deals", "1", "--records", path, "--no-progress"]
    assert _exit_code(argv) == 2
    assert message in _error(capsys)


def test_a_records_path_ending_in_a_slash_is_a_directory(tmp_path, capsys):
    path = f"{tmp_path}/x.jsonl.d/"
    assert _exit_code(["simulate", "--games", "1", "--records", path, "--no-progress"]) == 2
    assert "ends in '/', so it names a directory, not a file" in _error(capsys)
    assert not Path(path.rstrip("/")).exists()


def test_a_write_error_during_simulate_is_one_line_and_keeps_what_was_written(tmp_path, capsys, monkeypatch):
    from manni_agents.commands import simulate

    real, calls = simulate.write_records, []

    def fill_up(path, records):
        calls.append(1)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, records)

    monkeypatch.setattr(simulate, "write_records", fill_up)
    path = tmp_path / "g.jsonl"
    assert main(["simulate", "--games", "3", "--records", str(path), "--no-progress"]) == 2
    line = _error(capsys)
    assert "cannot write to" in line and "No space left on device" in line and "kept 1 game written before" in line
    assert len(read_records(path)) == 1


def test_validate_reads_a_file_without_newlines_in_bounded_memory(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(records_module, "MAX_LINE_CHARS", 1000)
    path = tmp_path / "zeros"
    path.write_bytes(b"\0" * 5000)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1: line longer than 1,000 characters" in out and "stopped reading" in out


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_validate_dev_zero_ends(capsys):
    assert main(["validate", "/dev/zero"]) == 1
    assert "line longer than" in capsys.readouterr().out


def test_validate_counts_valid_games_and_lines(tmp_path, capsys):
    path = tmp_path / "mixed.jsonl"
    main(["simulate", "--games", "2", "--records", str(path), "--no-progress", "--variant", "basic"])
    with path.open("a") as f:
        f.write("this is not json\n[1, 2]\n")
    capsys.readouterr()
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert ":3: not valid JSON" in out and ":4: a record is a JSON object" in out
    assert "FAILED: 2 problems (2 valid games in 4 lines)" in out


@pytest.mark.parametrize("agents", [["random", "random"], ["random"] * 4, ["random"]])
def test_arena_needs_exactly_three_agents(agents, capsys):
    assert _exit_code(["arena", *agents, "--deals", "1"]) == 2
    assert f"arena needs exactly three agents (one per seat), got {len(agents)}" in _error(capsys)


class _Interrupting:
    """A person who plays the first listed move until ``after`` deals are over, then presses Ctrl-C."""

    def __init__(self, after: int):
        self.after, self.state = after, None

    def __call__(self, prompt: str) -> str:
        if self.state is not None and len(self.state.rounds) >= self.after:
            raise KeyboardInterrupt
        return "1"


def test_play_ctrl_c_after_a_finished_deal_keeps_the_game(tmp_path, monkeypatch):
    from manni_agents.play import terminal as play

    person = _Interrupting(after=1)
    real = play.GameState

    def tracked(*args, **kwargs):
        person.state = real(*args, **kwargs)
        return person.state

    monkeypatch.setattr(play, "GameState", tracked)
    path = tmp_path / "kept.jsonl"
    screen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        play_terminal(make_rules("basic"), ["random", "random"], seed=5, save=str(path),
                      input_fn=person, output_fn=screen.append)
    (record,) = read_records(path)
    validate_record(record)
    assert len(record["rounds"]) == 1 and f"Saved the game to {path}." in screen


@pytest.mark.parametrize("answer, saved", [("", True), ("y", True), ("n", False), ("no", False), (None, True)])
def test_play_quit_with_save_saves_unless_told_no(answer, saved, tmp_path):
    path = tmp_path / "q.jsonl"
    answers = iter(["1", "1", "q"] + ([] if answer is None else [answer]))

    def person(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    state = play_terminal(make_rules("basic"), ["random", "random"], seed=3, save=str(path), input_fn=person,
                          output_fn=lambda text: None)
    assert not state.finished
    assert path.exists() == saved
    if saved:
        (record,) = read_records(path)
        assert json.dumps(record) and record["final"] is None


# ----------------------------------------------------------------------------- paths too long, time limits, checkpoints

LONG = "d" * 5000


@pytest.mark.parametrize("argv", [
    ["simulate", "--agents", "random", "random", "random", "--games", "1", "--no-progress", "--records", LONG],
    ["arena", "random", "random", "random", "--deals", "1", "--no-progress", "--out", LONG],
    ["arena", "random", "random", "random", "--deals", "1", "--no-progress", "--records", LONG],
    ["arena", f"ppo:{LONG}", "random", "random", "--deals", "1"],
    ["league", "random", "rule_based", "--deals", "1", "--out", LONG],
    ["play", "--save", LONG],
    ["serve", "--records", LONG],
])
def test_a_file_name_too_long_is_one_error_line_in_every_command(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own error
        code = exit_.value.code
    assert code == 2
    line = _error(capsys)
    assert "too long" in line and len(line) < 400


@pytest.mark.parametrize("spec, message", [("bot:time_limit=inf:x", "finite"), ("bot:time_limit=1e300:x", "at most"),
                                           ("bot:start_limit=nan:x", "positive")])
def test_time_limits_that_would_overflow_are_refused(spec, message, capsys, tmp_path):
    assert _exit_code(["simulate", "--agents", spec, "random", "random", "--records", str(tmp_path / "g.jsonl")]) == 2
    assert message in _error(capsys)
    assert _exit_code(["bot", "check", "--time-limit", "1e300", "python3 x.py"]) == 2
    assert "at most 86400" in _error(capsys)


def _checkpoint(tmp_path: Path) -> Path:
    from helpers.checkpoints import random_checkpoint

    return random_checkpoint(tmp_path / "net").with_suffix("")


def test_a_huge_sparse_weights_file_is_refused_before_it_is_read(tmp_path):
    from manni_agents.ppo_agent import CheckpointError, load_checkpoint

    base = _checkpoint(tmp_path)
    with open(base.with_suffix(".safetensors"), "r+b") as f:
        f.truncate(1_500_000_000)  # sparse: 1.5 GB that take no disk
    with pytest.raises(CheckpointError, match="larger than") as info:
        load_checkpoint(base)
    assert "checksum" not in str(info.value)  # refused on its size, before its bytes were read and hashed


def test_a_huge_checkpoint_json_is_refused_before_it_is_read(tmp_path):
    from manni_agents.ppo_agent import MAX_META_BYTES, CheckpointError, load_checkpoint

    base = _checkpoint(tmp_path)
    meta = base.with_suffix(".json")
    text = meta.read_text()
    meta.write_text(text[:-2] + " " * (MAX_META_BYTES - len(text) + 1) + "}\n")  # one byte past the bound
    with pytest.raises(CheckpointError, match="larger than"):
        load_checkpoint(base)
    meta.write_text(text[:-2] + " " * (MAX_META_BYTES - len(text)) + "}\n")  # at the bound: read
    assert load_checkpoint(base)[1]["obs_size"] > 0
    with open(meta, "r+b") as f:
        f.truncate(300_000_000)
    with pytest.raises(CheckpointError, match="larger than"):
        load_checkpoint(base)


def test_a_checkpoint_name_too_long_is_a_checkpoint_error():
    from manni_agents.ppo_agent import CheckpointError, load_checkpoint

    with pytest.raises(CheckpointError, match="File name too long"):
        load_checkpoint(LONG)


@pytest.mark.parametrize("spec, message", [("ppo:{bad}", "metadata lacks"), ("ppo:{missing}", "no such checkpoint"),
                                           ("rule_based", "takes a ppo checkpoint"), (f"ppo:{LONG}", "too long")])
def test_train_init_from_a_bad_checkpoint_is_one_error_line(spec, message, tmp_path, capsys):
    pytest.importorskip("torch")
    from manni_train.ppo_vector import main as train_main

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "agent.json").write_text('{"format": "manni-ppo/1"}')
    (bad / "agent.safetensors").write_bytes(b"x")
    spec = spec.format(bad=bad, missing=tmp_path / "missing")
    with pytest.raises(SystemExit) as exit_:
        train_main(["--init-from", spec, "--runs-dir", str(tmp_path / "runs")])
    assert exit_.value.code == 2 and message in _error(capsys)
    assert not (tmp_path / "runs").exists()
