"""``manni simulate``: play seeded games between agents and write their records.

Seeds: with ``--seed S``, game ``i`` uses ``child = numpy.random.SeedSequence(S).spawn(N)[i]``; its
deals come from ``GameState(rules, seed=int(child.generate_state(1)[0]))`` (that 32-bit seed is the
record's ``seed``) and the agent in seat ``k`` acts with ``default_rng(child.spawn(3)[k])``. Game
``i`` is therefore the same whatever ``--games`` is, and the same on every run.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterator, Sequence

import numpy as np
from tqdm.auto import tqdm

from manni_env.cli_options import add_variant_options, at_least, prepare_output_file, rules_from_args
from manni_env.engine import GameState
from manni_env.interrupts import deferred_interrupt
from manni_env.records import game_record, write_records
from manni_env.rules import Rules

from ..bot_agent import BotError
from ..match import play_game
from ..registry import make_agent


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="play seeded games between agents and write their records",
        description="Play N seeded games and write each as a manni-record/1 line to FILE as soon as it ends. "
        "Game i is dealt from a seed derived from (S, i) with numpy's SeedSequence, so runs are reproducible. "
        "Ctrl-C stops the run; the games written so far are kept.",
    )
    add_variant_options(parser)
    parser.add_argument("--games", type=at_least(0), default=100, help="number of games (default 100)")
    parser.add_argument("--seed", type=at_least(0), default=0,
                        help="seed S of the run: game i uses numpy SeedSequence(S).spawn(N)[i] (default 0)")
    parser.add_argument("--records", metavar="FILE", required=True,
                        help="JSON Lines file the records are written to (a new file, or see --append)")
    parser.add_argument("--append", action="store_true", help="add the records to FILE if it already holds some")
    parser.add_argument("--agents", nargs=3, default=["random", "random", "random"], metavar=("A", "B", "C"),
                        help="agent specs for seats 0, 1, 2 (default: random random random)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=functools.partial(_main, parser=parser))


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    rules = rules_from_args(args)
    try:
        policies = [make_agent(spec, rules) for spec in args.agents]
    except ValueError as err:
        parser.error(str(err))
    prepare_output_file(parser, args.records, "--records", args.append)
    written = 0
    try:
        for record in simulate_games(rules, policies, args.games, args.seed, args.agents, progress=not args.no_progress):
            with deferred_interrupt():  # a game is written and counted, or neither
                written += write_records(args.records, [record])
    except KeyboardInterrupt:
        print(f"manni simulate: interrupted; kept the {written} finished games in {args.records}", file=sys.stderr)
        return 130
    except BotError as err:
        print(f"manni simulate: {err}; kept the {written} finished games in {args.records}", file=sys.stderr)
        return 1
    except OSError as err:  # e.g. the disk filled up while the games were written
        print(f"manni simulate: error: cannot write to {args.records} ({err.strerror or err}); "
              f"kept the {written} games written before", file=sys.stderr)
        return 2
    print(f"wrote {written} {rules.variant} games to {args.records}")
    return 0


def simulate_games(
    rules: Rules, policies: Sequence, games: int, seed: int, players: Sequence[str], progress: bool = False
) -> Iterator[dict]:
    """Play ``games`` games (seeded as the module docstring says); yield each game's record."""
    for child in tqdm(np.random.SeedSequence(seed).spawn(games), desc="games", unit="game", disable=not progress):
        state = GameState(rules, seed=int(child.generate_state(1)[0]))
        play_game(state, policies, [np.random.default_rng(s) for s in child.spawn(3)])
        yield game_record(state, players=players)

