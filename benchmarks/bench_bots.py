"""Protocol overhead of ``bot:`` agents: arena decisions per second, bot programs against in-process agents.

    python benchmarks/bench_bots.py --variant hornafjardar --deals 20 --repeats 5

Each repeat plays ``manni arena A A A`` (``--workers`` worker processes, default one; deals mode,
``--deals`` duplicate deals × 6 seatings) for each spec ``A`` and divides the decisions made by the run's wall time (bot start-up
included). ``random`` is the in-process reference: the engine and arena cost of a decision; the
protocol overhead per decision is ``1/rate(bot) − 1/rate(random)``. Also reported: the CPU time per
decision of this process and the bot processes together (start-up included), which bounds the
rate of an otherwise idle machine (the referee and the bot take turns, so their CPU times add up),
whereas the wall-clock rate also pays for waking the other process, much more so on a busy
machine. Each figure: the mean over repeats with a 95% CI (normal approximation over repeats).
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import sys
import time
from pathlib import Path

from manni_agents.evaluation.arena import Z95, run_arena
from manni_env.rules import VARIANTS, make_rules

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPECS = (f"bot:{sys.executable} {ROOT / 'examples/bots/simple_bot.py'}",
                 f"bot:node {ROOT / 'examples/bots/simple_bot.js'}")


def measure(spec: str, variant: str, deals: int, seed: int, workers: int = 1) -> tuple[float, float]:
    """(decisions per wall second, CPU µs per decision of this process and the bot processes)."""
    cpu = _cpu()
    start = time.perf_counter()
    result = run_arena([spec] * 3, make_rules(variant), deals, seed, workers=workers, progress=False)
    wall = time.perf_counter() - start
    moves = sum(a.moves for a in result.agents)
    return moves / wall, 1e6 * (_cpu() - cpu) / moves


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the bots, reaped when the arena ends)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:,.0f}"
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:,.0f} [{mean - half:,.0f}, {mean + half:,.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="hornafjardar")
    parser.add_argument("--deals", type=int, default=20, help="duplicate deals per run (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per spec (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="arena worker processes (default 1)")
    parser.add_argument("--specs", nargs="+", default=list(DEFAULT_SPECS), help="bot specs (default: the example bots)")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {spec: [] for spec in ["random", *args.specs]}
    cpus: dict[str, list[float]] = {spec: [] for spec in rates}
    for _ in range(args.repeats):  # interleaved, so that a change of machine load touches every spec alike
        for spec in rates:
            rate, cpu = measure(spec, args.variant, args.deals, args.seed, args.workers)
            rates[spec].append(rate)
            cpus[spec].append(cpu)
    print(f"**{args.variant}**, {args.deals} duplicate deals × 6 seatings per run, {args.repeats} runs, {args.workers} worker(s), three copies of the spec\n")
    print("| spec | decisions/s [95% CI] | overhead per decision, µs [95% CI] | CPU per decision, µs [95% CI] |")
    print("|---|---|---|---|")
    for spec, values in rates.items():
        overhead = [1e6 * (1 / v - 1 / r) for v, r in zip(values, rates["random"])]
        shown = spec.replace(sys.executable, "python3").replace(f"{ROOT}/", "")
        print(f"| `{shown}` | {interval(values)} | {'–' if spec == 'random' else interval(overhead)} | {interval(cpus[spec])} |")


if __name__ == "__main__":
    main()
