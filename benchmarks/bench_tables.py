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
Reports the count, median, p95 (with a bootstrap 95% interval over the moves) and max in
milliseconds, and the server's CPU time per timed move (what the machine's load does not move;
it includes the agents' moves and the pushes), as Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import multiprocessing.synchronize
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np
import psutil
import websockets


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
    samples = rng.choice(ms, size=(n, ms.size), replace=True)
    p95 = np.percentile(samples, 95, axis=1)
    return float(np.percentile(p95, 2.5)), float(np.percentile(p95, 97.5))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30, help="tables played at once (default 30)")
    parser.add_argument("--agent", default="ppo", help="the agent in each table's third seat (default ppo)")
    parser.add_argument("--variant", default="hornafjardar", help="variant (default hornafjardar)")
    parser.add_argument("--target", type=int, default=1, help="the game's target: 1 ends it after about one deal")
    parser.add_argument("--seconds", type=float, default=120.0, help="stop after this long in any case (default 120)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--watchers", type=int, default=0, help="spectator sockets per table (default 0)")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 200 or args.seconds <= 0 or not 0 <= args.watchers <= 400:
        parser.error("--tables must be in 1..200, --watchers in 0..400 and --seconds positive")
    serve = ["serve", "--port", "0", "--max-games", str(args.tables), "--tables-per-client", str(args.tables)]
    # the server's caps raised to fit the load (the benchmark's clients all share one address)
    launch = ("import sys; from manni_agents.play.web import table_api; "
              f"table_api.MAX_WATCHERS = max(table_api.MAX_WATCHERS, {args.watchers}); "
              "table_api.SOCKETS_PER_CLIENT = table_api.MAX_SOCKETS; "
              "from manni_agents.play.web import app, connections; "
              "connections.CONNECTIONS_PER_CLIENT = app.MAX_CONNECTIONS; "
              "from manni_env.cli import main; sys.exit(main(sys.argv[1:]))")
    with tempfile.TemporaryDirectory() as records:
        server = subprocess.Popen([sys.executable, "-c", launch, *serve, "--records-dir", records],
                                  stdout=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            match = re.search(r"http://[^/]+", line)
            if match is None:
                raise SystemExit(f"the server did not start: {line!r}")
            start, cpu = time.perf_counter(), psutil.Process(server.pid).cpu_times()
            latencies, refused = asyncio.run(run(match.group(0), args.tables, args.agent, args.variant, args.target,
                                                 args.seconds, args.seed, args.watchers))
            wall, after = time.perf_counter() - start, psutil.Process(server.pid).cpu_times()
            server_cpu = after.user + after.system - cpu.user - cpu.system
        finally:
            server.terminate()
            server.wait(timeout=30)
    if not latencies:
        raise SystemExit("no move was timed")
    ms = np.asarray(latencies) * 1000
    low, high = bootstrap_p95(ms, np.random.default_rng(args.seed))
    watching = f", {args.watchers} spectators each ({args.watchers + 2} sockets a table)" if args.watchers else ""
    print(f"{args.tables} tables of two scripted people and {args.agent}{watching}, {args.variant} (target {args.target}), "
          f"loopback, {wall:.1f} s wall, {refused} moves refused\n")
    print("| moves timed | median ms | p95 ms (95% CI) | max ms | server CPU ms per move |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {ms.size} | {np.median(ms):.1f} | {np.percentile(ms, 95):.1f} ({low:.1f}-{high:.1f}) | {ms.max():.1f} "
          f"| {server_cpu * 1000 / ms.size:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
