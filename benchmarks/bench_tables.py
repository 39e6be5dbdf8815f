"""Move latency of ``manni serve``'s tables under load, on loopback only.

    python benchmarks/bench_tables.py --tables 30 --seconds 120

Starts ``manni serve`` in a subprocess on a free 127.0.0.1 port, creates ``--tables`` tables of two
scripted people and one agent (``--agent``, default the shipped ``ppo``), and plays them all at
once: each scripted person is a WebSocket client making a random legal move (its own seeded
``numpy`` generator) whenever its seat is on turn. The latency of a move is the time from sending
it to receiving the server's push of the state with that move applied: the server's validation, the
agent's reply moves up to the next person's turn, and the push to every connection of the table.
Each table plays one game (``--target``, default 1: about one deal); the run stops after
``--seconds`` in any case. ``--watchers N`` first opens N spectator sockets on each table (they
only read, in a process of their own), so a move's push goes to N + 2 connections: the latency of a table
with many live sockets (``--tables 1 --watchers 199``: 201 sockets; beyond the server's 32
spectators a table takes, the server is started with that cap raised, for the benchmark only).
Reports the count, median, p95 (with a bootstrap 95% interval over the moves), p99 and max in
milliseconds, and the server's CPU time per timed move (what the machine's load does not move;
it includes the agents' moves and the pushes), as Markdown.

**Remote bots** (``--remote-bots K``, 1 to 3): each table has K seats for remote bots and ``--agent``
in the others, and each bot is an in-process WebSocket client speaking ``manni-bot/1`` (as
``manni bot connect`` relays it) that answers every ``act`` with a random legal action (its own
seeded generator), at once or after ``--think-ms``. Each table plays ``--games`` games one after
another (a new table for each, so the server makes and drops tables all run long), none started
after ``--seconds`` (a game under way plays to its end). The latency of a move is the time from a bot sending its action to the
table's next message that follows from it reaching one of the table's bots: the next ``act`` (of
whichever seat: the agents' replies come first), or the ``deal_end`` of the move's deal. The
server's database (its ``--db``, a temporary file) is then read: every move each bot sent must be
there, the same actions in the same order in that table's seat, and every deal a bot was told of
in the table's saved record; the run fails if any is missing (no move lost). The server's resident
memory (RSS) is sampled every :data:`RSS_EVERY` seconds and shown at a quarter, half, three
quarters and the end of the run.

    python benchmarks/bench_tables.py --remote-bots 2 --tables 50 --games 56 --seconds 600
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import multiprocessing.synchronize
import re
import select
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil
import websockets
from tqdm import tqdm

from manni_agents.bots.protocol import PROTOCOL
from manni_agents.play.web.tables import BOT

#: Seconds a remote bot waits for any one message and for its socket to open or close; seconds
#: between two samples of the server's memory.
READ_TIMEOUT, OPEN_TIMEOUT, RSS_EVERY = 30.0, 10.0, 0.5
#: Largest message a remote bot reads (the server's are at most 3,377 bytes: docs/bot-protocol.md).
BOT_MAX_BYTES = 65_536


def request(base: str, method: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read())


def choose(game: dict, rng: np.random.Generator) -> list[int]:
    """A random legal move as the page sends it (see tests/test_web_tables.py)."""
    cards = [h["action"] for h in game["hand"] if h["legal"]]
    select = game["select"]
    if select:
        n = select["max"] if select["exact"] else int(rng.integers(select["max"] + 1))
        picks = [int(c) for c in rng.choice(cards, size=n, replace=False)]
        return picks + ([select["done"]] if select["done"] is not None and n < select["max"] else [])
    moves = cards + [b["action"] for b in game["buttons"]]
    return [int(moves[int(rng.integers(len(moves)))])]


async def person(uri: str, token: str, rng: np.random.Generator, deadline: float, latencies: list[float]) -> int:
    """Play one seat until the game ends or the deadline; returns the refused moves (should be 0)."""
    refused = 0
    async with websockets.connect(uri, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token}))
        sent_at, sent_version = None, -1
        while time.monotonic() < deadline:
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic())))
            except (asyncio.TimeoutError, websockets.ConnectionClosed):
                break
            if message["type"] == "error":
                refused += 1
                sent_at = None
                continue
            if message["type"] != "state" or message["game"] is None:
                continue
            if sent_at is not None and message["version"] > sent_version:
                latencies.append(time.perf_counter() - sent_at)
                sent_at = None
            game = message["game"]
            if game["finished"]:
                break
            if game["your_turn"] and sent_at is None:
                sent_version = message["version"]
                sent_at = time.perf_counter()
                await ws.send(json.dumps({"type": "move", "actions": choose(game, rng)}))
    return refused


async def watcher(uri: str, ready: list[int], deadline: float) -> None:
    """A spectator: says watch, then reads every push until the deadline or the table's end."""
    async with websockets.connect(uri, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "watch"}))
        await ws.recv()  # welcome
        ready.append(1)
        while time.monotonic() < deadline:
            try:
                text = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic()))
            except (asyncio.TimeoutError, websockets.ConnectionClosed):
                return
            if '"finished":true' in text:
                return


def watch(uris: list[str], seconds: float, ready: multiprocessing.synchronize.Event) -> None:
    """Every spectator of the run, in a process of their own (their reading does not delay the
    people's event loop); ``ready`` is set once all are welcomed."""

    async def main() -> None:
        deadline, welcomed = time.monotonic() + seconds, []
        tasks = [asyncio.ensure_future(watcher(uri, welcomed, deadline)) for uri in uris]
        while len(welcomed) < len(uris) and not any(t.done() for t in tasks):
            await asyncio.sleep(0.05)
        ready.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())


async def run(base: str, tables: int, agent: str, variant: str, target: int, seconds: float, seed: int,
              watchers: int = 0) -> tuple[list, int]:
    seats = []
    for t in range(tables):
        table = request(base, "POST", "/api/tables", {"variant": variant, "target": target,
                                                      "seats": ["person", "person", agent]})
        for name in ("A", "B"):
            seats.append((table["id"], request(base, "POST", f"/api/tables/{table['id']}/seats", {"name": name})["token"]))
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    ws_base = base.replace("http://", "ws://")
    ready = multiprocessing.Event()
    watching = multiprocessing.Process(target=watch, args=(
        [f"{ws_base}/ws/tables/{table_id}" for table_id, _ in seats[::2] * watchers], seconds, ready))
    if watchers:
        watching.start()
        await asyncio.get_running_loop().run_in_executor(None, ready.wait)
    rngs = np.random.default_rng(seed).spawn(len(seats))
    refused = await asyncio.gather(*(person(f"{ws_base}/ws/tables/{table_id}", token, rng, deadline, latencies)
                                     for (table_id, token), rng in zip(seats, rngs)))
    if watchers:
        watching.join()
    return latencies, sum(refused)


def bootstrap_p95(ms: np.ndarray, rng: np.random.Generator, n: int = 2000) -> tuple[float, float]:
    """The 95% interval of the p95 of ``ms`` over ``n`` resamples, drawn a few at a time (about 8
    million values each: 190,000 moves resampled 2000 times at once would take 3 GB)."""
    rows = max(1, 8_000_000 // ms.size)
    p95 = np.concatenate([np.percentile(rng.choice(ms, size=(min(rows, n - done), ms.size), replace=True), 95, axis=1)
                          for done in range(0, n, rows)])
    return float(np.percentile(p95, 2.5)), float(np.percentile(p95, 97.5))


# ---------------------------------------------------------------------------------- remote bots
@dataclass(frozen=True)
class BotTables:
    """A remote-bot load: ``tables`` tables at once of ``seats``, each playing ``games`` games
    one after another (none started after ``seconds``), each bot thinking ``think`` seconds before
    each answer, its random actions drawn from ``seed``."""

    tables: int
    seats: list[str]
    variant: str
    target: int
    games: int
    seconds: float
    seed: int = 0
    think: float = 0.0


@dataclass
class Timing:
    """What a table's bots share: where the latencies go (seconds; every table's list), how long a
    bot thinks before it answers an ``act``, and the table's move in flight: when its bot sent it
    (``None``: none is) and the deal it is of."""

    latencies: list[float]
    think: float = 0.0
    sent_at: float | None = None
    deal: int = 0


@dataclass
class BotSeat:
    """One remote bot's game: its seat, every action it sent in order, the deals it was told of
    (``deal_end``), whether the server said ``bye``, and what went wrong, if anything."""

    seat: int | None = None
    actions: list[int] = field(default_factory=list)
    deals: int = 0
    finished: bool = False
    error: str | None = None


@dataclass
class TableRun:
    """One game at one table: the table's id and its remote bots."""

    table_id: str
    bots: list[BotSeat]


@dataclass
class BotLoad:
    """A remote-bot run: every table's game, each timed move's latency (seconds), and the server's
    RSS sampled as ``(monotonic time, bytes)``."""

    runs: list[TableRun]
    latencies: list[float]
    rss: list[tuple[float, int]]


@dataclass
class Stored:
    """What the server's database keeps: each table's moves by seat in the order played, and the
    deals of each table's saved record."""

    moves: dict[str, dict[int, list[int]]]
    deals: dict[str, int]


def bot_table(base: str, seats: list[str], variant: str, target: int) -> tuple[str, list[str]]:
    """A new table of ``seats`` with each seat for a remote bot joined: its id and the bots' tokens
    (the game starts at the last join)."""
    table = request(base, "POST", "/api/tables", {"variant": variant, "target": target, "seats": seats})
    joins = [request(base, "POST", f"/api/tables/{table['id']}/seats", {"name": "load-bot", "bot": True})
             for _ in range(seats.count(BOT))]
    return table["id"], [join["token"] for join in joins]


async def remote_bot(uri: str, token: str, rng: np.random.Generator, timing: Timing) -> BotSeat:
    """One remote bot at one table, from its hello to the server's ``bye`` or an error."""
    bot = BotSeat()
    try:
        async with websockets.connect(uri, max_size=BOT_MAX_BYTES, open_timeout=OPEN_TIMEOUT,
                                      close_timeout=OPEN_TIMEOUT) as ws:
            await _send(ws, {"type": "hello", "token": token})
            while not bot.finished and bot.error is None:
                message = json.loads(await asyncio.wait_for(ws.recv(), READ_TIMEOUT))
                await _take(ws, message, bot, rng, timing)
    except (asyncio.TimeoutError, OSError, websockets.WebSocketException) as err:
        bot.error = f"{type(err).__name__}: {err}"
    return bot


async def _take(ws, message: dict, bot: BotSeat, rng: np.random.Generator, timing: Timing) -> None:
    """One message from the server: it ends the timing of the table's move in flight if it follows
    from that move (an ``act``, or the ``deal_end`` of the move's deal); ``hello`` and ``act`` are
    answered (a random legal action, after the think time), deals counted, the end and errors kept."""
    kind = message["type"]
    if kind in ("act", "deal_end") and timing.sent_at is not None and message["deal"] >= timing.deal:
        timing.latencies.append(time.perf_counter() - timing.sent_at)
        timing.sent_at = None
    if kind == "welcome":
        bot.seat = message["seat"]
    elif kind == "hello":
        await _send(ws, {"type": "hello", "protocol": PROTOCOL, "name": "load-bot"})
    elif kind == "act":
        action = int(rng.choice(message["legal"]))
        if timing.think:
            await asyncio.sleep(timing.think)
        bot.actions.append(action)
        timing.sent_at, timing.deal = time.perf_counter(), message["deal"]
        await _send(ws, {"action": action})
    elif kind == "deal_end":
        bot.deals += 1
    elif kind == "bye":
        bot.finished = True
    elif kind == "error":
        bot.error = message["message"]


async def _send(ws, message: dict) -> None:
    """Send ``message`` within :data:`READ_TIMEOUT` seconds."""
    await asyncio.wait_for(ws.send(json.dumps(message)), READ_TIMEOUT)


async def _games_in_turn(base: str, load: BotTables, deadline: float, rng: np.random.Generator,
                         latencies: list[float], bar: tqdm) -> list[TableRun]:
    """``load.games`` games one after another, each at a new table, none started after ``deadline``."""
    runs = []
    for _ in range(load.games):
        if time.monotonic() >= deadline:
            break
        table_id, tokens = await asyncio.to_thread(bot_table, base, load.seats, load.variant, load.target)
        uri = base.replace("http://", "ws://") + f"/ws/tables/{table_id}"
        timing = Timing(latencies, load.think)
        bots = await asyncio.gather(*(remote_bot(uri, token, r, timing)
                                      for token, r in zip(tokens, rng.spawn(len(tokens)))))
        runs.append(TableRun(table_id, list(bots)))
        bar.update()
    return runs


async def sample_rss(process: psutil.Process, samples: list[tuple[float, int]], stop: asyncio.Event) -> None:
    """Append ``(monotonic time, RSS bytes)`` of ``process`` every :data:`RSS_EVERY` seconds until ``stop``."""
    while True:
        samples.append((time.monotonic(), process.memory_info().rss))
        try:
            await asyncio.wait_for(stop.wait(), RSS_EVERY)
            return
        except asyncio.TimeoutError:
            continue


async def bot_load(base: str, process: psutil.Process, load: BotTables) -> BotLoad:
    """``load`` played at the server ``base``, its process's RSS sampled meanwhile."""
    samples: list[tuple[float, int]] = []
    latencies: list[float] = []
    stop = asyncio.Event()
    sampler = asyncio.ensure_future(sample_rss(process, samples, stop))
    deadline = time.monotonic() + load.seconds
    try:
        with tqdm(total=load.tables * load.games, desc="games", unit="game", disable=None) as bar:
            places = await asyncio.gather(*(_games_in_turn(base, load, deadline, rng, latencies, bar)
                                            for rng in np.random.default_rng(load.seed).spawn(load.tables)))
    finally:
        stop.set()
        await sampler
    return BotLoad([run for place in places for run in place], latencies, samples)


def stored(db: str, table_ids: Iterable[str]) -> Stored:
    """The moves and record deals the database ``db`` keeps of ``table_ids``' tables."""
    from sqlalchemy import select

    from manni_agents.play.web.database import MOVES, Database, database_url

    wanted = set(table_ids)
    database = Database.open(database_url(db))
    try:
        moves: dict[str, dict[int, list[int]]] = {}
        with database.engine.connect() as c:
            rows = c.execute(select(MOVES.c.table_id, MOVES.c.seat, MOVES.c.action)
                             .where(MOVES.c.table_id.in_(wanted)).order_by(MOVES.c.table_id, MOVES.c.n))
            for row in rows:
                moves.setdefault(row.table_id, {}).setdefault(row.seat, []).append(row.action)
        deals = {t: len((database.game_record(t) or {"rounds": []})["rounds"]) for t in wanted}
    finally:
        database.close()
    return Stored(moves, deals)


def lost_moves(runs: list[TableRun], store: Stored) -> list[str]:
    """Every way ``store`` differs from what the bots did, one line each (none: no move lost): a
    seat whose kept moves are not the bot's, in the order sent; a deal the bot was told of that
    the table's saved record lacks (or the reverse); a bot that did not play to the ``bye``."""
    problems = []
    for run in runs:
        deals = store.deals.get(run.table_id, 0)
        for bot in run.bots:
            where = f"table {run.table_id} seat {bot.seat}"
            kept = store.moves.get(run.table_id, {}).get(bot.seat, [])
            if kept != bot.actions:
                others = " (other actions)" if len(kept) == len(bot.actions) else ""
                problems.append(f"{where}: the bot sent {len(bot.actions)} moves, the store keeps {len(kept)}{others}")
            if bot.deals != deals:
                problems.append(f"{where}: the bot was told of {bot.deals} deals, the saved record has {deals}")
            if bot.error is not None or not bot.finished:
                problems.append(f"{where}: {bot.error or 'no bye from the server'}")
    return problems


def rss_quarters(samples: list[tuple[float, int]]) -> list[int]:
    """The RSS sampled last at or before the start, a quarter, half, three quarters and the end of
    the sampled time."""
    start, end = samples[0][0], samples[-1][0]
    return [[rss for t, rss in samples if t <= start + f * (end - start)][-1] for f in (0, 0.25, 0.5, 0.75, 1)]


# ---------------------------------------------------------------------------------- the server and the report
#: Seconds the server may take to print its address.
START_TIMEOUT_S = 120.0


@contextlib.contextmanager
def serving(tables: int, watchers: int, records: str, db: str) -> Iterator[tuple[str, psutil.Process]]:
    """``manni serve`` on a free 127.0.0.1 port, its records in ``records`` and database ``db``, its
    caps raised to fit the load (the benchmark's clients all share one address): its URL and
    process, stopped (SIGTERM: a clean stop) on leaving."""
    serve = ["serve", "--port", "0", "--max-games", str(tables), "--tables-per-client", str(tables),
             "--records-dir", records, "--db", db]
    launch = ("import sys; from manni_agents.play.web import table_api; "
              f"table_api.MAX_WATCHERS = max(table_api.MAX_WATCHERS, {watchers}); "
              "table_api.SOCKETS_PER_CLIENT = table_api.MAX_SOCKETS; "
              "from manni_agents.play.web import app, connections; "
              "connections.CONNECTIONS_PER_CLIENT = app.MAX_CONNECTIONS; "
              "from manni_env.cli import main; sys.exit(main(sys.argv[1:]))")
    server = subprocess.Popen([sys.executable, "-c", launch, *serve], stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], START_TIMEOUT_S)
        line = server.stdout.readline() if ready else ""
        match = re.search(r"http://[^/]+", line)
        if match is None:
            raise SystemExit(f"the server did not start within {START_TIMEOUT_S:.0f} s: {line!r}")
        yield match.group(0), psutil.Process(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _cpu_seconds(times) -> float:
    return times.user + times.system


def _latency_row(ms: np.ndarray, seed: int) -> str:
    """``| median | p95 (95% CI) | p99 | max |`` of ``ms``."""
    low, high = bootstrap_p95(ms, np.random.default_rng(seed))
    return (f"| {np.median(ms):.1f} | {np.percentile(ms, 95):.1f} ({low:.1f}-{high:.1f}) "
            f"| {np.percentile(ms, 99):.1f} | {ms.max():.1f} |")


def report_bots(played: BotLoad, store: Stored, args: argparse.Namespace, wall: float, server_cpu: float) -> int:
    """Print the remote-bot run as Markdown; 1 if a move was lost (each way named), else 0."""
    if not played.latencies:
        raise SystemExit("no move was timed")
    ms = np.asarray(played.latencies) * 1000
    sent = sum(len(bot.actions) for run in played.runs for bot in run.bots)
    kept = sum(len(store.moves.get(run.table_id, {}).get(bot.seat, [])) for run in played.runs for bot in run.bots)
    every = sum(len(moves) for run in played.runs for moves in store.moves.get(run.table_id, {}).values())
    told = sum(run.bots[0].deals for run in played.runs)
    recorded = sum(store.deals.get(run.table_id, 0) for run in played.runs)
    agents = f" and {3 - args.remote_bots} x {args.agent}" if args.remote_bots < 3 else ""
    think = f"after {args.think_ms:g} ms" if args.think_ms else "at once"
    print(f"{args.tables} tables at once of {args.remote_bots} remote bots (random legal actions, each answered {think})"
          f"{agents}, {args.variant} (target {args.target}), {len(played.runs)} games ({args.games} a table, one after "
          f"another), loopback, {wall:.1f} s wall\n")
    print("| games | deals | moves timed | median ms | p95 ms (95% CI) | p99 ms | max ms | server CPU ms per move |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(played.runs)} | {recorded} | {ms.size} {_latency_row(ms, args.seed)} "
          f"{server_cpu * 1000 / max(ms.size, 1):.1f} |\n")
    rss = [f"{b / 2**20:.0f}" for b in (*rss_quarters(played.rss), max(b for _, b in played.rss))]
    print("| server RSS MiB | start | 25% | 50% | 75% | end | peak |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(played.rss)} samples | {' | '.join(rss)} |\n")
    problems = lost_moves(played.runs, store)
    if problems:
        print(f"MOVES LOST: {len(problems)} problems; the bots sent {sent} moves, the store keeps {kept} of their seats'")
        for problem in problems[:20]:
            print(f"- {problem}")
        return 1
    print(f"No move lost: the bots sent {sent} moves and the database keeps the same {kept}, in order, in their "
          f"tables' seats ({every} moves in all, the agents' included); the bots were told of {told} deals and the "
          f"saved records hold {recorded}.")
    return 0


def report_people(latencies: list[float], refused: int, args: argparse.Namespace, wall: float,
                  server_cpu: float) -> int:
    """Print the scripted people's run as Markdown."""
    if not latencies:
        raise SystemExit("no move was timed")
    ms = np.asarray(latencies) * 1000
    watching = f", {args.watchers} spectators each ({args.watchers + 2} sockets a table)" if args.watchers else ""
    print(f"{args.tables} tables of two scripted people and {args.agent}{watching}, {args.variant} (target {args.target}), "
          f"loopback, {wall:.1f} s wall, {refused} moves refused\n")
    print("| moves timed | median ms | p95 ms (95% CI) | p99 ms | max ms | server CPU ms per move |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {ms.size} {_latency_row(ms, args.seed)} {server_cpu * 1000 / ms.size:.1f} |")
    return 0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30, help="tables played at once (default 30)")
    parser.add_argument("--agent", default="ppo", help="the agent in each table's other seats (default ppo)")
    parser.add_argument("--variant", default="hornafjardar", help="variant (default hornafjardar)")
    parser.add_argument("--target", type=int, default=1, help="the game's target: 1 ends it after about one deal")
    parser.add_argument("--seconds", type=float, default=120.0,
                        help="stop after this long (remote bots: start no game after it; default 120)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--watchers", type=int, default=0, help="spectator sockets per table (default 0)")
    parser.add_argument("--remote-bots", type=int, default=0, metavar="K",
                        help="seats for remote bots per table, 1 to 3, instead of two scripted people (default 0)")
    parser.add_argument("--games", type=int, default=1,
                        help="with --remote-bots: games each table plays one after another (default 1)")
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="with --remote-bots: milliseconds a bot waits before each answer (default 0)")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 200 or args.seconds <= 0 or not 0 <= args.watchers <= 400:
        parser.error("--tables must be in 1..200, --watchers in 0..400 and --seconds positive")
    if not 0 <= args.remote_bots <= 3 or args.games < 1 or not 0 <= args.think_ms <= 10_000:
        parser.error("--remote-bots must be in 0..3, --games at least 1 and --think-ms in 0..10000")
    if args.remote_bots and args.watchers:
        parser.error("--watchers is for the people's tables, not --remote-bots")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    shape = BotTables(args.tables, [BOT] * args.remote_bots + [args.agent] * (3 - args.remote_bots), args.variant,
                      args.target, args.games, args.seconds, args.seed, args.think_ms / 1000)
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "load.sqlite3")
        with serving(args.tables, args.watchers, folder, db) as (base, process):
            start, cpu = time.perf_counter(), _cpu_seconds(process.cpu_times())
            if args.remote_bots:
                played = asyncio.run(bot_load(base, process, shape))
            else:
                latencies, refused = asyncio.run(run(base, args.tables, args.agent, args.variant, args.target,
                                                     args.seconds, args.seed, args.watchers))
            wall, server_cpu = time.perf_counter() - start, _cpu_seconds(process.cpu_times()) - cpu
        if not args.remote_bots:
            return report_people(latencies, refused, args, wall, server_cpu)
        store = stored(db, [run.table_id for run in played.runs])  # read after the server stopped
    return report_bots(played, store, args, wall, server_cpu)


if __name__ == "__main__":
    sys.exit(main())
