"""Mean time per move of agents, measured inside ``act`` over seeded deals.

    python benchmarks/bench_agents.py --variant hornafjardar --deals 20 --agents random rule_based pimc

Each deal is played by three copies of one agent (so every move timed is that agent's), after one
untimed warm-up deal (one-time set-up such as the rule-based agent's cached hand-strength means).
The result is a Markdown table: mean and median time per decision, the mean over card plays only,
and the count of decisions.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from manni_agents.registry import make_agent
from manni_env import GameState, Phase, make_rules
from manni_env.rules import VARIANTS


def time_agent(
    spec: str, variant: str, deals: int, seed: int, clock=time.perf_counter
) -> tuple[list[float], list[float]]:
    """Seconds per ``act`` call (all decisions, card plays only) over ``deals`` deals played by three
    copies of ``spec``, after one untimed warm-up deal."""
    times: list[float] = []
    plays: list[float] = []
    rules = make_rules(variant)
    for deal in range(-1, deals):
        agents = [make_agent(spec) for _ in range(3)]
        rngs = [np.random.default_rng([seed, deal + 1, s]) for s in range(3)]
        state = GameState(rules, seed=seed + deal + 1)
        while not state.rounds:
            seat = state.to_move
            view = state.view(seat)
            start = clock()
            action = agents[seat].act(view, rngs[seat])
            elapsed = clock() - start
            if deal >= 0:
                times.append(elapsed)
                if view.phase == Phase.PLAY:
                    plays.append(elapsed)
            state.apply(action)
    return times, plays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="hornafjardar")
    parser.add_argument("--deals", type=int, default=20, help="deals per agent (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=["random", "rule_based", "pimc"], help="agent specs")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall",
        help="wall time, or this process's CPU time (steadier on a busy machine)",
    )
    args = parser.parse_args()
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(f"Time per move ({args.clock} clock), {args.variant}, {args.deals} deals per agent\n")
    print("| agent | mean per move | median per move | mean per card play | moves |")
    print("|---|---:|---:|---:|---:|")
    for spec in args.agents:
        times, plays = time_agent(spec, args.variant, args.deals, args.seed, clock)
        print(
            f"| `{spec}` | {_fmt(statistics.fmean(times))} | {_fmt(statistics.median(times))} | "
            f"{_fmt(statistics.fmean(plays))} | {len(times)} |"
        )


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


if __name__ == "__main__":
    main()
