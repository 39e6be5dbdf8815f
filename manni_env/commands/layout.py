"""``manni layout``: print the observation (or privileged state) layout as a Markdown table."""

from __future__ import annotations

import argparse

from manni_env.cli_options import add_variant_options, rules_from_args
from manni_env.observation import HISTORIES, LAYOUTS, StateEncoder, layout_table


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "layout",
        help="print the observation layout (segment, offset, size, meaning)",
        description="Print the observation vector's layout as a Markdown table generated from the encoder: "
        "one row per segment with its offset, size and meaning. Seats are relative to the observer "
        "(me, left, right). --state prints the privileged full state of PettingZoo's state() instead.",
    )
    add_variant_options(parser)
    parser.add_argument("--history", choices=HISTORIES, default="summary",
                        help="summary (default) or full (adds the ordered plays of the deal)")
    parser.add_argument("--layout", choices=LAYOUTS, default="v0",
                        help="observation layout: v0 (default) or v1 (v0 followed by the trick-play segments)")
    parser.add_argument("--state", action="store_true", help="the privileged full-state layout instead")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    table = (StateEncoder(rules, args.history).layout_table() if args.state
             else layout_table(rules, args.history, args.layout))
    print(table, end="")
    return 0
