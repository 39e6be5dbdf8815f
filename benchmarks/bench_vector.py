"""Vector-env benchmark: agent-steps/s with observations and masks, batched vs one game at a time.

Run ``python benchmarks/bench_vector.py`` (the OpenSpiel rows need ``pip install -e ".[peers]"``).
One process, one measurement after the other, each for ``--seconds`` of this process's CPU time
(CPU rather than wall time, so other work on a shared machine disturbs the numbers less; torch and
numpy use one thread here). Rows:

- ``vector env N=…``: :class:`manni_env.vector.VectorManni` stepping N games in lockstep, with the
  numpy backend and, when numba is installed, the numba backend; every step
  returns ``(N, obs_size)`` observations and ``(N, 63)`` masks, and a uniformly random legal
  action per game is drawn from the mask (``argmax(random * mask)``). The rate counts the CPU time
  inside ``step`` (the environment's own cost, as the OpenSpiel rows count the game's); the notes
  give the rate of the whole loop including that numpy action choice. One agent-step = one
  decision of one game.
- ``manni AEC env``: the PettingZoo ``agent_iter`` loop with observations and masks
  (``benchmarks/bench_speed.py``'s runner).
- ``OpenSpiel skat``: random play with and without the acting player's observation tensor.

``--profile`` adds a cProfile summary of the largest vector run (where the time goes).
``--json OUT`` writes the results.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_speed import Chooser, manni_aec, measure, open_spiel  # noqa: E402

from manni_env.rules import make_rules  # noqa: E402
from manni_env.vector import VectorManni, resolve_backend  # noqa: E402

SIZES = (1, 64, 1024, 4096)


def vector_rate(variant: str, n: int, seconds: float, backend: str, seed: int = 0) -> tuple[float, float]:
    """Agent-steps per CPU-second of the vector env with N games: (inside ``step`` only, whole loop
    including the random legal action choice)."""
    venv = VectorManni(make_rules(variant), n, backend=backend)
    rng = np.random.default_rng(seed)
    obs, mask, _ = venv.reset(seed)
    for _ in range(20):  # warm-up: first deal blocks, allocations
        obs, mask, *_ = venv.step((rng.random(mask.shape, np.float32) * mask).argmax(1))
    steps, in_step = 0, 0.0
    start = time.process_time()
    while time.process_time() - start < seconds:
        actions = (rng.random(mask.shape, np.float32) * mask).argmax(1)
        t = time.process_time()
        obs, mask, *_ = venv.step(actions)
        in_step += time.process_time() - t
        steps += n
    return steps / in_step, steps / (time.process_time() - start)


def profile_vector(variant: str, n: int, steps: int, backend: str, top: int = 12) -> str:
    """cProfile of ``steps`` vector steps; the functions with the most own time, as text."""
    venv = VectorManni(make_rules(variant), n, backend=backend)
    rng = np.random.default_rng(0)
    obs, mask, _ = venv.reset(0)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        obs, mask, *_ = venv.step((rng.random(mask.shape, np.float32) * mask).argmax(1))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per row (default 3)")
    parser.add_argument("--variant", default="hornafjardar", help="Manni variant of the vector rows")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="batch sizes N")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the largest N")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    rows: list[tuple[str, float | None, str]] = []
    backends = ["numpy"] + (["numba"] if resolve_backend("auto") == "numba" else [])
    for backend in backends:
        for n in args.sizes:
            env_rate, loop_rate = vector_rate(args.variant, n, args.seconds, backend)
            rows.append((f"vector env N={n} ({args.variant}, {backend})", env_rate,
                         f"obs + mask for all N games each step; {loop_rate:,.0f}/s with the random action choice"))
    choose = Chooser(np.random.default_rng(0))
    for name, make, notes in (
        (f"manni AEC env ({args.variant})", manni_aec(args.variant), "agent_iter loop, obs + mask"),
        ("OpenSpiel skat + obs", open_spiel("skat", "observation"), "observation_tensor each step"),
        ("OpenSpiel skat", open_spiel("skat", None), "no obs"),
    ):
        try:
            rate, _ = measure(make(choose), args.seconds, 1, None)
        except ImportError:
            rate, notes = None, "not installed (pip install -e '.[peers]')"
        rows.append((name, rate, notes))

    ref = next((r for name, r, _ in rows if name == "OpenSpiel skat + obs"), None)
    print(f"Agent-steps per CPU-second, one process, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}\n")
    print("| row | agent-steps/s | × OpenSpiel skat + obs | notes |\n|---|---:|---:|---|")
    for name, rate, notes in rows:
        ratio = f"{rate / ref:.1f}" if rate and ref else "-"
        print(f"| {name} | {'-' if rate is None else f'{rate:,.0f}'} | {ratio} | {notes} |")
    if args.profile:
        n = max(args.sizes)
        for backend in backends:
            text = profile_vector(args.variant, n, 100, backend)
            print(f"\ncProfile of 100 steps at N={n}, {backend} backend:\n```\n{text}```")
    if args.json:
        Path(args.json).write_text(json.dumps([{"row": a, "steps_per_s": b, "notes": c} for a, b, c in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
