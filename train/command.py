"""``manni train --trainer vector|sb3|rllib|ray``: train an agent, then evaluate it against the baselines.

``vector`` (the default, what ``make main`` runs) is the fast plain-torch PPO on the vector env
(:mod:`manni_train.ppo_vector`), ``sb3`` sb3-contrib MaskablePPO on the single-agent env
(:mod:`manni_train.ppo_sb3`), ``rllib`` PPO on Ray RLlib (:mod:`manni_train.rllib_ppo`), ``ray`` the fast
trainer with its rollouts on Ray runner actors (:mod:`manni_train.ray_vector`). Every other option
goes to the chosen trainer's own parser: the options of :class:`manni_train.args.TrainArgs` (the same for
all) and those of the trainer's ``Args`` (``manni train --trainer NAME --help``). A run is
saved under ``runs/<run_name>/`` and ends with the duplicate arena against ``random`` ×2 and
``rule_based`` ×2 (Markdown tables printed). ``manni distill`` (:mod:`manni_train.distill`) is registered
here too: like the trainers, it imports torch only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from manni_train.args import TRAINERS

#: top-level modules of the ``train`` extra that ``manni train`` imports
TRAIN_EXTRA = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "rich")
#: the extra that brings each module a trainer may lack
EXTRAS = {**dict.fromkeys(TRAIN_EXTRA, "train"), "ray": "rllib"}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train an agent (--trainer vector|sb3|rllib|ray) and evaluate it against the baselines",
        description=__doc__.split("\n\n")[0],
        add_help=False,  # --help goes to the chosen trainer's parser, which knows all its options
        allow_abbrev=False,  # so that no trainer option is taken for an abbreviation of --trainer
    )
    parser.add_argument("--trainer", choices=TRAINERS, default="vector",
                        help="vector (default: fast PPO on the vector env), sb3 (MaskablePPO), rllib (Ray RLlib) "
                        "or ray (the fast trainer's rollouts on Ray runners)")
    parser.set_defaults(func=_main, rest=[])


def _main(ns: argparse.Namespace) -> int:
    trainer = _load(TRAINERS[ns.trainer], "manni train")  # torch loads only when training
    return trainer.main(ns.rest, prog=f"manni train --trainer {ns.trainer}")


def register_distill(subparsers) -> None:
    """``manni distill`` (:mod:`manni_train.distill`), whose own parser reads every option once torch is loaded."""
    parser = subparsers.add_parser("distill", help="teach a ppo network the card play of search (or another agent)",
                                   add_help=False)
    parser.set_defaults(func=lambda ns: _load("manni_train.distill", "manni distill").main(ns.rest), rest=[])


def _load(module: str, command: str):
    """Import ``module``; a missing optional dependency ends ``command`` with the extra to install (exit code 2)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        extra = EXTRAS.get((err.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"{command}: error: training needs the '{extra}' extra, which lacks {err.name}: "
              f"pip install 'manni-env[{extra}]'", file=sys.stderr)
        raise SystemExit(2) from None
