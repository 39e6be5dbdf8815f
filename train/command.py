"""``manni train``: train a self-play MaskablePPO agent, then evaluate it against the baselines.

The options are the documented fields of :class:`train.args.Args` (``manni train --help``); on
defaults a small Hornafjarðarmanni agent trains in under 10 minutes on 2 CPU cores, is saved under
``runs/<run_name>/`` and is evaluated in the duplicate arena against ``random`` ×2 and
``rule_based`` ×2 (Markdown tables printed).
"""

from __future__ import annotations

import argparse
import inspect

from .args import Args, add_arguments, args_from_namespace, check_args

#: top-level modules of the ``train`` extra that ``manni train`` imports
TRAIN_EXTRA = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "rich")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a self-play MaskablePPO agent and evaluate it against the baselines",
        description=inspect.getdoc(Args),
    )
    add_arguments(parser)
    parser.set_defaults(func=_main, _train_parser=parser)


def _main(ns: argparse.Namespace) -> int:
    args = args_from_namespace(ns)
    try:
        check_args(args)
    except ValueError as err:
        ns._train_parser.error(str(err))
    try:
        from .ppo_sb3 import report, train  # torch and SB3 load only when training
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in TRAIN_EXTRA:
            raise
        ns._train_parser.exit(2, f"manni train: error: training needs the 'train' extra, which lacks {err.name}: "
                                 "pip install 'manni-env[train]'\n")

    print(report(train(args)))
    return 0
