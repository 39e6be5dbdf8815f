"""The store that lasts: ``manni serve``'s single games and tables, every move of every game, the
finished games' records, players, ratings and the daily challenge in one database (SQLite by
default, ``manni serve --db PATH``).

The schema is SQLAlchemy Core (:data:`METADATA`); it is created and changed only by the Alembic
migrations in ``migrations/versions`` (:meth:`Database.open` upgrades a database to the newest one,
so a database written by an older server is brought up to date, and a table made by hand never).
A change of the schema is a new migration there (``script.py.mako`` is the template Alembic's
``revision`` command fills) beside the change of :data:`METADATA`; a test checks that the
migrations build exactly :data:`METADATA`.

**What lasts.** A table's header (rules, seed, seats with their names, the SHA-256 of their tokens,
whether it started or closed) is written when it is created and whenever it changes; each move is
written, with the probabilities and review kept beside it, and committed before anything is
answered: inside the table's lock, or, for remote bots' moves made together on the event loop, in
one transaction when their batch ends, before any of them is answered (:meth:`Database.deferred`).
Moves written at the same time share a transaction (:meth:`Database.add_move`). SQLite runs in WAL
mode with ``synchronous=NORMAL``: a committed move survives the server process's death
(``kill -9``), though not the machine's power failing. On a restart,
:func:`~manni_agents.play.web.table_db.restore_tables` rebuilds every table in progress from its
seed and its moves, the deal in progress at the move it stopped; people rejoin with their seat
tokens (the grace period starts again at the restart).

**Beyond one machine.** Several server processes on several machines would share one PostgreSQL
database instead (``--db postgresql+psycopg://...``: the same SQLAlchemy schema and migrations), and
what changes is the state in memory: each table's game and its sockets live in the process that
serves it, so a proxy must send every request and socket of one table to the same process (sticky
by table id), and a process that takes over a table rebuilds it from the database as a restart does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import (JSON, Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint, create_engine, event, insert, select, update)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.engine import Engine

from manni_agents.play.web.tables import NAME_MAX

MIGRATIONS = Path(__file__).parent / "migrations"
METADATA = MetaData()

TABLES = Table(
    "tables", METADATA,
    Column("id", String(32), primary_key=True),
    Column("created", Float, nullable=False),
    Column("variant", String(32), nullable=False),
    Column("options", JSON, nullable=False),  # the rules' options (make_rules(variant, **options))
    Column("seed", String(24), nullable=False),  # 63 bits: as text, which every database keeps exactly
    Column("chosen_seed", Boolean, nullable=False),
    Column("stand_in", String(200), nullable=False),
    Column("advisor", String(200)),
    Column("hints", Boolean, nullable=False),
    Column("grace_seconds", Float, nullable=False),
    Column("seats", JSON, nullable=False),  # [{spec, bot, name, token (SHA-256), strikes, stand_in}]
    Column("started", Boolean, nullable=False),
    Column("closed", Boolean, nullable=False),
    Column("client", String(64)),  # who created it (limits.client_key), for its share after a restart
)
MOVES = Table(
    "moves", METADATA,
    Column("table_id", String(32), ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True),
    Column("n", Integer, primary_key=True),  # 0, 1, ... in the order played
    Column("seat", Integer, nullable=False),
    Column("action", Integer, nullable=False),
    Column("probabilities", JSON),  # the agent's (or the advisor's, for a person) probabilities
    Column("review", JSON),  # a person's decision beside the advisor's
)
GAMES = Table(
    "games", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("table_id", String(32), unique=True),
    Column("finished", Float, nullable=False),
    Column("record", Text, nullable=False),  # a manni-record/1 object as JSON
)
PLAYERS = Table(
    "players", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME_MAX), nullable=False),
    Column("kind", String(8), nullable=False),  # person, bot (a remote bot) or agent (a registry spec)
    Column("token", String(64), unique=True),  # the SHA-256 of the player's secret token (none for an agent)
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("games", Integer, nullable=False),  # the deals the rating rests on
    Column("created", Float, nullable=False),
    UniqueConstraint("kind", "name", name="uq_players_kind_name"),
)
RESULTS = Table(
    "results", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("player_id", Integer, ForeignKey("players.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("source", String(8), nullable=False),  # table or daily
    Column("ref", String(64), nullable=False),  # the table's id, or the day of the daily challenge
    Column("deal", Integer, nullable=False),  # from 1
    Column("seat", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("par", Integer, nullable=False),
    Column("time", Float, nullable=False),
)
PLAYER_KINDS = ("person", "bot", "agent")
SINGLE_GAMES = Table(
    "single_games", METADATA,
    Column("id", String(32), primary_key=True),
    Column("created", Float, nullable=False),
    Column("variant", String(32), nullable=False),
    Column("options", JSON, nullable=False),
    Column("seed", String(24), nullable=False),
    Column("seat", Integer, nullable=False),  # the person's
    Column("opponents", JSON, nullable=False),  # the two agents' specs, clockwise
    Column("closed", Boolean, nullable=False),  # expired (its record saved)
    Column("client", String(64)),  # who created it (limits.client_key), for its share after a restart
)
SINGLE_MOVES = Table(
    "single_moves", METADATA,
    Column("game_id", String(32), ForeignKey("single_games.id", ondelete="CASCADE"), primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("action", Integer, nullable=False),
    Column("probabilities", JSON),
)
SETTINGS = Table(
    "settings", METADATA,
    Column("key", String(32), primary_key=True),
    Column("value", Text, nullable=False),
)
DAILY = Table(
    "daily_entries", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("day", String(10), nullable=False),  # YYYY-MM-DD (UTC)
    Column("deal", Integer, nullable=False),  # from 1
    Column("player_id", Integer, ForeignKey("players.id", ondelete="CASCADE"), nullable=False),
    Column("table_id", String(32), nullable=False, unique=True),
    Column("seat", Integer, nullable=False),
    Column("points", Integer),  # when the deal is over
    Column("par", Integer),
    Column("started", Float, nullable=False),
    Column("finished", Float),
    UniqueConstraint("day", "deal", "player_id", name="uq_daily_once"),
    Index("ix_daily_entries_day", "day", "deal"),
)


def database_url(path: str) -> str:
    """The SQLAlchemy URL of ``--db``: a URL as it is, a path as SQLite's file there."""
    return path if "://" in path else f"sqlite:///{Path(path).expanduser().resolve()}"


class NameTaken(ValueError):
    """A player of that kind has that name already."""


class PlayersMixin:
    """Players and their ratings (:mod:`manni_agents.play.web.ratings` computes them)."""

    engine: Engine
    lock: threading.Lock

    def add_player(self, name: str, kind: str, token: str | None, mu: float, sigma: float) -> int:
        """A new player (``token``: the SHA-256 of its secret); :class:`NameTaken` if the name is."""
        try:
            with self.lock, self.engine.begin() as c:
                return c.execute(insert(PLAYERS).values(name=name, kind=kind, token=token, mu=mu, sigma=sigma, games=0,
                                                        created=time.time())).inserted_primary_key[0]
        except IntegrityError:
            raise NameTaken(f"a {kind} called {name!r} is a player already: choose another name") from None

    def player(self, *, token: str | None = None, player_id: int | None = None) -> dict | None:
        """The player with that token's SHA-256, or that id (``None`` if none)."""
        where = PLAYERS.c.token == token if token is not None else PLAYERS.c.id == player_id
        with self.engine.connect() as c:
            row = c.execute(select(PLAYERS).where(where)).first()
        return None if row is None else dict(row._mapping)

    def agent_player(self, spec: str, mu: float, sigma: float) -> int:
        """The player of the server's agent ``spec`` (made at its first rated deal), named by :func:`agent_name`."""
        name = agent_name(spec)
        with self.engine.connect() as c:
            row = c.execute(select(PLAYERS.c.id).where(PLAYERS.c.kind == "agent", PLAYERS.c.name == name)).first()
        if row is not None:
            return row.id
        try:
            return self.add_player(name, "agent", None, mu, sigma)
        except NameTaken:  # made meanwhile by another thread
            return self.agent_player(spec, mu, sigma)

    def update_ratings(self, ratings: dict[int, tuple[float, float]], results: list[dict]) -> None:
        """Write new ``(mu, sigma)`` of players, each resting on one more deal, and the results they come from."""
        with self.lock, self.engine.begin() as c:
            for player_id, (mu, sigma) in ratings.items():
                c.execute(update(PLAYERS).where(PLAYERS.c.id == player_id)
                          .values(mu=mu, sigma=sigma, games=PLAYERS.c.games + 1))
            if results:
                c.execute(insert(RESULTS), [{**r, "time": time.time()} for r in results])

    def ratings(self, limit: int) -> list[dict]:
        """The ``limit`` players rated highest by ``mu - 3 sigma``, with the deals each rests on."""
        with self.engine.connect() as c:
            rows = c.execute(select(PLAYERS.c.id, PLAYERS.c.name, PLAYERS.c.kind, PLAYERS.c.mu, PLAYERS.c.sigma,
                                    PLAYERS.c.games).where(PLAYERS.c.games > 0)
                             .order_by((PLAYERS.c.mu - 3 * PLAYERS.c.sigma).desc()).limit(limit)).all()
        return [dict(r._mapping) for r in rows]


class DailyMixin:
    """The daily challenge's entries and the server's settings (:mod:`manni_agents.play.web.daily`)."""

    engine: Engine
    lock: threading.Lock

    def setting(self, key: str, make: Callable[[], str]) -> str:
        """The setting ``key``, made by ``make()`` and kept the first time it is asked for."""
        with self.lock, self.engine.begin() as c:
            row = c.execute(select(SETTINGS.c.value).where(SETTINGS.c.key == key)).first()
            if row is not None:
                return row.value
            value = make()
            c.execute(insert(SETTINGS).values(key=key, value=value))
            return value

    def add_entry(self, day: str, deal: int, player_id: int, table_id: str, seat: int) -> None:
        """A player starts a deal of a day; ``ValueError`` if they started it before."""
        try:
            with self.lock, self.engine.begin() as c:
                c.execute(insert(DAILY).values(day=day, deal=deal, player_id=player_id, table_id=table_id, seat=seat,
                                               started=time.time()))
        except IntegrityError:
            raise ValueError(f"you have played deal {deal} of {day} already: each deal is played once") from None

    def entries(self, day: str) -> list[dict]:
        """Every entry of ``day`` with its player's name and kind."""
        with self.engine.connect() as c:
            rows = c.execute(select(DAILY, PLAYERS.c.name, PLAYERS.c.kind).join(PLAYERS, PLAYERS.c.id == DAILY.c.player_id)
                             .where(DAILY.c.day == day).order_by(DAILY.c.id)).all()
        return [dict(r._mapping) for r in rows]

    def finish_entry(self, table_id: str, points: Sequence[int], par: Sequence[int]) -> None:
        """The deal of the daily entry played at ``table_id`` (if any) is over: keep its seat's result."""
        with self.lock, self.engine.begin() as c:
            row = c.execute(select(DAILY.c.seat).where(DAILY.c.table_id == table_id, DAILY.c.finished.is_(None))).first()
            if row is not None:
                c.execute(update(DAILY).where(DAILY.c.table_id == table_id)
                          .values(points=int(points[row.seat]), par=int(par[row.seat]), finished=time.time()))

    def game_record(self, table_id: str) -> dict | None:
        """The record kept of the game at ``table_id``, if any."""
        with self.engine.connect() as c:
            row = c.execute(select(GAMES.c.record).where(GAMES.c.table_id == table_id)).first()
        return None if row is None else json.loads(row.record)


def agent_name(spec: str) -> str:
    """The player name of the server's agent ``spec``: the spec itself, or, where it is longer than a
    name (:data:`NAME_MAX`), its start and a hash of the whole, so that two long specs that start
    alike (``ppo:runs/…/agent``) never share a rating."""
    if len(spec) <= NAME_MAX:
        return spec
    return f"{spec[:NAME_MAX - 9]}~{hashlib.sha256(spec.encode()).hexdigest()[:8]}"


@dataclass
class MoveBatch:
    """Moves committed in one transaction: their rows, whether the transaction ran, its error."""

    rows: list[dict] = field(default_factory=list)
    written: bool = False
    error: SQLAlchemyError | None = None


class MoveQueue:
    """The moves waiting for their transaction (:meth:`Database.add_move`), safe across threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._batch = MoveBatch()

    def add(self, row: dict) -> MoveBatch:
        """Queue ``row``: the batch it will be committed in."""
        with self._lock:
            self._batch.rows.append(row)
            return self._batch

    def take(self) -> MoveBatch:
        """The batch queued so far (a new one takes the next rows)."""
        with self._lock:
            batch, self._batch = self._batch, MoveBatch()
            return batch


class Database(PlayersMixin, DailyMixin):
    """The server's database (see the module docstring); writes are serialized by one lock."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.lock = threading.Lock()
        self._moves = MoveQueue()
        self._local = threading.local()  # batches: the moves deferred on this thread (see deferred)
        self.rating_lock = threading.Lock()  # held by a rating's read-rate-write (ratings.rate_deal)

    @classmethod
    def open(cls, url: str) -> Database:
        """The database at ``url`` (a path is an SQLite file, created with its folder if missing),
        migrated to the newest schema."""
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False} if url.startswith("sqlite") else {})
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        migrate(engine)
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ tables and moves
    def add_table(self, table_id: str, row: dict) -> None:
        with self.lock, self.engine.begin() as c:
            c.execute(insert(TABLES).values(id=table_id, created=time.time(), **row))

    def update_table(self, table_id: str, **values) -> None:
        with self.lock, self.engine.begin() as c:
            c.execute(update(TABLES).where(TABLES.c.id == table_id).values(**values))

    def add_move(self, table_id: str, n: int, seat: int, action: int, probabilities: dict | None,
                 review: dict | None) -> None:
        """Write move ``n`` of ``table_id``; return once it is committed (an error if it was not),
        or at once inside :meth:`deferred`.

        Moves of several tables written at the same time are committed together (a group commit):
        the first thread to take the lock writes every move queued by then in one transaction, and
        the threads whose moves it wrote find them written when they get the lock. The statement is
        SQLAlchemy's cached one with the rows as parameters."""
        batch = self._moves.add({"table_id": table_id, "n": n, "seat": seat, "action": action,
                                 "probabilities": probabilities, "review": review})
        deferred = getattr(self._local, "batches", None)
        if deferred is not None:
            if not deferred or deferred[-1] is not batch:
                deferred.append(batch)
            return
        self._commit([batch])

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside it, :meth:`add_move` on this thread only queues its move; the moves queued are
        committed together when it ends (an error if they were not), or earlier by
        :meth:`commit_moves`. For several moves made one after another (:mod:`.remote_bots`): none
        of them may be answered before the block ends."""
        self._local.batches = []
        try:
            yield
        finally:
            batches, self._local.batches = self._local.batches, None
        self._commit(batches)

    def commit_moves(self) -> None:
        """Commit the moves this thread queued inside :meth:`deferred` so far (outside it, every
        move is committed by its :meth:`add_move`)."""
        batches = getattr(self._local, "batches", None)
        if batches:
            try:
                self._commit(batches)
            finally:
                batches.clear()  # a failure is raised once

    def _commit(self, batches: list[MoveBatch]) -> None:
        """Return once every one of ``batches`` is committed; raise the error of one that failed."""
        with self.lock:
            if not all(batch.written for batch in batches):  # only the batch queued now can be unwritten
                self._write_moves()
        for batch in batches:
            if batch.error is not None:
                raise batch.error

    def _write_moves(self) -> None:
        """Commit the queued moves in one transaction (under :attr:`lock`)."""
        batch = self._moves.take()
        try:
            with self.engine.begin() as c:
                c.execute(insert(MOVES), batch.rows)
        except SQLAlchemyError as err:
            batch.error = err
        finally:
            batch.written = True

    def update_review(self, table_id: str, n: int, review: dict) -> None:
        """The review of move ``n`` at ``table_id``, now with its card's worth."""
        with self.lock, self.engine.begin() as c:
            c.execute(update(MOVES).where(MOVES.c.table_id == table_id, MOVES.c.n == n).values(review=review))

    def add_single_game(self, game_id: str, row: dict, moves: list[tuple[int, dict | None]]) -> None:
        """A new single game and the moves its agents made before it was kept."""
        with self.lock, self.engine.begin() as c:
            c.execute(insert(SINGLE_GAMES).values(id=game_id, created=time.time(), closed=False, **row))
            if moves:
                c.execute(insert(SINGLE_MOVES), [{"game_id": game_id, "n": n, "action": a, "probabilities": p}
                                                 for n, (a, p) in enumerate(moves)])

    def add_single_move(self, game_id: str, n: int, action: int, probabilities: dict | None) -> None:
        with self.lock, self.engine.begin() as c:
            c.execute(insert(SINGLE_MOVES).values(game_id=game_id, n=n, action=action, probabilities=probabilities))

    def close_single_game(self, game_id: str) -> None:
        with self.lock, self.engine.begin() as c:
            c.execute(update(SINGLE_GAMES).where(SINGLE_GAMES.c.id == game_id).values(closed=True))

    def open_single_games(self) -> Iterator[tuple[dict, list[dict]]]:
        """Each single game not closed, oldest first: its row and its moves in order."""
        with self.engine.connect() as c:
            rows = [dict(r._mapping) for r in c.execute(select(SINGLE_GAMES).where(~SINGLE_GAMES.c.closed)
                                                        .order_by(SINGLE_GAMES.c.created))]
            for row in rows:
                moves = c.execute(select(SINGLE_MOVES).where(SINGLE_MOVES.c.game_id == row["id"]).order_by(SINGLE_MOVES.c.n))
                yield row, [dict(m._mapping) for m in moves]

    def open_tables(self) -> Iterator[tuple[dict, list[dict]]]:
        """Each table not closed, oldest first: its row and its moves in order."""
        with self.engine.connect() as c:
            rows = [dict(r._mapping) for r in c.execute(select(TABLES).where(~TABLES.c.closed).order_by(TABLES.c.created))]
            for row in rows:
                moves = c.execute(select(MOVES).where(MOVES.c.table_id == row["id"]).order_by(MOVES.c.n))
                yield row, [dict(m._mapping) for m in moves]

    # ------------------------------------------------------------------ records
    def save_record(self, table_id: str | None, record: dict) -> None:
        """Keep a game's ``manni-record/1`` record (a table's replaces its earlier one)."""
        text = json.dumps(record, separators=(",", ":"))
        with self.lock, self.engine.begin() as c:
            if table_id is not None and c.execute(select(GAMES.c.id).where(GAMES.c.table_id == table_id)).first():
                c.execute(update(GAMES).where(GAMES.c.table_id == table_id).values(record=text, finished=time.time()))
            else:
                c.execute(insert(GAMES).values(table_id=table_id, finished=time.time(), record=text))

    def records(self) -> Iterator[dict]:
        """Every saved record, oldest first (read in pages: memory stays bounded)."""
        last = 0
        while True:
            with self.engine.connect() as c:
                rows = c.execute(select(GAMES.c.id, GAMES.c.record).where(GAMES.c.id > last)
                                 .order_by(GAMES.c.id).limit(500)).all()
            if not rows:
                return
            for row in rows:
                yield json.loads(row.record)
            last = rows[-1].id


def migrate(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations on ``engine`` up to ``revision``."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """WAL (readers never wait for the writer), commits that survive the process's death, foreign keys."""
    cursor = dbapi_connection.cursor()
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=10000"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()
