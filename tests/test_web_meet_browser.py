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

from helpers.browser import CHROMIUM, CHROMIUM_ARGS, Person, needs_chromium, open_forms  # noqa: E402
from helpers.serving import serving  # noqa: E402

pytestmark = needs_chromium
BOT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'examples/bots/simple_bot.py'}"


@pytest.fixture
def served_with_db(tmp_path):
    """The URL of a server with a database (one daily deal) on a free 127.0.0.1 port."""
    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.database import Database, database_url
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    db = Database.open(database_url(str(tmp_path / "db.sqlite3")))
    with serving(create_app(GameStore(tmp_path / "web"), Lineup(), db=db, daily_deals=1)) as (port, _):
        yield f"http://127.0.0.1:{port}/"


def _play_to_the_end(people: list[Person]) -> None:
    """Click the people's moves until the game is over (continuing each deal's summary)."""
    for _ in range(600):
        if all(p.page.evaluate("Boolean(game && game.finished)") for p in people):
            return
        for person in people:
            if person.page.is_visible("#summary") and not person.page.evaluate("game.finished"):
                person.page.click("#summary-ok")
        mover = next((p for p in people if p.my_turn()), None)
        if mover is not None:
            mover.click_a_move()
        else:
            time.sleep(0.05)
    raise AssertionError("the game did not end")


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
        _play_to_the_end([ann])
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
        open_forms(page, url, "basic")
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
        _play_to_the_end([ann])
        bridge.join(timeout=60)
        assert lines[-1] == 0, lines
        browser.close()
    assert not errors, errors


def _serve(tmp_path: Path, port: int):
    import re
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "manni_env.cli", "serve", "--port", str(port), "--records-dir",
                             str(tmp_path / "records"), "--db", str(tmp_path / "db.sqlite3")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    assert re.search(rf"http://127\.0\.0\.1:{port}/", line), line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc


def test_two_people_and_a_remote_bot_play_on_across_a_server_kill_9(tmp_path):
    import os
    import signal
    import socket

    from manni_agents.bots import connect

    with socket.socket() as probe:  # a free port, for both lives of the server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url, errors, lines = f"http://127.0.0.1:{port}/", [], []
    proc = _serve(tmp_path, port)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            anna, bjarni = Person(browser, errors), Person(browser, errors)
            page = anna.page
            open_forms(page, url, "basic")
            page.fill("#target", "1")  # one deal: the kill comes in its middle
            page.fill("#t-name", "Anna")
            page.select_option("#t-seat1", "person")
            page.select_option("#t-seat2", "bot")
            page.click("#t-create")
            page.wait_for_selector("#seats-panel:not([hidden])")
            invite = page.input_value("#invite")
            bjarni.page.goto(invite)
            bjarni.page.wait_for_selector("#join-panel:not([hidden])")
            bjarni.page.fill("#join-name", "Bjarni")
            bjarni.page.click("#join")
            bridge = threading.Thread(target=lambda: lines.append(connect.run(invite, BOT, say=lines.append)))
            bridge.start()
            for person in (anna, bjarni):
                person.page.wait_for_selector("#hand button.card")
            moves = 0
            while moves < 6:  # a few moves of the people (the bot plays between them)
                mover = next((p for p in (anna, bjarni) if p.my_turn()), None)
                if mover is None:
                    time.sleep(0.05)
                    continue
                if mover.click_a_move():
                    moves += 1
            time.sleep(0.5)
            hands = [p.hand() for p in (anna, bjarni)]
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            proc = _serve(tmp_path, port)
            for person, hand in zip((anna, bjarni), hands):  # the pages connect again by themselves
                person.page.wait_for_function("document.getElementById('error').textContent === ''", timeout=30_000)
                person.page.wait_for_function("document.getElementById('seat-list').textContent.includes('simple-python · bot')",
                                              timeout=30_000)
                assert person.hand() == hand
            _play_to_the_end([anna, bjarni])
            bridge.join(timeout=60)
            browser.close()
        assert lines[-1] == 0 and any("connecting again" in str(line) for line in lines), lines
        assert not errors, errors
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
