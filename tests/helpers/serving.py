"""A ``manni serve`` app served for a test: in a thread, on a free loopback port, stopped after it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from manni_agents.play.web.connections import BoundedServer

#: seconds the server may take to start before the test fails
START_TIMEOUT_S = 30
#: seconds the server's thread is given to stop
STOP_TIMEOUT_S = 15


@contextmanager
def serving(app) -> Iterator[tuple[int, BoundedServer]]:
    """``(port, server)``: ``app`` served by :func:`manni_agents.play.web.app.server` in a daemon
    thread on 127.0.0.1 at a port the system chose, started (or a failed assertion within
    :data:`START_TIMEOUT_S`) and asked to stop on leaving, a failed start included."""
    from manni_agents.play.web.app import listen, server

    sock = listen("127.0.0.1", 0)
    uvicorn_server = server(app)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not uvicorn_server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        yield sock.getsockname()[1], uvicorn_server
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=STOP_TIMEOUT_S)
