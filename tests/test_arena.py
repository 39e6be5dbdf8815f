"""The duplicate arena: determinism, duplicate structure, statistics, outputs, records, CLI."""

from __future__ import annotations

import json
import signal
from collections import Counter

import numpy as np
import pytest
from helpers.interrupts import alive, interrupt_when_written, manni

from manni_agents.evaluation.arena import SEATINGS, Interval, run_arena
from manni_agents.evaluation.results import write_outputs
from manni_env import make_rules
from manni_env.cli import main
from manni_env.records import read_records, validate_record


def _without_times(result: dict) -> dict:
    """The result dict minus wall-clock time per move, the one figure allowed to differ."""
    out = json.loads(json.dumps(result))
    for agent in out["agents"]:
        del agent["ms_per_move"]
    return out


def test_same_seed_same_result_and_workers_do_not_change_it():
    rules = make_rules("hornafjardar")
    one = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False)
    again = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False)
    two = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=11, progress=False, workers=2)
    assert _without_times(one.to_dict()) == _without_times(again.to_dict())
    assert one.games == again.games == two.games
    expected = _without_times(one.to_dict())
    expected["settings"]["workers"] = 2
    assert _without_times(two.to_dict()) == expected
    other = run_arena(["random", "rule_based", "random"], rules, deals=4, seed=12, progress=False)
    assert [g.score for g in other.games] != [g.score for g in one.games]


@pytest.mark.parametrize("variant", ["hornafjardar", "basic", "trjamann", "laugarvatn"])
def test_duplicate_structure_and_records(variant, tmp_path):
    path = tmp_path / "games.jsonl"
    result = run_arena(["random", "random", "rule_based"], make_rules(variant), deals=3, seed=5, records=path, progress=False)
    assert len(result.games) == 3 * 6
    for unit in range(3):
        games = [g for g in result.games if g.unit == unit]
        assert sorted(g.players for g in games) == sorted(SEATINGS)
        for seat in range(3):  # every player sits in every seat twice (once per order of the others)
            assert Counter(g.players[seat] for g in games) == {0: 2, 1: 2, 2: 2}
    records = read_records(path)
    assert len(records) == 18
    for n, record in enumerate(records):
        validate_record(record)
        unit, seating = divmod(n, 6)
        assert record["players"] == [["random", "random", "rule_based"][j] for j in SEATINGS[seating]]
        first = records[6 * unit]
        assert record["seed"] == first["seed"]  # the same deal under every seating
        assert record["rounds"][0]["hands"] == first["rounds"][0]["hands"]
        assert len(record["rounds"]) == 1 and record["final"] is None
    assert len({r["seed"] for r in records}) == 3


def test_statistics_pool_copies_and_are_consistent():
    result = run_arena(["random", "random", "rule_based"], make_rules("hornafjardar"), deals=6, seed=2, progress=False)
    stats = {a.spec: a for a in result.agents}
    assert [a.spec for a in result.agents] == ["random", "rule_based"]
    assert stats["random"].copies == 2 and stats["rule_based"].copies == 1
    # Hornafjarðarmanni deals are zero-sum: the seats' mean scores sum to zero
    assert 2 * stats["random"].deal_score.mean + stats["rule_based"].deal_score.mean == pytest.approx(0.0)
    for agent in result.agents:
        ci = agent.deal_score
        assert ci.low < ci.mean < ci.high
        assert agent.win_share is None
        assert agent.ordinal == pytest.approx(agent.mu - 3 * agent.sigma)
        assert agent.moves > 0 and agent.ms_per_move >= 0
    (pair,) = result.head_to_head
    assert (pair.a, pair.b) == ("random", "rule_based")
    assert pair.difference.mean == pytest.approx(stats["random"].deal_score.mean - stats["rule_based"].deal_score.mean)
    assert pair.difference.low < pair.difference.mean < pair.difference.high


def test_interval_is_the_normal_approximation():
    ci = Interval.of([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * (5 / 3) ** 0.5 / 2
    assert ci.mean == 2.5 and ci.low == pytest.approx(2.5 - half) and ci.high == pytest.approx(2.5 + half)
    assert Interval.of([3.0]) == Interval(3.0, None, None)


def test_games_mode_reports_win_share():
    rules = make_rules("hornafjardar", target=3)
    result = run_arena(["random", "rule_based", "random"], rules, deals=3, seed=4, progress=False, mode="games")
    assert all(g.win is not None and sum(g.win) == pytest.approx(1.0) for g in result.games)
    shares = {a.spec: a for a in result.agents}
    total = sum(a.copies * a.win_share.mean for a in result.agents)
    assert total == pytest.approx(1.0)
    assert shares["rule_based"].deal_score.mean > shares["random"].deal_score.mean
    assert any(g.deals > 1 for g in result.games)
    assert "win share" in result.to_markdown()


def test_outputs_are_written(tmp_path):
    result = run_arena(["random", "rule_based", "rule_based"], make_rules("basic"), deals=3, seed=1, progress=False)
    write_outputs(result, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "result.json").read_text())
    assert data["settings"]["agents"] == ["random", "rule_based", "rule_based"]
    assert data["settings"]["variant"] == "basic" and data["settings"]["units"] == 3
    markdown = (tmp_path / "out" / "result.md").read_text()
    assert "| rule_based | 2 |" in markdown and "| random − rule_based |" in markdown
    assert (tmp_path / "out" / "result.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rule_based_beats_random_clearly():
    result = run_arena(["rule_based", "random", "random"], make_rules("hornafjardar"), deals=40, seed=2026, progress=False)
    (pair,) = result.head_to_head
    assert (pair.a, pair.b) == ("rule_based", "random")
    assert pair.difference.low > 1.0, result.to_markdown()


@pytest.mark.parametrize(
    ("agents", "kwargs", "message"),
    [
        (["random", "random"], {}, "exactly 3 agent specs"),
        (["random"] * 3, {"mode": "tournament"}, "mode must be one of deals, games"),
        (["random"] * 3, {"deals": 0}, "deals must be an integer ≥ 1"),
        (["random"] * 3, {"seed": -1}, "seed must be an integer ≥ 0"),
        (["random"] * 3, {"workers": 0}, "workers must be an integer ≥ 1"),
    ],
)
def test_bad_arguments_are_rejected(agents, kwargs, message):
    settings = {"deals": 2, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_arena(agents, make_rules(), progress=False, **settings)


def test_unknown_agent_is_rejected_before_playing():
    with pytest.raises(ValueError, match="no_such_agent"):
        run_arena(["random", "no_such_agent", "random"], make_rules(), deals=2, seed=0, progress=False)


def test_cli_arena_prints_the_table_and_writes_files(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "games.jsonl"
    code = main(
        ["arena", "random", "rule_based", "random", "--variant", "trjamann", "--deals", "2", "--seed", "3",
         "--out", str(out), "--records", str(records), "--no-progress"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "**trjamann**" in printed and "| rule_based | 1 |" in printed
    assert {p.name for p in out.iterdir()} == {"result.json", "result.md", "result.png", "games.json"}
    assert len(read_records(records)) == 12


def _tiny_ppo_checkpoint(path, variant: str) -> str:
    """A random-weight ``ppo`` checkpoint (the arena only needs a loadable network)."""
    from manni_agents.ppo_agent import save_checkpoint
    from manni_env.observation import ObservationEncoder

    size = ObservationEncoder(make_rules(variant)).size
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(8, size)), np.zeros(8)), (rng.normal(size=(63, 8)), np.zeros(63))]
    save_checkpoint(path, layers, {"variant": variant, "history": "summary", "obs_size": size, "activation": "tanh"})
    return f"ppo:{path}"


def test_ppo_checkpoint_agents_play_in_workers(tmp_path):
    spec = _tiny_ppo_checkpoint(tmp_path / "tiny", "laugarvatn")
    rules = make_rules("laugarvatn")
    one = run_arena([spec, "rule_based", "rule_based"], rules, deals=2, seed=9, progress=False)
    two = run_arena([spec, "rule_based", "rule_based"], rules, deals=2, seed=9, progress=False, workers=2)
    assert one.games == two.games
    assert [a.spec for a in one.agents] == [spec, "rule_based"]


# ----------------------------------------------------------------------------- bad input, interrupts, outputs
def arena_error(capsys, *args: str) -> str:
    """The error line of ``manni arena ARGS``, which must stop with exit code 2 and no traceback."""
    with pytest.raises(SystemExit) as info:
        main(["arena", *args, "--no-progress"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err, err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--deals", "0"], "argument --deals: must be 1 or more, got 0"),
        (["--deals", "-5"], "argument --deals: must be 1 or more, got -5"),
        (["--workers", "0"], "argument --workers: must be 1 or more, got 0"),
        (["--seed", "-1"], "argument --seed: must be 0 or more, got -1"),
        (["--first-dealer", "True"], "argument --first-dealer: invalid int value: 'True'"),
    ],
)
def test_cli_rejects_bad_numbers(capsys, args, message):
    assert arena_error(capsys, "random", "random", "random", *args) == f"manni arena: error: {message}"


def test_cli_rejects_bad_agents_before_playing(tmp_path, capsys):
    records = tmp_path / "games.jsonl"
    spec = _tiny_ppo_checkpoint(tmp_path / "tiny", "hornafjardar")
    corrupt = _tiny_ppo_checkpoint(tmp_path / "corrupt", "hornafjardar")
    weights = tmp_path / "corrupt.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])
    for agents, message in [
        (["foo", "random", "random"], "unknown agent 'foo' in spec 'foo'; valid agents: "),
        (["pimc:worlds=abc", "random", "random"], "bad agent spec 'pimc:worlds=abc': option worlds='abc'"),
        ([corrupt, "random", "random"], f"{weights}: checksum mismatch"),
        (["ppo:" + str(tmp_path / "none"), "random", "random"], "none.json: no such checkpoint file"),
        ([spec, "random", "random", "--variant", "basic"], "trained for variant 'hornafjardar', cannot play 'basic'"),
        (["ppo:hornafjardar", "random", "random", "--variant", "basic"], "trained for variant 'hornafjardar', cannot play 'basic'"),
    ]:
        assert message in arena_error(capsys, *agents, "--records", str(records), "--out", str(tmp_path / "out"))
    assert not records.exists() and not (tmp_path / "out").exists()


def test_cli_checks_outputs_before_playing(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "games.jsonl"
    argv = ["random", "random", "rule_based", "--deals", "2", "--out", str(out), "--records", str(records)]
    assert main(["arena", *argv, "--no-progress"]) == 0
    capsys.readouterr()
    first = {name: (out / name).read_bytes() for name in ("result.json", "result.md", "result.png", "games.json")}
    assert (f"{out} already holds result.json, result.md, result.png, games.json; pass --force to overwrite them, "
            "or --resume to play on after an interrupted run") in arena_error(capsys, *argv, "--append")
    assert f"{records} already exists; pass --append" in arena_error(capsys, *argv, "--force")
    assert "--out: " + f"{records} exists and is not a directory" in arena_error(capsys, *argv[:5], "--out", str(records))
    assert f"--records: {out} is a directory" in arena_error(capsys, *argv[:5], "--records", str(out))
    assert {name: (out / name).read_bytes() for name in first} == first and len(read_records(records)) == 12
    assert main(["arena", *argv, "--seed", "1", "--force", "--append", "--no-progress"]) == 0
    assert json.loads((out / "result.json").read_text())["settings"]["seed"] == 1
    assert len(read_records(records)) == 24


def test_result_files_are_replaced_atomically(tmp_path, monkeypatch):
    from manni_agents.evaluation.arena import ArenaResult

    result = run_arena(["random", "random", "rule_based"], make_rules(), deals=2, seed=1, progress=False)
    write_outputs(result, tmp_path)
    before = (tmp_path / "result.png").read_bytes()

    def broken_plot(self, path):
        open(path, "wb").write(b"half a png")
        raise RuntimeError("disk full")

    monkeypatch.setattr(ArenaResult, "plot", broken_plot)
    with pytest.raises(RuntimeError, match="disk full"):
        write_outputs(result, tmp_path)
    assert (tmp_path / "result.png").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.json", "result.json", "result.md", "result.png"]


def test_interrupt_keeps_the_finished_units_and_their_records(tmp_path, monkeypatch):
    import manni_agents.evaluation.arena as arena

    play = arena._play_units

    def interrupted_at_unit_3(players, specs, rules, seed, mode, start, stop, want_records):
        if start == 3:
            raise KeyboardInterrupt
        return play(players, specs, rules, seed, mode, start, stop, want_records)

    monkeypatch.setattr(arena, "_play_units", interrupted_at_unit_3)
    path = tmp_path / "games.jsonl"
    with pytest.raises(arena.ArenaInterrupted) as info:
        run_arena(["random", "random", "rule_based"], make_rules(), deals=10, seed=3, records=path, progress=False)
    stop = info.value
    assert (stop.units, stop.requested) == (3, 10) and isinstance(stop, KeyboardInterrupt)
    assert stop.result.settings["units"] == 3 and stop.result.settings["units_requested"] == 10
    assert "3 duplicate deals (interrupted: 3 of 10)" in stop.result.to_markdown()
    monkeypatch.undo()
    full = run_arena(["random", "random", "rule_based"], make_rules(), deals=3, seed=3, progress=False)
    assert stop.result.games == full.games
    assert [r["seed"] for r in read_records(path)] == [arena.unit_seed(3, u) for u in range(3) for _ in range(6)]


@pytest.mark.parametrize("mode, workers", [("deals", 1), ("games", 1), ("deals", 2)])
def test_a_resumed_run_plays_only_the_units_after_the_earlier_ones_and_equals_an_uninterrupted_one(
        mode, workers, tmp_path, monkeypatch):
    """An interrupted run's result, as it is or read back from its JSON and games, resumes: only the
    units after it are played and recorded, and the numbers equal a run never interrupted."""
    import manni_agents.evaluation.arena as arena

    agents, rules = ["random", "rule_based", "random"], make_rules("basic")
    whole = run_arena(agents, rules, deals=5, seed=7, mode=mode, progress=False)
    earlier = run_arena(agents, rules, deals=2, seed=7, mode=mode, progress=False)
    read_back = arena.ArenaResult.from_dict(json.loads(json.dumps(earlier.to_dict())), earlier.games)
    if workers == 1:  # (a spawned worker does not see this process's patches)
        played = []
        play = arena._play_units

        def recorded(players, specs, rules, seed, mode, start, stop, want_records):
            played.extend(range(start, stop))
            return play(players, specs, rules, seed, mode, start, stop, want_records)

        monkeypatch.setattr(arena, "_play_units", recorded)
    path = tmp_path / "games.jsonl"
    resumed = run_arena(agents, rules, deals=5, seed=7, mode=mode, progress=False, earlier=read_back, records=path,
                        workers=workers)
    if workers == 1:
        assert played == [2, 3, 4]
    assert [r["seed"] for r in read_records(path)] == [arena.unit_seed(7, u) for u in range(2, 5) for _ in range(6)]
    assert resumed.games == whole.games
    expected = _without_times(whole.to_dict())
    expected["settings"]["workers"] = workers
    assert _without_times(resumed.to_dict()) == expected
    moves = {a.spec: a.moves for a in resumed.agents}
    assert moves == {a.spec: a.moves for a in whole.agents}


@pytest.mark.parametrize("change, message", [
    ({"seed": 8}, "of other agents, rules, mode or seed"),
    ({"agents": ["random", "random", "rule_based"]}, "of other agents, rules, mode or seed"),
    ({"deals": 2}, "holds 2 units; it needs 1 to 1 of the 2 asked for"),
    ({"games": "shuffled"}, "are not units 0 to 1 under all 6 seatings, in order"),
])
def test_resuming_from_a_result_that_does_not_fit_is_refused(change, message):
    earlier = run_arena(["random", "rule_based", "random"], make_rules(), deals=2, seed=7, progress=False)
    if change.get("games"):
        earlier.games.reverse()
    arguments = {"agents": ["random", "rule_based", "random"], "seed": 7, "deals": 4, **change}
    with pytest.raises(ValueError, match=message):
        run_arena(arguments["agents"], make_rules(), deals=arguments["deals"], seed=arguments["seed"], progress=False,
                  earlier=earlier)


@pytest.mark.parametrize("group, signum", [(True, signal.SIGINT), (False, signal.SIGINT), (False, signal.SIGTERM)],
                         ids=["ctrl-c", "kill-int", "kill"])
def test_sigint_stops_a_run_with_workers_promptly(tmp_path, group, signum):
    """The workers stop at once, the finished deals' records and results are kept and reported (also
    on SIGTERM: ``kill``, ``timeout``, ``docker stop``)."""
    import time

    out, records = tmp_path / "out", tmp_path / "games.jsonl"
    argv = manni("arena", "random", "random", "random", "--deals", "100000", "--workers", "2",
                 "--records", str(records), "--out", str(out), "--no-progress")
    run = interrupt_when_written(argv, records, group=group, signum=signum)
    assert run.code == 130 and run.seconds < 10, run
    assert len(run.children) >= 2  # the workers (and multiprocessing's resource tracker)
    deadline = time.monotonic() + 5
    while any(map(alive, run.children)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(alive, run.children))
    units = json.loads((out / "result.json").read_text())["settings"]["units"]
    assert run.err == (f"manni arena: interrupted after {units} of 100000 deals; kept their {6 * units} games in "
                       f"{records} and their results in {out}; rerun with --resume to play the rest\n")
    assert f"{units} duplicate deals (interrupted: {units} of 100000)" in run.out
    assert len(read_records(records)) == 6 * units


def test_stopping_a_pool_is_bounded_when_its_terminate_never_returns():
    """Pool.terminate can wait forever on a lock that a worker it stopped held: stop_pool still
    returns after its timeout, the pool's workers killed."""
    import multiprocessing
    import threading
    import time

    from manni_agents.evaluation.arena import stop_pool

    class StuckPool:
        def __init__(self) -> None:
            self._pool = [multiprocessing.get_context("spawn").Process(target=time.sleep, args=(60,), daemon=True)]
            self._pool[0].start()
            self.terminate = threading.Event().wait  # never set: a terminate that never returns

    pool = StuckPool()
    started = time.monotonic()
    stop_pool(pool, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 5
    pool._pool[0].join(5)
    assert pool._pool[0].exitcode == -signal.SIGKILL


# ----------------------------------------------------------------------------- games.json and --resume
def test_games_json_holds_every_game_and_a_league_cells_older_file_reads_as_deals(tmp_path):
    from manni_agents.evaluation.results import kept_result, read_games

    rules, results = make_rules("hornafjardar", target=3), {}
    for mode in ("deals", "games"):
        results[mode] = run_arena(["random", "rule_based", "random"], rules, deals=2, seed=4, progress=False, mode=mode)
        write_outputs(results[mode], tmp_path / mode)
        assert read_games(tmp_path / mode) == (["random", "rule_based", "random"], results[mode].games)
        assert kept_result(tmp_path / mode).games == results[mode].games
    assert any(g.deals > 1 for g in results["games"].games)  # (games mode: the deals and win shares are kept)
    data = json.loads((tmp_path / "deals" / "games.json").read_text())
    older = {**data, "fields": data["fields"][:4], "games": [row[:4] for row in data["games"]]}
    (tmp_path / "deals" / "games.json").write_text(json.dumps(older))
    assert read_games(tmp_path / "deals") == (["random", "rule_based", "random"], results["deals"].games)
    assert [(g.deals, g.win) for g in results["deals"].games] == [(1, None)] * 12
    assert read_games(tmp_path / "none") == ([], [])


ARENA = ["random", "rule_based", "random", "--variant", "basic", "--deals", "5", "--seed", "7", "--no-progress"]


def _units_played(monkeypatch, stop_at: int | None = None) -> list[int]:
    """The units the arena plays (in this process: one worker) from now on, listed as they start;
    with ``stop_at``, Ctrl-C when that unit starts."""
    import manni_agents.evaluation.arena as arena

    played, play = [], arena._play_units

    def listed(players, specs, rules, seed, mode, start, stop, want_records):
        if start == stop_at:
            raise KeyboardInterrupt
        played.extend(range(start, stop))
        return play(players, specs, rules, seed, mode, start, stop, want_records)

    monkeypatch.setattr(arena, "_play_units", listed)
    return played


def _interrupted_arena(monkeypatch, capsys, *args: str) -> str:
    """``manni arena ARENA ARGS`` stopped by Ctrl-C after 2 of its 5 units: its last error line."""
    with monkeypatch.context() as patch:
        _units_played(patch, stop_at=2)
        assert main(["arena", *ARENA, *args]) == 130
    return capsys.readouterr().err.strip().splitlines()[-1]


def _files(where) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(where.iterdir())}


@pytest.mark.parametrize("extra", [[], ["--mode", "games", "--target", "3"]], ids=["deals", "games"])
def test_an_interrupted_arena_resumed_equals_one_never_interrupted(tmp_path, capsys, monkeypatch, extra):
    """``--resume`` plays only the units after the kept ones; result, games and records then equal
    an uninterrupted run's (but for the time per move)."""
    out, records = tmp_path / "out", tmp_path / "games.jsonl"
    argv = [*extra, "--out", str(out), "--records", str(records)]
    unit = "games" if extra else "deals"
    assert _interrupted_arena(monkeypatch, capsys, *argv) == (
        f"manni arena: interrupted after 2 of 5 {unit}; kept their 12 games in {records} and their results in {out}; "
        "rerun with --resume to play the rest")
    assert json.loads((out / "result.json").read_text())["settings"]["units_requested"] == 5
    played = _units_played(monkeypatch)
    assert main(["arena", *ARENA, *argv, "--resume"]) == 0
    assert played == [2, 3, 4]
    assert capsys.readouterr().out.startswith(f"resuming after 2 of 5 {unit} kept in {out}\n")
    fresh, fresh_records = tmp_path / "fresh", tmp_path / "fresh.jsonl"
    assert main(["arena", *ARENA, *extra, "--out", str(fresh), "--records", str(fresh_records)]) == 0
    resumed, whole = (json.loads((where / "result.json").read_text()) for where in (out, fresh))
    assert "units_requested" not in resumed["settings"] and _without_times(resumed) == _without_times(whole)
    assert (out / "games.json").read_bytes() == (fresh / "games.json").read_bytes()
    assert "interrupted" not in (out / "result.md").read_text()
    assert records.read_bytes() == fresh_records.read_bytes()  # every game once, in order
    assert len(read_records(records)) == 30


def test_resume_refuses_what_it_cannot_continue_and_leaves_the_run_as_it_is(tmp_path, capsys, monkeypatch):
    out, records, other = tmp_path / "out", tmp_path / "games.jsonl", tmp_path / "other.jsonl"
    argv = ["--out", str(out), "--records", str(records)]
    _interrupted_arena(monkeypatch, capsys, *argv)
    kept, held = _files(out), records.read_bytes()
    older = tmp_path / "older"
    older.mkdir()
    for name in ("result.json", "result.md", "result.png"):  # as an older manni arena left an interrupted run
        (older / name).write_bytes(kept[name])
    other.write_bytes(held + held.splitlines(keepends=True)[-1])  # the last game twice
    rerun = ["random", "rule_based", "random", "--variant", "basic", "--seed", "7"]
    settings = "pass --force instead of --resume to replace it, or choose another --out"
    for args, message in [
        (["--seed", "8"], f"{out} holds a result of other settings: seed 7 (asked: 8); {settings}"),
        (["--target", "5", "--mode", "games"],
         f"{out} holds a result of other settings: mode deals (asked: games), target 10 (asked: 5); {settings}"),
        (["--variant", "trjamann"],
         f"{out} holds a result of other settings: variant basic (asked: trjamann); {settings}"),
        (["--deals", "2"], f"{out} already keeps 2 deals of the 5 its run asked for; pass a --deals above 2 to play on"),
        (["--records", str(tmp_path / "none.jsonl")], f"argument --records: {tmp_path / 'none.jsonl'} holds 0 games, "
         "not the 12 of the 2 deals kept; pass the interrupted run's --records file, or none"),
        (["--records", str(other)], f"argument --records: {other} holds 13 games, not the 12 of the 2 deals kept"),
        (["--force"], "argument --resume: not allowed with argument --force"),
    ]:
        assert message in arena_error(capsys, *rerun, "--deals", "5", *argv, *args, "--resume")
    line = arena_error(capsys, "random", "random", "rule_based", "--variant", "basic", "--seed", "7", *argv, "--resume")
    assert "seed" not in line and "agents random rule_based random (asked: random random rule_based)" in line
    line = arena_error(capsys, *rerun, "--deals", "5", "--out", str(older), "--resume")
    assert line == (f"manni arena: error: argument --resume: {older} holds an interrupted result without its games.json "
                    "(written by an older manni arena), which cannot be resumed; pass --force instead of --resume "
                    "to play it afresh")
    assert arena_error(capsys, *rerun, "--resume") == ("manni arena: error: argument --resume: needs --out DIR, "
                                                       "the directory of the run to resume")
    assert _files(out) == kept and records.read_bytes() == held and len(_files(older)) == 3
    assert not (tmp_path / "none.jsonl").exists()


def test_resume_plays_into_an_empty_out_and_prints_a_complete_one(tmp_path, capsys, monkeypatch):
    """A script may always pass ``--resume``: a new ``--out`` is played, a complete one not again."""
    out = tmp_path / "out"
    argv = ["random", "rule_based", "random", "--variant", "basic", "--deals", "2", "--no-progress", "--out", str(out)]
    assert main(["arena", *argv, "--resume"]) == 0
    kept = _files(out)
    assert set(kept) == {"result.json", "result.md", "result.png", "games.json"}
    table = capsys.readouterr().out.split("\n\nwrote ")[0]
    played = _units_played(monkeypatch)
    assert main(["arena", *argv, "--resume"]) == 0
    assert played == [] and _files(out) == kept
    said = f"{out} already holds the complete result of these 2 deals; nothing to play"
    assert capsys.readouterr().out == f"{table}\n\n{said}\n"
    assert ("holds a result of other settings: 2 deals (asked: 3)"
            in arena_error(capsys, *argv, "--deals", "3", "--resume"))
