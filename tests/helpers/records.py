"""Games played in the engine by fixed agents, and written as records for the warm start's tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from manni_agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.records import game_record, write_records
from manni_env.rules import Rules

PLAYERS = ("rule_based", "random", "rule_based")


def played(rules: Rules, seed: int, deals: int | None = None) -> tuple[GameState, list[int], list[int]]:
    """A game of ``PLAYERS`` in the engine (its first ``deals`` deals, or all), its actions and their seats."""
    state, rng, actions, seats = GameState(rules, seed=seed), np.random.default_rng(seed), [], []
    agents = [make_agent(spec) for spec in PLAYERS]
    while not state.finished and (deals is None or len(state.rounds) < deals):
        seats.append(state.to_move)
        actions.append(agents[state.to_move].act(state.view(state.to_move), rng))
        state.apply(actions[-1])
    return state, actions, seats


def write_games(path: Path, rules: Rules, seeds: tuple[int, ...] = (1, 2)) -> Path:
    """Whole games of ``PLAYERS``, one per seed, written to ``path`` by the project's record writer."""
    write_records(path, [game_record(played(rules, seed)[0], players=PLAYERS) for seed in seeds])
    return path
