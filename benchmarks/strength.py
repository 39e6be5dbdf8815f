"""The strength evidence table: a league (:mod:`manni_agents.evaluation.league`) with deal caps, single cells and training columns.

    python benchmarks/strength.py --variant hornafjardar --agents ppo pimc rule_based random \\
        --deals 2000 --deals-for pimc=200 --seed 1 --workers 2 --out benchmarks/results/strength

The cells are those of ``manni league`` (every ordered pair X, Y of distinct agents plays
``manni arena X Y Y`` in deals mode, kept in ``OUT/VARIANT/X_vs_Y/``, kept cells not played again,
an interrupted cell completed by the next run). This script adds what the evidence tables need:
``--deals-for NAME=N`` caps the deals of a cell with that agent (``NAME``: a spec, or an agent
name for all its specs; a cell kept with more deals than asked stays), ``--only X Y`` plays just
that cell, ``--force`` plays kept cells again, ``--table-only`` rebuilds the table without playing.

It writes ``OUT/VARIANT.md``: the matrix (row X, column Y ×2: X's mean deal score [95% CI], X − Y
[95% CI], deals), each agent's ms/move over all its cells and, for ``ppo`` checkpoints, the
training wall time and learner decisions from their metadata (summed over the ``--init-from``
checkpoints a fine-tuned network started from), and the ``manni arena`` command of every cell. The
numbers depend only on the settings, not on ``--workers``; ms/move is wall time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from manni_agents.evaluation.arena import Interval  # noqa: F401 (the intervals of the result files, for readers of this module)
from manni_agents.evaluation.league import cell_dir, command_lines, kept_results, matrix_lines, plan, play, safe_name  # noqa: F401
from manni_agents.ppo_agent import PPOAgent, ShippedPPOAgent
from manni_agents.registry import make_agent
from manni_env.cli_options import add_variant_options, at_least, rules_from_args
from manni_env.rules import Rules

DEFAULT_AGENTS = ("ppo", "pimc", "rule_based", "random")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="strength.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS), metavar="SPEC",
                        help=f"two or more agent specs (default: {' '.join(DEFAULT_AGENTS)})")
    add_variant_options(parser)
    parser.add_argument("--deals", type=at_least(1), default=2000, help="duplicate deals per cell (default 2000)")
    parser.add_argument("--deals-for", nargs="+", default=[], type=deal_cap, metavar="NAME=N",
                        help="at most N deals in a cell with this agent spec or name, e.g. pimc=200")
    parser.add_argument("--seed", type=at_least(0), default=1, help="seed of every cell (default 1)")
    parser.add_argument("--workers", type=at_least(1), default=1, help="worker processes per arena (default 1)")
    parser.add_argument("--out", default="benchmarks/results/strength", metavar="DIR",
                        help="result directory (default benchmarks/results/strength)")
    parser.add_argument("--only", nargs=2, action="append", metavar=("X", "Y"),
                        help="play only the cell X vs Y ×2 (repeatable); the table still shows every cell")
    parser.add_argument("--force", action="store_true", help="play cells again whose results are kept")
    parser.add_argument("--table-only", action="store_true", help="only rebuild OUT/VARIANT.md from the result files")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def deal_cap(text: str) -> tuple[str, int]:
    """``NAME=N`` → ``(NAME, N)``; the last ``=`` splits, so specs with options work."""
    name, _, count = text.rpartition("=")
    if not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected NAME=N with N a whole number ≥ 1, got {text!r}")
    return name, int(count)


def cell_deals(x: str, y: str, deals: int, caps: dict[str, int]) -> int:
    """``deals``, capped by the ``--deals-for`` entry of each agent (its spec first, else its name)."""
    limits = [caps.get(s, caps.get(s.partition(":")[0], deals)) for s in (x, y)]
    return min(deals, *limits)


def check(args: argparse.Namespace, agents: list[str], rules: Rules) -> None:
    """ValueError naming the first problem with the arguments."""
    if len(agents) < 2 or len(set(agents)) < len(agents):
        raise ValueError(f"argument --agents: expected two or more distinct specs, got {' '.join(agents)}")
    for spec in agents:
        try:
            make_agent(spec, rules)
        except ValueError as err:
            raise ValueError(f"argument --agents: {err}") from None
    if len({safe_name(spec) for spec in agents}) < len(agents):
        raise ValueError(f"argument --agents: two specs share a directory name: {' '.join(agents)}")
    names = set(agents) | {s.partition(":")[0] for s in agents}
    for name, _ in args.deals_for:
        if name not in names:
            raise ValueError(f"argument --deals-for: {name!r} is none of the agents ({' '.join(agents)})")
    for x, y in args.only or []:
        if x not in agents or y not in agents or x == y:
            raise ValueError(f"argument --only: expected two different specs of --agents, got {x} {y}")
    if args.table_only and (args.force or args.only):
        raise ValueError("argument --table-only: not allowed with --force or --only")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ValueError(f"argument --out: {args.out} exists and is not a directory")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rules = rules_from_args(args)
    agents = [spec.strip() for spec in args.agents]
    out = Path(args.out)
    try:
        check(args, agents, rules)
        pairs = list(dict.fromkeys(map(tuple, args.only))) if args.only else [(x, y) for x in agents for y in agents if x != y]
        caps = dict(args.deals_for)
        todo = [] if args.table_only else plan(pairs, rules, args.seed, out,
                                               lambda x, y: cell_deals(x, y, args.deals, caps), args.force)
    except ValueError as err:
        parser.error(str(err))
    try:
        play(todo, rules, args.seed, args.workers, progress=not args.no_progress, say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        write_table(out, agents, rules)
        print(f"strength: interrupted; kept the finished deals and rebuilt {out / rules.variant}.md", file=sys.stderr)
        return 130
    try:
        print(write_table(out, agents, rules))
    except ValueError as err:
        parser.error(str(err))
    print(f"wrote {out / rules.variant}.md")
    return 0


def write_table(out: Path, agents: list[str], rules: Rules) -> str:
    """Write and return ``OUT/VARIANT.md`` from the result files of the cells of ``agents``."""
    results = kept_results(out, agents, rules)
    options = ", ".join(f"{k}={v}" for k, v in rules.options().items())
    seeds = ", ".join(sorted({str(r["settings"]["seed"]) for r in results.values()})) or "–"
    lines = [
        f"# Strength: {rules.variant}", "",
        (f"Duplicate arena, deals mode ({options}; seed {seeds}): row agent X against two copies of column agent "
        "Y (`manni arena X Y Y`), every deal played under all 6 seatings. A cell: X's mean deal score [95% CI]; "
        "X − Y, the difference of their mean deal scores [95% CI]; duplicate deals. 95% CI: normal approximation "
        "over deals."), "",
        *matrix_lines(agents, results),
    ]
    lines += ["", "| agent | ms/move | moves timed | training wall time | learner decisions |", "|---|---|---|---|---|"]
    for spec in agents:
        timed = [a for r in results.values() for a in r["agents"] if a["spec"] == spec]
        moves = sum(a["moves"] for a in timed)
        ms = f"{sum(a['ms_per_move'] * a['moves'] for a in timed) / moves:.3f}" if moves else "–"
        training = training_of(spec, rules)
        wall, steps = whole_training(training, "wall_time_s"), whole_training(training, "timesteps")
        wall = "–" if wall is None else f"{wall / 60:.1f} min"
        steps = "–" if steps is None else f"{steps:,}"
        lines.append(f"| `{spec}` | {ms} | {moves:,} | {wall} | {steps} |")
    lines += ["", *command_lines(out, rules, results, out)]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{rules.variant}.md").write_text(text)
    return text


def training_of(spec: str, rules: Rules) -> dict:
    """The ``training`` metadata of a ``ppo`` (or ``rllib``) checkpoint agent; empty for others."""
    agent = make_agent(spec, rules)
    if isinstance(agent, ShippedPPOAgent):
        agent = agent.agent_for(rules)
    return agent.meta.get("training", {}) if isinstance(agent, PPOAgent) else {}


def whole_training(training: dict, key: str) -> float | None:
    """``key`` (``timesteps``, ``wall_time_s``) of a checkpoint's ``training`` metadata summed with that of
    the ``--init-from`` checkpoints it was fine-tuned from; ``None`` where one of them lacks it."""
    total, entry = 0, training
    while entry:
        if entry.get(key) is None:
            return None
        total += entry[key]
        entry = entry.get("init_from")
    return total if training else None


if __name__ == "__main__":
    sys.exit(main())
