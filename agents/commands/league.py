"""``manni league``: every agent against two copies of every other, and a leaderboard (:mod:`manni_agents.evaluation.league`)."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path


def register(subparsers) -> None:
    from manni_env.cli_options import at_least
    from manni_env.rules import VARIANTS

    parser = subparsers.add_parser(
        "league",
        help="every agent against two copies of every other; leaderboard with CIs, ratings and ms/move",
        description="Play `manni arena X Y Y` in duplicate deals for every ordered pair of the agents and write a "
        "leaderboard (mean deal score with 95% CI, openskill rating, ms/move) as Markdown, JSON and PNG to "
        "OUT/VARIANT/. Cells already played with these settings are kept, so adding an agent plays only its "
        "new cells; results depend only on the seed. Ctrl-C keeps the finished deals and rebuilds the leaderboard.",
    )
    parser.add_argument("agents", nargs="+", metavar="SPEC", help="two or more agent specs, e.g. rule_based ppo "
                        "'bot:python3 examples/bots/simple_bot.py'")
    parser.add_argument("--variant", choices=(*VARIANTS, "all"), default="hornafjardar",
                        help="variant (its default rules), or all of them (default hornafjardar)")
    parser.add_argument("--deals", type=at_least(1), default=200, help="duplicate deals per cell (default 200)")
    parser.add_argument("--seed", type=at_least(0), default=1, help="seed of every cell (default 1)")
    parser.add_argument("--workers", type=at_least(1), default=1, help="worker processes per arena (default 1)")
    parser.add_argument("--out", default="league", metavar="DIR", help="result directory (default ./league)")
    parser.add_argument("--force", action="store_true", help="play cells again whose results are kept")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=functools.partial(_main, parser=parser))


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from manni_agents.bots.agent import BotError
    from manni_agents.evaluation import league
    from manni_agents.registry import make_agent
    from manni_env.rules import VARIANTS, make_rules

    agents = [spec.strip() for spec in args.agents]
    if len(agents) < 2 or len(set(agents)) < len(agents):
        parser.error(f"expected two or more distinct agent specs, got {' '.join(agents)}")
    if len({league.safe_name(spec) for spec in agents}) < len(agents):
        parser.error(f"two specs share a directory name: {' '.join(agents)}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"argument --out: {args.out} exists and is not a directory")
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    plans = []
    try:
        for variant in variants:
            rules = make_rules(variant)
            built = {spec: make_agent(spec, rules) for spec in agents}
        players = {spec: league.identity(spec, agent) for spec, agent in built.items()}  # starts each bot once
        for variant in variants:
            rules = make_rules(variant)
            pairs = [(x, y) for x in agents for y in agents if x != y]
            plans.append((rules, league.plan(pairs, rules, args.seed, out, lambda x, y: args.deals, args.force,
                                             players=players)))
    except ValueError as err:
        parser.error(str(err))
    except BotError as err:
        print(f"manni league: {err}", file=sys.stderr)
        return 1
    code = 0
    try:
        for rules, cells in plans:
            league.play(cells, rules, args.seed, args.workers, progress=not args.no_progress)
            _board(league, out, agents, rules, args.seed, players)
    except KeyboardInterrupt:
        _board(league, out, agents, rules, args.seed, players)
        print(f"manni league: interrupted; kept the finished deals and rebuilt {out / rules.variant}", file=sys.stderr)
        code = 130
    except BotError as err:
        print(f"manni league: {err}", file=sys.stderr)
        code = 1
    return code


def _board(league, out: Path, agents: list[str], rules, seed: int, players: dict[str, dict]) -> None:
    board = league.leaderboard(out, agents, rules, seed, players)
    league.write_leaderboard(board, out / rules.variant)
    print(board.summary())
    print(f"wrote {', '.join(league.LEADERBOARD_FILES)} to {out / rules.variant} (the matrix of every cell and "
          "the command that plays it: leaderboard.md)")
