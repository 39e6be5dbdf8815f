"""Decisions searched per second by the batched multi-decision search, by batch size.

    nice python benchmarks/bench_search_batch.py --variant trjamann --decisions 256 --worlds 8 --batches 1 16 256

The shipped network plays all three seats of seeded deals (:func:`manni_agents.search.network_card_decisions`);
its card-play decisions with more than one legal card are searched by
:meth:`manni_agents.search.SearchAgent.evaluate_many` in batches of each size given (batch size 1 is
the one-decision search), ``worlds`` uniform worlds each, on one thread. Output: a Markdown table
(batch size; decisions per second of wall time and of this process's CPU time, the figure that
a machine shared with other work disturbs least; CPU time per decision) with the CPU model and the
load average.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
import torch

from manni_agents.search import SearchAgent, network_card_decisions
from manni_env import make_rules
from manni_env.rules import VARIANTS
from manni_train.cpu import cpu_model


def measure(variant: str, decisions: int, worlds: int, batches: list[int], seed: int = 0,
            ) -> dict[int, tuple[float, float]]:
    """Decisions searched per second of wall time and per second of CPU time with each batch size
    of ``batches`` (the same decisions)."""
    rules = make_rules(variant)
    views = [view for view, _, _ in itertools.islice(
        ((v, c, r) for v, c, r in network_card_decisions(rules, 10**6, seed, progress=False)
         if len(v.legal_actions) > 1), decisions)]
    search = SearchAgent(worlds=worlds)
    search.evaluate_many(views[:2], np.random.default_rng(seed))  # compiled kernels, loaded network
    rates = {}
    for size in batches:
        rng = np.random.default_rng(seed)
        start, cpu_start = time.perf_counter(), time.process_time()
        for first in range(0, len(views), size):
            search.evaluate_many(views[first:first + size], rng)
        rates[size] = (len(views) / (time.perf_counter() - start), len(views) / (time.process_time() - cpu_start))
    return rates


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="trjamann")
    parser.add_argument("--decisions", type=int, default=256, help="card-play decisions searched (default 256)")
    parser.add_argument("--worlds", type=int, default=8, help="worlds per decision (default 8)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256], help="batch sizes (default 1 16 256)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.worlds < 1 or min(args.batches) < 1:
        parser.error("--decisions, --worlds and --batches must be positive")
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    rates = measure(args.variant, args.decisions, args.worlds, args.batches, args.seed)
    print(f"**{args.variant}** · {args.decisions} card-play decisions · {args.worlds} worlds · one thread · "
          f"{cpu_model()} · load average {load:.2f} at the start\n")
    print("| batch | decisions/s | decisions per CPU s | CPU ms per decision |\n|---:|---:|---:|---:|")
    for size, (rate, cpu_rate) in rates.items():
        print(f"| {size} | {rate:,.1f} | {cpu_rate:,.1f} | {1000 / cpu_rate:.2f} |")


if __name__ == "__main__":
    main()
