"""What the browser tests of ``manni serve`` share: the system's Chromium (no browser download) with
the flags this sandboxed, offline machine needs, and a server on a free loopback port."""

from __future__ import annotations

import shutil
import threading
import time

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def served(tmp_path):
    """``(url, store)`` of a server running in a thread on a free 127.0.0.1 port."""
    from manni_agents.play.web.app import create_app, listen, server
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    store = GameStore(tmp_path / "web")
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    uvicorn_server = server(create_app(store, Lineup()))
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uvicorn_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/", store
    uvicorn_server.should_exit = True
    thread.join(timeout=15)
