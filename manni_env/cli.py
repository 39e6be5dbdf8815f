"""The ``manni`` command: one entry point, one module per subcommand.

Each module listed in :data:`COMMANDS` defines ``register(subparsers)``, which adds its parser
and sets ``func`` (called with the parsed arguments, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
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
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        importlib.import_module(module).register(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (the package's own when running from a source tree)."""
    try:
        return importlib.metadata.version("manni-env")
    except importlib.metadata.PackageNotFoundError:
        from manni_env import __version__

        return __version__


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
