"""What the browser tests of ``manni serve`` share: the system's Chromium (no browser download) with
the flags this sandboxed, offline machine needs, and a server on a free loopback port."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers.serving import serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: a card in the records' notation (``TS``): what no visible text of the page may show
CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")
#: where the screenshots for the docs go (``MANNI_DOCS_SCREENSHOTS=1``)
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
#: seconds a move's button or card is waited for before :meth:`Person.click_a_move` takes it as gone
MOVE_GONE_S = 3
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Person:
    """One browser context (its own storage: its seat token) and its open page, whose received
    WebSocket frames are kept."""

    def __init__(self, browser, errors: list[str]):
        self.context = browser.new_context(viewport={"width": 1280, "height": 860})
        self.frames: list[str] = []
        self.errors = errors
        self.page = self.open()

    def open(self):
        page = self.context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda err: self.errors.append(str(err)))
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: self.frames.append(str(payload))))
        self.page = page
        return page

    def hand(self) -> list[str]:
        return self.page.locator("#hand .card").evaluate_all("cards => cards.map(c => c.dataset.card)")

    def my_turn(self) -> bool:
        return bool(self.page.evaluate("Boolean(game && game.your_turn && !busy) && document.getElementById('summary').hidden"))

    def click_a_move(self) -> bool:
        """The first button (keep the hand, ...) or the first playable card, then wait for the push.
        False when the move went away before the click: a push of the others' moves redrew the page
        between :meth:`my_turn` and the click (the caller asks again whose turn it is)."""
        from playwright.sync_api import TimeoutError as PageTimeout

        page = self.page
        buttons = page.locator("#buttons button.action")
        move = buttons.first if buttons.count() else page.locator("#hand button.card:not([disabled])").first
        try:
            move.click(timeout=MOVE_GONE_S * 1000)
        except PageTimeout:
            return False
        page.wait_for_function("!document.body.classList.contains('busy')")
        return True


#: skips a browser test module where the machine has no Chromium
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium)")


def open_forms(page, url: str, variant: str) -> None:
    """Open the landing page at ``url`` on ``page``, show the forms behind its two actions ("more
    options") and choose ``variant`` in them."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    page.click("#more-options > summary")
    page.select_option("#variant", variant)


@pytest.fixture
def served(tmp_path):
    """``(url, store)`` of a server running in a thread on a free 127.0.0.1 port."""
    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    store = GameStore(tmp_path / "web")
    with serving(create_app(store, Lineup())) as (port, _):
        yield f"http://127.0.0.1:{port}/", store
