"""Bots and people meet, in a real headless browser (the system's Chromium driven by Playwright):
a person plays the daily challenge from its page and meets the leaderboard, and a remote bot
joined with ``manni bot connect`` shows as a bot at a person's table and plays its seat."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("sqlalchemy")
sync_api = pytest.importorskip("playwright.sync_api")

from helpers.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium  # noqa: E402
from test_web_tables_browser import Person  # noqa: E402

pytestmark = needs_chromium
BOT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'examples/bots/simple_bot.py'}"


@pytest.fixture
def served_with_db(tmp_path):
    """The URL of a server with a database (one daily deal) on a free 127.0.0.1 port."""
    from manni_agents.play.web.app import create_app, listen, server
    from manni_agents.play.web.database import Database, database_url
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    sock = listen("127.0.0.1", 0)
    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    uvicorn_server = server(create_app(GameStore(tmp_path / "web"), Lineup(), db=db, daily_deals=1))
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uvicorn_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    uvicorn_server.should_exit = True
    thread.join(timeout=15)


def _play_until_the_summary(person: Person) -> None:
    for _ in range(200):
        if person.page.is_visible("#summary"):
            return
        if person.my_turn():
            person.click_a_move()
        else:
            time.sleep(0.05)
    raise AssertionError("the deal did not end")


def test_a_person_plays_the_daily_deal_from_its_page_and_only_once(served_with_db):
    url, errors = served_with_db, []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ann = Person(browser, errors)
        page = ann.page
        page.goto(url + "daily")
        assert "Daily challenge" in page.inner_text("h1")
        page.fill("#daily-name", "Ann")
        page.click("#daily-play button")
        page.wait_for_selector("#hand button.card")
        _play_until_the_summary(ann)
        page.goto(url + "daily")
        assert "Ann" in page.inner_text("table.leaderboard")
        page.click("#daily-play button")  # the one deal is played: the page says so
        page.wait_for_function("document.getElementById('daily-error').textContent.includes('played all 1 deals')")
        page.goto(url + "leaderboard")
        assert "Ann" in page.inner_text("table.leaderboard")
        browser.close()
    assert not errors, errors


def test_a_remote_bot_is_shown_as_a_bot_and_plays_its_seat_at_a_persons_table(served_with_db):
    from manni_agents.bots import connect

    url, errors, lines = served_with_db, [], []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ann = Person(browser, errors)
        page = ann.page
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        page.click("#more-options > summary")
        page.select_option("#variant", "basic")
        page.fill("#target", "1")
        page.fill("#t-name", "Ann")
        page.select_option("#t-seat1", "bot")
        page.select_option("#t-seat2", "random")
        page.click("#t-create")
        page.wait_for_selector("#seats-panel:not([hidden])")
        page.wait_for_function("document.getElementById('seat-list').textContent.includes('open for a remote bot')")
        invite = page.input_value("#invite")
        bridge = threading.Thread(target=lambda: lines.append(connect.run(invite, BOT, say=lines.append)))
        bridge.start()
        page.wait_for_function("document.getElementById('seat-list').textContent.includes('simple-python · bot')")
        _play_until_the_summary(ann)
        bridge.join(timeout=60)
        assert lines[-1] == 0, lines
        browser.close()
    assert not errors, errors
