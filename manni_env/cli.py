"""The ``manni`` command: one entry point, one module per subcommand.

A subcommand is a function ``register(subparsers)`` that adds its parser and sets ``func``
(called with the parsed arguments, returning an exit code). This package's own commands are
listed in :data:`CORE_COMMANDS`; the layers above it (agents, training) and any other installed
package add theirs as entry points of the group :data:`ENTRY_POINT_GROUP`, declared in their
``pyproject.toml``::

    [project.entry-points."manni.commands"]
    arena = "manni_agents.commands.arena:register"

so this package never imports the code of the layers above it. A command whose parser sets the
default ``rest=[]`` receives the arguments its parser does not know in ``args.rest`` (``manni
train`` hands them to the chosen trainer's own parser); for every other command they are an error. Ctrl-C ends
any command with one line and exit code 130 (commands that keep partial output say what they
kept); a closed output pipe (``manni validate ... | head``) ends it quietly.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from importlib.metadata import entry_points

CORE_COMMANDS = ("manni_env.commands.validate:register", "manni_env.commands.layout:register")
ENTRY_POINT_GROUP = "manni.commands"


def _load(target: str):
    """``"package.module:function"`` → the function."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="manni", description="Manni: rules engine, environment, agents, training.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for target in CORE_COMMANDS:
        _load(target)(sub)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        if ep.name in sub.choices:  # the same distribution found twice on the path
            continue
        try:
            register = ep.load()
        except Exception as err:  # a broken plugin must not take the other commands down
            print(f"manni: warning: command {ep.name!r} ({ep.value}) is unavailable: {err}", file=sys.stderr)
            continue
        register(sub)
    return parser


def _version() -> str:
    """This package's version (pyproject.toml reads the same attribute, so it is the distribution's)."""
    from manni_env import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args, rest = parser.parse_known_args(argv)
        if rest:
            if not isinstance(getattr(args, "rest", None), list):
                parser.error(f"unrecognized arguments: {' '.join(rest)}")
            args.rest = rest
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("manni: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away: no traceback, and none when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as err:  # a path no file system takes, or a full disk, wherever a command meets it
        if err.errno == errno.ENAMETOOLONG:
            print(f"manni: error: a file name is too long: {shortened(err.filename)}", file=sys.stderr)
        elif err.errno in FULL:
            print(f"manni: error: cannot write {shortened(err.filename)}: {err.strerror} (every file written "
                  "before is kept whole)", file=sys.stderr)
        else:
            raise
        return 2


#: The errors of a full disk (or quota, or file-size limit): files are written whole or not at all
#: (manni_env.files), so the files written before stay usable.
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def shortened(name) -> str:
    """A file name in at most about 120 characters: a long one by its start, end and length."""
    text = os.fsdecode(name) if name is not None else "a file"
    return text if len(text) <= 120 else f"{text[:40]}...{text[-40:]} ({len(text):,} characters)"


if __name__ == "__main__":
    sys.exit(main())
