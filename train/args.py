"""The arguments every trainer shares (:class:`TrainArgs`) and their command line.

Each trainer's ``Args`` extends :class:`TrainArgs` in its own file (``train/ppo_vector.py``,
``train/ppo_sb3.py``, ``train/rllib_ppo.py``, ``train/ray_vector.py``), so all take the same names
for the same things: the run (``--total-steps``, ``--runs-dir``, ``--run-name``, ``--seed``), the
variant options of every ``manni`` command (``--variant``, ``--target``, ``--negative``,
``--max-deals``, ``--first-dealer``), ``--history``, ``--observation``, ``--episode``, the networks, the PPO
hyperparameters under CleanRL's names (``--learning-rate``, ``--num-envs``, ``--num-steps``,
``--update-epochs``, ``--minibatch-size``, ``--ent-coef``, ``--clip-coef``, ...; each trainer
translates them for its library and may set its own defaults), the opponents (``--opponent-mix``,
:func:`parse_opponent_mix`; ``--opponents``) and the evaluations (``--eval-every``, ``--eval-deals``,
``--eval-seed``: the same duplicate deals for every trainer; the final arena's options).
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
import sys
import textwrap
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from manni_agents.spec_options import parse_options, probability
from manni_env.cli_options import add_variant_options
from manni_env.episodes import DEFAULT_EPISODE, EPISODES
from manni_env.files import write_text
from manni_env.observation import HISTORIES, LAYOUTS
from manni_env.rules import Rules, make_rules

#: ``manni train --trainer NAME``: the module that trains
TRAINERS = {"vector": "manni_train.ppo_vector", "sb3": "manni_train.ppo_sb3", "rllib": "manni_train.rllib_ppo", "ray": "manni_train.ray_vector"}
#: the rule options of :func:`~manni_env.rules.make_rules`; their flags come from
#: :func:`~manni_env.cli_options.add_variant_options`, as in every ``manni`` command
RULE_FIELDS = ("variant", "target", "negative", "max_deals", "first_dealer")
ACTIVATIONS = ("relu", "tanh")
#: who may take a seat in ``--opponent-mix`` besides the learner
OPPONENT_KINDS = ("snapshot", "rule_based", "random")
DEFAULT_MIX = "snapshot=0.2,rule_based=0.75,random=0.05"
#: the fewest duplicate deals of a final arena (its confidence interval needs two)
MIN_ARENA_DEALS = 2
#: options of release 0.2.0 that were renamed: what to use now (the command line names it; saved
#: arguments, ``args.json`` and checkpoints, are read with :func:`upgrade_saved`)
RENAMED = {
    "lr": "--learning-rate", "n_steps": "--num-steps", "batch_size": "--minibatch-size",
    "n_epochs": "--update-epochs", "num_epochs": "--update-epochs", "clip_range": "--clip-coef",
    "entropy_coeff": "--ent-coef", "num_envs_per_env_runner": "--num-envs",
    "train_batch_size": "--num-steps (per env: the batch is num_steps × num_envs × num_env_runners)",
    "p_snapshot": "--opponent-mix snapshot=P,rule_based=P,random=P", "p_rule_based": "--opponent-mix",
    "p_random": "--opponent-mix", "baseline": "--opponent-mix rule_based=1/3", "baseline_seats": "--opponent-mix",
}


def flag(name: str) -> str:
    """The command-line flag of a field, without the dashes (``learning_rate`` → ``learning-rate``)."""
    return name.replace("_", "-")


def parse_opponent_mix(spec: str) -> dict[str, float]:
    """``--opponent-mix``: ``"snapshot=0.2,rule_based=0.75,random=0.05"`` → {kind: share} (``"none"``:
    no opponents), read by :func:`~manni_agents.spec_options.parse_options`; ``ValueError`` naming
    what is wrong (a kind outside :data:`OPPONENT_KINDS`, a share that is not a probability, a kind
    given twice, shares summing to more than 1)."""
    if spec.strip() in ("", "none"):
        return {}
    try:
        mix = parse_options(spec, dict.fromkeys(OPPONENT_KINDS, probability), what="opponent", form="kind=share")
    except ValueError as err:
        raise ValueError(f"--opponent-mix: {err}") from None
    if sum(mix.values()) > 1.0 + 1e-9:
        raise ValueError(f"--opponent-mix: the shares sum to {sum(mix.values()):g}, more than 1 "
                         "(the rest, and at least one seat, is the learner's)")
    return mix


def upgrade_saved(data: dict[str, Any]) -> dict[str, Any]:
    """Saved arguments of release 0.2.0 under today's names: ``lr``, SB3's ``n_steps``,
    ``batch_size``, ``n_epochs``, ``clip_range`` and the ``p_*`` opponent shares (SB3: the rest
    was ``rule_based``) become ``learning_rate``, ``num_steps``, ``minibatch_size``,
    ``update_epochs``, ``clip_coef`` and ``opponent_mix``."""
    data = dict(data)
    for old, new in {"lr": "learning_rate", "n_steps": "num_steps", "batch_size": "minibatch_size",
                     "n_epochs": "update_epochs", "clip_range": "clip_coef"}.items():
        if old in data:
            data[new] = data.pop(old)
    if "p_snapshot" in data:
        snapshot, random = data.pop("p_snapshot"), data.pop("p_random", 0.0)
        rule_based = data.pop("p_rule_based", max(0.0, 1.0 - snapshot - random))
        data["opponent_mix"] = f"snapshot={snapshot:g},rule_based={rule_based:g},random={random:g}"
    return data


@dataclass
class TrainArgs:
    """What every trainer takes (each trainer's ``Args`` adds its own options)."""

    #: the trainer's name in ``manni train --trainer NAME`` (:data:`TRAINERS`), and so in default run names
    TRAINER: ClassVar[str] = "train"

    out: str | None = None
    """the run's directory, as every manni command that writes results takes it (default:
    runs/<variant>_<trainer>_s<seed>_<UTC time>)"""
    run_name: str | None = None
    """the run's directory name under --runs-dir (older spelling: --out DIR is --runs-dir and --run-name in one)"""
    runs_dir: str = "runs"
    """where runs are written (older spelling: see --run-name)"""
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
    observation: str = "v0"
    """observation layout: v0, or v1 (v0 followed by trick-play features: cards in the trick, the card
    winning it and whose it is, the cards that led and won this deal's tricks, unseen cards above
    each card in hand; --init-from a v0 checkpoint widens its first layer)"""
    episode: str = DEFAULT_EPISODE
    """what ends a learner's episode: deal or game"""
    total_steps: int = 1_000_000
    """learner decisions to train for (vector, ray: exactly; sb3, rllib: rounded up to whole rollouts, and
    the progress bar and the run report the count trained)"""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the actor (and of the critic, unless a trainer sizes it apart: --critic-hidden)"""
    activation: str = "relu"
    """hidden activation: relu or tanh"""
    # PPO, under CleanRL's names (cleanrl/ppo.py); a trainer's Args may change a default
    learning_rate: float = 1e-4
    """Adam learning rate"""
    anneal_lr: bool = False
    """decay the learning rate linearly to 0 over --total-steps (not rllib)"""
    num_envs: int = 8
    """environments (games) stepped side by side: in this process (vector, sb3) or in each runner
    (ray, rllib)"""
    num_steps: int = 256
    """steps of each environment per rollout (rllib: the train batch is --num-steps × --num-envs ×
    --num-env-runners env steps, shared by the learners)"""
    minibatch_size: int = 512
    """samples per minibatch of the PPO update (vector, ray: the rollout is split into minibatches
    of about this size)"""
    update_epochs: int = 4
    """optimisation epochs over each rollout"""
    gamma: float = 0.995
    """discount factor (a deal is about 17 learner decisions)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO clipping coefficient of the policy ratio"""
    clip_vloss: bool = False
    """clip the value loss with --clip-coef as well (not rllib, which clips the value loss at 10)"""
    ent_coef: float = 0.003
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm (0: no clipping, rllib only)"""
    # opponents and evaluations
    opponent_mix: str = DEFAULT_MIX
    """who plays each seat at the start of a game or episode: KIND=SHARE,... with KIND snapshot (a
    frozen copy of the learner from the pool), rule_based or random, and SHARE a probability (0.2 or
    1/3), drawn per seat; the rest, and at least one seat, is the learner's; none: pure self-play
    (what each trainer supports: docs/trainers.md)"""
    opponents: list[str] = field(default_factory=list)
    """fixed agents in the two non-learner seats of every game, e.g. --opponents ppo (a best response
    to the shipped agent) or --opponents ppo:runs/RUN/agent rule_based: one spec for both seats or
    two (in random order); ppo, ppo:VARIANT[,sample,symmetric|plain], ppo:PATH[,…], rule_based or random
    (vector and ray trainers; replaces --opponent-mix and the snapshot pool)"""
    eval_every: int = 100_000
    """learner decisions between evaluations of the greedy policy against 2 × each of --eval-against
    (history.json, the learning curve; 0: only at the end)"""
    eval_against: list[str] = field(default_factory=lambda: ["random", "rule_based"])
    """the agents each evaluation plays the greedy policy against, two copies at a time: agents that act
    in batches on the vector env (random, rule_based, ppo, ppo:VARIANT, ppo:PATH[,…]); the evaluations
    do not change what is trained"""
    eval_deals: int = 2000
    """duplicate deals per evaluation, each played with the learner in every seat (vector env, seconds;
    the same deals in every trainer)"""
    eval_seed: int = 2024
    """seed of the evaluation deals"""
    final_eval_deals: int = 500
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based,
    seed --eval-seed + 1 (0: none; at least 2 otherwise, for a confidence interval)"""
    final_pimc_deals: int = 0
    """duplicate deals (x 6 seatings) of a final arena against 2 × pimc, the search baseline, seed
    --eval-seed + 1 (0: none; at least 2 otherwise, for a confidence interval; about 0.4 s a deal on one core)"""
    eval_workers: int = 1
    """processes for the final arena"""

    #: whether this trainer plays ``--opponents``
    FIXED_OPPONENTS: ClassVar[bool] = False

    def rule_options(self) -> dict[str, Any]:
        """The rule options given (those left at ``None`` keep the variant's defaults)."""
        return {name: getattr(self, name) for name in RULE_FIELDS[1:] if getattr(self, name) is not None}

    def rules(self) -> Rules:
        """The :class:`Rules` to train on (``ValueError`` for a bad variant or option)."""
        return make_rules(self.variant, **self.rule_options())

    def mix(self) -> dict[str, float]:
        """``--opponent-mix`` as {kind: share} (:func:`parse_opponent_mix`)."""
        return parse_opponent_mix(self.opponent_mix)

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument (subclasses add their own checks)."""
        resume = getattr(self, "resume", None)
        if resume is not None and not resume.strip():
            raise ValueError("--resume needs the directory of the run to continue (RUN_DIR), got an empty one")
        self.rules()
        if self.out is not None and (self.run_name is not None or self.runs_dir != "runs"):
            raise ValueError("--out DIR names the whole run directory: give it or --runs-dir/--run-name, not both")
        if self.out is not None and not Path(self.out).name:
            raise ValueError(f"--out: expected a directory name, got {self.out!r}")
        self.check_choices({"history": HISTORIES, "observation": LAYOUTS, "episode": EPISODES,
                            "activation": ACTIVATIONS})
        if self.total_steps is not None and self.total_steps < 1:
            raise ValueError(f"--total-steps must be at least 1, got {self.total_steps}")
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"--hidden needs positive layer sizes, got {self.hidden}")
        for name in ("learning_rate", "clip_coef"):
            if not getattr(self, name) > 0:
                raise ValueError(f"--{flag(name)} must be positive, got {getattr(self, name)}")
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"--{flag(name)} must be between 0 and 1, got {getattr(self, name)}")
        for name in ("ent_coef", "vf_coef", "max_grad_norm", "eval_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"--{flag(name)} must not be negative, got {getattr(self, name)}")
        self.check_at_least(1, "num_envs", "num_steps", "minibatch_size", "update_epochs", "eval_deals", "eval_workers")
        for name in ("final_eval_deals", "final_pimc_deals"):
            deals = getattr(self, name)
            if deals is not None and (deals < 0 or 0 < deals < MIN_ARENA_DEALS):
                raise ValueError(f"--{flag(name)} must be 0 (no arena) or at least {MIN_ARENA_DEALS} (an arena of "
                                 f"fewer deals has no confidence interval), got {deals}")
        self.mix()
        if not self.eval_against:
            raise ValueError("--eval-against needs at least one agent")
        from manni_agents.vector_policy import make_vector_policy  # loads checkpoints: numpy only

        for spec in self.eval_against:
            make_vector_policy(spec, self.rules(), self.history, "python", self.observation)
        if self.opponents:
            if not self.FIXED_OPPONENTS:
                raise ValueError("--opponents: this trainer does not play fixed opponents "
                                 "(--trainer vector or ray does)")
            from manni_train.opponents import check_opponent_specs  # loads checkpoints: numpy only

            check_opponent_specs(self.opponents, self.rules(), self.history, self.observation)

    def check_choices(self, choices: dict[str, tuple[str, ...]]) -> None:
        """``ValueError`` unless each named field holds one of its valid values."""
        for name, valid in choices.items():
            if getattr(self, name) not in valid:
                raise ValueError(f"--{flag(name)} must be one of {', '.join(valid)}, got {getattr(self, name)!r}")

    def check_at_least(self, low: int, *names: str) -> None:
        """``ValueError`` unless each named field is at least ``low``."""
        for name in names:
            if getattr(self, name) < low:
                raise ValueError(f"--{flag(name)} must be at least {low}, got {getattr(self, name)}")

    def named_dir(self) -> Path | None:
        """The run directory ``--out`` or ``--runs-dir``/``--run-name`` names (``None`` without a
        name: :meth:`run_dir` names it from the time)."""
        if self.out is not None:
            return Path(self.out)
        return None if self.run_name is None else Path(self.runs_dir) / self.run_name

    def run_dir(self) -> Path:
        """``runs_dir/run_name``, created, with ``args.json``; names the run if it has no name."""
        if self.out is not None:  # kept in args.json as its two parts, which --resume reads
            self.runs_dir, self.run_name, self.out = str(Path(self.out).parent), Path(self.out).name, None
        if self.run_name is None:
            self.run_name = f"{self.variant}_{self.TRAINER}_s{self.seed}_{datetime.now(timezone.utc):%Y%m%d_%H%M%S}"
        path = self.named_dir()
        path.mkdir(parents=True, exist_ok=True)
        write_text(path / "args.json", json.dumps(dataclasses.asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """An instance from saved arguments (``args.json``, a checkpoint; those of release 0.2.0 through
        :func:`upgrade_saved`); ``ValueError`` naming any field this trainer does not have."""
        data = upgrade_saved(data)
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"saved arguments have fields {cls.__name__} does not know: {', '.join(unknown)}")
        return cls(**data)


@dataclass
class SelfPlayArgs(TrainArgs):
    """The options of the trainers with an imitation warm start and a pool of frozen snapshots of the
    learner (vector, ray and sb3)."""

    reward: str = "trick"
    """training reward: trick (each trick won pays its worth at once; a deal's rewards still sum to
    its score) or deal (the deal score at the deal's end)"""
    snapshot_every: int = 25_000
    """learner decisions between snapshots added to the pool (the snapshot seats of --opponent-mix; 0: none)"""
    pool_size: int = 8
    """most recent snapshots kept in the pool"""
    bc_samples: int | None = 100_000
    """imitation warm start: decisions of --bc-teacher playing every seat, cloned (policy) and fitted
    (value) before PPO; 0: start from scratch"""
    bc_teacher: str = "rule_based"
    """the warm start's teacher: rule_based or random"""
    bc_epochs: int = 8
    """passes over the imitation data"""
    bc_lr: float = 1e-3
    """Adam learning rate of the imitation phase"""
    progress_bar: bool = True
    """show a progress bar while training"""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        from manni_env.shaping import REWARDS
        from manni_train.demonstrations import TEACHERS

        super().check()
        self.check_choices({"reward": REWARDS, "bc_teacher": TEACHERS})
        self.check_at_least(1, "pool_size")
        self.check_at_least(0, "snapshot_every", "bc_epochs")
        if (self.bc_samples or 0) < 0:
            raise ValueError(f"--bc-samples must not be negative, got {self.bc_samples}")
        if not self.max_grad_norm > 0:
            raise ValueError(f"--max-grad-norm must be positive for this trainer, got {self.max_grad_norm}")

    def warm_start_samples(self) -> int:
        """``--bc-samples`` (a trainer may derive a default from ``--total-steps``)."""
        return self.bc_samples or 0


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
    for f in dataclasses.fields(cls):
        if f.name in RULE_FIELDS:
            continue
        # the declared default (None where the class derives it, e.g. from the variant)
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
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
    for arg in sys.argv[1:] if argv is None else argv:
        name = arg.partition("=")[0][2:].replace("-", "_") if arg.startswith("--") else None
        if name in RENAMED and name not in {f.name for f in dataclasses.fields(cls)}:
            parser.error(f"--{flag(name)} was renamed: use {RENAMED[name]} (docs/trainers.md)")
    ns = parser.parse_args(argv)
    args = cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})
    try:
        args.check()
    except ValueError as err:
        parser.error(str(err))
    return args
