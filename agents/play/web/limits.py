"""The bounds on one request of ``manni serve``: body size, replay size and replays at once.

- :class:`BodySizeLimit` (ASGI middleware): a JSON request body is at most ``limit`` bytes (413
  when the declared ``Content-Length`` is larger, else as soon as the bytes received pass it). The
  upload path ``/api/replay`` is exempt: it enforces its own, larger limit (``--max-upload-mb``)
  while reading. Before a 413 the rest of the body is read and discarded (:func:`discard`, up to
  :data:`DISCARD_BYTES`), so the client reads its answer instead of a connection reset; a body
  declared larger than that is answered at once.
- :class:`ReplayGuard`: a replay is built for a game of at most ``max_deals`` deals (413 naming the
  limit, checked before the record is replayed; about 60 frames and 30 kB of JSON per deal), at
  most ``slots`` replays are parsed and built at once (503 with ``Retry-After`` beyond), and one
  answer takes at most ``seconds`` to build and ``max_bytes`` of JSON (413 beyond), so the work,
  memory and answer of replays stay bounded whatever is uploaded.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from manni_agents.play.web.replay import build_replay

#: Largest JSON request body (bytes); the largest valid one (a new game, a 16-card move) is under 1 kB.
MAX_JSON_BYTES = 64 * 1024
#: Most deals of a replayed game (a game with the default rules has at most 50).
MAX_REPLAY_DEALS = 200
#: Replays parsed and built at once.
REPLAY_SLOTS = 2
#: Seconds one replay answer may take to build, and the bytes of JSON it may hold (a 200-deal game
#: takes about 2 s and 6 MB).
REPLAY_SECONDS, MAX_REPLAY_BYTES = 20.0, 32_000_000
#: Most bytes of a refused body read and thrown away before its 413 (beyond: answered at once and
#: the connection closed, which the client may see as a reset).
DISCARD_BYTES = 32 * 1024 * 1024


async def discard(chunks: AsyncIterator[bytes], budget: int = DISCARD_BYTES) -> None:
    """Read and drop what is left of a request body, at most ``budget`` bytes."""
    async for chunk in chunks:
        budget -= len(chunk)
        if budget < 0:
            return


async def body_chunks(receive) -> AsyncIterator[bytes]:
    """The chunks of a request body from an ASGI ``receive``, to its end or the client's leaving."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


class BodySizeLimit:
    """ASGI middleware refusing request bodies over ``limit`` bytes with a JSON 413 (see the module
    docstring); paths in ``exempt`` pass unchecked."""

    def __init__(self, app, limit: int = MAX_JSON_BYTES, exempt: tuple[str, ...] = ()):
        self.app, self.limit, self.exempt = app, limit, exempt

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            if int(declared) <= DISCARD_BYTES:
                await discard(body_chunks(receive))
            await self._refuse(send)
            return
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # the app's exception handlers answer with the JSON 413
                    if message.get("more_body", False):
                        await discard(body_chunks(receive))
                    raise HTTPException(413, self.message)
            return message

        await self.app(scope, limited_receive, send)

    @property
    def message(self) -> str:
        return f"the request body is larger than {self.limit:,} bytes, the most this server reads"

    async def _refuse(self, send) -> None:
        body = json.dumps({"error": self.message}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def client_key(address: str | None) -> str | None:
    """Whose share a connection from ``address`` counts against: the IPv4 address, or the /64
    network of an IPv6 address (one machine may hold a whole /64); ``None`` stays ``None``."""
    if address is None:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:  # a name (a test client), not an address
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class TextJSONResponse(JSONResponse):
    """A JSON answer whose strings are always written: a lone surrogate (``"\\ud800"``, which a
    hostile upload can hold but UTF-8 cannot) becomes ``?`` instead of a 500."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "replace")


def finished_record(game) -> dict:
    """The record of a finished game or table (anything with ``lock``, ``state`` and ``record()``);
    409 while it is still running."""
    with game.lock:
        if not game.state.finished:
            raise HTTPException(409, "the game is still running; its replay opens when it is over")
        return game.record()


class ReplayGuard:
    """Builds replays within the limits of the module docstring (``HTTPException`` 413 or 503)."""

    def __init__(self, max_deals: int = MAX_REPLAY_DEALS, slots: int = REPLAY_SLOTS,
                 seconds: float = REPLAY_SECONDS, max_bytes: int = MAX_REPLAY_BYTES):
        if max_deals < 1 or slots < 1 or seconds <= 0 or max_bytes < 1:
            raise ValueError("max_deals, slots, seconds and max_bytes must be positive")
        self.max_deals, self.slots, self.seconds, self.max_bytes = max_deals, slots, seconds, max_bytes
        self._free = threading.BoundedSemaphore(slots)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """One of the ``slots``; 503 when all are taken (the request is not queued)."""
        if not self._free.acquire(blocking=False):
            raise HTTPException(503, f"{self.slots} replays are being built, the most this server builds at once; "
                                "try again in a moment", headers={"Retry-After": "1"})
        try:
            yield
        finally:
            self._free.release()

    def check(self, record: dict) -> None:
        """413 if ``record`` has more deals than this server replays."""
        rounds = record.get("rounds")
        if isinstance(rounds, list) and len(rounds) > self.max_deals:
            raise HTTPException(413, f"the game has {len(rounds):,} deals; this server replays games of at most "
                                f"{self.max_deals:,} deals (manni serve --max-replay-deals)")

    def answer(self, make: Callable[[float], dict]) -> TextJSONResponse:
        """The JSON answer ``make(deadline)`` builds in one of the slots: 413 when it is still
        building at ``deadline`` (``TimeoutError``), :attr:`seconds` from now, or holds more than
        :attr:`max_bytes`. Rendered here, in the caller's thread, not in the event loop."""
        with self.slot():
            try:
                content = make(time.monotonic() + self.seconds)
            except TimeoutError as err:
                raise HTTPException(413, f"{err}: this server spends at most {self.seconds:g} s on one replay") from None
            response = TextJSONResponse(content)
        if len(response.body) > self.max_bytes:
            raise HTTPException(413, f"the replay is {len(response.body):,} bytes of JSON; this server sends at most "
                                f"{self.max_bytes:,}")
        return response

    def build(self, record: dict) -> TextJSONResponse:
        """The answer of :func:`~manni_agents.play.web.replay.build_replay` of ``record`` within the limits."""
        self.check(record)
        return self.answer(lambda deadline: build_replay(record, deadline))
