"""One game of a person at the terminal against two agents (``manni play``): the person's seat
asks through :class:`~manni_agents.play.human.HumanPolicy`, the table is narrated by
:class:`~manni_agents.play.human.TableNarrator`, and the game can be saved as a record."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from manni_agents.evaluation.match import play_game
from manni_agents.play.human import HumanPolicy, QuitGame, TableNarrator
from manni_env.engine import GameState
from manni_env.rules import Rules

#: The opponents ``manni play`` seats when none are named: the shipped agent where one exists for
#: the variant, ``rule_based`` otherwise.
DEFAULT_OPPONENTS = ("ppo", "ppo")
FALLBACK_OPPONENTS = ("rule_based", "rule_based")


def default_opponents(variant: str) -> tuple[str, str]:
    """The opponents for ``variant`` when ``--opponents`` is not given."""
    from manni_agents.ppo_agent import shipped_variants

    return DEFAULT_OPPONENTS if variant in shipped_variants() else FALLBACK_OPPONENTS



def play_terminal(
    rules: Rules,
    opponents: Sequence[str],
    seat: int = 0,
    seed: int | None = None,
    save: str | None = None,
    input_fn: Callable[[str], str] = input,
    output_fn: Callable[[str], None] = print,
) -> GameState:
    """Play one game with a person in ``seat`` against ``opponents`` (agent specs, filling the other
    seats clockwise); returns the final (or, after ``q``, unfinished) state."""
    from manni_agents.registry import make_agent

    if seat not in (0, 1, 2):
        raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")
    if len(opponents) != 2:
        raise ValueError(f"name exactly two opponents, got {len(opponents)}")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    specs = list(opponents)
    specs.insert(seat, "human")
    names = [f"seat {s} ({spec})" if s != seat else "you" for s, spec in enumerate(specs)]
    policies = [HumanPolicy(input_fn, output_fn, names) if s == seat else make_agent(spec) for s, spec in enumerate(specs)]
    rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(s,))) for s in range(3)]
    state = GameState(rules, seed=seed)
    output_fn(f"Manni ({rules.variant}), seed {seed}. You are seat {seat}; "
              + ", ".join(names[s] for s in range(3) if s != seat) + ". Type ? for help, q to quit.")
    try:
        play_game(state, policies, rngs, observer=TableNarrator(names, seat, output_fn))
    except KeyboardInterrupt:  # Ctrl-C: keep what --save asked for, then stop as every command does
        if save:
            _save(state, specs, save, output_fn)
        raise
    except (QuitGame, EOFError):
        output_fn("\nGame stopped.")
        save = _ask_save(save, input_fn)
    else:
        _final(state, names, output_fn)
    if save:
        _save(state, specs, save, output_fn)
    return state


def _final(state: GameState, names: Sequence[str], output_fn: Callable[[str], None]) -> None:
    totals = ", ".join(f"{names[s]} {state.totals[s]:+d}" for s in range(3))
    winners = " and ".join(names[s] for s in state.winners)
    note = " (stopped at the deal cap)" if state.truncated else ""
    output_fn(f"\nGame over after {len(state.rounds)} deals{note}. Final: {totals}. Winner: {winners}.")


def _ask_save(save: str | None, input_fn: Callable[[str], str]) -> str | None:
    """After a quit: confirm saving to ``save`` (yes unless told no: ``--save`` asked for it), or
    ask for a file name."""
    try:
        if save:
            return None if input_fn(f"save the unfinished game to {save}? [Y/n] ").strip().lower() in ("n", "no") else save
        return input_fn("save the unfinished game? file name (empty: don't save): ").strip() or None
    except EOFError:  # no one to answer: --save still holds
        return save


def _save(state: GameState, players: list[str], path: str, output_fn: Callable[[str], None]) -> None:
    """Append the record of ``state`` (its finished deals) to ``path``."""
    from manni_env.records import game_record, write_records

    write_records(path, [game_record(state, players=players)])
    output_fn(f"Saved the game to {path}.")
