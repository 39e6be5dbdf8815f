"""The strength evidence table: every agent against two copies of every other, in the duplicate arena.

    python benchmarks/strength.py --variant hornafjardar --agents ppo pimc rule_based random \\
        --deals 2000 --deals-for pimc=200 --seed 1 --workers 2 --out benchmarks/results/strength

For every ordered pair (X, Y) of distinct agents this plays ``manni arena X Y Y`` in deals mode
(:func:`agents.arena.run_arena`, all seeded with ``--seed``) and writes ``result.json``, ``.md`` and
``.png`` to ``OUT/VARIANT/X_vs_Y/`` (in a spec, characters other than letters, digits and ``_.=,-``
become ``-``: ``pimc:worlds=16`` → ``pimc-worlds=16``). A cell plays ``--deals`` deals, or fewer
where ``--deals-for NAME=N`` caps an agent of the pair (``NAME``: a spec, or an agent name for
all its specs). A cell whose ``result.json`` already holds these settings (agents, rules, seed,
and at least its deals: a cell played once with more deals, e.g. ``--only ppo pimc`` with
``--deals-for pimc=1000``, stays) is kept, so the table can be built over several runs; ``--only X Y`` plays just that cell,
``--force`` plays kept cells again, and a cell interrupted by Ctrl-C (which keeps the deals
finished, like ``manni arena``, and exits with 130) is completed by the next run.

Then ``OUT/VARIANT.md`` is written: the matrix (row X, column Y ×2: X's mean deal score [95% CI],
X − Y [95% CI], deals), each agent's ms/move over all its cells and, for ``ppo`` checkpoints, the
training wall time and learner decisions from their metadata, and the ``manni arena`` command of
every cell. ``--table-only`` rebuilds it from the result files without playing. The numbers
depend only on the settings, not on ``--workers``; ms/move is wall time and varies between runs.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

from agents.arena import ArenaInterrupted, Interval, run_arena
from agents.commands.arena import write_outputs
from agents.ppo_agent import PPOAgent, ShippedPPOAgent
from agents.registry import make_agent
from manni_env.cli_options import add_variant_options, at_least, rules_from_args
from manni_env.rules import Rules, make_rules

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


def safe_name(spec: str) -> str:
    """``spec`` as a directory name part: ``pimc:worlds=16`` → ``pimc-worlds=16``."""
    return re.sub(r"[^A-Za-z0-9_.=,-]", "-", spec)


def cell_dir(out: Path, variant: str, x: str, y: str) -> Path:
    return out / variant / f"{safe_name(x)}_vs_{safe_name(y)}"


def cell_deals(x: str, y: str, deals: int, caps: dict[str, int]) -> int:
    """``deals``, capped by the ``--deals-for`` entry of each agent (its spec first, else its name)."""
    limits = [caps.get(s, caps.get(s.partition(":")[0], deals)) for s in (x, y)]
    return min(deals, *limits)


def wanted(x: str, y: str, rules: Rules, seed: int) -> dict:
    """The settings of cell (x, y) that a kept result.json must have, besides its deals."""
    return {"agents": [x, y, y], "variant": rules.variant, "options": rules.options(), "mode": "deals", "seed": seed}


def saved(where: Path) -> dict | None:
    """The result.json in ``where``, or None; ValueError if it is unreadable."""
    file = where / "result.json"
    if not file.exists():
        return None
    try:
        data = json.loads(file.read_text())
        if not {"settings", "agents", "head_to_head"} <= data.keys() or "units" not in data["settings"]:
            raise ValueError("keys missing")
    except (OSError, ValueError, AttributeError, TypeError) as err:
        raise ValueError(f"{file} is not a readable arena result ({err}); delete it or pass --force") from None
    return data


def status(result: dict | None, want: dict, deals: int) -> str:
    """``missing``, ``done`` (these settings, at least ``deals``), ``partial`` (these settings, interrupted) or ``other``."""
    if result is None:
        return "missing"
    s = result["settings"]
    if any(s.get(k) != v for k, v in want.items()) or s.get("units_requested", s["units"]) < deals:
        return "other"  # (a result of more deals than asked for is kept: the cell's evidence is larger)
    return "partial" if "units_requested" in s else "done"


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


def plan(args: argparse.Namespace, agents: list[str], rules: Rules) -> list[tuple[str, str, Path, int]]:
    """The cells to play as (X, Y, directory, deals); ValueError for a kept result of other settings."""
    todo = []
    for x, y in dict.fromkeys(map(tuple, args.only)) if args.only else [(x, y) for x in agents for y in agents if x != y]:
        where, deals = cell_dir(Path(args.out), rules.variant, x, y), cell_deals(x, y, args.deals, dict(args.deals_for))
        state = status(saved(where), wanted(x, y, rules, args.seed), deals)
        if state == "other" and not args.force:
            raise ValueError(f"{where} holds a result of other settings (agents, rules, deals or seed); "
                             "pass --force to play it again, or choose another --out")
        if state == "done" and not args.force:
            print(f"kept {x} vs {y} ×2 ({deals} deals, seed {args.seed})")
        else:
            todo.append((x, y, where, deals))
    return todo


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rules = rules_from_args(args)
    agents = [spec.strip() for spec in args.agents]
    try:
        check(args, agents, rules)
        todo = [] if args.table_only else plan(args, agents, rules)
    except ValueError as err:
        parser.error(str(err))
    out, kept = Path(args.out), "the finished cells"
    try:
        for n, (x, y, where, deals) in enumerate(todo, 1):
            print(f"[{n}/{len(todo)}] {x} vs {y} ×2: {deals} deals, seed {args.seed}", flush=True)
            try:
                result = run_arena([x, y, y], rules, deals, args.seed, workers=args.workers,
                                   progress=not args.no_progress)
            except ArenaInterrupted as stop:
                if stop.result is not None:
                    write_outputs(stop.result, where)
                    kept += f" and {stop.units} of {deals} deals of {x} vs {y} ×2"
                raise
            write_outputs(result, where)
    except KeyboardInterrupt:
        write_table(out, agents, rules)
        print(f"strength: interrupted; kept {kept} and rebuilt {out / rules.variant}.md", file=sys.stderr)
        return 130
    try:
        print(write_table(out, agents, rules))
    except ValueError as err:
        parser.error(str(err))
    print(f"wrote {out / rules.variant}.md")
    return 0


def write_table(out: Path, agents: list[str], rules: Rules) -> str:
    """Write and return ``OUT/VARIANT.md`` from the result files of the cells of ``agents``."""
    results = {}
    for x in agents:
        for y in agents:
            if x != y and (result := saved(cell_dir(out, rules.variant, x, y))) is not None:
                s = result["settings"]
                if [s["agents"], s["variant"], s["options"]] != [[x, y, y], rules.variant, rules.options()]:
                    raise ValueError(f"{cell_dir(out, rules.variant, x, y)} holds a result of other agents or rules")
                results[x, y] = result
    options = ", ".join(f"{k}={v}" for k, v in rules.options().items())
    seeds = ", ".join(sorted({str(r["settings"]["seed"]) for r in results.values()})) or "–"
    lines = [
        f"# Strength: {rules.variant}", "",
        (f"Duplicate arena, deals mode ({options}; seed {seeds}): row agent X against two copies of column agent "
        "Y (`manni arena X Y Y`), every deal played under all 6 seatings. A cell: X's mean deal score [95% CI]; "
        "X − Y, the difference of their mean deal scores [95% CI]; duplicate deals. 95% CI: normal approximation "
        "over deals."), "",
        "| X \\ Y ×2 | " + " | ".join(f"`{y}`" for y in agents) + " |",
        "|---" * (len(agents) + 1) + "|",
    ]
    for x in agents:
        lines.append(f"| `{x}` | " + " | ".join(_cell(results.get((x, y))) if x != y else "–" for y in agents) + " |")
    lines += ["", "| agent | ms/move | moves timed | training wall time | learner decisions |", "|---|---|---|---|---|"]
    for spec in agents:
        timed = [a for r in results.values() for a in r["agents"] if a["spec"] == spec]
        moves = sum(a["moves"] for a in timed)
        ms = f"{sum(a['ms_per_move'] * a['moves'] for a in timed) / moves:.3f}" if moves else "–"
        training = _training(spec, rules)
        wall = f"{training['wall_time_s'] / 60:.1f} min" if "wall_time_s" in training else "–"
        steps = f"{training['timesteps']:,}" if "timesteps" in training else "–"
        lines.append(f"| `{spec}` | {ms} | {moves:,} | {wall} | {steps} |")
    lines += ["", "| cell | command | result |", "|---|---|---|"]
    for (x, y), result in results.items():
        where = cell_dir(out, rules.variant, x, y)
        link = where.relative_to(out).as_posix() + "/result.md"
        lines.append(f"| `{x}` vs `{y}` ×2 | `{_command(result['settings'])}` | [{link}]({link}) |")
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{rules.variant}.md").write_text(text)
    return text


def _cell(result: dict | None) -> str:
    if result is None:
        return "not played"
    s, score, diff = result["settings"], result["agents"][0]["deal_score"], result["head_to_head"][0]["difference"]
    deals = f"{s['units']:,} of {s['units_requested']:,} deals (interrupted)" if "units_requested" in s else f"{s['units']:,} deals"
    return f"{Interval(**score).text()}<br>X − Y {Interval(**diff).text()}<br>{deals}"


def _training(spec: str, rules: Rules) -> dict:
    """The ``training`` metadata of a ``ppo`` (or ``rllib``) checkpoint agent; empty for others."""
    agent = make_agent(spec, rules)
    if isinstance(agent, ShippedPPOAgent):
        agent = agent.agent_for(rules)
    return agent.meta.get("training", {}) if isinstance(agent, PPOAgent) else {}


def _command(settings: dict) -> str:
    """The ``manni arena`` command that plays a cell with these settings (non-default rule options as flags)."""
    defaults = make_rules(settings["variant"]).options()
    flags = []
    for name, value in settings["options"].items():
        if value != defaults[name]:
            flags += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    deals = settings.get("units_requested", settings["units"])
    return shlex.join(["manni", "arena", *settings["agents"], "--variant", settings["variant"], *flags,
                       "--deals", str(deals), "--seed", str(settings["seed"]), "--workers", str(settings["workers"])])


if __name__ == "__main__":
    sys.exit(main())
