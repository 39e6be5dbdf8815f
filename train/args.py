"""The arguments of ``train/ppo_sb3.py`` (one documented dataclass) and its command line.

Each field's docstring is its ``--help`` text. :func:`add_arguments` turns the dataclass into
argparse options (``total_timesteps`` → ``--total-timesteps``, booleans as ``--flag/--no-flag``);
the same options serve ``python -m train.ppo_sb3`` and ``manni train``. This module imports no
torch, so ``manni --help`` stays fast.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
from dataclasses import dataclass, field


@dataclass
class Args:
    """Self-play MaskablePPO training of a Manni agent (defaults: ≤ 10 minutes on 2 CPU cores)."""

    run_name: str | None = None
    """directory name of the run under --runs-dir (default: <variant>_ppo_s<seed>_<UTC time>)"""
    runs_dir: str = "runs"
    """where runs are written (checkpoints, TensorBoard logs, plots, the exported agent)"""
    seed: int = 1
    """seed of the networks, the environments and the opponent pool"""
    variant: str = "hornafjardar"
    """Manni variant to train for (hornafjardar, basic, trjamann, laugarvatn)"""
    history: str = "summary"
    """observation history: summary (cards played per seat) or full (every play in order)"""
    episode: str = "deal"
    """episode unit of the training env: deal or game"""
    reward: str = "trick"
    """training reward: trick (each trick won pays its worth at once; a deal's rewards still sum to
    its score) or deal (the deal score at the deal's end)"""
    total_timesteps: int = 300_000
    """learner decisions to train for (in total, when resuming)"""
    num_envs: int = 8
    """parallel environments"""
    subproc: bool = False
    """run the environments in subprocesses (SubprocVecEnv) instead of in this process"""
    torch_threads: int = 1
    """torch CPU threads"""
    learning_rate: float = 1e-4
    """Adam learning rate of PPO"""
    n_steps: int = 256
    """steps per environment per rollout"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 4
    """optimisation epochs per rollout"""
    gamma: float = 0.995
    """discount factor (a deal is about 17 learner decisions)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping coefficient"""
    ent_coef: float = 0.003
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the policy and of the value network"""
    activation: str = "relu"
    """hidden activation: relu or tanh"""
    bc_samples: int = 100_000
    """decisions of --bc-teacher self-play imitated (policy) and fitted (value) before PPO; 0: start from scratch"""
    bc_teacher: str = "rule_based"
    """agent spec whose play is imitated first"""
    bc_epochs: int = 8
    """passes over the imitation data"""
    bc_learning_rate: float = 1e-3
    """Adam learning rate of the imitation phase"""
    p_snapshot: float = 0.2
    """probability that an opponent seat is a frozen snapshot of the learner (once one exists)"""
    p_random: float = 0.05
    """probability that an opponent seat is the random agent; the rest play rule_based"""
    snapshot_every: int = 25_000
    """steps between frozen snapshots added to the opponent pool"""
    pool_size: int = 8
    """most recent snapshots kept in the pool"""
    eval_every: int = 100_000
    """steps between duplicate-arena evaluations against random and rule_based (0: never)"""
    eval_deals: int = 30
    """duplicate deals (x 6 seatings) per periodic evaluation"""
    final_eval_deals: int = 150
    """duplicate deals (x 6 seatings) of the final evaluation"""
    eval_seed: int = 2024
    """seed of the evaluation deals (the same deals at every evaluation)"""
    eval_workers: int = 1
    """processes for the final evaluation"""
    checkpoint_every: int = 100_000
    """steps between resumable checkpoints"""
    resume: str | None = None
    """continue the run saved in this checkpoint (.pt) with its saved arguments; only
    --total-timesteps, --resume and the evaluation sizes come from this command line"""
    export: str | None = None
    """also write the final agent to this path (NAME → NAME.safetensors + NAME.json)"""
    progress_bar: bool = True
    """show a progress bar while training"""


def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (a string literal right after a field) of a dataclass, by field name."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    docs = {}
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


def add_arguments(parser: argparse.ArgumentParser, cls: type = Args) -> None:
    """One ``--kebab-name`` option per dataclass field, with the field's docstring as help."""
    docs = field_docs(cls)
    defaults = cls()
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        help_text = docs.get(f.name, "") + ("" if default is None else f" (default: {default})")
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=help_text)
        elif kind.startswith("list[int]"):
            parser.add_argument(flag, type=int, nargs="+", default=default, metavar="N", help=help_text)
        else:
            convert = {"int": int, "float": float}.get(kind.split(" ")[0], str)
            parser.add_argument(flag, type=convert, default=default, help=help_text)


def args_from_namespace(ns: argparse.Namespace, cls: type = Args):
    """The dataclass instance holding the parsed options."""
    return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})


def check_args(args: Args) -> None:
    """Raise ``ValueError`` naming the first bad argument."""
    from manni_env.observation import HISTORIES
    from manni_env.rules import VARIANTS
    from manni_env.shaping import REWARDS
    from manni_env.single_agent import EPISODES

    choices = {"variant": VARIANTS, "history": HISTORIES, "episode": EPISODES, "reward": REWARDS,
               "activation": ("relu", "tanh")}
    for name, valid in choices.items():
        if getattr(args, name) not in valid:
            raise ValueError(f"--{name} must be one of {', '.join(valid)}, got {getattr(args, name)!r}")
    for name in ("total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "torch_threads", "pool_size",
                 "eval_deals", "final_eval_deals", "eval_workers"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("p_snapshot", "p_random"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise ValueError(f"--{name.replace('_', '-')} must be a probability, got {getattr(args, name)}")
    if args.p_snapshot + args.p_random > 1.0:
        raise ValueError("--p-snapshot + --p-random must not exceed 1")
    if not args.net_arch or min(args.net_arch) < 1:
        raise ValueError(f"--net-arch needs positive layer sizes, got {args.net_arch}")


def parse_args(argv: list[str] | None = None) -> Args:
    """Parse and check a command line into :class:`Args` (exit code 2 on a bad value)."""
    parser = argparse.ArgumentParser(description=inspect.getdoc(Args))
    add_arguments(parser)
    args = args_from_namespace(parser.parse_args(argv))
    try:
        check_args(args)
    except ValueError as err:
        parser.error(str(err))
    return args
