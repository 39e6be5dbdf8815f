"""``benchmarks/bench_tables.py --remote-bots`` at a tiny scale: every move the remote bots sent is
in the server's database, in order, and a move missing there is found (no timing)."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("websockets")

from helpers.scripts import load_benchmark  # noqa: E402

bench = load_benchmark("bench_tables")


def test_three_tables_of_remote_bots_lose_no_move(monkeypatch, capsys):
    monkeypatch.setattr(bench, "READ_TIMEOUT", 10.0)  # a stalled table fails in 10 s
    assert bench.main(["--remote-bots", "2", "--tables", "3", "--games", "1", "--agent", "random",
                       "--variant", "basic", "--seconds", "60"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | " in out and "No move lost: the bots sent" in out, out
    sent, kept = out.split("the bots sent ")[1].split(" moves and the database keeps the same ")
    assert int(sent) > 30 and kept.startswith(sent + ",")


def test_a_move_missing_from_the_database_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "READ_TIMEOUT", 10.0)
    db = str(tmp_path / "load.sqlite3")
    with bench.serving(2, 0, str(tmp_path), db) as (base, process):
        load = asyncio.run(bench.bot_load(base, process, bench.BotTables(2, [bench.BOT] * 3, "basic", 1, 1, 60.0)))
    ids = [run.table_id for run in load.runs]
    assert len(ids) == 2 and all(len(run.bots) == 3 for run in load.runs)
    assert bench.lost_moves(load.runs, bench.stored(db, ids)) == []
    table_id, seat = ids[1], load.runs[1].bots[0].seat
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM moves WHERE table_id = ? AND n = (SELECT max(n) FROM moves WHERE table_id = ? AND "
                  "seat = ?)", (table_id, table_id, seat))
    lost = bench.lost_moves(load.runs, bench.stored(db, ids))
    sent = len(load.runs[1].bots[0].actions)
    assert lost == [f"table {table_id} seat {seat}: the bot sent {sent} moves, the store keeps {sent - 1}"]
