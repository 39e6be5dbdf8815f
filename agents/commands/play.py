"""``manni play``: a person plays Manni in the terminal against two agents (:mod:`manni_agents.play.terminal`)."""

from __future__ import annotations

import argparse
import functools
import os
import sys

from manni_agents.play.terminal import DEFAULT_OPPONENTS, FALLBACK_OPPONENTS, default_opponents, play_terminal


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
    from manni_agents.bots.agent import BotError
    from manni_agents.registry import make_agent
    from manni_env.cli_options import prepare_output_file, rules_from_args

    rules = rules_from_args(args)
    opponents = args.opponents or default_opponents(rules.variant)
    try:
        for spec in opponents:
            make_agent(spec, rules)
    except ValueError as err:
        parser.error(str(err))
    created = args.save is not None and not os.path.lexists(args.save)
    if args.save is not None:
        prepare_output_file(parser, args.save, "--save", append=True)  # creates the file to prove it can
    try:
        play_terminal(rules, opponents, args.seat, args.seed, args.save)
    except BotError as err:
        print(f"manni play: {err}", file=sys.stderr)
        return 1
    finally:
        if created:
            _remove_if_empty(args.save)  # nothing was saved (the player declined): no empty file left
    return 0


def _remove_if_empty(path: str) -> None:
    try:
        if os.path.getsize(path) == 0:
            os.remove(path)
    except OSError:
        pass
