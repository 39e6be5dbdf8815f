"""Speed benchmark: random-legal-play agent-steps per second of Manni and of peer games.

Run ``python benchmarks/bench_speed.py`` (peers need ``pip install -e ".[peers]"``). Everything runs
in this one process: each row plays whole games with uniformly random legal actions for a fixed time
budget (``--seconds``), ``--repeats`` times (the rows take turns in each round), and reports the median
agent-steps per second of this process's CPU time (CPU time rather than wall time, so that other
work on a shared machine disturbs the numbers less). An agent-step is one decision of a player;
dealing and other chance events cost time but are not counted. Rows:

- ``manni AEC env``: the canonical PettingZoo loop (``env.last()``, a random action from
  ``obs["action_mask"]``, ``env.step``) with observations and masks, per variant; ``raw_env``: the
  same loop without PettingZoo's checking wrappers;
- ``manni engine``: ``GameState.legal_actions`` / ``apply`` alone (no observations), per variant;
- peers: PettingZoo classic ``leduc_holdem_v4`` / ``texas_holdem_v4`` (same AEC loop) and OpenSpiel
  ``skat`` / ``hearts`` with and without an observation tensor of the acting player each step
  (OpenSpiel's hearts has no observation tensor; it provides the information-state tensor).

A peer that is not installed shows as "not installed". ``--json OUT`` also writes the results.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

#: Plays one game with random legal actions and returns the number of agent-steps it took.
GameRunner = Callable[[], int]


class Chooser:
    """Uniform random choice from a sequence, drawing from an owned generator in blocks (cheap, so
    the benchmark measures the game rather than the random number calls; every row uses it)."""

    def __init__(self, rng: np.random.Generator, block: int = 4096):
        self.rng = rng
        self.block = block
        self._u: list[float] = []

    def __call__(self, seq):
        if not self._u:
            self._u = self.rng.random(self.block).tolist()
        return seq[int(self._u.pop() * len(seq))]

    def seed(self) -> int:
        """A fresh game seed."""
        return int(self.rng.integers(2**31))


@dataclass
class Row:
    name: str
    steps_per_s: float | None  # None: not measured (peer not installed or failed)
    notes: str
    games: int = 0  # games played in all repeats


@dataclass
class Bench:
    """One table row: ``make(choose)`` returns a :data:`GameRunner`, or raises ImportError."""

    name: str
    make: Callable[[Chooser], GameRunner]
    notes: str = ""


def measure_once(run_game: GameRunner, seconds: float, max_games: int | None) -> tuple[float, int]:
    """Agent-steps per CPU-second of whole games played for ``seconds`` CPU-seconds (or
    ``max_games`` games), and the number of games."""
    steps, n = 0, 0
    start = time.process_time()
    while True:
        steps += run_game()
        n += 1
        elapsed = time.process_time() - start
        if elapsed >= seconds or (max_games is not None and n >= max_games):
            return steps / elapsed, n


# ----------------------------------------------------------------------------- Manni
def manni_aec(variant: str, raw: bool = False) -> Callable[[Chooser], GameRunner]:
    """``manni_v0.env`` (or, with ``raw``, ``manni_v0.raw_env`` without PettingZoo's checking wrappers)."""

    def make(choose: Chooser) -> GameRunner:
        from manni_env import manni_v0

        return aec_runner((manni_v0.raw_env if raw else manni_v0.env)(variant=variant, episode="game"), choose)

    return make


def manni_engine(variant: str) -> Callable[[Chooser], GameRunner]:
    def make(choose: Chooser) -> GameRunner:
        from manni_env import GameState, make_rules

        rules = make_rules(variant)

        def run() -> int:
            state = GameState(rules, seed=choose.seed())
            steps = 0
            while not state.finished:
                state.apply(choose(state.legal_actions()))
                steps += 1
            return steps

        return run

    return make


# ----------------------------------------------------------------------------- peers
def aec_runner(env, choose: Chooser) -> GameRunner:
    """Games of a PettingZoo AEC env in the canonical ``agent_iter`` loop. The env is seeded at its
    first reset only (as in a training loop; reseeding rebuilds some envs, e.g. RLCard's)."""
    seeded = False

    def run() -> int:
        nonlocal seeded
        env.reset(seed=None if seeded else choose.seed())
        seeded = True
        steps = 0
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                action = int(choose(np.flatnonzero(obs["action_mask"])))
                steps += 1
            env.step(action)
        return steps

    return run


def pettingzoo_classic(module: str) -> Callable[[Chooser], GameRunner]:
    def make(choose: Chooser) -> GameRunner:
        import importlib

        return aec_runner(importlib.import_module(f"pettingzoo.classic.{module}").env(), choose)

    return make


def open_spiel(game_name: str, tensor: str | None) -> Callable[[Chooser], GameRunner]:
    """OpenSpiel random play; ``tensor`` ("observation" | "information_state" | None) is computed for
    the acting player at every decision."""

    def make(choose: Chooser) -> GameRunner:
        import pyspiel

        game = pyspiel.load_game(game_name)

        def run() -> int:
            state = game.new_initial_state()
            steps = 0
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(choose(outcomes)[0])  # uniform in skat and hearts
                    continue
                player = state.current_player()
                if tensor == "observation":
                    state.observation_tensor(player)
                elif tensor == "information_state":
                    state.information_state_tensor(player)
                state.apply_action(choose(state.legal_actions()))
                steps += 1
            return steps

        return run

    return make


def benches() -> list[Bench]:
    """The rows of the table, in order. Later benchmarks append their own :class:`Bench`."""
    return [
        Bench("manni AEC env (hornafjardar)", manni_aec("hornafjardar"), "agent_iter loop, obs + mask"),
        Bench("manni AEC env (basic)", manni_aec("basic"), "agent_iter loop, obs + mask"),
        Bench("manni AEC raw_env (hornafjardar)", manni_aec("hornafjardar", raw=True),
              "same loop without PettingZoo's checking wrappers"),
        *(Bench(f"manni engine ({v})", manni_engine(v), "legal_actions + apply, no obs")
          for v in ("hornafjardar", "basic", "trjamann", "laugarvatn")),
        Bench("leduc_holdem_v4", pettingzoo_classic("leduc_holdem_v4"), "PettingZoo classic, agent_iter loop"),
        Bench("texas_holdem_v4", pettingzoo_classic("texas_holdem_v4"), "PettingZoo classic, agent_iter loop"),
        Bench("OpenSpiel skat", open_spiel("skat", None), "no obs"),
        Bench("OpenSpiel skat + obs", open_spiel("skat", "observation"), "observation_tensor each step"),
        Bench("OpenSpiel hearts", open_spiel("hearts", None), "no obs"),
        Bench("OpenSpiel hearts + obs", open_spiel("hearts", "information_state"),
              "information_state_tensor each step (hearts has no observation tensor)"),
    ]


# ----------------------------------------------------------------------------- report
def environment() -> dict:
    """Python, numpy, CPU and peer versions, for the record."""

    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "cpu": cpu,
        "platform": platform.platform(),
        **{dist: version(dist) for dist in ("manni-env", "pettingzoo", "rlcard", "open_spiel")},
    }


def to_markdown(rows: list[Row], reference: str = "leduc_holdem_v4") -> str:
    ref = next((r.steps_per_s for r in rows if r.name == reference), None)
    lines = [f"| name | agent-steps/s | relative to {reference.split('_')[0]} | notes |", "|---|---:|---:|---|"]
    for r in rows:
        if r.steps_per_s is None:
            lines.append(f"| {r.name} | – | – | {r.notes} |")
            continue
        rel = f"{r.steps_per_s / ref:.2f}×" if ref else "–"
        lines.append(f"| {r.name} | {r.steps_per_s:,.0f} | {rel} | {r.notes} |")
    return "\n".join(lines)


def run(bench_list: list[Bench], seconds: float, repeats: int, games: int | None, seed: int) -> list[Row]:
    """Measure every row ``repeats`` times, the rows taking turns in each round (so that a change of
    load on the machine affects all rows alike), and report the median of each."""
    runners: dict[int, GameRunner] = {}
    rows = []
    for i, bench in enumerate(bench_list):
        try:
            runners[i] = bench.make(Chooser(np.random.default_rng([seed, i])))
            runners[i]()  # warm-up: imports, caches, first allocations
        except ImportError as exc:
            rows.append(Row(bench.name, None, f"not installed ({exc})"))
        else:
            rows.append(Row(bench.name, None, bench.notes))
    rates: dict[int, list[float]] = {i: [] for i in runners}
    for r in range(repeats):
        for i, runner in runners.items():
            rate, n = measure_once(runner, seconds, games)
            rates[i].append(rate)
            rows[i].games += n
        print(f"  round {r + 1}/{repeats} done", file=sys.stderr, flush=True)
    for i, values in rates.items():
        rows[i].steps_per_s = statistics.median(values)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget of one measurement (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per row; the median is reported")
    parser.add_argument("--games", type=int, default=None,
                        help="also stop a measurement after this many games (default: time budget only)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play (default 0)")
    parser.add_argument("--only", default=None, help="only rows whose name contains this text")
    parser.add_argument("--json", metavar="OUT", default=None, help="also write the results as JSON to OUT")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1 or (args.games is not None and args.games < 1):
        parser.error("--seconds must be > 0, --repeats and --games >= 1")

    bench_list = [b for b in benches() if args.only is None or args.only in b.name]
    env = environment()
    rows = run(bench_list, args.seconds, args.repeats, args.games, args.seed)
    print(f"Python {env['python']} ({env['implementation']}), numpy {env['numpy']}, CPU: {env['cpu']}")
    print(f"{args.repeats} × {args.seconds:g} CPU-s per row, median shown; random legal play, seed {args.seed}\n")
    print(to_markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "settings": vars(args), "rows": [asdict(r) for r in rows]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
