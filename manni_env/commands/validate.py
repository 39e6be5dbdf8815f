"""``manni validate FILE...``: replay every game record with the engine and report broken rules.

``--par`` adds each valid game's par scores. Par needs an agent, which lives in a layer above
this package: the report comes from the entry point ``par`` of the group :data:`REPORTS_GROUP`
(a function ``record -> lines``, declared by the agents layer's ``pyproject.toml``), so this
package never imports the agents.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

from manni_env.records import RecordError, iter_record_lines, validate_record
from manni_env.text import count

REPORTS_GROUP = "manni.record_reports"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check manni-record/1 files by replaying every game",
        description="Replay every line (one game) of manni-record/1 JSON Lines files with the engine. Prints "
        "'OK: N games', or each problem as 'FILE:LINE: round R, trick T: message' (rounds and tricks counted "
        "from 0, as the record's 'rounds' and 'tricks' lists; a problem of the whole game names no round), then "
        "'FAILED: P problems (G valid games in L lines)', and exits with code 1. A file without any record is a "
        "problem too.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines file of game records")
    parser.add_argument("--par", action="store_true",
                        help="also print each valid game's par scores, per deal and summed: the points the shipped "
                        "agent makes in each seat playing all three seats on the same cards, and each player's points "
                        "minus their seat's par (needs the agents layer; see docs/par.md)")
    parser.set_defaults(func=_main)


def _reporter(name: str) -> Callable[[dict], list[str]] | None:
    """The record report ``name`` registered in :data:`REPORTS_GROUP`, or ``None``."""
    for ep in entry_points(group=REPORTS_GROUP, name=name):
        return ep.load()
    return None


def _main(args: argparse.Namespace) -> int:
    par = _reporter("par") if args.par else None
    if args.par and par is None:
        print(f"manni validate: error: --par needs the agents layer (no 'par' entry point in {REPORTS_GROUP})",
              file=sys.stderr)
        return 2
    lines, games, problems = 0, 0, 0
    for path in args.files:
        start = lines
        try:
            for line, item in iter_record_lines(path):
                lines += 1
                problem = item if isinstance(item, RecordError) else None
                if problem is None:
                    try:
                        validate_record(item)
                    except RecordError as err:
                        problem = err
                if problem is not None:
                    problems += 1
                    print(f"{path}:{line}: {problem}")
                    continue
                games += 1
                if par is not None:
                    print(f"{path}:{line}: par")
                    print("\n".join(par(item)))
        except BrokenPipeError:  # our stdout closed (| head), not a problem with the file
            raise
        except (OSError, UnicodeDecodeError) as err:
            problems += 1
            print(f"{path}: cannot read: {err}")
        else:
            if lines == start:
                problems += 1
                print(f"{path}: no games (the file holds no records)")
    if problems:
        print(f"FAILED: {count(problems, 'problem')} ({count(games, 'valid game')} in {count(lines, 'line')})")
        return 1
    print(f"OK: {count(games, 'game')}")
    return 0
