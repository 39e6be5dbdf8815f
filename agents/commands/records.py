"""``manni records export``: the games kept in ``manni serve``'s database as a ``manni-record/1``
JSON Lines file (:mod:`manni_agents.play.web.database`)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path

from manni_agents.commands.serve import DB_FILE, DEFAULT_RECORDS_DIR
from manni_env.text import count


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "records",
        help="the games of manni serve's database as records (needs the web extra)",
        description="Tools for the games manni serve keeps in its database.",
    )
    sub = parser.add_subparsers(dest="records_command", required=True, metavar="TOOL")
    export = sub.add_parser(
        "export",
        help="write every game kept in the database as manni-record/1 JSON Lines",
        description="Write every game the server's database keeps (finished games, and the finished deals of "
        "tables that ended early), oldest first, as manni-record/1 JSON Lines to OUT, which manni validate "
        "accepts. Each record is validated first; OUT is replaced whole or not at all.",
    )
    export.add_argument("out", metavar="OUT", help="the JSON Lines file to write")
    export.add_argument("--db", metavar="PATH", default=str(Path(DEFAULT_RECORDS_DIR) / DB_FILE),
                        help=f"the database: an SQLite file or a SQLAlchemy URL (default {DEFAULT_RECORDS_DIR}/{DB_FILE})")
    export.set_defaults(func=functools.partial(_export, parser=export))


def _export(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        from manni_agents.commands.serve import open_database
    except ImportError as err:
        parser.error(f"needs the web extra ({err}); pip install 'manni-env[web]'")
    from manni_env.records import RecordError, validate_record, write_records

    path = args.db.removeprefix("sqlite:///") if args.db.startswith("sqlite:///") else args.db
    if "://" not in path and not Path(path).is_file():  # an SQLite file: read, never made
        parser.error(f"--db: no database at {args.db}")
    try:
        db = open_database(args.db)
    except ValueError as err:
        parser.error(f"--db: {err}")
    out = Path(args.out)
    fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    written = 0
    try:
        for n, record in enumerate(db.records()):
            try:
                validate_record(record)
            except RecordError as err:
                raise RecordError(f"game {n + 1} of the database: {err}") from None
            written += write_records(tmp, [record])
        os.replace(tmp, out)
    except (OSError, RecordError) as err:
        Path(tmp).unlink(missing_ok=True)
        print(f"manni records export: error: {err}", file=sys.stderr)
        return 1
    finally:
        db.close()
    print(f"{count(written, 'game')} written to {out}")
    return 0
