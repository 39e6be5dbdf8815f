"""``manni arena``: a duplicate-deal tournament of three agents (see :mod:`manni_agents.evaluation.arena`).

Everything is checked before the first deal: the agents (and that they can play the variant), the
numbers, the ``--records`` file (a new one, or ``--append``) and the ``--out`` directory (existing
result files only with ``--force``). Records are written as the units finish; the result files
(with ``games.json``, every game played) at the end, together and atomically. Ctrl-C or a stop
signal stops the workers at once, prints and writes the result of the units finished so far, says
what was kept, and exits with code 130.

``--resume`` continues such a run: if ``--out`` holds an interrupted result of the same agents,
rules, mode and seed, only the units after its kept ones are played (the records appended to the
interrupted run's ``--records`` file, which must hold the kept units' games), and the result equals
an uninterrupted run's but for the time per move. An ``--out`` without a result is simply played
into, and one with the complete result is printed, not played again; a result of other settings,
or one written without ``games.json`` (by an older version), is an error that leaves it as it is.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from manni_agents.evaluation.results import GAMES_FILE, RESULT_FILES, kept_result, saved, write_outputs

if TYPE_CHECKING:
    from manni_agents.evaluation.arena import ArenaResult
    from manni_env.rules import Rules


def register(subparsers) -> None:
    from manni_env.cli_options import add_variant_options, at_least

    parser = subparsers.add_parser(
        "arena",
        help="duplicate-deal tournament of three agents",
        description="Play the same seeded deals (or games) under all 6 seatings of three agents and report "
        "mean deal score with 95% CI, head-to-head differences, openskill ratings and time per move. "
        "Ctrl-C stops the run and keeps what was played (records, and the results of the finished deals); "
        "--resume plays the rest.",
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT",
                        help="three agent specs, one per seat, e.g. random, rule_based, pimc:worlds=16, ppo:PATH")
    add_variant_options(parser)
    parser.add_argument("--deals", type=at_least(1), default=200, help="duplicate units: deals, or games with --mode games (default 200)")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seed of the deals and of the agents' generators (default 0)")
    parser.add_argument("--workers", type=at_least(1), default=1, help="worker processes (default 1)")
    parser.add_argument("--mode", choices=("deals", "games"), default="deals",
                        help="a unit is one deal, or a whole game reporting win share (default deals)")
    parser.add_argument("--out", metavar="DIR",
                        help="write result.json, result.md, result.png and games.json (every game, for --resume) to DIR")
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument("--force", action="store_true", help="overwrite result files already in --out DIR")
    kept.add_argument("--resume", action="store_true",
                      help="play on after the deals an interrupted run of these settings kept in --out DIR "
                      "(its --records FILE grows on); a DIR without results is played into, a complete one printed")
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
    if args.out is not None and not args.out.strip():
        parser.error(f"argument --out: expected a directory name, got {args.out!r}")
    if args.resume and args.out is None:
        parser.error("argument --resume: needs --out DIR, the directory of the run to resume")
    rules = rules_from_args(args)
    try:
        for spec in args.agents:
            make_agent(spec, rules)
    except ValueError as err:
        parser.error(str(err))
    earlier = _kept(parser, args, rules) if args.resume else None
    if earlier is not None and "units_requested" not in earlier.settings:
        print(earlier.to_markdown())
        print(f"{args.out} already holds the complete result of these {args.deals} {args.mode}; nothing to play")
        return 0
    if args.out is not None:
        _prepare_out(parser, args.out, args.force or earlier is not None)
    if args.records is not None:
        if earlier is not None:
            _check_records(parser, args.records, earlier.settings["units"], args.mode)
        prepare_output_file(parser, args.records, "--records", args.append or earlier is not None)
    if earlier is not None:
        print(f"resuming after {earlier.settings['units']} of {args.deals} {args.mode} kept in {args.out}")
    try:
        with stop_signals():  # kill, timeout, docker stop, a closed terminal: as Ctrl-C, the finished deals kept
            result = run_arena(
                list(args.agents), rules, deals=args.deals, seed=args.seed, workers=args.workers,
                records=args.records, progress=not args.no_progress, mode=args.mode, earlier=earlier,
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


def _kept(parser: argparse.ArgumentParser, args: argparse.Namespace, rules: Rules) -> ArenaResult | None:
    """For ``--resume``: the result kept in ``--out`` (None if it holds none), complete or to play
    on from; ``parser.error`` if it is of other settings or cannot be resumed."""
    from manni_agents.evaluation.arena import ArenaResult, same_arena

    try:
        data = saved(args.out)
    except ValueError as err:
        parser.error(f"argument --resume: {err}")
    if data is None:
        return None
    kept = data["settings"]
    differ = _differences(kept, same_arena(args.agents, rules, args.mode, args.seed))
    if "units_requested" not in kept and kept["units"] != args.deals:
        differ.append(f"{kept['units']} {kept['mode']} (asked: {args.deals})")
    if differ:
        parser.error(f"argument --resume: {args.out} holds a result of other settings: {', '.join(differ)}; "
                     "pass --force instead of --resume to replace it, or choose another --out")
    if "units_requested" not in kept:
        return ArenaResult.from_dict(data, [])
    if not (Path(args.out) / GAMES_FILE).exists():
        parser.error(f"argument --resume: {args.out} holds an interrupted result without its {GAMES_FILE} (written by "
                     "an older manni arena), which cannot be resumed; pass --force instead of --resume to play it afresh")
    if kept["units"] >= args.deals:
        parser.error(f"argument --resume: {args.out} already keeps {kept['units']} {args.mode} of the "
                     f"{kept['units_requested']} its run asked for; pass a --deals above {kept['units']} to play on")
    try:
        return kept_result(args.out, data)
    except ValueError as err:
        parser.error(f"argument --resume: {err}")


def _differences(kept: dict, want: dict) -> list[str]:
    """How the settings ``kept`` differ from ``want`` (``same_arena``'s), in words: ``seed 3 (asked:
    4)``; the rule options within one variant (another variant's name says that they differ)."""
    pairs = [(key, kept.get(key), value) for key, value in want.items() if key != "options"]
    if kept.get("variant") == want["variant"]:
        pairs += [(name, kept.get("options", {}).get(name), value) for name, value in want["options"].items()]
    return [f"{key} {_words(was)} (asked: {_words(now)})" for key, was, now in pairs if was != now]


def _words(value) -> str:
    """A setting as the command line gives it: the agents separated by spaces."""
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def _check_records(parser: argparse.ArgumentParser, records: str, units: int, unit: str) -> None:
    """For ``--resume``: ``parser.error`` unless ``records`` holds the games of the ``units`` kept
    (the interrupted run's records), so that the resumed run's complete it without gaps or repeats."""
    from manni_env.records import iter_record_lines

    held = sum(1 for _ in iter_record_lines(records)) if Path(records).is_file() else 0
    if held != 6 * units:
        parser.error(f"argument --records: {records} holds {held} games, not the {6 * units} of the {units} {unit} "
                     "kept; pass the interrupted run's --records file, or none")


def _prepare_out(parser: argparse.ArgumentParser, out: str, force: bool) -> None:
    """Create the ``--out`` directory; ``parser.error`` if it cannot hold the results or (unless
    ``force``) already holds some."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        parser.error(f"argument --out: {out} exists and is not a directory")
    existing = [name for name in RESULT_FILES if (path / name).exists()]
    if existing and not force:
        parser.error(f"argument --out: {out} already holds {', '.join(existing)}; pass --force to overwrite them, "
                     "or --resume to play on after an interrupted run")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"argument --out: cannot create {out} ({err.strerror})")
    if not os.access(path, os.W_OK):
        parser.error(f"argument --out: cannot write to {out} (permission denied)")


def _interrupted(stop, args: argparse.Namespace) -> int:
    """After Ctrl-C: print and write the partial result, say what was kept and how to play the rest
    (``--resume``, when the results are kept); exit code 130."""
    unit = "deals" if args.mode == "deals" else "games"
    kept, then = [], ""
    if stop.result is not None:
        print(stop.result.to_markdown())
        if args.out:
            problem = _write_out(stop.result, args.out)
            kept.append(f"their results in {args.out}" if not problem else f"not their results: {problem}")
            instead = " instead of --force" if args.force else ""
            then = "" if problem else f"; rerun with --resume{instead} to play the rest"
    if args.records and stop.units:
        kept.insert(0, f"their {6 * stop.units} games in {args.records}")
    what = "; kept " + " and ".join(kept) if kept else "; nothing was written"
    print(f"manni arena: interrupted after {stop.units} of {stop.requested} {unit}{what}{then}", file=sys.stderr)
    return 130
