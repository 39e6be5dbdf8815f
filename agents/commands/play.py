"""``manni play``: a person plays Manni in the terminal against two agents."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence

import numpy as np

from manni_env.engine import GameState
from manni_env.rules import Rules

from ..human import HumanPolicy, QuitGame, TableNarrator
from ..match import play_game

#: The opponents ``manni play`` seats when none are named: the shipped agent where one exists for
#: the variant, ``rule_based`` otherwise.
DEFAULT_OPPONENTS = ("ppo", "ppo")
FALLBACK_OPPONENTS = ("rule_based", "rule_based")


def default_opponents(variant: str) -> tuple[str, str]:
    """The opponents for ``variant`` when ``--opponents`` is not given."""
    from ..ppo_agent import shipped_variants

    return DEFAULT_OPPONENTS if variant in shipped_variants() else FALLBACK_OPPONENTS


def register(subparsers) -> None:
    from manni_env.cli_options import add_variant_options, at_least

    parser = subparsers.add_parser(
        "play",
        help="play against two agents in the terminal",
        description="Play a game of Manni in the terminal against two agents. Type a card (TH, 10h), "
        "the number of a listed move or its name (done, keep, swap, take, pass, spades, ...); ? for help, q to quit.",
    )
    parser.add_argument("--opponents", nargs=2, default=None, metavar=("A", "B"),
                        help=f"agent specs of the two opponents (default: {' '.join(DEFAULT_OPPONENTS)} in "
                        "the variants with a shipped agent, else " + " ".join(FALLBACK_OPPONENTS) + ")")
    parser.add_argument("--seat", type=int, choices=(0, 1, 2), default=0, help="your seat (default 0)")
    add_variant_options(parser)
    parser.add_argument("--seed", type=at_least(0), default=None, help="deal seed (default: fresh entropy, shown at the start)")
    parser.add_argument("--save", metavar="FILE", help="append the game to FILE as a manni-record/1 line")
    parser.set_defaults(func=functools.partial(_main, parser=parser))


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from manni_env.cli_options import prepare_output_file, rules_from_args

    from ..bot_agent import BotError
    from ..registry import make_agent

    rules = rules_from_args(args)
    opponents = args.opponents or default_opponents(rules.variant)
    try:
        for spec in opponents:
            make_agent(spec, rules)
    except ValueError as err:
        parser.error(str(err))
    if args.save is not None:
        prepare_output_file(parser, args.save, "--save", append=True)
    try:
        play_terminal(rules, opponents, args.seat, args.seed, args.save)
    except BotError as err:
        print(f"manni play: {err}", file=sys.stderr)
        return 1
    return 0


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
    from ..registry import make_agent

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
