"""How many of the search's sampled worlds still count under ``weighting=policy``: the effective
number of worlds at each tempering temperature, over the card plays of the shipped network's self-play.

    python benchmarks/effective_worlds.py --variants trjamann hornafjardar --deals 30 --temperatures 1 2 4 8

The shipped network plays all three seats of seeded deals (its greedy play, as ``ppo``). At every
card-play decision with more than one legal card after at least one opponent card of the deal
(before that every world weighs the same), the search (:mod:`manni_agents.search`) samples
``worlds`` worlds once and weights them at every temperature: the effective number of worlds
(:func:`manni_agents.search.effective_worlds`, ``(Σw)² / Σw²``) of the same worlds, so the
temperatures differ only in the tempering. No rollouts are played: this measures the weights, not
the strength. Output: a Markdown table per variant and temperature (decisions, median, 10th
percentile, median over the second half of the deal's tricks, share of decisions below a quarter
of the worlds).
"""

from __future__ import annotations

import argparse

import numpy as np

from manni_agents.search import SearchAgent, effective_worlds, network_card_decisions, tempered_weights
from manni_env import make_rules
from manni_env.rules import VARIANTS


def measure(variant: str, deals: int, worlds: int, temperatures: list[float], seed: int,
            progress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The effective worlds of every measured decision at every temperature (decisions ×
    temperatures) and whether each decision lies in the second half of the deal's tricks."""
    rules = make_rules(variant)
    search = SearchAgent(worlds=worlds, weighting="policy")
    ess: list[list[float]] = []
    late: list[bool] = []
    for view, _, rng in network_card_decisions(rules, deals, seed, progress):
        if any(s != view.seat for s, _ in view.plays):
            log_likelihoods = search.log_likelihoods(view, rng)
            ess.append([effective_worlds(tempered_weights(log_likelihoods, t)) for t in temperatures])
            late.append(len(view.plays) // 3 >= rules.tricks_per_deal / 2)
    return np.array(ess).reshape(-1, len(temperatures)), np.array(late, bool)


def table(results: dict[str, tuple[np.ndarray, np.ndarray]], worlds: int, temperatures: list[float]) -> str:
    """One Markdown row per variant and temperature."""
    header = (f"| variant | temperature | decisions | median effective worlds (of {worlds}) | 10th percentile "
              f"| median, second half of the deal | share below {worlds / 4:g} |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for variant, (ess, late) in results.items():
        for j, t in enumerate(temperatures):
            column = ess[:, j]
            second = f"{np.median(column[late]):.1f}" if late.any() else "–"
            lines.append(f"| {variant} | {t:g} | {column.size} | {np.median(column):.1f} "
                         f"| {np.percentile(column, 10):.1f} | {second} | {np.mean(column < worlds / 4):.0%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--deals", type=int, default=30, help="deals per variant (default 30)")
    parser.add_argument("--worlds", type=int, default=16, help="worlds per decision (default 16)")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[1, 2, 4, 8],
                        help="tempering temperatures to compare (default 1 2 4 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1:
        parser.error("--deals and --worlds must be positive")
    if not all(t > 0 for t in args.temperatures):
        parser.error("--temperatures must be positive")
    results = {v: measure(v, args.deals, args.worlds, args.temperatures, args.seed, progress=not args.no_progress)
               for v in args.variants}
    print(f"{args.deals} deals per variant of the shipped network in every seat · {args.worlds} worlds · "
          f"seed {args.seed} · decisions with a choice after an opponent's card\n")
    print(table(results, args.worlds, args.temperatures))


if __name__ == "__main__":
    main()
