"""Remote bots at tables: a bot program the server does not run plays a seat over the table's
WebSocket, with the ``manni-bot/1`` messages of ``bot:COMMAND`` (docs/bot-protocol.md, "Remote bots").

A seat created as ``"bot"`` is open for a remote bot. A client joins it with ``{"name", "bot": true}``
(``POST /api/tables/{id}/seats``), gets a seat token, and opens ``/ws/tables/{id}`` with
``{"type": "hello", "token": T}``, as a person does. After the ``welcome`` the socket carries
``manni-bot/1``, one JSON text frame per message: the server sends ``hello`` (answered
``{"type": "hello", "protocol", "name"}``), ``game``, ``act`` (answered ``{"action": ...}``),
``deal_end``, ``game_end`` and ``bye``; the bot sends its answers and nothing else.
``manni bot connect`` (:mod:`manni_agents.bots.connect`) bridges a local program to it.

**Limits and faults are bot:COMMAND's** (:mod:`manni_agents.bots.agent`): :data:`TIME_LIMIT`
seconds per answer, :data:`START_LIMIT` for the hello, an answer of at most
:data:`~manni_agents.bots.process.MAX_LINE_BYTES`. A timeout, an unreadable or illegal answer, a
binary frame or a message nobody asked for is a fault: the server sends ``{"type": "error",
"message", "fatal": true}`` naming it and the request, closes the connection (code 4408 for a
timeout, else 4400), counts a strike, and the table's stand-in agent plays the seat, the move asked
for included, until the bot connects again with its token.

**Nothing hidden.** Every message is built by the pure functions of
:mod:`manni_agents.bots.protocol` from the seat's own view or the public result of a deal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

import anyio
from fastapi import WebSocket
from fastapi.concurrency import run_in_threadpool

from manni_agents.bots import protocol as P
from manni_agents.bots.agent import BUFFERING_HINT
from manni_agents.bots.process import MAX_LINE_BYTES, BotFault, BotTimeout
from manni_agents.play.web.tables import Table, TableError

if TYPE_CHECKING:
    from manni_agents.play.web.table_db import TableKeeper

#: Seconds a remote bot has for each answer and for its hello (``bot:COMMAND``'s defaults).
TIME_LIMIT, START_LIMIT = 10.0, 10.0
#: Seconds a message to a bot may take to leave before the connection is given up.
SEND_TIMEOUT = 10.0
log = logging.getLogger("manni.serve")


class Gone(Exception):
    """The bot's connection closed (not a fault)."""


class BotLink:
    """One remote bot's connection: what it was told, and the answers its reader passes on."""

    def __init__(self, ws: WebSocket, table: Table, seat: int):
        self.ws, self.table, self.seat = ws, table, seat
        self.changed = asyncio.Event()  # set by the hub when the table changed
        self.answers: asyncio.Queue[str | None] = asyncio.Queue(1)
        self.waiting = False  # a request is out: the next frame is its answer
        self.ended: str | None = None  # why the connection ends: a fault, or "" (it closed)
        self.game_sent = False
        self.deals_told = 0

    def end(self, reason: str) -> None:
        """The connection ends (``reason``: a fault, or ``""`` when it closed); wake whoever waits."""
        if self.ended is None:
            self.ended = reason
        if self.answers.empty():
            self.answers.put_nowait(None)
        self.changed.set()

    def check(self) -> None:
        """Raise :class:`BotFault` or :class:`Gone` if the connection ended."""
        if self.ended:
            raise BotFault(self.ended)
        if self.ended is not None:
            raise Gone


async def serve_bot(ws: WebSocket, table_id: str, table: Table, seat: int, hub) -> None:
    """A remote bot's connection from its welcome to its end (``hub``: the tables'
    :class:`~manni_agents.play.web.table_api.Hub`, which sets :attr:`BotLink.changed`)."""
    link = BotLink(ws, table, seat)
    hub.bots.setdefault(table_id, {})[seat] = link  # before the first await: a second hello is refused
    reader = None
    connected = False
    try:
        await _send(ws, {"type": "welcome", "seat": seat, "protocol": P.PROTOCOL})
        reader = asyncio.ensure_future(_read(link))
        request = P.hello(TIME_LIMIT)
        line = await _ask(link, request, START_LIMIT, " at hello")
        try:
            name, _ = P.parse_hello(line)
        except ValueError as err:
            raise BotFault(str(err), request) from None
        await run_in_threadpool(table.name_bot, seat, name)
        await run_in_threadpool(table.connect, seat)
        connected = True
        with table.lock:
            link.deals_told = len(table.state.rounds)  # a bot that reconnects is told of what comes
        await hub.broadcast(table_id, table)
        await _play(link, table_id, hub)
    except BotFault as fault:
        await _fault(link, fault, table_id, hub)
    except Gone:
        pass
    finally:
        if reader is not None:
            reader.cancel()
        if hub.bots.get(table_id, {}).get(seat) is link:
            del hub.bots[table_id][seat]
        if connected and not table.closed:
            with anyio.CancelScope(shield=True):
                await run_in_threadpool(table.disconnect, seat)
                hub.schedule(table_id, table)
                await hub.broadcast(table_id, table)


async def _play(link: BotLink, table_id: str, hub) -> None:
    """Tell the bot what happens and ask it for its seat's moves until the game is over."""
    table, seat = link.table, link.seat
    while True:
        messages, request, over = await _pending_now(link)
        for message in messages:
            await _send(link.ws, message)
        if over:
            await _send(link.ws, P.bye())
            await _close(link.ws, "the game is over", 1000)
            return
        if request is None:
            await link.changed.wait()
            link.changed.clear()
            link.check()
            continue
        line = await _ask(link, request, TIME_LIMIT)
        try:
            action = P.parse_action(line, tuple(request["legal"]))
        except ValueError as err:
            raise BotFault(str(err), request) from None
        try:
            await hub.moves.act(table, seat, action)
        except TableError:  # the table closed meanwhile (everybody else left)
            continue
        await hub.broadcast(table_id, table)


class BotMoves:
    """The remote bots' moves, made on the event loop where that is safe: handing a move to a
    worker thread and back costs the server more than the move itself.

    A move at a table whose agents are all quick (:attr:`Table.quick`) is queued, and the moves
    queued in one turn of the loop are made one after another in one callback (each whose table's
    lock is free), their database writes committed in one transaction at its end (``keeper``'s
    :meth:`~.table_db.TableKeeper.deferred`; ``None``: no database), and only then are their bots
    woken to answer them: nothing else runs on the loop in between, so no move is answered before
    it is committed. A move at a table with a slower agent (a search, a bot process), or whose
    table is busy, is made in a worker thread, so that it never holds up the loop."""

    def __init__(self, keeper: TableKeeper | None):
        self.keeper = keeper
        self._queued: list[tuple[Table, int, int, asyncio.Future]] = []

    async def act(self, table: Table, seat: int, action: int) -> None:
        """Make the move (:meth:`Table.act`, the agents' replies included); its errors as its own."""
        if table.quick:
            loop = asyncio.get_running_loop()
            made = loop.create_future()
            if not self._queued:
                loop.call_soon(self._make)
            self._queued.append((table, seat, action, made))
            if await made:
                return
        await run_in_threadpool(table.act, seat, [action])

    def _make(self) -> None:
        """Make the queued moves, commit them, then tell each mover whether its move was made, or
        its error (a commit that fails otherwise than the keeper logs is every mover's error:
        none is left waiting)."""
        queued, self._queued = self._queued, []
        outcomes: list[bool | Exception]
        try:
            with self.keeper.deferred() if self.keeper is not None else contextlib.nullcontext():
                outcomes = [_act_if_free(table, seat, action) for table, seat, action, _ in queued]
        except Exception as err:
            outcomes = [err] * len(queued)
        for (*_, made), outcome in zip(queued, outcomes):
            if made.done():  # its bot's connection was cancelled meanwhile
                continue
            if isinstance(outcome, Exception):
                made.set_exception(outcome)
            else:
                made.set_result(outcome)


def _act_if_free(table: Table, seat: int, action: int) -> bool | Exception:
    """Make the move now if the table's lock is free: whether it was made, or the error it raised."""
    if not table.lock.acquire(blocking=False):
        return False
    try:
        table.act(seat, [action])
    except Exception as err:  # TableError: the table closed meanwhile; anything else is the mover's
        return err
    finally:
        table.lock.release()
    return True


async def _pending_now(link: BotLink) -> tuple[list[dict], dict | None, bool]:
    """:func:`_pending` on the event loop when the table's lock is free (it takes well under a
    millisecond, less than handing it to a worker thread), else in a worker thread (the table is
    busy, an agent's move perhaps: the loop must not wait for it)."""
    if not link.table.lock.acquire(blocking=False):
        return await run_in_threadpool(_pending, link)
    try:
        return _pending(link)
    finally:
        link.table.lock.release()


def _pending(link: BotLink) -> tuple[list[dict], dict | None, bool]:
    """What the bot is to be told now (the game, each finished deal, the game's end), the
    decision request of its seat if it is on turn, and whether the game is over."""
    table, seat = link.table, link.seat
    with table.lock:
        state = table.state
        if not table.started:
            return [], None, table.closed
        messages = []
        if not link.game_sent:
            messages.append(P.game(state.rules, seat, TIME_LIMIT))
            link.game_sent = True
        while link.deals_told < len(state.rounds):
            result = state.rounds[link.deals_told]
            link.deals_told += 1
            messages.append(P.deal_end(result, seat))
            if state.finished and link.deals_told == len(state.rounds):
                messages.append(P.game_end(result, seat, tuple(state.winners)))
        over = table.closed or state.finished
        request = None
        if not over and state.to_move == seat and not table.seats[seat].stand_in:
            request = P.act(state.view(seat))
        return messages, request, over


async def _ask(link: BotLink, request: dict, seconds: float, where: str = "") -> bytes:
    """The bot's answer to ``request`` within ``seconds``; :class:`BotFault` (carrying the
    request) or :class:`Gone` if none comes."""
    link.check()
    link.waiting = True
    await _send(link.ws, request)
    try:
        text = await asyncio.wait_for(link.answers.get(), seconds)
    except asyncio.TimeoutError:
        raise BotTimeout(f"timed out after {seconds:g} s{where} (no answer; {BUFFERING_HINT})", request) from None
    finally:
        link.waiting = False
    if text is None:
        try:
            link.check()
        except BotFault as fault:
            raise BotFault(f"{fault}{where}", request) from None
    return text.encode()


async def _read(link: BotLink) -> None:
    """Read the bot's frames: an answer when one is asked for, anything else a fault."""
    try:
        while True:
            frame = await link.ws.receive()
            if frame["type"] == "websocket.disconnect":
                link.end("")
                return
            text = frame.get("text")
            if text is None:
                link.end("sent a binary frame: an answer is one JSON text frame")
            elif len(text) > MAX_LINE_BYTES:
                link.end(f"answer too long ({len(text):,} characters > {MAX_LINE_BYTES:,})")
            elif not link.waiting or not link.answers.empty():
                link.end(f"sent a message nobody asked for (answer only hello and act): {text[:80]!r}")
            else:
                link.answers.put_nowait(text)
                continue
            return
    except Exception:  # the connection broke mid-frame
        link.end("")


async def _fault(link: BotLink, fault: BotFault, table_id: str, hub) -> None:
    """Tell the bot its fault and close it; a strike, and the stand-in plays its seat."""
    table, seat = link.table, link.seat
    message = f"bot in seat {seat}: {fault}"
    if fault.request is not None:
        message += f"; request: {P.encode(fault.request).decode().strip()}"
    log.info("table %s: %s", table_id, message)
    try:
        await _send(link.ws, {"type": "error", "message": message, "fatal": True})
    except Exception:  # gone already
        pass
    await _close(link.ws, str(fault), 4408 if isinstance(fault, BotTimeout) else 4400)
    await run_in_threadpool(table.bot_fault, seat)
    await hub.broadcast(table_id, table)


async def _send(ws: WebSocket, message: dict) -> None:
    try:
        await asyncio.wait_for(ws.send_json(message), SEND_TIMEOUT)
    except Exception:  # closed, or too slow to take the message
        raise Gone from None


async def _close(ws: WebSocket, reason: str, code: int) -> None:
    try:
        await ws.close(code=code, reason=reason[:120])
    except Exception:  # already closed
        pass
