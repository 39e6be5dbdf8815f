"""The ladder: in one variant, rungs from weak to strong, each played against the rung below it.

    python benchmarks/ladder.py --variant trjamann --deals 300 --workers 1

The rungs (:func:`rungs`), weak to strong: ``rule_based``; ``pimc`` (16 worlds); ``pimc`` with 64
worlds, or with the most worlds of :data:`PIMC_CANDIDATES` whose CPU time a move stays within
``--pimc-limit-ms`` (50) on this machine (measured first and recorded: :func:`choose_pimc_worlds`);
``search`` (16 worlds) on the variant's network shipped on 2026-12-04, frozen in
``benchmarks/reference_agents/2026-12-04/``; the same with 64 worlds.

Each rung plays ``manni arena RUNG BELOW BELOW``, a cell of :mod:`manni_agents.evaluation.league`
kept in ``OUT/VARIANT/RUNG_vs_BELOW/`` (a kept cell is not played again; an interrupted one keeps
its finished deals, shown as such, and the next run resumes it after them), over ``--deals``
duplicate deals × 6 seatings, seed ``--seed``. Its margin is RUNG − BELOW, the difference of
their mean deal scores [95% CI]; a rung's margin over ``rule_based`` is the sum of the margins
below it. Each rung's CPU ms a move comes from a separate
timing pass, not from the arena (whose ms/move is wall time, shown too): three copies of the rung
play ``--timing-deals`` deals after an untimed warm-up deal, timed by the process's CPU clock
(``bench_agents.time_agent``); timings are kept in ``OUT/VARIANT.json`` like the cells.

It writes ``OUT/VARIANT.json`` (every number), ``OUT/VARIANT.md`` (the table) and ``OUT/VARIANT.png``
(each rung's margin over the rung below; the margin over ``rule_based`` against CPU ms a move).

``--no-play`` times the rungs and writes the page without playing a cell. ``--place SPEC ...``
puts agents on the ladder instead (:func:`rung_reached`): each plays two copies of each rung from
the bottom until it falls behind one, and ``OUT/VARIANT_placed.md`` says the highest rung each agent
placed so far is level with (``OUT/VARIANT_placed.json`` keeps them), beside its wall ms a move in
those arenas and the learner decisions and training minutes a ``ppo`` checkpoint records. On the
agents a training run saved along the way, that is its time-to-rung curve; ``--up-to RUNG`` stops
each agent there, sparing the costly rungs above.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmarks, also when imported

from bench_agents import time_agent  # noqa: E402
from strength import training_of, whole_training  # noqa: E402
from time_to_strength import REFERENCE_DIR, reference_path  # noqa: E402

from manni_agents.evaluation.arena import Interval  # noqa: E402
from manni_agents.evaluation.league import cell_dir, command_of, plan, play, saved  # noqa: E402
from manni_env.files import replace_atomically  # noqa: E402
from manni_env.rules import VARIANTS, Rules, make_rules  # noqa: E402
from manni_train.cpu import cpu_model  # noqa: E402

FROZEN_DIR = REFERENCE_DIR / "2026-12-04"
"""The networks shipped on 2026-12-04, the ``search`` rungs' networks."""
RUNG_KEYS = ("rule_based", "pimc", "pimc_strong", "search", "search64")
PIMC_CANDIDATES = (32, 64)
"""World counts of the strong ``pimc`` rung: the most of them within the time limit (else the fewest)."""
DEFAULT_OUT = Path("benchmarks/results/ladder")


@dataclass(frozen=True)
class Rung:
    key: str  # one of RUNG_KEYS
    label: str  # the name tables and plots use
    spec: str  # the agent spec


def rungs(variant: str, pimc_worlds: int) -> list[Rung]:
    """The ladder of ``variant``, weakest first, with ``pimc_worlds`` worlds on the strong ``pimc`` rung."""
    network = reference_path(variant, FROZEN_DIR)
    return [Rung("rule_based", "rule_based", "rule_based"),
            Rung("pimc", "pimc 16", "pimc:worlds=16"),
            Rung("pimc_strong", f"pimc {pimc_worlds}", f"pimc:worlds={pimc_worlds}"),
            Rung("search", "search 16", f"search:model={network},worlds=16"),
            Rung("search64", "search 64", f"search:model={network},worlds=64")]


def choose_pimc_worlds(ms_per_move: dict[int, float], limit_ms: float) -> int:
    """The most worlds whose CPU ms a move is at most ``limit_ms``; the fewest if none is."""
    within = [worlds for worlds, ms in ms_per_move.items() if ms <= limit_ms]
    return max(within) if within else min(ms_per_move)


def cpu_time(spec: str, variant: str, deals: int, seed: int) -> dict:
    """The timing pass of one agent: CPU ms a decision over ``deals`` deals of three copies of it."""
    load = os.getloadavg()[0]
    seconds, _ = time_agent(spec, variant, deals, seed, clock=time.process_time)
    return {"ms_per_move": 1000 * sum(seconds) / len(seconds), "moves": len(seconds), "deals": deals,
            "load_1min": round((load + os.getloadavg()[0]) / 2, 2), "measured": time.strftime("%Y-%m-%d %H:%M"),
            "cpu_model": cpu_model()}


def timed(specs: list[str], variant: str, deals: int, seed: int, kept: dict[str, dict],
          say: Callable[[str], None] = print) -> dict[str, dict]:
    """``kept`` with the timing pass of each of ``specs`` it lacks added."""
    timings = dict(kept)
    for spec in specs:
        if spec not in timings:
            timings[spec] = cpu_time(spec, variant, deals, seed)
            say(f"timed {spec}: {timings[spec]['ms_per_move']:.3f} CPU ms a move ({timings[spec]['moves']} moves)")
    return timings


def pimc_choice(args: argparse.Namespace, kept: dict, timings: dict[str, dict]) -> dict:
    """The strong ``pimc`` rung's worlds: ``--pimc-worlds``, else the recorded choice, else measured
    now (the timings of the candidates are added to ``timings``)."""
    if args.pimc_worlds is not None:
        return {"worlds": args.pimc_worlds, "why": "--pimc-worlds"}
    if "worlds" in kept:
        return kept
    specs = [f"pimc:worlds={w}" for w in PIMC_CANDIDATES]
    timings.update(timed(specs, args.variant, args.timing_deals, args.seed, timings))
    ms = {w: timings[f"pimc:worlds={w}"]["ms_per_move"] for w in PIMC_CANDIDATES}
    return {"worlds": choose_pimc_worlds(ms, args.pimc_limit_ms), "limit_ms": args.pimc_limit_ms,
            "ms_per_move": {str(w): round(m, 3) for w, m in ms.items()}, "why": "measured"}


def pairs_of(ladder: list[Rung], keys: list[str]) -> list[tuple[Rung, Rung]]:
    """(rung, rung below it) for each rung of ``keys`` above the bottom one."""
    return [(upper, lower) for lower, upper in zip(ladder, ladder[1:]) if upper.key in keys]


def play_pairs(pairs: list[tuple[Rung, Rung]], rules: Rules, args: argparse.Namespace, loads: dict[str, dict],
               say: Callable[[str], None] = print) -> None:
    """Play the cells of ``pairs`` not kept under ``--out`` (recording the load average around each in ``loads``)."""
    for upper, lower in pairs:
        todo = plan([(upper.spec, lower.spec)], rules, args.seed, args.out, lambda x, y: args.deals, say=say)
        if todo:
            before = os.getloadavg()[0]
            try:
                play(todo, rules, args.seed, args.workers, progress=not args.no_progress, say=say)
            finally:  # an interrupted cell's deals are kept: so is the load they were played at
                loads[upper.key] = {"before": before, "after": os.getloadavg()[0]}


def margin_of(result: dict) -> dict:
    """RUNG − BELOW of a cell's result (its first head-to-head: the row agent against the copies)."""
    return result["head_to_head"][0]["difference"]


def rows(ladder: list[Rung], rules: Rules, out: Path, timings: dict[str, dict], loads: dict[str, dict]) -> list[dict]:
    """One row per rung: its CPU ms a move and, from its kept cell, its margin over the rung below and
    the cumulative margin over the bottom rung (None where a cell below is missing)."""
    table, total = [], 0.0
    for n, rung in enumerate(ladder):
        row = {**asdict(rung), "cpu": timings.get(rung.spec)}
        if n:
            result = saved(cell_dir(out, rules.variant, rung.spec, ladder[n - 1].spec))
            row["pair"] = None if result is None else {
                "below": ladder[n - 1].label, "margin": margin_of(result), "deals": result["settings"]["units"],
                "deals_requested": result["settings"].get("units_requested", result["settings"]["units"]),
                "arena_wall_ms_per_move": result["agents"][0]["ms_per_move"], "load": loads.get(rung.key),
                "command": command_of(result["settings"])}
            total = None if total is None or result is None else total + margin_of(result)["mean"]
        row["over_bottom"] = total
        table.append(row)
    return table


def deals_text(pair: dict) -> str:
    """A cell's deals; an interrupted one's as ``N of M (interrupted)``."""
    if pair["deals"] == pair["deals_requested"]:
        return f"{pair['deals']:,}"
    return f"{pair['deals']:,} of {pair['deals_requested']:,} (interrupted)"


def ms_text(timing: dict | None) -> str:
    return "–" if timing is None else f"{timing['ms_per_move']:.3g}"


def markdown(variant: str, table: list[dict], pimc: dict, seed: int) -> str:
    """The ladder page of one variant."""
    lines = [f"# Ladder: {variant}", "",
             (f"Each rung against two copies of the rung below it (`manni arena RUNG BELOW BELOW`, deals mode, seed "
              f"{seed}, duplicate deals × 6 seatings). Margin: RUNG − BELOW, the difference of their mean deal scores "
              "[95% CI]; over `rule_based`: the sum of the margins up to the rung. CPU ms a move: the timing pass "
              "(process CPU time per decision, three copies of the rung); arena ms a move: wall time inside `act` "
              "in the rung's cell."), "", pimc_text(pimc), "", cpu_text(table), "",
             "| rung | spec | margin over the rung below | deals | over `rule_based` | CPU ms a move | arena ms a move |",
             "|---|---|---|---:|---:|---:|---:|"]
    for row in table:
        pair, total = row.get("pair"), row["over_bottom"]
        cells = (["–", "–", "–"] if "pair" not in row else ["not played", "–", "–"] if pair is None else
                 [Interval(**pair["margin"]).text(), deals_text(pair), f"{pair['arena_wall_ms_per_move']:.3g}"])
        lines.append(f"| {row['label']} | `{row['spec']}` | {cells[0]} | {cells[1]} | "
                     f"{'–' if total is None else f'{total:+.3f}'} | {ms_text(row['cpu'])} | {cells[2]} |")
    commands = [f"| {row['label']} | `{row['pair']['command']}` |" for row in table if row.get("pair")]
    if commands:
        lines += ["", "| rung | command of its cell |", "|---|---|", *commands]
    return "\n".join(lines) + "\n"


def cpu_text(table: list[dict]) -> str:
    """The CPUs the timing passes ran on, in words."""
    models = dict.fromkeys(row["cpu"]["cpu_model"] for row in table if row["cpu"] is not None)
    return f"Timing passes on: {', '.join(models) or 'none yet'} (`lscpu`'s model name)."


def pimc_text(pimc: dict) -> str:
    """How the strong ``pimc`` rung's worlds were chosen, in words."""
    if pimc["why"] != "measured":
        return f"Strong `pimc` rung: {pimc['worlds']} worlds (given by {pimc['why']})."
    measured = ", ".join(f"{w} worlds {ms:.3g} ms" for w, ms in pimc["ms_per_move"].items())
    return (f"Strong `pimc` rung: {pimc['worlds']} worlds, the most of {measured} (CPU a move, timing pass) "
            f"within {pimc['limit_ms']:g} ms.")


def error_bars(margins: list[dict]) -> list[list[float]]:
    """matplotlib's ``yerr`` for margins ``{mean, low, high}``: the distances down to ``low`` and up to ``high``."""
    return [[m["mean"] - m["low"] for m in margins], [m["high"] - m["mean"] for m in margins]]


def plot(variant: str, table: list[dict], path: Path) -> None:
    """PNG: each rung's margin over the rung below [95% CI]; the margin over ``rule_based`` against CPU ms a move."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    played = [row for row in table if row.get("pair")]
    margins = [row["pair"]["margin"] for row in played]
    left.errorbar(range(len(played)), [m["mean"] for m in margins], yerr=error_bars(margins), fmt="o", capsize=6)
    left.axhline(0.0, color="grey", linewidth=0.8)
    left.set(xticks=range(len(played)), xticklabels=[f"{r['label']}\n− {r['pair']['below']}" for r in played],
             ylabel="margin over the rung below (95% CI)", title="Each rung against the rung below")
    placed = [row for row in table if row["cpu"] is not None and row["over_bottom"] is not None]
    right.plot([r["cpu"]["ms_per_move"] for r in placed], [r["over_bottom"] for r in placed], marker="o")
    for r in placed:
        right.annotate(r["label"], (r["cpu"]["ms_per_move"], r["over_bottom"]), textcoords="offset points", xytext=(5, -12))
    for r in table:
        if r["cpu"] is not None and r["over_bottom"] is None:  # timed, its margin not known yet
            right.axvline(r["cpu"]["ms_per_move"], color="grey", linestyle=":", linewidth=0.8)
            right.annotate(f"{r['label']} (not played)", (r["cpu"]["ms_per_move"], 0.5), xycoords=("data", "axes fraction"),
                           rotation=90, color="grey", fontsize=8, xytext=(2, 0), textcoords="offset points")
    right.set(xscale="log", xlabel="CPU ms a move (log)", ylabel="margin over rule_based (sum of the rungs')",
              title="Strength against cost")
    fig.suptitle(f"Ladder: {variant}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def rung_reached(spec: str, variant: str, deals: int, seed: int = 1, out: Path = DEFAULT_OUT, workers: int = 1,
                 pimc_worlds: int = PIMC_CANDIDATES[-1], progress: bool = False,
                 say: Callable[[str], None] = print, up_to: str | None = None) -> dict:
    """Put the agent ``spec`` on ``variant``'s ladder: it plays two copies of each rung from the bottom
    (``manni arena SPEC RUNG RUNG``, ``deals`` duplicate deals, a league cell under ``out`` kept like the
    ladder's) until its margin over one is below 0. Returns ``reached``, the key of the highest rung
    it is level with or ahead of (None: not even the bottom one), and ``margins``, its margin over
    each rung it played (a rung with its own spec counts as level, unplayed). With ``up_to`` (a rung's
    key) it stops after that rung even when ahead of it, and ``up_to`` is returned too."""
    rules = make_rules(variant)
    reached, margins = None, {}
    for rung in rungs(variant, pimc_worlds):
        if rung.spec != spec:
            where = cell_dir(out, variant, spec, rung.spec)
            play(plan([(spec, rung.spec)], rules, seed, out, lambda x, y: deals, say=say), rules, seed, workers,
                 progress=progress, say=say)
            margins[rung.key] = margin_of(saved(where))
            if margins[rung.key]["mean"] < 0:
                break
        reached = rung.key
        if rung.key == up_to:
            break
    return {"spec": spec, "reached": reached, "margins": margins, "up_to": up_to}


def arena_ms(out: Path, variant: str, spec: str, ladder: list[Rung], keys: list[str]) -> float | None:
    """The placed agent ``spec``'s wall ms a move over its kept cells against the rungs ``keys``
    (weighted by its moves in each); None without a kept cell."""
    cells = [saved(cell_dir(out, variant, spec, r.spec)) for r in ladder if r.key in keys]
    played = [cell["agents"][0] for cell in cells if cell is not None]
    moves = sum(row["moves"] for row in played)
    return sum(row["ms_per_move"] * row["moves"] for row in played) / moves if moves else None


def place(args: argparse.Namespace) -> str:
    """Put each ``--place`` agent on the ladder and keep it in ``OUT/VARIANT_placed.json`` beside the
    agents placed before, with the learner decisions and training seconds its checkpoint records; write
    ``OUT/VARIANT_placed.md`` and its picture ``.png`` (:func:`plot_placed`) from all of them; the page.
    An agent placed again replaces its row. Each is written as soon as it is placed, the file read again
    first, so an interruption loses no finished agent and runs side by side keep each other's."""
    worlds = args.pimc_worlds or load_state(args).get("pimc", {}).get("worlds", PIMC_CANDIDATES[-1])
    ladder = rungs(args.variant, worlds)
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.place:
        reached = rung_reached(spec, args.variant, args.deals, args.seed, args.out, args.workers, worlds,
                               not args.no_progress, up_to=args.up_to)
        training = training_of(spec, make_rules(args.variant))
        reached |= {"deals": args.deals, "seed": args.seed, "learner_decisions": whole_training(training, "timesteps"),
                    "training_s": whole_training(training, "wall_time_s")}
        places = {**placed(args.out, args.variant), spec: reached}
        for where in places.values():  # (rows placed before the arena's time a move was kept: from their cells)
            if "ms_per_move" not in where:
                where["ms_per_move"] = arena_ms(args.out, args.variant, where["spec"], ladder, list(where["margins"]))
        rows_placed = list(places.values())
        page = placed_markdown(args.variant, rows_placed, ladder)
        stem = args.out / f"{args.variant}_placed"
        replace_atomically((stem.with_suffix(".json"), lambda path: path.write_text(json.dumps(places, indent=1) + "\n")),
                           (stem.with_suffix(".md"), lambda path: path.write_text(page)),
                           (stem.with_suffix(".png"), lambda path: plot_placed(args.variant, rows_placed, ladder, path)))
    return page


def placed(out: Path, variant: str) -> dict[str, dict]:
    """The agents already on ``variant``'s ladder under ``out``, by spec (``{}`` when none)."""
    file = out / f"{variant}_placed.json"
    return json.loads(file.read_text()) if file.is_file() else {}


def placed_markdown(variant: str, places: list[dict], ladder: list[Rung]) -> str:
    """The table of agents put on the ladder, with the training their ``ppo`` checkpoints recorded."""
    lines = [f"# On the ladder: {variant}", "",
             ("Each agent against two copies of each rung from the bottom (`manni arena AGENT RUNG RUNG`, duplicate "
              "deals × 6 seatings) until it falls behind one: the highest rung it is level with (margin ≥ 0), and its "
              "margin over each rung [95% CI]."), "",
             "| agent | learner decisions | training minutes | ms a move (arena, wall) | deals, seed | highest rung reached | "
             + " | ".join(f"− {r.label}" for r in ladder) + " |", "|---" * (6 + len(ladder)) + "|"]
    labels = {r.key: r.label for r in ladder}
    for where in places:
        steps, wall, ms = where["learner_decisions"], where["training_s"], where.get("ms_per_move")
        margins = [Interval(**where["margins"][r.key]).text() if r.key in where["margins"] else "–" for r in ladder]
        lines.append(f"| `{where['spec']}` | {'–' if steps is None else f'{steps:,}'} | "
                     f"{'–' if wall is None else f'{wall / 60:.1f}'} | {'–' if ms is None else f'{ms:.3g}'} | "
                     f"{where['deals']}, {where['seed']} | "
                     f"{reached_text(where, labels, ladder[-1].key)} | " + " | ".join(margins) + " |")
    return "\n".join(lines) + "\n"


def run_of(spec: str) -> str:
    """The training run a placed agent comes from: for ``ppo:RUN/agent`` and ``ppo:RUN/agents/N`` (the
    networks ``--save-every`` keeps), ``RUN``; any other spec is a run of its own."""
    name, _, arg = spec.partition(":")
    if name != "ppo" or not arg:
        return spec
    path = Path(arg)
    return str(path.parent.parent if path.parent.name == "agents" else path.parent)


def plot_placed(variant: str, places: list[dict], ladder: list[Rung], path: Path) -> None:
    """PNG, the time-to-rung curves: the placed agents whose checkpoints record their learner decisions,
    their margin over each rung played [95% CI] against those decisions, a panel per rung, the agents of
    one run (:func:`run_of`) joined by a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trained = sorted((p for p in places if p["learner_decisions"] is not None), key=lambda p: p["learner_decisions"])
    played = [r for r in ladder if any(r.key in p["margins"] for p in trained)]
    panels = max(len(played), 1)
    fig, axes = plt.subplots(1, panels, figsize=(4 * panels, 4), squeeze=False, sharex=True, sharey=True)
    runs: dict[str, list[dict]] = {}
    for where in trained:
        runs.setdefault(run_of(where["spec"]), []).append(where)
    for ax, rung in zip(axes[0], played):
        for run, agents in runs.items():
            points = [p for p in agents if rung.key in p["margins"]]
            margins = [p["margins"][rung.key] for p in points]
            ax.errorbar([p["learner_decisions"] / 1e6 for p in points], [m["mean"] for m in margins],
                        yerr=error_bars(margins), marker="o", capsize=4, label=run if points else None)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(xlabel="learner decisions (M)", title=f"− {rung.label}")
    axes[0][0].set(ylabel="margin over the rung (95% CI)")
    if played:
        axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Time to rung: {variant} (at or above 0: the agent reached the rung)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def reached_text(where: dict, labels: dict[str, str], top: str) -> str:
    """A placed agent's highest rung, "or higher (not played further)" where ``--up-to`` stopped it there."""
    reached = where["reached"]
    stopped = reached is not None and reached == where.get("up_to") and reached != top
    return labels.get(reached, "none") + (" or higher (not played further)" if stopped else "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ladder.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", required=True, choices=VARIANTS)
    parser.add_argument("--deals", type=int, default=300, help="duplicate deals of each rung's cell (default 300)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of each arena (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every cell and timing pass (default 1)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help=f"result directory (default {DEFAULT_OUT})")
    parser.add_argument("--rungs", nargs="+", choices=RUNG_KEYS, metavar="RUNG",
                        help=f"play only these rungs' cells against the rung below (of: {' '.join(RUNG_KEYS)}; default: "
                        "all); the page shows every kept cell")
    parser.add_argument("--timing-deals", type=int, default=5, help="deals of each timing pass (default 5)")
    parser.add_argument("--pimc-limit-ms", type=float, default=50.0, help="CPU ms a move of the strong pimc rung (default 50)")
    parser.add_argument("--pimc-worlds", type=int, help="worlds of the strong pimc rung, not measured")
    parser.add_argument("--no-play", action="store_true",
                        help="only time the rungs not timed yet and write the page (an interrupted cell stays as it is)")
    parser.add_argument("--place", nargs="+", metavar="SPEC",
                        help="put these agents on the ladder instead, beside those placed before (OUT/VARIANT_placed.json); "
                        "the strong pimc rung: --pimc-worlds, else the worlds recorded in OUT/VARIANT.json, else 64")
    parser.add_argument("--up-to", choices=RUNG_KEYS, metavar="RUNG",
                        help="with --place: stop after this rung even when the agent is ahead of it (of: "
                        f"{' '.join(RUNG_KEYS)}; default: the top)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Exit with a usage error naming the first bad argument."""
    for name in ("deals", "workers", "timing_deals", "pimc_worlds"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"argument --{name.replace('_', '-')}: must be at least 1, got {value}")
    if args.seed < 0 or not args.pimc_limit_ms > 0:
        parser.error("argument --seed must be ≥ 0 and --pimc-limit-ms > 0")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"argument --out: {args.out} exists and is not a directory")
    if args.up_to and not args.place:
        parser.error("argument --up-to: only with --place")
    if args.place and (args.rungs or args.no_play):
        parser.error(f"argument {'--rungs' if args.rungs else '--no-play'}: not with --place, "
                     "which plays every rung from the bottom until the agent falls behind one")


def climb(args: argparse.Namespace) -> str:
    """Play and time the chosen rungs (kept ones stay), write the page, JSON and picture; the page."""
    rules = make_rules(args.variant)
    kept = load_state(args)
    state_cpu = kept.get("cpu_model", "unknown")  # (a state written before each timing named its CPU)
    timings = {spec: {"cpu_model": state_cpu, **timing} for spec, timing in kept.get("timings", {}).items()}
    pimc = pimc_choice(args, kept.get("pimc", {}), timings)
    ladder = rungs(args.variant, pimc["worlds"])
    chosen = args.rungs or list(RUNG_KEYS)
    pairs = pairs_of(ladder, chosen)
    wanted = dict.fromkeys([*(lower.spec for _, lower in pairs), *(r.spec for r in ladder if r.key in chosen)])
    timings = timed(list(wanted), args.variant, args.timing_deals, args.seed, timings)
    loads = dict(kept.get("loads", {}))
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        play_pairs([] if args.no_play else pairs, rules, args, loads)
    finally:
        page = write(args, ladder, pimc, timings, loads)
    return page


def load_state(args: argparse.Namespace) -> dict:
    """``OUT/VARIANT.json`` of an earlier run (its pimc choice, timings and loads), or ``{}``."""
    state_file = args.out / f"{args.variant}.json"
    return json.loads(state_file.read_text()) if state_file.is_file() else {}


def write(args: argparse.Namespace, ladder: list[Rung], pimc: dict, timings: dict, loads: dict) -> str:
    """``OUT/VARIANT.json``, ``.md`` and ``.png`` from the kept cells and timings; the page."""
    table = rows(ladder, make_rules(args.variant), args.out, timings, loads)
    state = {"variant": args.variant, "seed": args.seed, "pimc": pimc, "timings": timings, "loads": loads, "rungs": table}
    (args.out / f"{args.variant}.json").write_text(json.dumps(state, indent=1) + "\n")
    page = markdown(args.variant, table, pimc, args.seed)
    (args.out / f"{args.variant}.md").write_text(page)
    plot(args.variant, table, args.out / f"{args.variant}.png")
    return page


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check(args, parser)
    try:
        if args.place:
            page = place(args)
        else:
            page = climb(args)
    except ValueError as err:
        parser.error(str(err))
    except KeyboardInterrupt:  # (an ArenaInterrupted too: its finished deals are written)
        print(f"ladder: interrupted; kept the finished deals in {args.out}", file=sys.stderr)
        return 130
    print(page)
    print(f"wrote {args.out / args.variant}{'_placed' if args.place else ''}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
