"""The TCP connections of ``manni serve``, before a request reaches the app: how many, for how long,
and what the log says about them.

uvicorn on its own keeps every connection a client opens for as long as the client likes: 1,024
idle connections made every request 503, and a request head or body sent a byte at a time was
waited for without end. So :func:`bounded_server` serves with :class:`BoundedH11Protocol`, uvicorn's
h11 protocol with

- a :class:`Gate`: at most ``limit`` connections open at once (HTTP and WebSocket alike; beyond,
  a new one is answered 503 and closed at once) and at most ``per_client`` of them from one
  client (:func:`~manni_agents.play.web.limits.client_key`; beyond, 429), so the open files stay
  below the process's limit and one client cannot take them all;
- deadlines: a request's head must arrive within :data:`HEAD_SECONDS` of the connection's opening
  or of the last answer on it, and its body within :data:`BODY_SECONDS` of its head; else the
  client gets 408 and the connection is closed. An idle kept-alive connection is closed after
  uvicorn's 5 s. (A WebSocket has its own bounds: ``table_api``.)

and the event loop's ``accept`` errors (``EMFILE``: out of open files, and its kin) are logged in
one line a minute at most, never a traceback each (:class:`AcceptErrors`): at 4,096 descriptors
the loop once wrote 234,514 tracebacks in 22 s. None of these writes a line per refused client.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from manni_agents.play.web.limits import client_key

#: Seconds a connection may take to send a request's head (from its opening or its last answer),
#: and a request's body (from its head): a 5 MB upload needs about 1 Mbit/s.
HEAD_SECONDS, BODY_SECONDS = 10.0, 60.0
#: Open connections one client may have: a quarter of the 1,024 the server keeps.
CONNECTIONS_PER_CLIENT = 256
#: Seconds between two log lines about ``accept`` errors.
ACCEPT_LOG_SECONDS = 60.0
#: The ``accept`` errors of a process out of resources (the loop retries after a second).
RESOURCE_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
log = logging.getLogger("manni.serve")


class Gate:
    """Counts the open connections, in all and per client: :meth:`enter` says why a new one is
    refused, or counts it; :meth:`leave` counts it out."""

    def __init__(self, limit: int, per_client: int):
        if limit < 1 or per_client < 1:
            raise ValueError("limit and per_client must be at least 1")
        self.limit, self.per_client, self.open = limit, per_client, 0
        self.clients: dict[str | None, int] = {}

    def enter(self, client: str | None) -> tuple[int, str] | None:
        """``(status, message)`` refusing a new connection of ``client``, or ``None`` (counted)."""
        if self.open >= self.limit:
            return 503, f"{self.limit:,} connections are open, the most this server keeps; try again later"
        if client is not None and self.clients.get(client, 0) >= self.per_client:
            return 429, f"you have {self.per_client:,} connections open, the most one client may have"
        self.open += 1
        self.clients[client] = self.clients.get(client, 0) + 1
        return None

    def leave(self, client: str | None) -> None:
        """A connection :meth:`enter` counted has closed."""
        self.open -= 1
        self.clients[client] -= 1
        if not self.clients[client]:
            del self.clients[client]


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol within the :class:`Gate` ``gate`` and the deadlines of the module
    docstring. :func:`bounded_server` makes a subclass holding the server's gate."""

    gate: Gate

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.key = client_key(self.client[0] if self.client else None)
        self.counted, self.deadline, self.waiting_for = False, None, ""
        refused = self.gate.enter(self.key)
        if refused is not None:
            self._answer(*refused)
            return
        self.counted = True
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._leave()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """Hand the connection to the WebSocket protocol, still counted by the gate until it closes."""
        self._disarm()
        super().handle_websocket_upgrade(event)
        protocol = self.transport.get_protocol()
        closed = protocol.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            self._leave()
            closed(exc)

        protocol.connection_lost = connection_lost  # type: ignore[method-assign]

    def _leave(self) -> None:
        self._disarm()
        if self.counted:
            self.counted = False
            self.gate.leave(self.key)

    def _follow(self) -> None:
        """Set the deadline for what the connection is waiting for now: a request's head, its
        body, or nothing (the app is answering)."""
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        waiting_for = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else ""
        if waiting_for == self.waiting_for:
            return  # the deadline runs from when the wait began, not from the last byte
        self._disarm()
        self.waiting_for = waiting_for
        if waiting_for:
            seconds = HEAD_SECONDS if waiting_for == "head" else BODY_SECONDS
            self.deadline = self.loop.call_later(seconds, self._expire, waiting_for, seconds)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.waiting_for = None, ""

    def _expire(self, waiting_for: str, seconds: float) -> None:
        self.deadline = None
        if not self.transport.is_closing():
            self._answer(408, f"the request's {waiting_for} did not arrive within {seconds:g} s")

    def _answer(self, status: int, message: str) -> None:
        """Answer ``status`` with ``{"error": message}`` and close, whatever was read (nothing of
        an answer has been sent yet on a connection waiting for a request)."""
        body = json.dumps({"error": message}).encode()
        reason = {408: "Request Timeout", 429: "Too Many Requests", 503: "Service Unavailable"}[status]
        head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
                "connection: close\r\n" + ("retry-after: 1\r\n" if status == 503 else "") + "\r\n")
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(head.encode() + body)
        self.transport.close()


class AcceptErrors:
    """An event loop's exception handler: an ``accept`` that failed for want of resources is
    logged in one line (no traceback) at most every :data:`ACCEPT_LOG_SECONDS`, with the count
    since; everything else goes to the loop's default handler. asyncio schedules a retry of the
    listening socket for each such failure (up to the backlog's count at once); a retry that
    finds the server already closed (it stopped within the second) is dropped silently."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock, self.count, self.logged = clock, 0, None

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, (ValueError, OSError)) and "._start_serving(" in context.get("message", ""):
            return  # the retry of a failed accept, for a listening socket closed since
        if not (isinstance(error, OSError) and error.errno in RESOURCE_ERRORS):
            loop.default_exception_handler(context)
            return
        self.count += 1
        now = self.clock()
        if self.logged is None or now - self.logged >= ACCEPT_LOG_SECONDS:
            log.warning("cannot accept connections: %s (%d time%s since the last note); new connections wait "
                        "in the backlog until descriptors are free", error.strerror or error, self.count,
                        "" if self.count == 1 else "s")
            self.logged, self.count = now, 0


class BoundedServer(uvicorn.Server):
    """A uvicorn server whose event loop logs ``accept`` errors through :class:`AcceptErrors`."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().set_exception_handler(AcceptErrors())
        await super().startup(sockets)


def bounded_server(config: dict[str, Any], limit: int) -> BoundedServer:
    """A :class:`BoundedServer` of uvicorn's ``config`` (keyword arguments of ``uvicorn.Config``)
    on asyncio and :class:`BoundedH11Protocol`, with a gate of ``limit`` connections
    (:data:`CONNECTIONS_PER_CLIENT` of them per client, at most)."""
    protocol = type("ServerProtocol", (BoundedH11Protocol,),
                    {"gate": Gate(limit, min(limit, CONNECTIONS_PER_CLIENT))})
    return BoundedServer(uvicorn.Config(**config, http=protocol, loop="asyncio"))
