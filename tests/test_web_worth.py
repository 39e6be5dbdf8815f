"""What a card is worth and par in ``manni serve``: a table's hints and review value each legal card
by the search's expected deal points from the person's view only, the review sums the cost per deal
and shows the deal's par; single games and replays carry the par of every finished deal."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.evaluation.par import record_par, totals
from manni_agents.registry import make_agent
from manni_agents.play.web.game import WebGame
from manni_agents.play.web.replay import build_replay
from manni_agents.play.web.tables import PERSON, Table
from manni_env import make_rules
from manni_env.engine import Phase

from helpers.hidden import twin_with_other_hidden_cards


def table_at_card_play(seed: int = 3) -> Table:
    """A table of one person and two agents, with hints, at the person's first card play with a choice."""
    table = Table(make_rules("hornafjardar"), [PERSON, "ppo", "ppo"], stand_in="ppo", advisor="ppo", hints=True,
                  seed=seed)
    table.join("Ann")
    while not (table.state.phase == Phase.PLAY and len(table.state.legal_actions()) > 1):
        table.act(0, [table._hints(0)[0]["action"]])
    return table


def test_hints_value_each_legal_card_from_the_persons_view_only() -> None:
    table = table_at_card_play()
    state, hints = table.state, table._hints(0)
    key = (len(state.rounds), len(state.view(0).plays), 0)
    values = make_agent("search").card_values(state.view(0), np.random.default_rng([table.seed, *key]))
    assert {h["action"]: h["points"] for h in hints} == {a: round(p, 3) for a, p in values.points.items()}
    assert all(h["worlds"] == 16 and h["cost"] == pytest.approx(h["best"] - h["points"], abs=2e-3) for h in hints)
    assert min(h["cost"] for h in hints) == 0
    table.state, table._worth = twin_with_other_hidden_cards(state, 0), None  # other hidden cards, same view
    assert table._hints(0) == hints


def test_review_sums_the_cost_and_shows_the_deals_par() -> None:
    table = table_at_card_play(seed=5)
    rng = np.random.default_rng(0)
    while not table.state.rounds:  # the person plays a random legal card: some cost something
        table.act(0, [int(rng.choice(table.state.legal_actions()))])
    assert table.value_reviews()  # the deal is over: its review changed
    review = table.message(0)["review"]
    cards = [d for d in review["decisions"] if "cost" in d]
    assert cards and all(d["phase"] == "play" and d["cost"] >= 0 for d in cards)
    assert review["cost"] == pytest.approx(sum(d["cost"] for d in cards), abs=1e-3)
    assert review["decisions"][-1]["forced"] and not any(d["forced"] for d in cards)  # the last card: no worth
    pars = record_par(table.record())
    assert review["par"] == pars[0].to_dict() and review["par_totals"] == totals(pars)
    assert table.message(None)["review"] is None  # a spectator gets no review


def test_single_games_and_replays_carry_par() -> None:
    game = WebGame(make_rules("trjamann"), ["ppo", "rule_based"], seat=1, seed=7)
    rng = np.random.default_rng(1)
    while len(game.state.rounds) < 2:
        game.act([int(rng.choice(game.state.legal_actions()))])
    pars = record_par(game.record())
    assert game.snapshot()["par"] == {"deals": [p.to_dict() for p in pars], "totals": totals(pars)}
    replay = build_replay(game.record())
    assert [d["par"] for d in replay["deals"]] == [p.to_dict() for p in pars]
    assert replay["par"]["totals"] == totals(pars)
    ends = [f for f in replay["frames"] if f["deal_over"]]
    assert [f["deal_over"]["par"] for f in ends] == [p.to_dict() for p in pars]


def test_a_move_is_applied_without_the_search_and_valued_after_it(monkeypatch) -> None:
    """Valuing a person's cards (the search, ~30 ms a decision) once held up every move at a table:
    the move is applied and pushed first, and :meth:`Table.value_reviews` values it afterwards, as
    the hints would have (same worlds)."""
    table = table_at_card_play(seed=5)
    table.hints = False
    state = table.state
    key = (len(state.rounds), len(state.view(0).plays), 0)
    expected = make_agent("search").card_values(state.view(0), np.random.default_rng([table.seed, *key]))
    table._worth = None
    card = int(state.legal_actions()[0])
    calls = []
    monkeypatch.setattr(table.search, "card_values", lambda *args: calls.append(args) or expected)
    table.act(0, [card])
    assert calls == []  # not on the move's way
    [entry] = [d for d in table.reviews[-1] if d["seat"] == 0 and d["phase"] == "play"]
    assert "cost" not in entry
    assert not table.value_reviews()  # the deal goes on: no review sent changed
    assert len(calls) == 1 and entry["points"] == round(expected.points[card], 3)
    assert entry["cost"] == round(expected.cost(card), 3)
    assert not table.value_reviews() and len(calls) == 1  # valued once
