"""``manni bot check COMMAND``: the conformance run of a ``manni-bot/1`` program (:mod:`manni_agents.bots.check`);
``manni bot connect LINK COMMAND``: the program at a table of a remote server (:mod:`manni_agents.bots.connect`)."""

from __future__ import annotations

import argparse
import functools
import shlex


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bot",
        help="tools for bot programs (manni-bot/1 protocol, docs/bot-protocol.md)",
        description="Tools for bot programs speaking the manni-bot/1 protocol over stdin/stdout.",
    )
    sub = parser.add_subparsers(dest="bot_command", required=True, metavar="TOOL")
    check = sub.add_parser(
        "check",
        help="conformance run: scripted situations of every phase of every variant",
        description="Start COMMAND and check, one PASS/FAIL line each, that it answers the handshake, a "
        "legal action in every phase of every variant (exchange, swap, pickup, discard, announcement, "
        "leading, following, the last card), whole games with their end messages, and that it exits "
        "after bye (nothing more is tried after a failed hello). Exit code 1 if any check fails.",
    )
    check.add_argument("command", nargs="+", metavar="COMMAND",
                       help="the bot's command line, quoted as one argument or given as words, e.g. "
                       "'python3 examples/bots/simple_bot.py' (a bot: spec prefix is accepted)")
    check.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                       help="seconds the bot has for each answer (default 10)")
    check.add_argument("--start-limit", type=float, default=10.0, metavar="S",
                       help="seconds the bot has to start and answer hello (default 10)")
    check.add_argument("--variant", action="append", metavar="V",
                       help="check only this variant (repeatable; default: every variant)")
    check.set_defaults(func=functools.partial(_check, parser=check))
    connect = sub.add_parser(
        "connect",
        help="play a seat at a table of a manni serve on another machine",
        description="Join the seat for a remote bot at the table of LINK (the table's invite link, "
        "http://HOST:PORT/#table=ID; a link ending &token=T, printed when joining, rejoins that seat) and relay "
        "the manni-bot/1 messages between the table's WebSocket and COMMAND's stdin/stdout until the game "
        "ends. LINK http://HOST:PORT/#daily plays every deal left of the server's daily challenge. The bot "
        "program needs no change: it is the same one bot:COMMAND runs. A rated bot's player token goes in "
        "the environment variable MANNI_PLAYER_TOKEN (the daily challenge needs one). Exit code 1, with one "
        "error line, when the server refuses a move or the connection or the bot fails.",
    )
    connect.add_argument("link", metavar="LINK", help="the table's invite link (or a rejoin link)")
    connect.add_argument("command", nargs="+", metavar="COMMAND",
                         help="the bot's command line, quoted as one argument or given as words")
    connect.add_argument("--name", default="", help="the name the table shows until the bot says hello")
    connect.set_defaults(func=functools.partial(_connect, parser=connect))


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from manni_agents.bots.agent import BotAgent
    from manni_agents.bots.check import run_checks
    from manni_agents.spec_options import seconds
    from manni_env.rules import VARIANTS

    command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    command = command.removeprefix("bot:").strip()
    variants = tuple(dict.fromkeys(args.variant or VARIANTS))
    for variant in variants:
        if variant not in VARIANTS:
            parser.error(f"argument --variant: unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")
    for flag, value in (("--time-limit", args.time_limit), ("--start-limit", args.start_limit)):
        try:
            seconds(str(value))
        except ValueError as err:
            parser.error(f"argument {flag}: {err}, got {value}")
    try:
        BotAgent(command)
    except ValueError as err:
        parser.error(str(err))
    failed = total = 0
    for check in run_checks(command, args.time_limit, variants, args.start_limit):
        print(check.line(), flush=True)
        total += 1
        failed += not check.ok
    print(f"{total - failed} of {total} checks passed" + (f"; {failed} failed" if failed else ""))
    return 1 if failed else 0


def _connect(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from manni_agents.bots.agent import BotAgent
    from manni_agents.bots.connect import ConnectError, main, parse_link

    try:
        import websockets  # noqa: F401
    except ImportError as err:
        parser.error(f"needs the web extra ({err}); pip install 'manni-env[web]'")
    command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    command = command.removeprefix("bot:").strip()
    try:
        parse_link(args.link)
        BotAgent(command)
    except (ValueError, ConnectError) as err:
        parser.error(str(err))
    return main(args.link, command, args.name)
