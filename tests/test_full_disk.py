"""A disk that fills up mid-write: each command keeps the previous good file (or the whole lines
written before), says so in one line and exits with code 2, no traceback.

The full disk is a file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored): a write past it
writes what fits and then fails, as ``ENOSPC`` does (the error is ``EFBIG``, "File too large")."""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import subprocess
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")

from helpers.interrupts import manni  # noqa: E402
from manni_env import files  # noqa: E402
from manni_env.records import read_records, validate_record, write_records  # noqa: E402


def _limited(limit: int):
    def start() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return start


def run_full(argv: list[str], limit: int) -> subprocess.CompletedProcess:
    """``argv`` in a subprocess whose files cannot grow past ``limit`` bytes."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, preexec_fn=_limited(limit))


@contextlib.contextmanager
def full_disk(limit: int):
    """This process's files cannot grow past ``limit`` bytes for the block."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


def one_error_line(err: str) -> str:
    """The one error line of ``err`` (other lines may report progress)."""
    lines = [line for line in err.splitlines() if "error" in line or "Error" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_simulate_keeps_whole_games_only(tmp_path):
    whole = tmp_path / "whole.jsonl"
    base = ["simulate", "--agents", "random", "random", "random", "--variant", "basic", "--target", "1", "--seed", "3",
            "--no-progress"]
    assert subprocess.run(manni(*base, "--games", "2", "--records", str(whole)), capture_output=True).returncode == 0
    first, second = whole.read_bytes().splitlines(keepends=True)
    records = tmp_path / "full.jsonl"
    done = run_full(manni(*base, "--games", "2", "--records", str(records)), len(first) + len(second) // 2)
    assert done.returncode == 2
    assert "kept 1 game written before" in one_error_line(done.stderr)
    assert records.read_bytes() == first  # no partial second line
    assert [validate_record(r) or r for r in read_records(records)]


def test_write_records_cuts_off_the_line_it_could_not_finish(tmp_path):
    path = tmp_path / "games.jsonl"
    write_records(path, [{"a": 1}])
    with full_disk(path.stat().st_size + 10), pytest.raises(OSError):
        write_records(path, [{"b": "x" * 100}])
    assert path.read_text() == '{"a":1}\n'


def test_arena_out_on_a_full_disk_keeps_the_previous_results(tmp_path):
    out = tmp_path / "out"
    base = ["arena", "random", "random", "random", "--variant", "basic", "--deals", "2", "--no-progress",
            "--out", str(out)]
    assert subprocess.run(manni(*base), capture_output=True).returncode == 0
    before = digests(out)
    done = run_full(manni(*base, "--force", "--seed", "9"), 600)
    assert done.returncode == 2, done.stderr
    assert "cannot write the results" in one_error_line(done.stderr) and "previous files are kept" in done.stderr
    assert digests(out) == before  # no partial file left either


def test_replace_atomically_keeps_every_previous_file_when_one_write_fails(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.bin"
    files.write_text(a, "old a")
    files.write_bytes(b, b"old b")
    with full_disk(100), pytest.raises(OSError):
        files.replace_atomically((a, lambda p: p.write_text("new a")), (b, lambda p: p.write_bytes(b"x" * 1000)))
    assert a.read_text() == "old a" and b.read_bytes() == b"old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]


torch = pytest.importorskip("torch")
# --no-overlap: the file-size limit that stands in for a full disk would also cap the rollout
# process's shared memory, which lives in RAM, not on the disk
TINY = ["--num-envs", "16", "--num-steps", "24", "--hidden", "32", "--eval-every", "0", "--eval-deals", "4",
        "--bc-samples", "0", "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar", "--no-overlap"]


def test_training_on_a_full_disk_ends_with_one_error_line(tmp_path, capsys):
    from manni_env.cli import main

    with full_disk(20_000):  # args.json fits; the 80 kB policy does not
        code = main(["train", "--runs-dir", str(tmp_path), "--run-name", "run", "--total-steps", "384", *TINY])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert "File too large" in line and "kept whole" in line and "agent.safetensors" in line
    assert json.loads((tmp_path / "run" / "args.json").read_text())["total_steps"] == 384
    assert not (tmp_path / "run" / "agent.safetensors").exists()
    assert not [p for p in (tmp_path / "run").iterdir() if "partial" in p.name]


def test_ctrl_c_with_room_for_the_policy_but_not_the_resume_state_says_what_was_kept(tmp_path, capsys, monkeypatch):
    from manni_train import ppo_vector

    updates = []
    original = ppo_vector.PPOLearner.update

    def update(self, batch, lr, minibatches=None):
        updates.append(1)
        if len(updates) == 2:
            raise KeyboardInterrupt
        return original(self, batch, lr, minibatches)

    monkeypatch.setattr(ppo_vector.PPOLearner, "update", update)
    with full_disk(150_000), pytest.raises(KeyboardInterrupt):  # the policy fits, the resume state does not
        tiny = vars(ppo_vector.parse_args(ppo_vector.Args, TINY))
        ppo_vector.train(ppo_vector.Args(**{**tiny, "runs_dir": str(tmp_path), "run_name": "run", "total_steps": 10_000}))
    err = capsys.readouterr().err
    assert "interrupted after" in err and "policy saved as" in err and "resume state not saved" in err
    assert "Traceback" not in err
    run = tmp_path / "run"
    assert (run / "agent.safetensors").exists() and not (run / "resume.safetensors").exists()
