"""The arguments every trainer shares (:class:`TrainArgs`) and their command line.

Each trainer's ``Args`` extends :class:`TrainArgs` in its own file (``train/ppo_vector.py``,
``train/ppo_sb3.py``, ``train/rllib_ppo.py``), so the three take the same names for the same
things: ``--total-steps``, ``--lr``, ``--hidden``, ``--runs-dir``, ``--run-name``, ``--seed``,
the variant options of every ``manni`` command (``--variant``, ``--target``, ``--negative``,
``--max-deals``, ``--first-dealer``), ``--history``, ``--episode`` and the final arena's options.
Each field's docstring is its ``--help`` text; :func:`add_arguments` turns a dataclass into argparse
options (``total_steps`` → ``--total-steps``, booleans as ``--flag/--no-flag``). This module
imports no torch, so ``manni --help`` stays fast.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import textwrap
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from manni_env.cli_options import add_variant_options
from manni_env.episodes import EPISODES
from manni_env.observation import HISTORIES
from manni_env.rules import Rules, make_rules

#: ``manni train --trainer NAME``: the module that trains
TRAINERS = {"vector": "manni_train.ppo_vector", "sb3": "manni_train.ppo_sb3", "rllib": "manni_train.rllib_ppo", "ray": "manni_train.ray_vector"}
#: the rule options of :func:`~manni_env.rules.make_rules`; their flags come from
#: :func:`~manni_env.cli_options.add_variant_options`, as in every ``manni`` command
RULE_FIELDS = ("variant", "target", "negative", "max_deals", "first_dealer")
ACTIVATIONS = ("relu", "tanh")


@dataclass
class TrainArgs:
    """What every trainer takes (each trainer's ``Args`` adds its own options)."""

    #: short name of the trainer in default run names
    TRAINER: ClassVar[str] = "train"

    run_name: str | None = None
    """directory name of the run under --runs-dir (default: <variant>_<trainer>_s<seed>_<UTC time>)"""
    runs_dir: str = "runs"
    """where runs are written"""
    seed: int = 1
    """seed of the run: networks, deals, opponents"""
    variant: str = "hornafjardar"
    """Manni variant (hornafjardar, basic, trjamann, laugarvatn)"""
    target: int | None = None
    """rule option: the game's target (hornafjardar, basic; default: the variant's)"""
    negative: bool | None = None
    """rule option: Basic Manni's negative scoring"""
    max_deals: int | None = None
    """rule option: deal cap (hornafjardar, basic; default: the variant's)"""
    first_dealer: int | None = None
    """rule option: the seat that deals first (default: drawn)"""
    history: str = "summary"
    """observation history: summary (cards played per seat) or full (every play in order)"""
    episode: str = "deal"
    """what ends a learner's episode: deal or game"""
    total_steps: int = 1_000_000
    """learner decisions to train for"""
    lr: float = 1e-4
    """Adam learning rate"""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the actor and of the critic"""
    activation: str = "relu"
    """hidden activation: relu or tanh"""
    final_eval_deals: int = 500
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based,
    seed --eval-seed + 1 (0: none)"""
    eval_seed: int = 2024
    """seed of the evaluation deals"""
    eval_workers: int = 1
    """processes for the final arena"""
    opponents: list[str] = field(default_factory=list)
    """fixed agents in the two non-learner seats of every game, e.g. --opponents ppo (a best response
    to the shipped agent) or --opponents ppo:runs/RUN/agent rule_based: one spec for both seats or
    two (in random order); ppo, ppo:VARIANT[,sample], ppo:PATH[,sample], rule_based or random (vector and ray
    trainers; replaces the --p-* opponent mix and the snapshot pool)"""

    #: whether this trainer plays ``--opponents``
    FIXED_OPPONENTS: ClassVar[bool] = False

    def rule_options(self) -> dict[str, Any]:
        """The rule options given (those left at ``None`` keep the variant's defaults)."""
        return {name: getattr(self, name) for name in RULE_FIELDS[1:] if getattr(self, name) is not None}

    def rules(self) -> Rules:
        """The :class:`Rules` to train on (``ValueError`` for a bad variant or option)."""
        return make_rules(self.variant, **self.rule_options())

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument (subclasses add their own checks)."""
        self.rules()
        for name, valid in {"history": HISTORIES, "episode": EPISODES, "activation": ACTIVATIONS}.items():
            if getattr(self, name) not in valid:
                raise ValueError(f"--{name} must be one of {', '.join(valid)}, got {getattr(self, name)!r}")
        if self.total_steps is not None and self.total_steps < 1:
            raise ValueError(f"--total-steps must be at least 1, got {self.total_steps}")
        if not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"--hidden needs positive layer sizes, got {self.hidden}")
        if self.final_eval_deals is not None and self.final_eval_deals < 0:
            raise ValueError(f"--final-eval-deals must not be negative, got {self.final_eval_deals}")
        if self.eval_workers < 1:
            raise ValueError(f"--eval-workers must be at least 1, got {self.eval_workers}")
        if self.opponents:
            if not self.FIXED_OPPONENTS:
                raise ValueError("--opponents: this trainer does not play fixed opponents "
                                 "(--trainer vector or ray does)")
            from manni_train.opponents import check_opponent_specs  # loads checkpoints: numpy only

            check_opponent_specs(self.opponents, self.rules(), self.history)

    def run_dir(self) -> Path:
        """``runs_dir/run_name``, created, with ``args.json``; names the run if it has no name."""
        if self.run_name is None:
            self.run_name = f"{self.variant}_{self.TRAINER}_s{self.seed}_{datetime.now(timezone.utc):%Y%m%d_%H%M%S}"
        path = Path(self.runs_dir) / self.run_name
        path.mkdir(parents=True, exist_ok=True)
        (path / "args.json").write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """An instance from saved arguments (``args.json``, a checkpoint); ``ValueError`` naming
        any field this trainer does not have."""
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"saved arguments have fields {cls.__name__} does not know: {', '.join(unknown)}")
        return cls(**data)


def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (a string literal right after a field) of a dataclass and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for node, after in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def add_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """One ``--kebab-name`` option per dataclass field, with the field's docstring as help; the rule
    options as :func:`~manni_env.cli_options.add_variant_options` adds them."""
    docs = field_docs(cls)
    defaults = cls()
    for f in dataclasses.fields(cls):
        if f.name in RULE_FIELDS:
            continue
        default = getattr(defaults, f.name)
        help_text = docs.get(f.name, "").replace("%", "%%") + ("" if default is None else f" (default: {default})")
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        flags = ["--" + f.name.replace("_", "-")]
        if kind == "bool":
            options = dict(action=argparse.BooleanOptionalAction)
        elif kind.startswith("list[int]"):
            options = dict(type=int, nargs="+", metavar="N")
        elif kind.startswith("list[str]"):
            options = dict(nargs="+", metavar="SPEC")
        else:
            options = dict(type={"int": int, "float": float}.get(kind.split(" ")[0], str))
        parser.add_argument(*flags, dest=f.name, default=default, help=help_text, **options)
    add_variant_options(parser)


def parse_args(cls: type, argv: list[str] | None = None, prog: str | None = None, description: str | None = None):
    """Parse and check a command line into ``cls`` (exit code 2 and one line on a bad value)."""
    parser = argparse.ArgumentParser(
        prog=prog, usage="%(prog)s [options]", description=description or inspect.getdoc(cls),
        epilog="One training command: manni train --trainer vector (default) | sb3 | rllib | ray [options]; "
        "manni train --trainer NAME --help lists that trainer's options.",
    )
    add_arguments(parser, cls)
    ns = parser.parse_args(argv)
    args = cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})
    try:
        args.check()
    except ValueError as err:
        parser.error(str(err))
    return args
