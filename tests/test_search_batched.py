"""The batched multi-decision search (``SearchAgent.evaluate_many``): the same per-card values as
the one-decision search on the same positions and worlds, for many games' decisions at once."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.registry import make_agent
from manni_env import GameState, make_rules

from helpers.scripts import load_benchmark
from helpers.search_positions import to_play

#: the policy weights come from float32 logits of batches of other sizes, so values agree to float32's
#: precision (relative, about 1e-6 of a value of several points; uniform weights: exact)
RTOL, ATOL = 1e-5, 1e-6


def positions(variant: str) -> list:
    """Card-play decisions of several deals at several stages (their deals end after different
    numbers of plays, and they have different numbers of legal cards and plays to replay)."""
    rules, rng = make_rules(variant), np.random.default_rng(3)
    views = []
    for seed, plays in enumerate((0, 4, 13, 20, 26, 2)):
        state = to_play(GameState(rules, seed=seed), plays, rng)
        views.append(state.view(state.to_move))
    return views


@pytest.mark.parametrize(("variant", "spec"), [("trjamann", "search:worlds=3"),
                                               ("hornafjardar", "search:worlds=2"),
                                               ("laugarvatn", "search:worlds=3,weighting=policy"),
                                               ("basic", "search:worlds=2,weighting=policy,temperature=2")])
def test_batched_values_equal_the_one_decision_search(variant: str, spec: str) -> None:
    views = positions(variant)
    agent = make_agent(spec)
    batched = agent.evaluate_many(views, np.random.default_rng(8))
    rng = np.random.default_rng(8)  # the same worlds: drawn view after view
    for row, view in zip(batched, views):
        _, means, _ = agent.evaluate(view, rng)
        assert set(np.flatnonzero(~np.isnan(row)).tolist()) == set(means)
        np.testing.assert_allclose([row[a] for a in means], list(means.values()), rtol=RTOL, atol=ATOL)
    # and in another order, each decision keeps its own values (no game mixed with another's)
    order = [3, 0, 5, 1, 4, 2]
    again = agent.evaluate_many([views[i] for i in order], np.random.default_rng(8))
    rng = np.random.default_rng(8)
    for row, i in zip(again, order):
        _, means, _ = agent.evaluate(views[i], rng)
        np.testing.assert_allclose([row[a] for a in means], list(means.values()), rtol=RTOL, atol=ATOL)


def test_no_views_no_values_and_bad_views_are_refused() -> None:
    agent = make_agent("search:worlds=2")
    assert agent.evaluate_many([], np.random.default_rng(0)).shape == (0, 63)
    views = positions("trjamann")[:2]
    with pytest.raises(ValueError, match="search evaluates card play"):
        agent.evaluate_many([views[0], GameState(make_rules("trjamann"), seed=1).view(0)], np.random.default_rng(0))
    other = positions("laugarvatn")[0]
    with pytest.raises(ValueError, match="one variant"):
        agent.evaluate_many([views[0], other], np.random.default_rng(0))


def test_the_benchmark_measures_every_batch_size(capsys) -> None:
    bench = load_benchmark("bench_search_batch")
    assert set(bench.measure("trjamann", decisions=3, worlds=1, batches=[1, 3])) == {1, 3}
    bench.main(["--decisions", "2", "--worlds", "1", "--batches", "2"])
    assert "| 2 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench.main(["--batches", "0"])
