"""Tables for people in a real headless browser (the system's Chromium driven by Playwright, as in
``test_web_browser.py``): two browser contexts are two people at one table with an agent; they play
a deal by clicking, one closes the tab mid-trick and rejoins with the same hand, hints show for the
person on turn, and no WebSocket frame a person receives carries a card that person may not know.
With ``MANNI_DOCS_SCREENSHOTS=1`` the screenshot of the table goes to ``docs/tables.png``."""

from __future__ import annotations

import json
import os
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("websockets")
sync_api = pytest.importorskip("playwright.sync_api")

from helpers.browser import CARD, CHROMIUM, CHROMIUM_ARGS, DOCS, Person, needs_chromium, open_forms, served  # noqa: E402,F401 (served: the server fixture)
from manni_env.records import read_records  # noqa: E402

pytestmark = needs_chromium


def check_hints(person: Person) -> None:
    """The hint panel lists exactly the legal moves, their probabilities summing to 1."""
    page = person.page
    assert page.is_visible("#hint-panel")
    legal = set(page.locator("#hand button.card:not([disabled])").evaluate_all("cs => cs.map(c => c.dataset.card)"))
    legal |= set(page.locator("#buttons button.action").evaluate_all("bs => bs.map(b => b.textContent)"))
    rows = page.locator("#hints .prob")
    labels = rows.evaluate_all("rs => rs.map(r => r.dataset.label)")  # shown as 10♠: the card's id
    assert set(labels) == legal
    total = sum(float(v.rstrip("%")) for v in rows.locator(".value").all_inner_texts())
    assert abs(total - 100) < 1


def test_two_people_play_a_deal_by_clicking_one_rejoins_mid_trick_with_hints(served, tmp_path):
    url, store = served
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        anna, bjarni = Person(browser, errors), Person(browser, errors)
        page = anna.page
        open_forms(page, url, "basic")
        page.fill("#target", "1")
        page.fill("#t-name", "Anna")
        assert page.input_value("#t-seat1") == "person" and page.input_value("#t-seat2") == "ppo"
        page.check("#t-hints")
        page.click("#t-create")
        page.wait_for_selector("#seats-panel:not([hidden])")
        invite = page.input_value("#invite")
        page.wait_for_function("document.getElementById('seat-list').textContent.includes('seat 1 · open')")
        assert "Anna (you) · here" in page.inner_text("#seat-list") and page.is_hidden("#table")

        bjarni.page.goto(invite)
        bjarni.page.wait_for_selector("#join-panel:not([hidden])")
        assert "Anna" in bjarni.page.inner_text("#join-text")
        bjarni.page.fill("#join-name", "Bjarni")
        bjarni.page.click("#join")
        for person in (anna, bjarni):
            person.page.wait_for_selector("#hand button.card")
        page.wait_for_function("document.getElementById('seat-list').textContent.includes('Bjarni (you)') === false "
                               "&& document.getElementById('seat-list').textContent.includes('Bjarni · here')")

        rejoined = shot = False
        deals = 0
        screenshot = DOCS / "tables.png" if os.environ.get("MANNI_DOCS_SCREENSHOTS") else tmp_path / "tables.png"
        for _ in range(2_000):  # target 1: over after the first deal with one highest total (4-4-4 is not)
            if any(p.page.is_visible("#summary") for p in (anna, bjarni)):
                deals += 1
                for person in (anna, bjarni):
                    person.page.wait_for_selector("#summary:not([hidden])")
                    review = person.page.locator("#review-table tr")
                    assert person.page.is_visible("#review") and review.count() >= 1 + 4  # the swap and four or more cards
                    assert "differ" in person.page.inner_text("#review-title")
                if anna.page.evaluate("game.finished"):  # in the same push as the deal's end
                    break
                for person in (anna, bjarni):
                    person.page.click("#summary-ok")  # "Next deal"
                continue
            mover = next((p for p in (anna, bjarni) if p.my_turn()), None)
            if mover is None:
                time.sleep(0.05)
                continue
            check_hints(mover)
            if rejoined and mover is anna and not shot:  # two people, the hint panel: the docs' picture
                anna.page.screenshot(path=str(screenshot))
                shot = True
            other = bjarni if mover is anna else anna
            assert other.page.is_hidden("#hint-panel")
            if not mover.click_a_move():
                continue
            trick = anna.page.evaluate("game.trick.length")
            if not rejoined and mover is anna and trick in (1, 2):  # Anna closes her tab mid-trick
                hand = anna.hand()
                anna.page.close()
                bjarni.page.wait_for_function("document.getElementById('seat-list').textContent.includes('Anna · away')")
                anna.open().goto(invite)  # the invite link again, in the same browser: her seat back
                anna.page.wait_for_selector("#hand button.card")
                assert anna.hand() == hand and anna.page.evaluate("game.trick.length") == trick
                bjarni.page.wait_for_function("document.getElementById('seat-list').textContent.includes('Anna · here')")
                rejoined = True
        else:
            raise AssertionError("the game did not end")
        assert rejoined and shot and screenshot.stat().st_size > 10_000
        assert anna.page.is_visible("#summary-replay")
        anna.page.click("#summary-replay")  # the record's replay: Anna's moves beside the agent's
        anna.page.wait_for_selector("#replay-view:not([hidden])")
        for _ in range(60):
            if anna.page.locator("#r-probs .review-note").count():
                break
            anna.page.click("#r-next")
        assert "The agent would have played" in anna.page.inner_text("#r-probs .review-note")
        [record] = read_records(store.records_path)  # saved when the game ended
        assert record["players"] == ["human", "human", "ppo"] and len(record["rounds"]) == deals
        audit(anna.frames, record["rounds"], 0)
        audit(bjarni.frames, record["rounds"], 1)

        page = anna.open()  # hints off: a new table with two agents, no hint panel
        open_forms(page, url, "basic")
        page.select_option("#t-seat1", "ppo")
        assert not page.is_checked("#t-hints")
        page.click("#t-create")
        page.wait_for_selector("#hand button.card")
        page.wait_for_function("game.your_turn")
        assert page.is_hidden("#hint-panel") and page.locator("#hints .prob").count() == 0
        browser.close()
    assert not errors, errors


def audit(frames: list[str], deals: list[dict], seat: int) -> None:
    """No frame carries a card of another seat's hand before it was played: a frame of deal ``d``
    shows only the seat's own cards and the played cards of deals 1 to ``d`` (the log and the review
    keep earlier deals'), so the first deal's frames, where the rejoin is, are held to that deal's."""
    known = [set()]  # known[d]: what the seat may have seen by deal d
    for dealt in deals:
        known.append(known[-1] | set(dealt["hands"][seat]) | set(dealt.get("manni") or [])  # a swap gives the Manni
                     | {c for trick in dealt["tricks"] for c in trick["cards"]})
    for frame in frames:
        game = json.loads(frame).get("game") if frame.startswith("{") else None
        seen = known[min(game["deal"] if game else 1, len(deals))]
        shown = set(CARD.findall(frame))
        assert shown <= seen, sorted(shown - seen)


def test_the_waiting_and_invite_pages_say_what_the_table_is(served):
    """The creator's waiting page shows the variant and whether hints are on; the invite link's page
    says what Manni is, links the variant's rules and lists the table's options."""
    url, _ = served
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        anna, guest = Person(browser, errors), Person(browser, errors)
        page = anna.page
        open_forms(page, url, "trjamann")
        page.fill("#t-name", "Anna")
        page.click("#t-create")
        page.wait_for_selector("#seats-panel:not([hidden])")
        page.wait_for_function("document.getElementById('table-facts').textContent.includes('hints off')")
        assert page.inner_text("#table-facts").startswith("Trjámann · 12 deals · hints off")
        assert page.get_attribute("#table-facts a", "href") == "/rules#trjamann"

        guest.page.goto(page.input_value("#invite"))
        guest.page.wait_for_selector("#join-panel:not([hidden])")
        about = guest.page.inner_text("#join-about")
        assert about.startswith("Manni is an Icelandic trick-taking card game") and "This table plays Trjámann." in about
        assert guest.page.get_attribute("#join-about a", "href") == "/rules#trjamann"
        assert guest.page.inner_text("#join-facts").startswith("This table: Trjámann · 12 deals · hints off · ")
        browser.close()
    assert errors == []
