"""The HTTP routes and the WebSocket of the tables (:mod:`.tables`), added to ``manni serve``'s app.

=========  ==============================  =================================================
method     path                            what
=========  ==============================  =================================================
POST       ``/api/tables``                 new table ``{variant, seats: [3 x "person", "bot"
                                           or agent], hints?, grace_seconds?, seed?, target?,
                                           negative?}`` → ``{id, invite}`` (``seed``
                                           only with one seat for a person)
GET        ``/api/tables/{id}``            the public table (seats, who is connected)
POST       ``/api/tables/{id}/seats``      join ``{name, bot?}`` → ``{seat, token}`` (409: full;
                                           ``bot``: a seat for a remote bot, :mod:`.remote_bots`)
GET        ``/api/tables/{id}/replay``     a finished table's replay
WebSocket  ``/ws/tables/{id}``             first message ``{"type": "hello", "token": T}``
                                           (a seat) or ``{"type": "watch"}``; then
                                           ``{"type": "move", "actions": [...], "after"?}`` and
                                           ``{"type": "start"}``
=========  ==============================  =================================================

The server pushes ``{"type": "state", ...}`` (:meth:`Table.message`, built for each connection's
seat) to every connection of a table after each change, and ``{"type": "error", "message"}`` to a
connection whose message it refused (nothing changed): a message that is not a JSON object of at
most :data:`MAX_MESSAGE` characters (a binary frame, deeply nested JSON, garbage) is refused like
any other. A refused first message also closes the socket (code 4400). A remote bot's seat speaks
``manni-bot/1`` instead (:mod:`.remote_bots`).

Bounds (docs/reliability.md): at most :data:`MAX_SOCKETS` table connections at once, counted from
the moment they open (beyond: an error and code 1013); the first message within
:data:`HELLO_SECONDS` (else an error and code 4408); :data:`MAX_WATCHERS` spectators per table and
:data:`MAX_SEAT_SOCKETS` connections per seat (its tabs).
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Annotated, Literal

import anyio
from fastapi import FastAPI, Request, Response, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from starlette.exceptions import HTTPException
from starlette.websockets import WebSocketDisconnected, WebSocketState

from manni_agents.base import close_policies
from manni_agents.play.web.game import MAX_ACTIONS
from manni_agents.play.web.limits import ReplayGuard, client_key, finished_record
from manni_agents.play.web.lineup import SHIPPED, Lineup
from manni_agents.play.web.remote_bots import BotLink, BotMoves, serve_bot
from manni_agents.play.web.store import StoreFull
from manni_agents.play.web.tables import BOT, NAME_MAX, PERSON, Table, TableError, TableFull, TableStore, digest
from manni_env.actions import NUM_ACTIONS
from manni_env.rules import VARIANTS, make_rules

#: Largest WebSocket message a client may send (characters), spectators per table, seconds a
#: slow connection may take to receive one message before it is closed.
MAX_MESSAGE, MAX_WATCHERS, SEND_TIMEOUT = 4096, 32, 10.0
#: Largest WebSocket frame the server reads at all (uvicorn closes the connection beyond, 1009).
WS_MAX_BYTES = 65_536
#: Table connections open at once (silent ones too), seconds a new one has to say hello,
#: connections of one seat (a person's tabs), table connections of one client
#: (:func:`~manni_agents.play.web.limits.client_key`).
MAX_SOCKETS, HELLO_SECONDS, MAX_SEAT_SOCKETS, SOCKETS_PER_CLIENT = 512, 10.0, 8, 64
#: What a connection that went away raises: the client closed it, or the server did (a slow one).
GONE = (WebSocketDisconnect, WebSocketDisconnected)
A_MESSAGE = "a message is a JSON object like {\"type\": \"move\", \"actions\": [12]}"


class NewTable(BaseModel):
    """A new table: the variant and options, each seat ``"person"`` or an agent, hints, grace."""

    model_config = ConfigDict(extra="forbid")
    variant: Literal[VARIANTS] = "hornafjardar"  # type: ignore[valid-type]
    seats: list[Annotated[str, Field(max_length=200)]] = Field([PERSON, PERSON, PERSON], min_length=3, max_length=3)
    hints: StrictBool = False
    grace_seconds: float = Field(120.0, ge=1, le=3600)
    seed: StrictInt | None = Field(None, ge=0, lt=2**63)
    target: StrictInt | None = Field(None, ge=1, le=100)
    negative: StrictBool | None = None


class Join(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field("", max_length=200)
    bot: StrictBool = False
    player: str | None = Field(None, max_length=100)  # a rated player's token (ratings.py)


class Hello(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["hello", "watch"]
    token: str | None = Field(None, max_length=100)


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["move"]
    actions: list[Annotated[StrictInt, Field(ge=0, lt=NUM_ACTIONS)]] = Field(min_length=1, max_length=MAX_ACTIONS)
    seat: StrictInt | None = None  # optional: refused unless it is the connection's own seat
    after: Annotated[StrictInt, Field(ge=0)] | None = None  # optional: the state's moves it was chosen after


class Start(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["start"]


class Refused(Exception):
    """A client message the server does not accept; ``str`` is the message sent back, ``code`` the
    close code when it ends the connection."""

    def __init__(self, message: str, code: int = 4400):
        super().__init__(message)
        self.code = code


class Hub:
    """The open connections of each table and their seats; pushes each its own view once per
    version of the table."""

    def __init__(self, tables: TableStore, max_sockets: int, per_client: int):
        self.tables, self.max_sockets, self.per_client, self.open = tables, max_sockets, per_client, 0
        self.clients: dict[str | None, int] = {}  # open connections per client
        self.sockets: dict[str, dict[WebSocket, int | None]] = {}
        self.sent: dict[WebSocket, float] = {}  # the version each connection was sent last (inf: none yet)
        self.locks: dict[str, asyncio.Lock] = {}
        self.timers: set[asyncio.Task] = set()
        self.bots: dict[str, dict[int, BotLink]] = {}  # each table's remote bots by seat
        self.moves = BotMoves(tables.keeper)  # where the remote bots' moves are made

    def add(self, table_id: str, ws: WebSocket, seat: int | None) -> None:
        """Count ``ws`` as a connection of ``seat`` at once (so a burst of hellos cannot pass the
        caps together); it is sent nothing until :meth:`ready`."""
        self.sockets.setdefault(table_id, {})[ws] = seat
        self.sent[ws] = math.inf
        self.locks.setdefault(table_id, asyncio.Lock())

    def ready(self, ws: WebSocket) -> None:
        """``ws`` was welcomed: the next broadcast sends it the table."""
        self.sent[ws] = -1

    def remove(self, table_id: str, ws: WebSocket) -> None:
        self.sockets.get(table_id, {}).pop(ws, None)
        self.sent.pop(ws, None)

    def admit(self, client: str | None) -> Refused | None:
        """Count a new connection of ``client`` (whether it said hello or not), or say why not: at
        :attr:`max_sockets`, or the client's :attr:`per_client` (an unknown client has none)."""
        if self.open >= self.max_sockets:
            return Refused(f"{self.max_sockets} table connections are open, the most this server keeps; "
                           "try again later", 1013)
        if client is not None and self.clients.get(client, 0) >= self.per_client:
            return Refused(f"you have {self.per_client} table connections open, the most one client may have: "
                           "close some tabs", 1013)
        self.open += 1
        self.clients[client] = self.clients.get(client, 0) + 1
        return None

    def release(self, client: str | None) -> None:
        """A connection :meth:`admit` counted has ended."""
        self.open -= 1
        self.clients[client] -= 1
        if not self.clients[client]:
            del self.clients[client]

    def connections(self, table_id: str, seat: int | None) -> int:
        """Connections of ``seat`` at the table (``None``: its spectators)."""
        return sum(s == seat for s in self.sockets.get(table_id, {}).values())

    async def broadcast(self, table_id: str, table: Table) -> None:
        """Send every connection of the table its seat's message if the table changed since its
        last one (in order: one broadcast at a time). Each seat's message (and the spectators') is
        built and encoded once, however many connections it has, and the people's connections are
        sent theirs before the spectators. Then the table's remote bots are woken (whether or not
        any other connection was sent something: a table may have only bots)."""
        lock = self.locks.setdefault(table_id, asyncio.Lock())
        async with lock:
            if table.state.finished and not table.saved:  # saved when it ends, like a single game
                await run_in_threadpool(self.tables.games.save, table)
            await self._push(table_id, table)
        for link in self.bots.get(table_id, {}).values():
            link.changed.set()

    async def _push(self, table_id: str, table: Table) -> None:
        """Send the table's connections that have not had its version their seat's message."""
        connections = sorted(((ws, seat) for ws, seat in self.sockets.get(table_id, {}).items()
                              if self.sent.get(ws, -1) < table.version), key=lambda item: item[1] is None)
        if not connections:
            return
        texts = await run_in_threadpool(_encoded, table, {seat for _, seat in connections})
        for ws, seat in connections:
            version, text = texts[seat]
            try:
                self.sent[ws] = version
                with anyio.fail_after(SEND_TIMEOUT):
                    await ws.send_text(text)
            except Exception:  # a closed or stuck connection: closed; its own loop cleans up
                self.remove(table_id, ws)
                self._keep(asyncio.ensure_future(_close(ws, "too slow to receive the table's messages", 1008)))

    def schedule(self, table_id: str, table: Table) -> None:
        """Run :meth:`Table.tick` when the table's grace period may next end."""
        deadline = table.next_deadline()
        if deadline is None:
            return
        delay = max(0.0, deadline - table.clock()) + 0.05
        asyncio.get_running_loop().call_later(delay, self._spawn, table_id, table)

    def _spawn(self, table_id: str, table: Table) -> None:
        self._keep(asyncio.ensure_future(self.tick(table_id, table)))

    def _keep(self, task: asyncio.Future) -> None:
        """Hold a background task until it is done (the loop keeps only weak references)."""
        self.timers.add(task)
        task.add_done_callback(self.timers.discard)

    async def tick(self, table_id: str, table: Table) -> None:
        changed = await run_in_threadpool(table.tick)
        if table.closed:
            await run_in_threadpool(self.tables.finish, table_id)
            for ws in list(self.sockets.pop(table_id, {})):
                await _close(ws, "this table is over: everybody left it")
            for link in self.bots.pop(table_id, {}).values():
                link.changed.set()
            self.locks.pop(table_id, None)
            return
        if changed:
            await self.broadcast(table_id, table)
        self.schedule(table_id, table)


def _encoded(table: Table, seats: set[int | None]) -> dict[int | None, tuple[int, str]]:
    """Each of ``seats``' message (``None``: the spectators'), with its version, as JSON text."""
    encoded = {}
    for seat in seats:
        message = table.message(seat)
        encoded[seat] = message["version"], json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return encoded


def add_table_routes(app: FastAPI, tables: TableStore, lineup: Lineup, replays: ReplayGuard) -> Hub:
    """Add the tables' routes and WebSocket (see the module docstring) to ``app``; ``replays``
    bounds the replays built. Returns the hub of the tables' connections."""
    hub = Hub(tables, MAX_SOCKETS, SOCKETS_PER_CLIENT)

    def table_of(table_id: str) -> Table:
        try:
            return tables.get(table_id)
        except TableError as err:
            raise HTTPException(404, str(err)) from None

    @app.post("/api/tables", status_code=201)
    async def new_table(body: NewTable, request: Request) -> dict:
        options = {k: v for k, v in (("target", body.target), ("negative", body.negative)) if v is not None}
        try:
            rules = make_rules(body.variant, **options)
            seats = [s if s in (PERSON, BOT) else lineup.check(s, body.variant) for s in body.seats]
            advisor = SHIPPED if lineup.defaults[body.variant] == SHIPPED else None
            table = await run_in_threadpool(lambda: Table(
                rules, seats, stand_in=lineup.defaults[body.variant], advisor=advisor, hints=body.hints,
                grace_seconds=body.grace_seconds, seed=body.seed))
        except ValueError as err:
            raise HTTPException(400, str(err)) from None
        try:
            table_id = tables.add(table, client_key(request.client.host if request.client else None))
        except StoreFull as err:
            close_policies(table.policies.values())
            raise HTTPException(429, str(err)) from None
        hub.schedule(table_id, table)
        return {"id": table_id, "invite": f"/#table={table_id}", **table.info()}

    @app.get("/api/tables/{table_id}")
    def get_table(table_id: str) -> dict:
        return {"id": table_id, **table_of(table_id).info()}

    @app.post("/api/tables/{table_id}/seats", status_code=201)
    async def join(table_id: str, body: Join) -> dict:
        table = table_of(table_id)
        name, player = body.name[: NAME_MAX * 4], None
        if body.player is not None:
            name, player = await run_in_threadpool(_player, tables, body.player, body.bot)
        try:
            seat, token = await run_in_threadpool(table.join, name, body.bot, player)
        except TableFull as err:
            raise HTTPException(409, str(err)) from None
        except TableError as err:
            raise HTTPException(404, str(err)) from None
        await hub.broadcast(table_id, table)
        hub.schedule(table_id, table)
        return {"id": table_id, "seat": seat, "token": token}

    @app.get("/api/tables/{table_id}/replay")
    def table_replay(table_id: str) -> Response:
        return replays.build(finished_record(table_of(table_id)))

    @app.websocket("/ws/tables/{table_id}")
    async def table_socket(ws: WebSocket, table_id: str) -> None:
        await ws.accept()
        client = client_key(ws.client.host if ws.client else None)
        refused = hub.admit(client)
        if refused is not None:
            await _refuse(ws, refused)
            return
        try:
            await _serve(ws, table_id, tables, hub)
        except GONE:  # the client went away, or the server closed a slow connection, mid-message
            pass
        finally:
            hub.release(client)

    return hub


def _player(tables: TableStore, token: str, bot: bool) -> tuple[str, int]:
    """The name and id of the player whose token is ``token``; a 4xx naming what is wrong."""
    if tables.keeper is None:
        raise HTTPException(400, "this server keeps no players (it runs without a database)")
    row = tables.keeper.db.player(token=digest(token))
    if row is None:
        raise HTTPException(404, "unknown player token: make a player with POST /api/players first")
    if row["kind"] != ("bot" if bot else "person"):
        raise HTTPException(400, f"{row['name']} is a {row['kind']} player: a {'bot' if bot else 'person'}'s seat "
                            f"takes a {'bot' if bot else 'person'} player")
    return row["name"], row["id"]


async def _serve(ws: WebSocket, table_id: str, tables: TableStore, hub: Hub) -> None:
    """One table connection from its hello to its end."""
    try:
        table, seat = await _greet(ws, table_id, tables, hub)
    except Refused as err:
        await _refuse(ws, err)
        return
    if seat is not None and table.seats[seat].bot:  # counted in hub.bots before anything is awaited
        await serve_bot(ws, table_id, table, seat, hub)
        return
    hub.add(table_id, ws, seat)
    try:
        if seat is not None:
            await run_in_threadpool(table.connect, seat)
        await ws.send_json({"type": "welcome", "seat": seat})
        hub.ready(ws)
        await hub.broadcast(table_id, table)
        while True:
            try:
                await _handle(await _receive(ws), table, seat)
            except Refused as err:
                await ws.send_json({"type": "error", "message": str(err)})
                continue
            await hub.broadcast(table_id, table)
            if await run_in_threadpool(table.value_reviews):  # after the push: the search is not on a move's way
                await hub.broadcast(table_id, table)
    finally:
        hub.remove(table_id, ws)
        if seat is not None and not table.closed:
            with anyio.CancelScope(shield=True):  # the grace period starts even if the handler is cancelled
                await run_in_threadpool(table.disconnect, seat)
                hub.schedule(table_id, table)
                await hub.broadcast(table_id, table)


async def _refuse(ws: WebSocket, err: Refused) -> None:
    """Tell a connection why it is refused and close it (quietly if it is gone already)."""
    try:
        await ws.send_json({"type": "error", "message": str(err), "fatal": True})
    except GONE:
        return
    await _close(ws, str(err), err.code)


async def _receive(ws: WebSocket) -> dict:
    """The next client message as a JSON object; :class:`Refused` naming what is wrong with it
    (binary frames, over-long or deeply nested text, anything but an object)."""
    if ws.application_state != WebSocketState.CONNECTED:
        raise WebSocketDisconnect(1000)  # the server closed it (a slow connection)
    frame = await ws.receive()
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    text = frame.get("text")
    if text is None:
        raise Refused(f"binary frames are not read: {A_MESSAGE}, sent as text")
    if len(text) > MAX_MESSAGE:
        raise Refused(f"message too long ({len(text)} characters; at most {MAX_MESSAGE})")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise Refused(A_MESSAGE) from None
    if not isinstance(message, dict):
        raise Refused(A_MESSAGE)
    return message


def _parse(model: type[BaseModel], message: dict) -> BaseModel:
    try:
        return model.model_validate(message)
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(part) for part in e.get("loc", ()))
        raise Refused(f"bad {message.get('type', 'message')!s:.20} message: {where}: {e.get('msg')}") from None


async def _greet(ws: WebSocket, table_id: str, tables: TableStore, hub: Hub) -> tuple[Table, int | None]:
    """The table and seat of a new connection, from its first message."""
    try:
        table = tables.get(table_id)
    except TableError as err:
        raise Refused(str(err)) from None
    try:
        hello = _parse(Hello, await asyncio.wait_for(_receive(ws), HELLO_SECONDS))
    except asyncio.TimeoutError:
        raise Refused(f"no hello within {HELLO_SECONDS:g} s: send {{\"type\": \"hello\", \"token\": T}} or "
                      "{\"type\": \"watch\"} first", 4408) from None
    if hello.type == "watch":
        if hub.connections(table_id, None) >= MAX_WATCHERS:
            raise Refused(f"this table has {MAX_WATCHERS} spectators, the most it takes")
        return table, None
    if not hello.token:
        raise Refused("hello needs the seat token that joining the table gave (or watch instead)")
    try:
        seat = tables.seat_of(table_id, hello.token)
    except TableError as err:
        raise Refused(str(err)) from None
    if table.seats[seat].bot and seat in hub.bots.get(table_id, {}):
        raise Refused("this bot seat is connected already: one connection per bot")
    if hub.connections(table_id, seat) >= MAX_SEAT_SOCKETS:
        raise Refused(f"this seat has {MAX_SEAT_SOCKETS} connections open, the most it takes: close a tab")
    return table, seat


async def _handle(message: dict, table: Table, seat: int | None) -> None:
    """Apply one client message after the first; :class:`Refused` for anything not accepted."""
    kind = message.get("type")
    if kind not in ("move", "start"):
        raise Refused(f"unknown message type {str(kind)[:20]!r}: send move or start")
    if seat is None:
        raise Refused("spectators watch: only the people seated at the table move")
    try:
        if kind == "start":
            _parse(Start, message)
            await run_in_threadpool(table.start, seat)
            return
        move = _parse(Move, message)
        if move.seat is not None and move.seat != seat:
            raise Refused(f"you sit in seat {seat}: a move for seat {move.seat} is not yours to make")
        await run_in_threadpool(table.act, seat, move.actions, move.after)
    except TableError as err:
        raise Refused(str(err)) from None


async def _close(ws: WebSocket, reason: str, code: int = 1000) -> None:
    try:
        await ws.close(code=code, reason=reason[:120])
    except Exception:  # already closed
        pass
