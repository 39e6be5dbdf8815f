"""The variant options every ``manni`` subcommand shares: ``--variant`` and the rule options.

``add_variant_options(parser)`` adds them; ``rules_from_args(args)`` builds the :class:`Rules`
through :func:`~manni_env.rules.make_rules`, so the command line accepts exactly what the engine
accepts. A bad option (one the variant does not have, a bad value) ends the command through
``parser.error``: the message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys

from .rules import DEFAULT_MAX_DEALS, VARIANTS, Rules, make_rules

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
