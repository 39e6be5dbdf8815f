"""Tables that outlast the server: each table's changes and moves written to the
:class:`~manni_agents.play.web.database.Database` as they happen (:class:`Journal`), and every
table in progress rebuilt from them at the next start (:func:`restore_tables`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from sqlalchemy.exc import SQLAlchemyError

from manni_agents.play.web.database import Database
from manni_agents.play.web.ratings import new_rating, rate_deal
from manni_agents.play.web.tables import BOT, PERSON, Table
from manni_agents.registry import make_agent
from manni_env.rules import make_rules

log = logging.getLogger("manni.serve")


def _seats(table: Table) -> list[dict]:
    return [{"spec": seat.spec, "bot": seat.bot, "name": seat.name, "token": seat.token, "strikes": seat.strikes,
             "stand_in": seat.stand_in, "player": seat.player} for seat in table.seats]


class Journal:
    """Writes one table's changes (seats, started, closed) and each of its moves, and its record
    once the game is over; called by the table under its lock, so before anything is answered (a
    move written inside :meth:`Database.deferred <manni_agents.play.web.database.Database.deferred>`
    is committed when that block ends, before its answer too)."""

    def __init__(self, db: Database, table_id: str, moves: int = 0):
        self.db, self.table_id, self.moves = db, table_id, moves
        self.rated = 0  # the deals rated
        self._last: str | None = None

    def create(self, table: Table, client: str | None = None) -> None:
        """Write the new table's header (``client``: who created it)."""
        rules = table.state.rules
        self._last = self._header(table)
        self.db.add_table(self.table_id, {
            "variant": rules.variant, "options": rules.options(), "seed": str(table.seed),
            "chosen_seed": table.chosen_seed is not None, "stand_in": table.stand_in, "advisor": table.advisor_spec,
            "hints": table.hints, "grace_seconds": table.grace_seconds, "seats": _seats(table),
            "started": table.started, "closed": table.closed, "client": None if client is None else client[:64]})

    @staticmethod
    def _header(table: Table) -> str:
        return repr((_seats(table), table.started, table.closed))

    def changed(self, table: Table) -> None:
        """Write the header if what lasts of it changed (not for a connection opening or closing)."""
        header = self._header(table)
        if header != self._last:
            self._last = header
            try:
                self.db.update_table(self.table_id, seats=_seats(table), started=table.started, closed=table.closed)
            except SQLAlchemyError as err:
                log.error("table %s: its seats not written to the database: %s", self.table_id, err)

    def moved(self, table: Table, seat: int, action: int, probabilities: dict | None, review: dict | None) -> None:
        """Write the move ``seat`` just played; when it ended a deal, rate the deal, and when it
        ended the game, keep the record. A write that fails (a full disk) is logged and the game
        goes on: only a restart would miss what was not written."""
        try:
            self._moved(table, seat, action, probabilities, review)
        except SQLAlchemyError as err:
            log.error("table %s: move %d not written to the database: %s", self.table_id, self.moves, err)

    def _moved(self, table: Table, seat: int, action: int, probabilities: dict | None, review: dict | None) -> None:
        self.db.add_move(self.table_id, self.moves, seat, action, probabilities, review)
        self.moves += 1
        ended = table.par is not None and len(table.par.pars) > self.rated
        if ended or table.state.finished:
            self.db.commit_moves()  # a deal's moves before its rating and its record (add_move may have deferred them)
        if ended:
            deal = table.par.pars[-1]
            self.rated = len(table.par.pars)
            rate_deal(self.db, self._players(table), deal.points, deal.par, "table", self.table_id, deal.deal)
            self.db.finish_entry(self.table_id, deal.points, deal.par)  # a daily challenge's deal (one deal long)
        if table.state.finished:
            self.db.save_record(self.table_id, table.record())

    def reviewed(self, n: int, review: dict) -> None:
        """Write the worth of a person's card play valued after its move was pushed
        (:meth:`~manni_agents.play.web.tables.Table.value_reviews`) into the review of move ``n``."""
        try:
            self.db.update_review(self.table_id, n, review)
        except SQLAlchemyError as err:
            log.error("table %s: the review of move %d not written to the database: %s", self.table_id, n, err)

    def _players(self, table: Table) -> list[int | None]:
        """The rated player of each seat: the person's or bot's who gave a token, the agent's."""
        return [seat.player if seat.person else self.db.agent_player(seat.spec, *new_rating()) for seat in table.seats]

    def closed(self, table: Table) -> None:
        """The table is over: mark it, and keep the record of its finished deals if the game was cut short."""
        self.db.update_table(self.table_id, seats=_seats(table), started=table.started, closed=True)
        if table.state.rounds and not table.state.finished:
            self.db.save_record(self.table_id, table.record())


class TableKeeper:
    """What :class:`~manni_agents.play.web.tables.TableStore` needs of the database: a journal for
    each new table, and the tables in progress at the start."""

    def __init__(self, db: Database):
        self.db = db

    def attach(self, table_id: str, table: Table, client: str | None = None) -> None:
        """Write the new table ``table_id`` created by ``client`` and everything that happens at it
        from now on."""
        with table.lock:
            table.journal = Journal(self.db, table_id)
            table.journal.create(table, client)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """The moves written inside it are committed together when it ends
        (:meth:`~manni_agents.play.web.database.Database.deferred`); a commit that fails is
        logged, and the games go on (as :meth:`Journal.moved`)."""
        try:
            with self.db.deferred():
                yield
        except SQLAlchemyError as err:
            log.error("moves not written to the database: %s", err)

    def restore(self) -> Iterator[tuple[str, Table, str | None]]:
        """The tables in progress and their creators (:func:`restore_tables`)."""
        return restore_tables(self.db)


def restore_tables(db: Database) -> Iterator[tuple[str, Table, str | None]]:
    """Every table in progress, rebuilt from its header and its moves, its journal attached, with
    the client that created it; a table that cannot be rebuilt (an agent no longer offered) is
    logged, marked closed and skipped."""
    for row, moves in db.open_tables():
        try:
            table = _restore(row, moves)
        except (ValueError, KeyError) as err:
            log.error("table %s cannot be restored (%s): closed", row["id"], err)
            db.update_table(row["id"], closed=True)
            continue
        journal = Journal(db, row["id"], len(moves))
        journal._last = journal._header(table)
        journal.rated = len(table.par.pars) if table.par is not None else 0
        table.journal = journal
        table.value_reviews()  # the card plays the restart left unvalued
        if table.started:
            with table.lock:
                table._advance()  # the agents' moves the restart interrupted
        yield row["id"], table, row["client"]


def _restore(row: dict, moves: list[dict]) -> Table:
    """The table of ``row`` at its last move: the same deal from its seed, each move replayed with
    its kept probabilities and review (no agent is asked again)."""
    rules = make_rules(row["variant"], **row["options"])
    seats = row["seats"]
    specs = [BOT if s["bot"] else PERSON if s["spec"] == PERSON else s["spec"] for s in seats]
    seed = int(row["seed"])
    table = Table(rules, specs, stand_in=row["stand_in"],
                  advisor=row["advisor"], hints=row["hints"], grace_seconds=row["grace_seconds"],
                  seed=seed if row["chosen_seed"] else None)
    table._deal(rules, seed)
    now = table.clock()
    for seat, kept in zip(table.seats, seats):
        seat.spec, seat.bot, seat.name, seat.token = kept["spec"], kept["bot"], kept["name"], kept["token"]
        seat.strikes, seat.stand_in, seat.player = kept["strikes"], kept["stand_in"], kept.get("player")
        seat.left_at = now if seat.token is not None else None  # the grace period starts again
    table.policies = {s: make_agent(seat.spec) for s, seat in enumerate(table.seats) if not seat.person}
    table.started, table.closed = row["started"], row["closed"]
    table.names[:] = table._names()
    if table.started:
        table.narrate()
    for move in moves:
        if table.state.to_move != move["seat"]:
            raise ValueError(f"move {move['n']} is seat {move['seat']}'s, but seat {table.state.to_move} is on turn")
        table.record_move(move["action"], move["probabilities"], move["review"], move["n"])
    return table
