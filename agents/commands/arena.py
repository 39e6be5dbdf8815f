"""``manni arena``: a duplicate-deal tournament of three agents (see :mod:`manni_agents.evaluation.arena`).

Everything is checked before the first deal: the agents (and that they can play the variant), the
numbers, the ``--records`` file (a new one, or ``--append``) and the ``--out`` directory (existing
result files only with ``--force``). Records are written as the units finish; the result files at
the end, each atomically. Ctrl-C stops the workers at once, prints and writes the result of the
units finished so far, says what was kept, and exits with code 130.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

from manni_agents.evaluation.results import RESULT_FILES, write_outputs


def register(subparsers) -> None:
    from manni_env.cli_options import add_variant_options, at_least

    parser = subparsers.add_parser(
        "arena",
        help="duplicate-deal tournament of three agents",
        description="Play the same seeded deals (or games) under all 6 seatings of three agents and report "
        "mean deal score with 95% CI, head-to-head differences, openskill ratings and time per move. "
        "Ctrl-C stops the run and keeps what was played (records, and the results of the finished deals).",
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT",
                        help="three agent specs, one per seat, e.g. random, rule_based, pimc:worlds=16, ppo:PATH")
    add_variant_options(parser)
    parser.add_argument("--deals", type=at_least(1), default=200, help="duplicate units: deals, or games with --mode games (default 200)")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seed of the deals and of the agents' generators (default 0)")
    parser.add_argument("--workers", type=at_least(1), default=1, help="worker processes (default 1)")
    parser.add_argument("--mode", choices=("deals", "games"), default="deals",
                        help="a unit is one deal, or a whole game reporting win share (default deals)")
    parser.add_argument("--out", metavar="DIR", help="write result.json, result.md and result.png to DIR")
    parser.add_argument("--force", action="store_true", help="overwrite result files already in --out DIR")
    parser.add_argument("--records", metavar="FILE", help="write every game to FILE as manni-record/1 JSON lines, as played")
    parser.add_argument("--append", action="store_true", help="add the records to --records FILE if it already holds some")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=functools.partial(_main, parser=parser))


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from manni_agents.bots.agent import BotError
    from manni_agents.evaluation.arena import ArenaInterrupted, run_arena
    from manni_agents.registry import make_agent
    from manni_env.cli_options import prepare_output_file, rules_from_args
    from manni_env.interrupts import stop_signals

    if len(args.agents) != 3:
        parser.error(f"arena needs exactly three agents (one per seat), got {len(args.agents)}: {' '.join(args.agents)}")
    rules = rules_from_args(args)
    try:
        for spec in args.agents:
            make_agent(spec, rules)
    except ValueError as err:
        parser.error(str(err))
    if args.out is not None:
        _prepare_out(parser, args.out, args.force)
    if args.records is not None:
        prepare_output_file(parser, args.records, "--records", args.append)
    try:
        with stop_signals():  # kill, timeout, docker stop, a closed terminal: as Ctrl-C, the finished deals kept
            result = run_arena(
                list(args.agents), rules, deals=args.deals, seed=args.seed, workers=args.workers,
                records=args.records, progress=not args.no_progress, mode=args.mode,
            )
    except ArenaInterrupted as stop:
        return _interrupted(stop, args)
    except BotError as err:
        print(f"manni arena: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        if args.records is None or err.filename not in (None, args.records, str(Path(args.records))):
            raise
        print(f"manni arena: error: cannot write to {args.records} ({err.strerror or err})", file=sys.stderr)
        return 2
    print(result.to_markdown())
    if args.out:
        problem = _write_out(result, args.out)
        if problem:
            print(f"manni arena: error: {problem}; the table above is the result", file=sys.stderr)
            return 2
        print(f"wrote {', '.join(RESULT_FILES)} to {args.out}")
    return 0


def _write_out(result, out: str) -> str | None:
    """:func:`write_outputs`, or why it failed (a full disk: the previous files are kept)."""
    try:
        write_outputs(result, out)
    except OSError as err:
        return f"cannot write the results to {out} ({err.strerror or err}; its previous files are kept)"
    return None


def _prepare_out(parser: argparse.ArgumentParser, out: str, force: bool) -> None:
    """Create the ``--out`` directory; ``parser.error`` if it cannot hold the results or (unless
    ``force``) already holds some."""
    path = Path(out)
    if not out.strip():
        parser.error(f"argument --out: expected a directory name, got {out!r}")
    if path.exists() and not path.is_dir():
        parser.error(f"argument --out: {out} exists and is not a directory")
    existing = [name for name in RESULT_FILES if (path / name).exists()]
    if existing and not force:
        parser.error(f"argument --out: {out} already holds {', '.join(existing)}; pass --force to overwrite")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"argument --out: cannot create {out} ({err.strerror})")
    if not os.access(path, os.W_OK):
        parser.error(f"argument --out: cannot write to {out} (permission denied)")


def _interrupted(stop, args: argparse.Namespace) -> int:
    """After Ctrl-C: print and write the partial result, say what was kept; exit code 130."""
    unit = "deals" if args.mode == "deals" else "games"
    kept = []
    if stop.result is not None:
        print(stop.result.to_markdown())
        if args.out:
            problem = _write_out(stop.result, args.out)
            kept.append(f"their results in {args.out}" if not problem else f"not their results: {problem}")
    if args.records and stop.units:
        kept.insert(0, f"their {6 * stop.units} games in {args.records}")
    what = "; kept " + " and ".join(kept) if kept else "; nothing was written"
    print(f"manni arena: interrupted after {stop.units} of {stop.requested} {unit}{what}", file=sys.stderr)
    return 130
