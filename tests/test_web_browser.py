"""``manni serve`` in a real headless browser: the system's Chromium driven by Playwright (no
browser download). The server runs on a free loopback port; the test plays a game by clicking and
replays records. Skipped where Playwright, Chromium or the web extra is missing."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from manni_agents.play.web.replay import build_replay  # noqa: E402
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium, open_forms, served  # noqa: E402,F401 (served: the server fixture)
from manni_env.actions import action_to_str  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.records import game_record, read_records, validate_record, write_records  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402

pytestmark = needs_chromium


@pytest.fixture
def page():
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 850})
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda err: errors.append(str(err)))
        yield page
        browser.close()
    assert not errors, errors


def wait_idle(page) -> None:
    page.wait_for_function("!document.body.classList.contains('busy')")


def greyed_cards_are_the_illegal_ones(page, store) -> bool:
    """Checks the hand against the engine; returns whether some card was greyed out."""
    game = store.get(page.evaluate("location.hash").removeprefix("#game="))
    view = game.state.view(game.seat)
    legal = {action_to_str(a) for a in view.legal_actions if a < 52}
    cards = page.locator("#hand button.card")
    shown = {cards.nth(k).get_attribute("data-card"): cards.nth(k).is_enabled() for k in range(cards.count())}
    assert shown == {c: c in legal for c in shown}
    return not all(shown.values())


def play_deal_by_clicking(page, store) -> int:
    """Click through one deal until its summary shows; returns how often some cards were greyed."""
    plays = greyed = 0
    for _ in range(60):
        if page.is_visible("#summary"):
            break
        if page.locator("#confirm").count():  # the exchange: discard two cards
            cards = page.locator("#hand button.card:not([disabled])")
            cards.nth(0).click()
            cards.nth(2).click()
            assert page.inner_text("#confirm") == "Exchange 2 cards"
            page.click("#confirm")
        elif page.locator("#buttons button.action").count():
            page.locator("#buttons button.action").first.click()
        else:
            greyed += greyed_cards_are_the_illegal_ones(page, store)
            page.locator("#hand button.card:not([disabled])").first.click()
            plays += 1
        wait_idle(page)
    assert page.is_visible("#summary"), "the deal did not end"
    assert plays == 12
    return greyed


def test_play_by_clicking_then_replay_the_game_and_an_uploaded_file(served, page, tmp_path):
    url, store = served
    open_forms(page, url, "basic")
    page.select_option("#opp1", "rule_based")  # choices and defaults follow the variant
    assert page.input_value("#opp1") == "rule_based" and page.input_value("#opp2") == "ppo"
    page.select_option("#variant", "hornafjardar")
    assert page.input_value("#opp1") == page.input_value("#opp2") == "ppo"
    page.fill("#target", "1")
    page.fill("#seed", "5")  # a deal in which the person must follow suit holding other suits
    page.click("#start")
    page.wait_for_selector("#hand button.card")
    assert "Exchange" in page.inner_text("#prompt")
    hand = page.locator("#hand .card").evaluate_all("cards => cards.map(c => c.dataset.card)")
    page.reload()  # the tab's game (in the address) resumes
    page.wait_for_selector("#hand button.card")
    assert page.locator("#hand .card").evaluate_all("cards => cards.map(c => c.dataset.card)") == hand
    greyed = 0
    for deal in range(1, 6):  # target 1: over after the first deal that is not 4-4-4 (the first, with seed 5)
        greyed += play_deal_by_clicking(page, store)
        rows = page.locator("#summary-table tr")
        assert rows.count() == 4
        tricks = [int(rows.nth(k).locator("td").first.inner_text()) for k in (1, 2, 3)]
        assert sum(tricks) == 12
        if page.is_visible("#summary-replay"):
            break
        page.click("#summary-ok")
        assert page.is_hidden("#summary")
    assert "Game over" in page.inner_text("#summary-title")
    assert greyed > 0  # the person had to follow suit with other cards in hand
    [record] = read_records(store.records_path)  # saved when it ended
    validate_record(record)
    assert record["players"] == ["human", "ppo", "ppo"] and record["seed"] == 5 and len(record["rounds"]) == deal

    # replay the game just played: all hands face up, the ppo agents' probabilities
    page.click("#summary-replay")
    page.wait_for_selector("#replay-view:not([hidden])")
    seats = page.locator("#r-seats .r-seat")
    assert [seats.nth(s).locator(".card").count() for s in range(3)] == [12, 12, 12]
    assert page.inner_text("#r-text").startswith("Deal 1:")
    replay = build_replay(record)
    total = len(replay["frames"])
    assert page.inner_text("#r-counter") == f"1 / {total}"
    for _ in range(40):  # step until an agent's decision
        page.click("#r-next")
        if page.locator("#r-probs .prob").count():
            break
    assert page.locator("#r-probs .prob.chosen").count() == 1
    page.click("#r-trick-next")
    if "plays" not in page.inner_text("#r-text"):
        page.click("#r-trick-next")
    assert page.locator("#r-trick .card").count() == 3 and page.locator("#r-trick .winner").count() == 1
    before = page.inner_text("#r-counter")
    page.click("#r-prev")
    assert page.inner_text("#r-counter") != before
    page.click("#r-deal-next")
    second = replay["deals"][1]["first_frame"] + 1 if len(replay["deals"]) > 1 else total
    assert page.inner_text("#r-counter") == f"{second} / {total}"

    # upload a records file of two games and switch between them
    games = tmp_path / "two.jsonl"
    write_records(games, [_random_record("trjamann", seed) for seed in (1, 2)])
    page.set_input_files("#replay-file", str(games))
    page.wait_for_function("document.querySelectorAll('#replay-game option').length === 2")
    assert page.inner_text("#r-counter") == "1 / " + str(_frame_count(read_records(games)[0]))
    assert [seats.nth(s).locator(".card").count() for s in range(3)] == [16, 16, 16]
    page.select_option("#replay-game", "1")
    page.wait_for_function(f"document.getElementById('r-counter').textContent === '1 / {_frame_count(read_records(games)[1])}'")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#r-counter").startswith("2 / ")


def _frame_count(record: dict) -> int:
    return len(build_replay(record)["frames"])


def _random_record(variant: str, seed: int) -> dict:
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    while not state.finished:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return json.loads(json.dumps(game_record(state, players=["random"] * 3)))
