"""What ``manni`` subcommands share: the variant options, integer argument types, output files.

``add_variant_options(parser)`` adds ``--variant`` and the rule options; ``rules_from_args(args)``
builds the :class:`Rules` through :func:`~manni_env.rules.make_rules`, so the command line accepts
exactly what the engine accepts. A bad option (one the variant does not have, a bad value) ends the
command through ``parser.error``: the message on stderr and exit code 2. :func:`at_least` is an
argparse ``type`` for bounded integers (``--seed``, ``--deals``), :func:`number_in` one for bounded
numbers; :func:`prepare_output_file` checks a file that records will be appended to before any work
starts.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

from manni_env.rules import DEFAULT_MAX_DEALS, VARIANTS, Rules, make_rules

#: make_rules options with a flag of the same name (``max_deals`` is ``--max-deals``)
_OPTIONS = ("target", "negative", "max_deals", "first_dealer")


def add_variant_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--variant``, ``--target``, ``--negative``, ``--max-deals`` and ``--first-dealer``."""
    group = parser.add_argument_group("rules", "the variant and its options (an option the variant lacks is an error)")
    group.add_argument("--variant", choices=VARIANTS, default="hornafjardar", help="Manni variant (default hornafjardar)")
    group.add_argument("--target", type=int, help="hornafjardar, basic: plus/total that ends the game (default 10)")
    group.add_argument("--negative", action="store_true", default=None,
                       help="basic: score t-4 per deal instead of max(0, t-4)")
    group.add_argument("--max-deals", type=int, help=f"hornafjardar, basic: deal cap; the game is truncated there (default {DEFAULT_MAX_DEALS})")
    group.add_argument("--first-dealer", type=int, help="seat 0, 1 or 2 deals first (default: drawn from the seed)")
    parser.set_defaults(_variant_parser=parser)


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The :class:`Rules` the parsed options describe (options left out keep their defaults)."""
    options = {name: getattr(args, name) for name in _OPTIONS if getattr(args, name, None) is not None}
    try:
        return make_rules(args.variant, **options)
    except ValueError as err:
        parser = getattr(args, "_variant_parser", None)
        if parser is not None:
            parser.error(str(err))
        print(f"manni: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number ``≥ low`` (``--seed -1`` → "must be 0 or more, got -1")."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, got {value}")
        return value

    return whole_number


def number_in(low: float, high: float = math.inf, *, include_low: bool = True) -> Callable[[str], float]:
    """An argparse ``type``: a finite number from ``low`` (or above it, without ``include_low``) to
    below ``high`` (``--holdout 1.5`` → "must be at least 0 and below 1, got 1.5")."""
    bound = f"{'at least' if include_low else 'above'} {low:g}" + (f" and below {high:g}" if high < math.inf else "")

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value if include_low else low < value) or not value < high:
            raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
        return value

    return number


def prepare_output_file(parser: argparse.ArgumentParser, path: str, flag: str, append: bool) -> Path:
    """Check that records can be appended to ``path`` (named by option ``flag``) and create its
    directory; ``parser.error`` if it is empty, a directory (or ends in ``/``), not a regular file,
    cannot be created or written, or (unless ``append``) a file that already holds data."""
    if not path.strip():
        parser.error(f"argument {flag}: expected a file name, got {path!r}")
    if path.endswith(("/", os.sep)):
        parser.error(f"argument {flag}: {path} ends in '/', so it names a directory, not a file")
    file = Path(path)
    if file.is_dir():
        parser.error(f"argument {flag}: {path} is a directory, not a file")
    if file.exists() and not file.is_file():
        parser.error(f"argument {flag}: {path} is not a regular file (a device, pipe or socket)")
    if file.exists():
        if file.stat().st_size and not append:
            parser.error(f"argument {flag}: {path} already exists; pass --append to add to it, or name a new file")
        if not os.access(file, os.W_OK):
            parser.error(f"argument {flag}: cannot write to {path} (permission denied)")
        return file
    blocking = next((p for p in file.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        parser.error(f"argument {flag}: cannot create {path}: {blocking} is not a directory")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"argument {flag}: cannot create the directory of {path} ({err.strerror})")
    if not os.access(file.parent, os.W_OK):
        parser.error(f"argument {flag}: cannot create {path} (permission denied)")
    try:  # what os.access cannot tell (a read-only file system, /proc): create the empty file now
        with file.open("a"):
            pass
    except OSError as err:
        parser.error(f"argument {flag}: cannot create {path} ({err.strerror})")
    return file
