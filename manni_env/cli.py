"""The ``manni`` command: one entry point, one module per subcommand.

Each module listed in :data:`COMMANDS` defines ``register(subparsers)``, which adds its parser
and sets ``func`` (called with the parsed arguments, returning an exit code). Ctrl-C ends any
command with one line and exit code 130 (commands that keep partial output say what they kept);
a closed output pipe (``manni validate ... | head``) ends it quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMANDS = (
    "manni_env.commands.validate",
    "manni_env.commands.simulate",
    "manni_env.commands.layout",
    "agents.commands.arena",
    "agents.commands.play",
    "train.command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="manni", description="Manni: rules engine, environment, agents, training.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("manni: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away: no traceback, and none when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
