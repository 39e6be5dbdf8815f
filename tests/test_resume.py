"""``manni train --resume`` never loses what a run kept: a finished run says so, an interrupted
final arena is played again, a run with a policy but no resume state is refused, and corrupted or
foreign run directories get one error line (a fuzz of run directories), each leaving the kept
files as they were."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock

torch = pytest.importorskip("torch")

from manni_train import ppo_vector, resume  # noqa: E402
from manni_train.networks import Actor, Critic  # noqa: E402
from manni_train.ppo_vector import Args, main, train  # noqa: E402

TINY = dict(num_envs=16, num_steps=24, hidden=[32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, torch_threads=1, progress_bar=False)
OBS = 616  # the observation size of the default variant's summary history


def kept(run: Path) -> dict[str, str]:
    """The digest of every file a run keeps (what resuming must not overwrite)."""
    return {name: hashlib.sha256((run / name).read_bytes()).hexdigest() if (run / name).is_file() else "not a file"
            for name in resume.KEPT if (run / name).exists()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished tiny run (trained, exported, its final arena done)."""
    root = tmp_path_factory.mktemp("runs")
    return train(Args(runs_dir=str(root), run_name="done", total_steps=200, **TINY)).run_dir


@pytest.fixture
def run(finished, tmp_path) -> Path:
    """A copy of the finished run to change."""
    return Path(shutil.copytree(finished, tmp_path / "run"))


def resume_run(run: Path, capsys) -> tuple[int, str, str]:
    code = main(["--resume", str(run)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_finished_run_says_it_is_finished_and_keeps_everything(run, capsys):
    before = kept(run)
    code, out, err = resume_run(run, capsys)
    assert code == 0 and "is finished" in out and "nothing to resume" in out and not err
    assert kept(run) == before


@pytest.mark.parametrize("where", ["--run-name", "--out"])
def test_a_new_run_into_a_kept_run_is_refused_and_writes_nothing(run, where, capsys):
    """The same --run-name twice (or a second terminal) would train from step 0 over a kept run."""
    before, args_json = kept(run), (run / "args.json").read_bytes()
    named = ["--runs-dir", str(run.parent), "--run-name", run.name] if where == "--run-name" else ["--out", str(run)]
    assert main([*named, "--total-steps", "200", "--num-envs", "16", "--no-progress-bar"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "holds a run already" in lines[0] and f"--resume {run}" in lines[0], err
    assert kept(run) == before and (run / "args.json").read_bytes() == args_json


@pytest.mark.parametrize("how", ["named", "resume"])
def test_a_run_another_process_is_training_is_refused_and_left_alone(run, how, capsys):
    """Two terminals on one run directory, before its first files are kept or while it is resumed."""
    fresh = run.parent / "fresh"
    fresh.mkdir()
    target = run if how == "resume" else fresh
    before, listing = kept(target), sorted(target.iterdir())
    listing.append(target / resume.LOCK_FILE)  # (the other process's)
    argv = ["--resume", str(run)] if how == "resume" else ["--out", str(fresh), "--total-steps", "200",
                                                            "--num-envs", "16", "--no-progress-bar"]
    with FileLock(target / resume.LOCK_FILE, timeout=0):  # (another process's lock: a second open file)
        assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "is being trained by another manni train" in lines[0], lines
    assert kept(target) == before and sorted(target.iterdir()) == sorted(listing)


def test_an_interrupted_final_arena_resumes_the_arena_not_the_training(tmp_path, monkeypatch, capsys):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(resume, "final_arena", stop)
    with pytest.raises(KeyboardInterrupt):
        train(Args(runs_dir=str(tmp_path), run_name="run", total_steps=200, **TINY))
    run = tmp_path / "run"
    assert "play the arena again with manni train --resume" in capsys.readouterr().err
    assert json.loads((run / resume.META).read_text())["phase"] == "arena"
    before = kept(run)
    played = []
    monkeypatch.setattr(resume, "final_arena", lambda spec, args, run_dir, bar: played.append(spec) or {})
    monkeypatch.setattr(ppo_vector, "collect_demonstrations", stop)  # no warm start: it is not trained again
    code, out, _ = resume_run(run, capsys)
    assert code == 0 and played == [f"ppo:{run / 'agent'}"] and "Trained in" in out
    assert kept(run) == before  # the policy and the history as they were
    assert json.loads((run / resume.META).read_text())["phase"] == "done"


def test_a_stop_signal_in_the_final_arena_keeps_the_run_in_one_line_with_its_exit_code(tmp_path, monkeypatch, capsys):
    """SIGTERM in the final arena (whose workers turn it into their own interruption) says so in one
    line and exits with 143, the run ready to play its arena again; before training, the same code."""
    from manni_agents.evaluation.arena import ArenaInterrupted
    from manni_env.interrupts import Stopped

    def stopped_arena(*args, **kwargs):
        try:
            raise Stopped(signal.SIGTERM)
        except KeyboardInterrupt:
            raise ArenaInterrupted(0, 10, None) from None

    monkeypatch.setattr(resume, "final_arena", stopped_arena)
    args = Args(runs_dir=str(tmp_path), run_name="run", total_steps=200, **TINY)
    assert resume.command(train, args, "manni train") == 128 + signal.SIGTERM
    err = capsys.readouterr().err.strip()
    assert err.startswith("stopped by SIGTERM in the final arena: the policy is ppo:") and "\n" not in err
    assert json.loads((tmp_path / "run" / resume.META).read_text())["phase"] == "arena"

    def stopped_early(args):
        raise Stopped(signal.SIGHUP)

    early = Args(runs_dir=str(tmp_path), run_name="early", total_steps=200, **TINY)
    assert resume.command(stopped_early, early, "manni train") == 128 + signal.SIGHUP
    assert capsys.readouterr().err == "manni train: stopped by SIGHUP\n"


def test_a_finished_run_of_an_older_release_is_finished_too(run, capsys):
    (run / resume.META).unlink()
    (run / "arena_final.json").write_text("{}")  # an older release's finished run: no phase, its arena written
    before = kept(run)
    code, out, _ = resume_run(run, capsys)
    assert code == 0 and "is finished" in out and kept(run) == before


@pytest.mark.parametrize("damage", ["missing", "garbage", "empty"])
def test_a_kept_policy_without_a_readable_resume_state_is_refused(run, damage, capsys):
    if damage == "missing":
        (run / resume.META).unlink()
    else:
        (run / resume.META).write_bytes(b"\x00{garbage" if damage == "garbage" else b"")
    before = kept(run)
    code, out, err = resume_run(run, capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert ("no resume state" if damage == "missing" else "cannot read resume.json") in err
    assert kept(run) == before


def test_resume_of_an_empty_name_is_an_error_not_a_fresh_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["--resume", ""])
    assert exit_.value.code == 2 and "--resume needs the directory" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("path", ["n" * 300, "d/" * 3000])
def test_a_path_too_long_is_named_as_such_not_blamed_on_args_json(path, capsys):
    assert main(["--resume", path]) == 2
    err = capsys.readouterr().err
    assert "File name too long" in err and "args.json" not in err
    assert len(err.splitlines()) == 1 and len(err) < 300


def _ppo_state(run: Path, hidden: int = 32, **progress) -> None:
    """An interrupted-in-ppo resume state for ``run`` (networks of ``hidden`` units)."""
    actor, critic = Actor(OBS, [hidden], "relu"), Critic(OBS, [hidden], "relu")
    resume.save(run, resume.Progress(phase="ppo", steps=100, **progress), actor, critic, None, torch.Generator(),
                np.random.default_rng(0))


def test_a_ppo_state_resumes_and_only_then_writes(run, capsys):
    """The fuzz below refuses damaged states; this one, undamaged, is taken (so the refusals are
    about the damage)."""
    _ppo_state(run)
    args = resume.resumed(Args(resume=str(run)))
    assert args.total_steps == 200 and resume.read(run)[0].steps == 100


def test_a_run_saved_before_overlap_existed_resumes_without_it(run):
    _ppo_state(run)
    saved = json.loads((run / "args.json").read_text())
    assert resume.resumed(Args(resume=str(run))).overlap == saved["overlap"]
    del saved["overlap"]
    (run / "args.json").write_text(json.dumps(saved))
    assert not resume.resumed(Args(resume=str(run))).overlap


def test_a_run_saved_before_anneal_lr_to_existed_keeps_its_decay_to_zero(run):
    _ppo_state(run)
    saved = json.loads((run / "args.json").read_text())
    saved["variant"], saved["anneal_lr_to"] = "trjamann", 0.5
    (run / "args.json").write_text(json.dumps(saved))
    assert resume.resumed(Args(resume=str(run))).anneal_lr_to == 0.5
    del saved["anneal_lr_to"]  # not Trjámann's default of now: the schedule the run started with
    (run / "args.json").write_text(json.dumps(saved))
    assert resume.resumed(Args(resume=str(run))).anneal_lr_to == 0.0


def test_a_run_directory_of_the_older_name_resumes_where_it_is(finished, tmp_path, capsys):
    """Runs were named ``<variant>_ppovec_s<seed>_<time>`` before the names followed ``--trainer
    vector``: such a directory resumes, and the run goes on in it."""
    old = Path(shutil.copytree(finished, tmp_path / "runs" / "hornafjardar_ppovec_s1_20261201_040839"))
    _edit(old / "args.json", run_name=old.name, runs_dir=str(old.parent))
    _ppo_state(old)
    code, out, err = resume_run(old, capsys)
    assert code == 0 and "Trained in" in out and "error" not in err
    assert json.loads((old / resume.META).read_text())["phase"] == "done"
    assert [p.name for p in old.parent.iterdir()] == [old.name]  # no new run directory beside it


DAMAGES = {
    "args.json garbage": lambda run: (run / "args.json").write_bytes(b"\xff\xfe not json"),
    "args.json a list": lambda run: (run / "args.json").write_text("[1, 2]"),
    "args.json nested deep": lambda run: (run / "args.json").write_text("[" * 100_000),
    "args.json of another trainer": lambda run: (run / "args.json").write_text(json.dumps({"n_envs": 4, "policy": "x"})),
    "args.json bad value": lambda run: _edit(run / "args.json", total_steps="many"),
    "args.json negative": lambda run: _edit(run / "args.json", total_steps=-5),
    "args.json a directory": lambda run: ((run / "args.json").unlink(), (run / "args.json").mkdir()),
    "args.json huge": lambda run: (run / "args.json").write_text(" " * 2_000_000 + "{}"),
    "resume.json unknown phase": lambda run: _edit(run / resume.META, phase="cooling"),
    "resume.json negative steps": lambda run: _edit(run / resume.META, steps=-1),
    "resume.json string steps": lambda run: _edit(run / resume.META, steps="100"),
    "resume.json a list": lambda run: (run / resume.META).write_text("[]"),
    "resume.json foreign field": lambda run: _edit(run / resume.META, phase="ppo", optimizer_groups=None),
    "ppo state without tensors": lambda run: _edit(run / resume.META, phase="ppo"),
    "tensors of other networks": lambda run: _ppo_state(run, hidden=64),
    "tensors truncated": lambda run: (_ppo_state(run), _truncate(run / resume.STATE)),
    "tensors garbage": lambda run: (_ppo_state(run), (run / resume.STATE).write_bytes(b"\x10" * 64)),
    "numpy state foreign": lambda run: (_ppo_state(run), _edit(run / resume.META, numpy_rng={"bit_generator": "x"})),
    "history.json garbage": lambda run: (_ppo_state(run), (run / "history.json").write_text("{{{")),
    "history.json an object": lambda run: (_ppo_state(run), (run / "history.json").write_text("{}")),
    "init_from a number": lambda run: _edit(run / resume.META, phase="arena", init_from=3),
}


def _edit(path: Path, **changes) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_corrupted_or_foreign_run_directories_get_one_error_line(run, damage, capsys):
    """The fuzz of run directories: each damage, one error line, exit code 2, nothing overwritten."""
    DAMAGES[damage](run)
    before = kept(run)
    code, out, err = resume_run(run, capsys)
    assert code == 2 and not out, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and err.startswith("manni_train"), err
    assert str(run) in err
    assert kept(run) == before


RESUME_BUDGET = 40


def _mutate(rng: np.random.Generator, run: Path) -> None:
    """One random damage to one file of a run with a ppo resume state."""
    name = str(rng.choice(["args.json", resume.META, resume.STATE, "history.json"]))
    path = run / name
    data = bytearray(path.read_bytes())
    kind = int(rng.integers(6))
    if kind == 0:
        path.write_bytes(rng.bytes(int(rng.integers(0, 400))))
    elif kind == 1:
        path.write_bytes(bytes(data[: int(rng.integers(0, len(data)))]))
    elif kind == 2:
        for _ in range(int(rng.integers(1, 8))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
        path.write_bytes(bytes(data))
    elif kind == 3 and name.endswith(".json") and isinstance(json.loads(data), dict):
        fields = sorted(json.loads(data))
        values = [None, -1, 2**70, "x", [], {}, True, 1.5]
        _edit(path, **{str(rng.choice(fields)): values[int(rng.integers(len(values)))]})
    elif kind == 4:
        path.unlink()
    else:
        path.unlink()
        path.mkdir()


def test_resume_directory_fuzz_within_a_fixed_budget(finished, tmp_path):
    """Random damage to a run's files: resuming either takes the state (as train() does before it
    writes anything: the arguments, the phase, the history, the tensors) or refuses with one
    :class:`ResumeError` line; the kept files are never changed."""
    from helpers.fuzzing import clear, tally

    rng = np.random.default_rng(5)
    for i in range(RESUME_BUDGET):
        run = Path(shutil.copytree(finished, tmp_path / f"run{i}"))
        _ppo_state(run)
        _mutate(rng, run)
        before = kept(run)
        try:
            args = resume.resumed(Args(resume=str(run)))
            progress, _ = resume.read(run)
            if progress.phase == "ppo":
                resume.load(run, Actor(OBS, args.hidden, args.activation), Critic(OBS, args.hidden, args.activation),
                            torch.Generator(), np.random.default_rng(0))
            refused = False
        except resume.ResumeError as err:
            assert clear(err) and str(run) in str(err), err
            refused = True
        assert kept(run) == before
        tally("manni train --resume", refused)


def test_run_files_are_read_up_to_their_bound_and_refused_past_it(run, monkeypatch):
    _ppo_state(run)
    meta = run / resume.META
    text = meta.read_text().rstrip()
    meta.write_text(text + " " * (resume.MAX_META_BYTES - len(text)))  # at the bound: read
    assert resume.read(run)[0].phase == "ppo"
    meta.write_text(text + " " * (resume.MAX_META_BYTES + 1 - len(text)))
    with pytest.raises(resume.ResumeError, match="larger than 1,000,000 bytes"):
        resume.read(run)
    meta.write_text(text)
    history = (run / "history.json").read_bytes()
    monkeypatch.setattr(resume, "MAX_HISTORY_BYTES", len(history))
    assert resume.read(run)[1] == json.loads(history)
    monkeypatch.setattr(resume, "MAX_HISTORY_BYTES", len(history) - 1)
    with pytest.raises(resume.ResumeError, match="cannot read history.json"):
        resume.read(run)
