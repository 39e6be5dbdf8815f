"""``manni arena``: a duplicate-deal tournament of three agents (see :mod:`agents.arena`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers) -> None:
    from manni_env.cli_options import add_variant_options

    parser = subparsers.add_parser(
        "arena",
        help="duplicate-deal tournament of three agents",
        description="Play the same seeded deals (or games) under all 6 seatings of three agents and report "
        "mean deal score with 95% CI, head-to-head differences, openskill ratings and time per move.",
    )
    parser.add_argument("agents", nargs=3, metavar="AGENT", help="agent spec, e.g. random, rule_based, pimc:worlds=16, ppo:PATH")
    add_variant_options(parser)
    parser.add_argument("--deals", type=int, default=200, help="duplicate units: deals, or games with --mode games (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the agents' generators (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--mode", choices=("deals", "games"), default="deals",
                        help="a unit is one deal, or a whole game reporting win share (default deals)")
    parser.add_argument("--out", metavar="DIR", help="write result.json, result.md and result.png to DIR")
    parser.add_argument("--records", metavar="FILE", help="append every game to FILE as manni-record/1 JSON lines")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from manni_env.cli_options import rules_from_args

    from ..arena import run_arena

    result = run_arena(
        list(args.agents), rules_from_args(args), deals=args.deals, seed=args.seed, workers=args.workers,
        records=args.records, progress=not args.no_progress, mode=args.mode,
    )
    markdown = result.to_markdown()
    print(markdown)
    if args.out:
        write_outputs(result, args.out)
        print(f"wrote result.json, result.md, result.png to {args.out}")
    return 0


def write_outputs(result, out: str | Path) -> None:
    """``result.json``, ``result.md`` and ``result.png`` in directory ``out`` (created if needed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    (out / "result.md").write_text(result.to_markdown())
    result.plot(out / "result.png")
