"""``manni validate FILE...``: replay every game record with the engine and report broken rules."""

from __future__ import annotations

import argparse

from manni_env.records import RecordError, iter_record_lines, validate_record


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check manni-record/1 files by replaying every game",
        description="Replay every line (one game) of manni-record/1 JSON Lines files with the engine. Prints "
        "'OK: N games', or each problem as 'FILE:LINE: round R, trick T: message' (rounds and tricks counted "
        "from 0, as the record's 'rounds' and 'tricks' lists) and exits with code 1. A file without any "
        "record is a problem too.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines file of game records")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    games, problems = 0, 0
    for path in args.files:
        start = games
        try:
            for line, item in iter_record_lines(path):
                if isinstance(item, RecordError):  # not a record: a problem, not a game
                    problems += 1
                    print(f"{path}:{line}: {item}")
                    continue
                games += 1
                try:
                    validate_record(item)
                except RecordError as err:
                    problems += 1
                    print(f"{path}:{line}: {err}")
        except BrokenPipeError:  # our stdout closed (| head), not a problem with the file
            raise
        except (OSError, UnicodeDecodeError) as err:
            problems += 1
            print(f"{path}: cannot read: {err}")
        else:
            if games == start:
                problems += 1
                print(f"{path}: no games (the file holds no records)")
    if problems:
        print(f"FAILED: {problems} problem(s) in {games} games")
        return 1
    print(f"OK: {games} games")
    return 0
