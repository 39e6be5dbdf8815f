"""Mean time per move of agents, measured inside ``act`` over seeded deals.

    python benchmarks/bench_agents.py --variant hornafjardar --deals 20 --agents random rule_based pimc

Each deal is played by three copies of one agent (so every move timed is that agent's); the
result is a Markdown table of the mean and median time per decision, and the count of decisions.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents.registry import make_agent
from manni_env import GameState, make_rules
from manni_env.rules import VARIANTS


def time_agent(spec: str, variant: str, deals: int, seed: int) -> list[float]:
    """Seconds per ``act`` call over ``deals`` deals played by three copies of ``spec``."""
    times = []
    rules = make_rules(variant)
    for deal in range(deals):
        agents = [make_agent(spec) for _ in range(3)]
        rngs = [np.random.default_rng([seed, deal, s]) for s in range(3)]
        state = GameState(rules, seed=seed + deal)
        while not state.rounds:
            seat = state.to_move
            view = state.view(seat)
            start = time.perf_counter()
            action = agents[seat].act(view, rngs[seat])
            times.append(time.perf_counter() - start)
            state.apply(action)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="hornafjardar")
    parser.add_argument("--deals", type=int, default=20, help="deals per agent (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=["random", "rule_based", "pimc"], help="agent specs")
    args = parser.parse_args()
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    print(f"Time per move, {args.variant}, {args.deals} deals per agent\n")
    print("| agent | mean per move | median per move | moves |")
    print("|---|---:|---:|---:|")
    for spec in args.agents:
        times = time_agent(spec, args.variant, args.deals, args.seed)
        print(f"| `{spec}` | {_fmt(statistics.fmean(times))} | {_fmt(statistics.median(times))} | {len(times)} |")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


if __name__ == "__main__":
    main()
