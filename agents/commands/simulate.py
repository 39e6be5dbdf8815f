"""``manni simulate``: play seeded games between agents and write their records
(:func:`manni_agents.evaluation.match.simulate_games`, which says how the games are seeded)."""

from __future__ import annotations

import argparse
import functools
import sys

from manni_agents.bots.agent import BotError
from manni_agents.evaluation.match import simulate_games
from manni_agents.registry import make_agent
from manni_env.cli_options import add_variant_options, at_least, prepare_output_file, rules_from_args
from manni_env.interrupts import deferred_interrupt
from manni_env.records import write_records
from manni_env.text import count


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
        print(f"manni simulate: interrupted; kept {count(written, 'finished game')} in {args.records}", file=sys.stderr)
        return 130
    except BotError as err:
        print(f"manni simulate: {err}; kept {count(written, 'finished game')} in {args.records}", file=sys.stderr)
        return 1
    except OSError as err:  # e.g. the disk filled up while the games were written
        print(f"manni simulate: error: cannot write to {args.records} ({err.strerror or err}); "
              f"kept {count(written, 'game')} written before", file=sys.stderr)
        return 2
    print(f"wrote {written} {rules.variant} games to {args.records}")
    return 0
