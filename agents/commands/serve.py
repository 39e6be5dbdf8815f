"""``manni serve``: play against the agents, at tables with friends, and replay records in the browser (see
:mod:`manni_agents.play.web`)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

DEFAULT_RECORDS_DIR = "runs/web_records"
DB_FILE = "manni.sqlite3"  # in the records directory unless --db says otherwise
MAX_REPLAY_DEALS = 200  # manni_agents.play.web.limits.MAX_REPLAY_DEALS (not imported: the web extra may be missing)
TABLES_PER_CLIENT = 4  # manni_agents.play.web.tables.TABLES_PER_CLIENT
GAMES_PER_CLIENT = 8  # manni_agents.play.web.store.GAMES_PER_CLIENT


def _positive(text: str) -> float:
    """An argparse ``type``: a finite number above 0 (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="play and replay games in the browser (needs the web extra)",
        description="Serve a web page to play Manni against the agents (several games at once, one per browser "
        "tab), to sit at a table with friends (up to three people, agents in the other seats, invite links, "
        "rejoin, optional hints) and to step through recorded games with every hand face up. Finished and "
        "abandoned games are saved as manni-record/1 lines in RECORDS_DIR/games.jsonl. Needs the web extra: "
        "pip install 'manni-env[web]'.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name the server answers to besides localhost and the --host address, e.g. the "
                        "name friends type to reach it (repeatable; requests naming other hosts are refused)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--records", metavar="FILE", help="a manni-record/1 JSON Lines file to offer for replay")
    parser.add_argument("--records-dir", metavar="DIR", default=DEFAULT_RECORDS_DIR,
                        help=f"where played games are saved (default {DEFAULT_RECORDS_DIR})")
    parser.add_argument("--db", metavar="PATH",
                        help=f"the database the tables, their moves, the games, players and ratings last in: an "
                        f"SQLite file (default RECORDS_DIR/{DB_FILE}) or a SQLAlchemy URL; a restart brings back "
                        "every table in progress")
    parser.add_argument("--daily-deals", type=int, default=8, metavar="N",
                        help="deals of the daily duplicate challenge, the same for everybody each day (default 8)")
    parser.add_argument("--agent", action="append", default=[], metavar="SPEC",
                        help="offer another opponent, e.g. ppo:runs/model or pimc:worlds=32 (repeatable); the "
                        "registry's agents that take no argument are always offered")
    parser.add_argument("--max-games", type=int, default=32, help="games in progress at once (default 32)")
    parser.add_argument("--tables-per-client", type=int, default=TABLES_PER_CLIENT,
                        help=f"tables in progress one client address may create (default {TABLES_PER_CLIENT}; "
                        "behind a proxy every client has the proxy's address)")
    parser.add_argument("--games-per-client", type=int, default=GAMES_PER_CLIENT,
                        help=f"unfinished games one client address may have (default {GAMES_PER_CLIENT}; behind a "
                        "proxy that does not send X-Forwarded-For every client has the proxy's address)")
    parser.add_argument("--idle-minutes", type=_positive, default=30.0,
                        help="a game nobody touched for this long is saved and dropped (default 30)")
    parser.add_argument("--max-upload-mb", type=_positive, default=5.0, help="largest records file to upload (default 5)")
    parser.add_argument("--max-replay-deals", type=int, default=MAX_REPLAY_DEALS,
                        help=f"most deals of a game to replay (default {MAX_REPLAY_DEALS}; about 30 kB of JSON per deal)")
    parser.set_defaults(func=_main)


def _fail(message: str) -> int:
    print(f"manni serve: error: {message}", file=sys.stderr)
    return 2


def _main(args: argparse.Namespace) -> int:
    try:
        from manni_agents.play.web import database  # noqa: F401  (SQLAlchemy and Alembic: a web extra of old)
        from manni_agents.play.web.app import create_app, listen, server
    except ImportError as err:
        return _fail(f"the web extra is not installed ({err}); pip install 'manni-env[web]'")
    from manni_agents.play.web.limits import ReplayGuard
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.origin import allowed_hosts
    from manni_agents.play.web.store import GameStore
    from manni_env.records import RecordError

    if not 0 <= args.port <= 65535:
        return _fail(f"--port must be in 0..65535, got {args.port}")
    for flag, value in (("--max-games", args.max_games), ("--max-replay-deals", args.max_replay_deals),
                        ("--tables-per-client", args.tables_per_client), ("--games-per-client", args.games_per_client),
                        ("--daily-deals", args.daily_deals)):
        if value < 1:
            return _fail(f"{flag} must be at least 1, got {value}")
    if args.records and Path(args.records).exists() and not Path(args.records).is_file():
        return _fail(f"--records: {args.records} is not a regular file")
    problem = _records_dir_problem(args.records_dir)
    if problem:
        return _fail(f"--records-dir: {problem}")
    try:
        records = _load_records(args.records) if args.records else []
    except (OSError, UnicodeDecodeError) as err:
        return _fail(f"cannot read {args.records}: {err}")
    except RecordError as err:
        return _fail(str(err))
    try:
        lineup = Lineup(args.agent)
    except ValueError as err:
        return _fail(str(err))
    db_path = args.db or str(Path(args.records_dir) / DB_FILE)
    try:
        db = open_database(db_path)
    except ValueError as err:
        return _fail(f"--db: {err}")
    store = GameStore(args.records_dir, args.max_games, args.idle_minutes * 60, per_client=args.games_per_client)
    app = create_app(store, lineup, records, int(args.max_upload_mb * 1_000_000),
                     sweep_seconds=min(60.0, args.idle_minutes * 15), replays=ReplayGuard(args.max_replay_deals),
                     tables_per_client=args.tables_per_client, hosts=allowed_hosts(args.host, args.allowed_host), db=db,
                     daily_deals=args.daily_deals)
    try:
        sock = listen(args.host, args.port)
    except OSError as err:
        return _fail(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"Manni at http://{shown}:{port}/ — database {db_path}, games also saved to {store.records_path}; "
          "Ctrl+C stops.", flush=True)
    try:
        server(app).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl+C after its graceful shutdown (games saved)
        pass
    return 0


def open_database(path: str):
    """The database of ``--db`` (a path or a SQLAlchemy URL), migrated; ``ValueError`` in one line."""
    from sqlalchemy.exc import SQLAlchemyError

    from manni_agents.play.web.database import Database, database_url

    try:
        return Database.open(database_url(path))
    except (SQLAlchemyError, OSError) as err:
        reason = str(getattr(err, "orig", None) or err).splitlines()[0]
        raise ValueError(f"cannot open the database {path}: {reason}") from None
    except ImportError as err:  # a URL of a database whose driver is not installed
        raise ValueError(f"cannot open the database {path}: its driver is not installed ({err})") from None


def _records_dir_problem(directory: str) -> str | None:
    """Why played games could not be saved in ``directory`` (created if missing), or ``None``:
    the games file is opened for appending now, so a server that starts can save."""
    from manni_agents.play.web.store import RECORDS_FILE

    path = Path(directory) / RECORDS_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and not path.is_file():
            return f"{path} is not a regular file"
        with path.open("a"):
            pass
    except OSError as err:
        return f"cannot save games in {directory}: {err.strerror or err}"
    if not os.access(path, os.W_OK):
        return f"cannot save games in {directory}: {path} is not writable"
    return None


def _load_records(path: str) -> list[dict]:
    """Every record of ``path``, validated; ``RecordError`` as ``FILE:LINE: problem``."""
    from manni_env.records import RecordError, iter_record_lines, validate_record

    records = []
    for line, item in iter_record_lines(path):
        try:
            if isinstance(item, RecordError):
                raise item
            validate_record(item)
        except RecordError as err:
            raise RecordError(f"{path}:{line}: {err}", line=line) from None
        records.append(item)
    if not records:
        raise RecordError(f"{path} holds no records")
    return records
