"""Where the search improves on the network's card play: the gain of one search decision over the
network's own card, by stage of the deal, role and seat in the trick.

    python benchmarks/search_gain.py --variant trjamann --deals 40 --worlds 16

The shipped network plays all three seats of seeded deals (its greedy play, as ``ppo``). At every
card-play decision with more than one legal card, the search (:mod:`manni_agents.search`) evaluates all
cards twice, on two independent sets of ``worlds`` sampled worlds: set A picks the search's card,
set B values both it and the network's card, so the reported gain is not inflated by picking the
maximum of noisy means. A gain is in the search's outcome units (own deal points minus the mean of
the two others'; ×2/3 gives own points in the zero-sum variants) and is measured with the network
playing the rest of the deal, so it is the value of replacing one decision, not of playing the
search throughout. Output: a Markdown table (decisions, how often the search plays another card,
mean gain per decision with a 95% CI, and gain per deal and seat).
"""

from __future__ import annotations

import argparse
import math
import re
from collections import defaultdict

import numpy as np

from manni_agents.search import SearchAgent, network_card_decisions
from manni_env import make_rules
from manni_env.rules import VARIANTS
from manni_env.view import SeatView

Z95 = 1.959963984540054


def stage(view: SeatView) -> str:
    """Which quarter of the deal's tricks the decision falls in (``tricks 1-4`` …)."""
    tricks = view.rules.tricks_per_deal
    q = len(view.plays) // 3 * 4 // tricks
    return f"tricks {q * tricks // 4 + 1}-{(q + 1) * tricks // 4}"


def role(view: SeatView) -> str:
    contract = view.contract
    kind = contract.kind.name.lower()
    if contract.declarer is None:
        return kind
    return f"{kind}, {'declarer' if contract.declarer == view.seat else 'defender'}"


def measure(variant: str, deals: int, worlds: int, seed: int, progress: bool = True) -> dict[str, dict[str, list[float]]]:
    """Per grouping (``stage``, ``role``, ``seat in trick``, ``all``) and group: (disagreed, gain) per decision."""
    rules = make_rules(variant)
    search = SearchAgent(worlds=worlds)
    rows: dict[str, dict[str, list[tuple[bool, float]]]] = defaultdict(lambda: defaultdict(list))
    for view, card, rng in network_card_decisions(rules, deals, seed, progress):
        best = search.evaluate(view, rng)[0]
        values = search.evaluate(view, rng)[1]
        row = (best != card, values[best] - values[card])
        for grouping, group in (("stage", stage(view)), ("role", role(view)),
                                ("seat in trick", f"{len(view.trick) + 1}."), ("all", "all")):
            rows[grouping][group].append(row)
    return rows


def _natural(text: str) -> list:
    """Sort key ordering numbers inside ``text`` by value (``tricks 5-8`` before ``tricks 13-16``)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


def table(rows, deals: int) -> str:
    lines = ["| grouping | group | decisions | search plays another card | mean gain per decision [95% CI] "
             "| gain per deal and seat |", "|---|---|---:|---:|---|---:|"]
    for grouping, groups in rows.items():
        for group in sorted(groups, key=_natural):
            data = groups[group]
            gains = np.array([g for _, g in data])
            half = Z95 * gains.std(ddof=1) / math.sqrt(len(gains)) if len(gains) > 1 else float("nan")
            lines.append(f"| {grouping} | {group} | {len(data)} | {np.mean([d for d, _ in data]):.0%} "
                         f"| {gains.mean():+.3f} [{gains.mean() - half:+.3f}, {gains.mean() + half:+.3f}] "
                         f"| {gains.sum() / (3 * deals):+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="trjamann")
    parser.add_argument("--deals", type=int, default=40, help="deals played by the network (default 40)")
    parser.add_argument("--worlds", type=int, default=16, help="worlds per evaluation (default 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1:
        parser.error("--deals and --worlds must be positive")
    rows = measure(args.variant, args.deals, args.worlds, args.seed, progress=not args.no_progress)
    print(f"**{args.variant}** · {args.deals} deals of the shipped network in every seat · "
          f"search with {args.worlds} worlds · seed {args.seed}\n")
    print(table(rows, args.deals))


if __name__ == "__main__":
    main()
