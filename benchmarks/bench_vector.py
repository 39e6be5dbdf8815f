"""Vector-env benchmark: agent-steps/s with observations and masks, batched vs one game at a time.

Run ``python benchmarks/bench_vector.py`` (the OpenSpiel rows need ``pip install -e ".[peers]"``).
One process; each row is measured ``--repeats`` times for ``--seconds`` of this process's CPU time,
the rows taking turns in each round, and the median is shown (CPU rather than wall time, so other
work on a shared machine disturbs the numbers less; numpy uses one thread here). Rows:

- ``vector env N=…``: :class:`manni_env.vector.VectorManni` stepping N games of each variant in
  lockstep with the compiled kernels (and one row of the same kernels run by Python,
  ``backend="python"``, at a small N); every step returns ``(N, obs_size)`` observations and
  ``(N, 63)`` masks, and a uniformly random legal action per game is drawn from the mask
  (``argmax((1 + random) * mask)``: a random number 0.0 cannot pick an illegal action). The rate
  counts the CPU time inside ``step`` (the environment's own cost, as the OpenSpiel rows count the game's); the notes
  give the rate of the whole loop including that numpy action choice. One agent-step = one
  decision of one game.
- ``manni AEC env``: the PettingZoo ``agent_iter`` loop with observations and masks
  (``benchmarks/bench_speed.py``'s runner), first variant only.
- ``OpenSpiel skat``: random play with and without the acting player's observation tensor.

``--profile`` adds a cProfile summary of the largest vector run of the first variant (where the time goes).
``--json OUT`` writes the results.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.metadata
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_speed import Chooser, environment, manni_aec, measure_once, open_spiel  # noqa: E402

from manni_env.rules import VARIANTS, make_rules  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402

SIZES = (1, 64, 1024, 4096)
PYTHON_N = 16  # batch size of the row that runs the kernels uncompiled


class VectorRow:
    """Keeps one vector env warm; each :meth:`measure` plays on for ``seconds`` CPU-seconds and
    returns (agent-steps/s inside ``step`` only, agent-steps/s of the whole loop including the
    random legal action choice)."""

    def __init__(self, variant: str, n: int, backend: str, seed: int = 0):
        self.n = n
        self.venv = VectorManni(make_rules(variant), n, backend=backend)
        self.rng = np.random.default_rng(seed)
        _, self.mask, _ = self.venv.reset(seed)
        self.measure(0.0, 100 if backend == "numba" else 5)  # warm-up: compilation (or the cache), allocations

    def measure(self, seconds: float, min_steps: int = 20) -> tuple[float, float]:
        steps, in_step = 0, 0.0
        start = time.process_time()
        while True:
            actions = ((self.rng.random(self.mask.shape, np.float32) + 1) * self.mask).argmax(1)
            t = time.process_time()
            _, self.mask, *_ = self.venv.step(actions)
            in_step += time.process_time() - t
            steps += self.n
            if time.process_time() - start >= seconds and steps >= min_steps * self.n:
                return steps / in_step, steps / (time.process_time() - start)


def profile_vector(variant: str, n: int, steps: int, backend: str, top: int = 12) -> str:
    """cProfile of ``steps`` vector steps; the functions with the most own time, as text."""
    venv = VectorManni(make_rules(variant), n, backend=backend)
    rng = np.random.default_rng(0)
    _, mask, _ = venv.reset(0)
    profiler = cProfile.Profile()
    for step in range(100 + steps):  # the first 100 steps warm up (compilation or the cache, allocations)
        if step == 100:
            profiler.enable()
        _, mask, *_ = venv.step(((rng.random(mask.shape, np.float32) + 1) * mask).argmax(1))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per row; the median is shown")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS),
                        help="Manni variants of the vector rows (default: all)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="batch sizes N")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the largest N")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    first = args.variants[0]
    # name -> (measure(seconds) -> (rate, loop rate or None), notes); rows take turns in each round
    rows: dict[str, tuple] = {}
    for variant in args.variants:
        for n in args.sizes:
            rows[f"vector env N={n} ({variant})"] = (VectorRow(variant, n, "numba").measure,
                                                     "obs + mask for all N games each step")
    rows[f"vector env N={PYTHON_N} ({first}, uncompiled)"] = (VectorRow(first, PYTHON_N, "python").measure,
                                                             "the same kernels run by Python")
    for i, (name, make, notes) in enumerate((
        (f"manni AEC env ({first})", manni_aec(first), "agent_iter loop, obs + mask"),
        ("OpenSpiel skat + obs", open_spiel("skat", "observation"), "observation_tensor each step"),
        ("OpenSpiel skat", open_spiel("skat", None), "no obs"),
    )):
        try:
            runner = make(Chooser(np.random.default_rng([0, i])))
            runner()
        except ImportError:
            rows[name] = (None, "not installed (pip install -e '.[peers]')")
            continue
        rows[name] = ((lambda seconds, runner=runner: (measure_once(runner, seconds, None)[0], None)), notes)
    rates: dict[str, list[tuple]] = {name: [] for name, (fn, _) in rows.items() if fn is not None}
    for r in range(args.repeats):
        for name in rates:
            rates[name].append(rows[name][0](args.seconds))
        print(f"  round {r + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    results = []
    for name, (_, notes) in rows.items():
        if name not in rates:
            results.append((name, None, notes))
            continue
        rate = statistics.median(r[0] for r in rates[name])
        if rates[name][0][1] is not None:
            notes += f"; {statistics.median(r[1] for r in rates[name]):,.0f}/s with the random action choice"
        results.append((name, rate, notes))
    rows = results

    ref = next((r for name, r, _ in rows if name == "OpenSpiel skat + obs"), None)
    env = environment()
    numba = f", numba {importlib.metadata.version('numba')}"
    print(f"Agent-steps per CPU-second (median of {args.repeats} x {args.seconds:g} CPU-s, rows taking turns), "
          f"one process, CPU: {env['cpu']}, Python {env['python']}, numpy {env['numpy']}{numba}; "
          f"1-minute load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after the measurements\n")
    print("| row | agent-steps/s | × OpenSpiel skat + obs | notes |\n|---|---:|---:|---|")
    for name, rate, notes in rows:
        ratio = f"{rate / ref:.1f}" if rate and ref else "-"
        print(f"| {name} | {'-' if rate is None else f'{rate:,.0f}'} | {ratio} | {notes} |")
    if args.profile:
        n = max(args.sizes)
        text = profile_vector(first, n, 100, "numba")
        print(f"\ncProfile of 100 steps at N={n} ({first}):\n```\n{text}```")
    if args.json:
        Path(args.json).write_text(json.dumps([{"row": a, "steps_per_s": b, "notes": c} for a, b, c in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
