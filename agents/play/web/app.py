"""The FastAPI application of ``manni serve``: a JSON API and one static page (``static/``).

=======  ================================  ==================================================
method   path                              what
=======  ================================  ==================================================
GET      ``/``                             the page (what Manni is, play, tables, replay)
GET      ``/rules``                        the rules, one section per variant (``/rules#basic``)
GET      ``/api/variants``                 the variants: id, display name, one line, facts
GET      ``/api/options``                  variants, opponents per variant and their default,
                                           the games of the server's ``--records`` file
POST     ``/api/games``                    new game ``{variant, opponents?, seat?, seed?,
                                           target?, negative?}`` → the person's snapshot
GET      ``/api/games/{id}``               the person's snapshot
POST     ``/api/games/{id}/actions``       the person's move ``{"actions": [int, ...]}``
GET      ``/api/games/{id}/replay``        a finished game's replay, with the agents'
                                           action probabilities
GET      ``/api/records/{n}``              replay of game ``n`` of the ``--records`` file
GET      ``/api/library``                  the newest games this server saved (records dir)
GET      ``/api/library/{offset}``         replay of the saved game at that byte offset
POST     ``/api/replay?game=n``            replay of game ``n`` of an uploaded records file
                                           (the request body; read in memory, size-limited),
                                           and its first 1,000 games (``more_games``: more)
GET      ``/api/ratings``                  the players' ratings (:mod:`.ratings`; with a database)
GET      ``/leaderboard``                  the ratings as a page
GET      ``/api/daily``, ``/daily``        the daily challenge (:mod:`.daily`; with a database)
POST     ``/api/players``                  a new rated player ``{name, kind}`` → its token
=======  ================================  ==================================================

Every error is JSON ``{"error": "..."}`` with a 4xx status (500 and a generic message for a bug,
whose traceback goes to the server log only). No request names a file: the server reads only its
static page, the rules text, its own ``--records`` file and its records directory's games file, and
writes only its records directory.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import ClientDisconnect

from manni_agents.base import close_policies
from manni_agents.play.web.connections import BoundedServer, bounded_server
from manni_agents.play.web.game import MAX_ACTIONS, GameError, WebGame
from manni_agents.play.web.guide import rules_page, variant_rows
from manni_agents.play.web.library import saved_game, saved_games
from manni_agents.play.web.limits import (DISCARD_BYTES, MAX_JSON_BYTES, BodySizeLimit, ReplayGuard,
                                          TextJSONResponse, client_key, discard, finished_record)
from manni_agents.play.web.lineup import Lineup
from manni_agents.play.web.origin import HostCheck
from manni_agents.play.web.replay import build_replay, parse_records, summary
from manni_agents.play.web.store import GameStore, StoreFull
from manni_agents.play.web.table_api import WS_MAX_BYTES, add_table_routes
from manni_agents.play.web.tables import TABLES_PER_CLIENT, TableStore
from manni_env.actions import NUM_ACTIONS
from manni_env.records import RecordError
from manni_env.rules import VARIANTS, make_rules

if TYPE_CHECKING:
    from manni_agents.play.web.database import Database

STATIC = Path(__file__).parent / "static"
MAX_TARGET = 100
#: Open connections (HTTP and WebSocket) beyond which a new one is answered 503 and closed, and
#: the open files the server asks for (room for them and files besides).
MAX_CONNECTIONS, OPEN_FILES = 1024, 4096
log = logging.getLogger("manni.serve")


class NewGame(BaseModel):
    """A new game: the variant and its options, the two opponents (default: the variant's
    strongest shipped agent twice), the person's seat and the deal seed (default: fresh)."""

    model_config = ConfigDict(extra="forbid")
    variant: Literal[VARIANTS] = "hornafjardar"  # type: ignore[valid-type]
    opponents: list[Annotated[str, Field(max_length=200)]] | None = Field(None, min_length=2, max_length=2)
    seat: StrictInt = Field(0, ge=0, le=2)
    seed: StrictInt | None = Field(None, ge=0, lt=2**63)
    target: StrictInt | None = Field(None, ge=1, le=MAX_TARGET)
    negative: StrictBool | None = None


class Move(BaseModel):
    """The person's actions (see :meth:`~manni_agents.play.web.game.WebGame.act`)."""

    model_config = ConfigDict(extra="forbid")
    actions: list[Annotated[StrictInt, Field(ge=0, lt=NUM_ACTIONS)]] = Field(min_length=1, max_length=MAX_ACTIONS)


def create_app(store: GameStore, lineup: Lineup, records: Sequence[dict] = (),
               max_upload_bytes: int = 5_000_000, sweep_seconds: float = 60.0,
               replays: ReplayGuard | None = None, max_json_bytes: int = MAX_JSON_BYTES,
               tables_per_client: int = TABLES_PER_CLIENT, hosts: Iterable[str] | None = None,
               db: Database | None = None, daily_deals: int = 8) -> FastAPI:
    """The application over ``store``, offering ``lineup``'s opponents and replaying ``records``
    (already validated). Idle games are swept every ``sweep_seconds``; all are saved at shutdown.
    Request bodies, replays and replays at once are bounded (:mod:`manni_agents.play.web.limits`), and
    so are the tables one client creates (``tables_per_client``). ``hosts``: the ``Host`` and
    ``Origin`` names answered (:mod:`manni_agents.play.web.origin`; ``None``: no check). ``db``: the
    database the tables last in (:mod:`manni_agents.play.web.database`; ``None``: memory only), where
    the ratings and the daily challenge of ``daily_deals`` deals live too."""
    replays = replays or ReplayGuard()
    if db is not None:
        from manni_agents.play.web.daily import VARIANT, Daily, add_daily_routes
        from manni_agents.play.web.game_db import GameKeeper
        from manni_agents.play.web.ratings import add_rating_routes
        from manni_agents.play.web.table_db import TableKeeper
    tables = TableStore(store, store.max_games, tables_per_client, TableKeeper(db) if db is not None else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        sweeper = asyncio.create_task(_sweep(store, sweep_seconds))
        for table_id, table in tables.items():  # tables read back from the database
            hub.schedule(table_id, table)
        try:
            yield
        finally:
            sweeper.cancel()
            await run_in_threadpool(tables.close)
            await run_in_threadpool(store.close)
            if db is not None:
                db.close()

    app = FastAPI(title="Manni", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  default_response_class=TextJSONResponse)
    app.add_middleware(GZipMiddleware, minimum_size=4096)
    app.add_middleware(BodySizeLimit, limit=max_json_bytes, exempt=("/api/replay",))
    if hosts is not None:
        app.add_middleware(HostCheck, hosts=hosts)
    _error_handlers(app)
    missing = f"no such game: it expired after {store.idle_seconds / 60:g} minutes idle, or never existed"

    def game_of(game_id: str) -> WebGame:
        try:
            return store.get(game_id)
        except KeyError:
            raise HTTPException(404, missing) from None

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/rules", include_in_schema=False)
    def rules() -> HTMLResponse:
        return HTMLResponse(rules_page())

    @app.get("/api/variants")
    def variants() -> dict:
        return {"variants": variant_rows()}

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    hub = add_table_routes(app, tables, lineup, replays)
    if db is not None:
        store.keep_in(GameKeeper(db))
        add_rating_routes(app, db)
        add_daily_routes(app, Daily(db, tables, lineup.defaults[VARIANT], daily_deals), hub, replays)

    @app.get("/api/options")
    def options() -> dict:
        return {
            "variants": list(VARIANTS),
            "agents": lineup.to_dict(),
            "records": [summary(r, i) for i, r in enumerate(records)],
            "max_upload_bytes": max_upload_bytes,
        }

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame, request: Request) -> dict:
        options = {k: v for k, v in (("target", body.target), ("negative", body.negative)) if v is not None}
        try:
            rules = make_rules(body.variant, **options)
            opponents = [lineup.check(s, body.variant) for s in body.opponents or [lineup.defaults[body.variant]] * 2]
        except ValueError as err:
            raise HTTPException(400, str(err)) from None
        game = WebGame(rules, opponents, body.seat, body.seed)
        try:
            game_id = store.add(game, client_key(request.client.host if request.client else None))
        except StoreFull as err:
            close_policies(game.policies.values())
            raise HTTPException(429, str(err)) from None
        with game.lock:
            return {"id": game_id, **game.snapshot()}

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str) -> dict:
        game = game_of(game_id)
        with game.lock:
            return {"id": game_id, **game.snapshot()}

    @app.post("/api/games/{game_id}/actions")
    def act(game_id: str, move: Move) -> dict:
        game = game_of(game_id)
        with game.lock:
            try:
                game.act(move.actions)
            except GameError as err:
                raise HTTPException(400, str(err)) from None
            if game.state.finished:
                store.save(game)
            return {"id": game_id, **game.snapshot()}

    @app.get("/api/games/{game_id}/replay")
    def game_replay(game_id: str) -> dict:
        return build_replay(finished_record(game_of(game_id)))

    @app.get("/api/records/{index}")
    def record_replay(index: int) -> Response:
        if not 0 <= index < len(records):
            raise HTTPException(404, f"no game {index}: this server's records file holds {len(records)} (from 0)")
        return replays.build(records[index])

    @app.get("/api/library")
    def library() -> dict:
        return {"games": saved_games(store.records_path)}

    @app.get("/api/library/{offset}")
    def library_replay(offset: Annotated[int, PathParam(ge=0, lt=2**62)]) -> Response:
        try:
            record = saved_game(store.records_path, offset)
        except KeyError:
            raise HTTPException(404, f"no saved game starts at {offset}: choose one from /api/library") from None
        try:
            return replays.build(record)
        except RecordError as err:
            raise HTTPException(400, f"the saved game is not a valid record: {err}") from None

    @app.post("/api/replay")
    async def upload_replay(request: Request, game: Annotated[int, Query(ge=0, le=1_000_000)] = 0) -> Response:
        data = await _read_body(request, max_upload_bytes)
        return await run_in_threadpool(_uploaded_replay, data, game, replays)

    return app


def _uploaded_replay(data: bytes, game: int, replays: ReplayGuard) -> Response:
    """The games of an uploaded records file (its first :data:`~manni_agents.play.web.replay.MAX_LISTED`)
    and the replay of game ``game``, in one of the replay slots (parsing takes memory too)."""

    def make(deadline: float) -> dict:
        uploaded, more = parse_records(data)
        if game >= len(uploaded):
            raise HTTPException(404, f"no game {game}: " + (f"this server reads the first {len(uploaded):,} games of a file"
                                                             if more else f"the file holds {len(uploaded)} (from 0)"))
        replays.check(uploaded[game])
        return {"games": [summary(r, i) for i, r in enumerate(uploaded)], "more_games": more,
                "replay": build_replay(uploaded[game], deadline)}

    try:
        return replays.answer(make)
    except RecordError as err:
        where = "" if err.line is not None else f"game {game}: "
        raise HTTPException(400, f"{where}{err}") from None


def _error_handlers(app: FastAPI) -> None:
    """Every error as ``{"error": message}``; no traceback leaves the server."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return TextJSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for e in exc.errors()[:5]:
            where = ".".join(str(part) for part in e.get("loc", ())[1:])
            problems.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
        return TextJSONResponse({"error": "bad request: " + "; ".join(problems)}, status_code=422)

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        """The client left (or was closed as too slow) before its body arrived: nobody reads an answer."""
        return TextJSONResponse({"error": "the client left before its request's body arrived"}, status_code=400)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("error while serving %s %s", request.method, request.url.path, exc_info=exc)
        return TextJSONResponse({"error": "internal server error (details are in the server's log)"}, status_code=500)


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 beyond ``limit`` bytes (the rest read and dropped first,
    as :class:`~manni_agents.web.limits.BodySizeLimit` does)."""
    too_big = HTTPException(413, f"the file is larger than {limit:,} bytes, the most this server reads")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        if int(declared) <= DISCARD_BYTES:
            await discard(request.stream())
        raise too_big
    chunks, size = [], 0
    stream = request.stream()
    async for chunk in stream:
        size += len(chunk)
        if size > limit:
            await discard(stream)
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


async def _sweep(store: GameStore, seconds: float) -> None:
    while True:
        await asyncio.sleep(seconds)
        await run_in_threadpool(store.expire)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (``OSError`` if that fails, e.g. the port is taken);
    connections wait in its backlog until the server runs."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def raise_file_limit(wanted: int = OPEN_FILES) -> int:
    """Raise this process's soft limit of open files to ``wanted`` (at most the hard limit) and
    return it: room for every bounded connection (:data:`MAX_CONNECTIONS` at most) with files to
    spare, so the accept loop never meets ``EMFILE``."""
    try:
        import resource
    except ImportError:  # not POSIX
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return wanted if soft == resource.RLIM_INFINITY else soft


def server(app: FastAPI, log_level: str = "warning") -> BoundedServer:
    """A uvicorn server for ``app``; ``server(app).run(sockets=[listen(host, port)])`` serves.
    At most :data:`MAX_CONNECTIONS` connections (HTTP and WebSocket; three quarters of the open
    files when fewer are allowed) are open at once, each within the deadlines and the client's
    share of :mod:`manni_agents.play.web.connections`; table WebSockets have their own bounds besides
    (``table_api``)."""
    limit = min(MAX_CONNECTIONS, raise_file_limit() // 4 * 3)
    # no permessage-deflate: a table's push is 1-3 kB, and compressing it for each connection
    # took 45% of the server's time for a push to 201 sockets
    return bounded_server({"app": app, "log_level": log_level, "access_log": False, "ws_max_size": WS_MAX_BYTES,
                           "ws_per_message_deflate": False}, limit)
