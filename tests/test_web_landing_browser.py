"""The landing page, one card notation, the replay library and phone width, in a real headless
browser (the system's Chromium driven by Playwright, as in ``test_web_browser.py``): the variants
come from the server with their names and rules; "Play against the agents" starts a game at once;
no visible text names a card as ``TS`` or a move as ``keep_hand``; a disabled red card stays red;
the invite link copies; a table's review shows what each card was worth, its cost and par; the
library replays a game the server saved; nothing overflows a phone's width. With
``MANNI_DOCS_SCREENSHOTS=1`` the screenshots go to ``docs/web-*.png``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("websockets")
sync_api = pytest.importorskip("playwright.sync_api")

from helpers.browser import CARD, CHROMIUM, CHROMIUM_ARGS, DOCS, needs_chromium, open_forms, served  # noqa: E402,F401 (served: the server fixture)
from manni_env.engine import GameState  # noqa: E402
from manni_env.records import game_record, write_records  # noqa: E402
from manni_env.rules import VARIANT_TABLE, make_rules  # noqa: E402

pytestmark = needs_chromium
ACTION_ID = re.compile(r"\b(keep_hand|swap_hand|take_manni|pass_manni|exchange_done|announce_\w+)\b")
PHONE = {"width": 390, "height": 844}
#: a hint's worth and cost, and a review's cost: signed with the minus sign, "best" for the best card
#: (0.00 for a cost under half a hundredth)
WORTH = re.compile(r"[+−]?\d+\.\d\d \((−\d+\.\d\d|0\.00|best)\)")
COST = re.compile(r"−\d+\.\d\d|0\.00|best|")
#: a number written with the ASCII hyphen as its minus sign
HYPHEN_MINUS = re.compile(r"(?:^|[\s(:,·])-\d", re.M)
#: each visible red suit's text colour and the colour behind it (the first colour of a gradient)
RED_ON = """() => [...document.querySelectorAll('.suit-red, .card.red')].filter((e) => e.offsetParent).map((e) => {
  let back = e;
  while (back && getComputedStyle(back).backgroundColor === 'rgba(0, 0, 0, 0)' && getComputedStyle(back).backgroundImage === 'none') {
    back = back.parentElement;
  }
  const style = getComputedStyle(back);
  const gradient = style.backgroundImage.match(/rgba?\\([^)]*\\)/);
  return [getComputedStyle(e).color, gradient ? gradient[0] : style.backgroundColor];
})"""


@pytest.fixture
def browser():
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def new_page(viewport: dict, **options):
            page = chromium.new_context(viewport=viewport, **options).new_page()
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda err: errors.append(str(err)))
            return page

        yield new_page
        chromium.close()
    assert not errors, errors


def shot(tmp_path: Path, name: str) -> Path:
    return DOCS / name if os.environ.get("MANNI_DOCS_SCREENSHOTS") else tmp_path / name


def check_text(page) -> None:
    """The visible text of the page uses the hand's notation (no ``TS``, no ``keep_hand``) and the
    minus sign (no ``-4``), and every red suit shown has a WCAG 2.1 contrast of at least 4.5:1 with
    what is behind it (computed by coloraide)."""
    from coloraide import Color

    text = page.inner_text("body")
    assert not CARD.findall(text) and not ACTION_ID.findall(text), (CARD.findall(text), ACTION_ID.findall(text))
    assert not HYPHEN_MINUS.findall(text), HYPHEN_MINUS.findall(text)
    contrasts = [(fg, bg, Color(fg).contrast(bg, method="wcag21")) for fg, bg in page.evaluate(RED_ON)]
    assert all(ratio >= 4.5 for *_, ratio in contrasts), [c for c in contrasts if c[2] < 4.5]


def fits(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def move(page) -> None:
    """The first button (keep the hand, ...), the exchange's confirm, or the first playable card."""
    if page.locator("#confirm").count():
        page.click("#confirm")
    elif page.locator("#buttons button.action:not(.primary)").count():
        page.locator("#buttons button.action").first.click()
    else:
        page.locator("#hand button.card:not([disabled])").first.click()
    page.wait_for_function("!document.body.classList.contains('busy')")


def test_landing_page_quick_play_and_one_notation(served, browser, tmp_path):
    url, _ = served
    page = browser({"width": 1200, "height": 760})
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    assert "trick-taking card game for three players" in page.inner_text("#home")
    cards = page.locator(".variant-card")
    assert cards.evaluate_all("cs => cs.map(c => c.dataset.variant)") == list(VARIANT_TABLE)
    assert cards.locator("h3").all_inner_texts() == ["Hornafjarðarmanni", "Basic Manni", "Trjámann", "Laugarvatnsmanni"]
    assert page.is_hidden("#new-game") and page.is_visible("#quick-play") and page.is_visible("#quick-table")
    page.screenshot(path=str(shot(tmp_path, "web-landing.png")))
    page.click(".variant-card[data-variant='basic']")
    assert page.input_value("#variant") == "basic" and "chosen" in cards.nth(1).get_attribute("class")
    assert cards.nth(1).locator("a.rules-link").get_attribute("href") == "/rules#basic"

    page.click("#quick-play")  # one click: a game against the variant's agents
    page.wait_for_selector("#hand button.card")
    assert page.is_hidden("#home") and page.evaluate("game.variant") == "basic"
    assert page.evaluate("game.agents") == ["human", "ppo", "ppo"]
    for _ in range(6):
        move(page)
        check_text(page)
    style = page.evaluate("""() => {  // a card you may not play: dimmed, its red suit still red
        const card = cardEl("QH", "button");
        card.disabled = true;
        document.getElementById("hand").append(card);
        const s = getComputedStyle(card);
        const seen = [s.color, s.filter, Number(s.opacity)];
        card.remove();
        return seen;
    }""")
    assert style[:2] == ["rgb(196, 29, 37)", "none"] and 0.4 <= style[2] < 1

    rules = browser({"width": 1200, "height": 760})
    rules.goto(url + "rules#basic")
    assert rules.is_visible("h2#basic") and "Basic Manni" in rules.inner_text("h2#basic")


def test_table_review_worth_and_par_and_the_copied_invite(served, browser, tmp_path):
    url, _ = served
    page = browser({"width": 1200, "height": 860}, permissions=["clipboard-read", "clipboard-write"])
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    page.click("#quick-table")  # a table with friends: the invite link and a copy button
    page.wait_for_selector("#seats-panel:not([hidden])")
    page.click("#copy-invite")
    page.wait_for_function("document.getElementById('copy-note').textContent.startsWith('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == page.input_value("#invite")
    assert "#table=" in page.input_value("#invite")

    open_forms(page, url, "basic")  # a table of one person, two agents and hints: the review after a deal
    page.fill("#target", "1")
    page.select_option("#t-seat1", "ppo")
    page.check("#t-hints")
    page.click("#t-create")
    page.wait_for_selector("#hand button.card")
    valued = False
    for _ in range(60):
        if page.is_visible("#summary"):
            break
        if not page.evaluate("Boolean(game && game.your_turn && !busy)"):
            page.wait_for_timeout(50)
            continue
        worths = page.locator("#hints .worth:not(:empty)").all_inner_texts()
        valued |= bool(worths)
        assert all(WORTH.fullmatch(w) for w in worths), worths  # "+1.20 (−0.13)", "+1.33 (best)"
        check_text(page)
        move(page)
    assert valued and page.is_visible("#review")
    title = page.inner_text("#review-title")
    assert "cost" in title and "against par" in title and re.search(r"cost against the best ones: (−\d|0)", title)
    head = page.locator("#review-table tr").first.locator("th").all_inner_texts()
    assert head[1:] == ["you", "agent", "worth", "best", "cost"]
    rows = [row.locator("td").all_inner_texts() for row in page.locator("#review-table tr").all()[1:]]
    assert all(COST.fullmatch(cost) for *_, cost in rows), rows  # the hints' signed format: −0.94 or best
    assert rows[-1][2] == "forced"  # a deal's last card is the only one left: no worth, and a note says why
    assert "a forced move (the only legal one) has none" in page.inner_text("#review-note")
    assert page.locator("#summary-table th", has_text="par").count() >= 1
    check_text(page)
    page.screenshot(path=str(shot(tmp_path, "web-review.png")))


def test_the_library_and_phone_width(served, browser, tmp_path):
    url, store = served
    state = GameState(make_rules("hornafjardar", target=1), seed=3)
    rng = np.random.default_rng(0)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    store.records_path.parent.mkdir(parents=True, exist_ok=True)
    write_records(store.records_path, [json.loads(json.dumps(game_record(state, players=["random"] * 3)))])

    page = browser(PHONE, is_mobile=True, has_touch=True)
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    fits(page)
    assert page.locator("#quick-play").bounding_box()["y"] < PHONE["height"]  # the main action in view
    page.click("#quick-play")
    page.wait_for_selector("#hand button.card")
    for _ in range(4):
        move(page)
    fits(page)
    check_text(page)
    page.screenshot(path=str(shot(tmp_path, "web-phone.png")))

    page.click("#tab-replay")
    page.wait_for_selector("#library-list button")
    assert page.locator("#library-list li").count() == 1 and page.is_hidden("#library-empty")
    page.click("#library-list button")
    page.wait_for_selector("#replay-view:not([hidden])")
    page.click("#r-deal-next")  # the last frame of the game: the deal is over, with its par
    assert "Par (the agent in all three seats)" in page.inner_text("#r-text")
    fits(page)
    check_text(page)



def test_red_suits_are_readable_on_the_green_and_numbers_use_the_minus_sign(served, browser):
    """Every red suit the replay shows has a WCAG 2.1 contrast of at least 4.5:1 with what is behind it
    (coloraide computes it); totals and scores use the minus sign, as the points beside them."""
    url, store = served
    state = GameState(make_rules("hornafjardar", target=3), seed=5)
    rng = np.random.default_rng(1)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    assert min(state.totals) < 0
    store.records_path.parent.mkdir(parents=True, exist_ok=True)
    write_records(store.records_path, [json.loads(json.dumps(game_record(state, players=["random"] * 3)))])
    page = browser({"width": 1200, "height": 860})
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("[number(-4), signed(-4), signed(4), signed(0), signed(-0.001, 2), cost(0.13), cost(0)]") == [
        "−4", "−4", "+4", "0", "0.00", "−0.13", "best"]
    page.click("#tab-replay")
    page.wait_for_selector("#library-list button")
    page.click("#library-list button")
    page.wait_for_selector("#replay-view:not([hidden])")
    page.evaluate("go(replay.frames.length - 1)")  # the end of the game: every total, and the discards
    assert "−" in page.inner_text("#r-seats")
    assert page.locator(".r-seat .suit-red").count()  # the discards, in red and black on the green
    check_text(page)
