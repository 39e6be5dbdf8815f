"""What the browser tests of ``manni serve`` share: the system's Chromium (no browser download) with
the flags this sandboxed, offline machine needs, and a server on a free loopback port."""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: a card in the records' notation (``TS``): what no visible text of the page may show
CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")
#: where the screenshots for the docs go (``MANNI_DOCS_SCREENSHOTS=1``)
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


#: skips a browser test module where the machine has no Chromium
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium)")


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
