"""Time to strength: how fast ``manni train`` on its defaults turns the machine's minutes into a player.

    python benchmarks/time_to_strength.py --variant trjamann --seeds 1 2 3 --pimc-deals 500 --workers 2

For each seed it runs ``manni train --variant V --seed S`` on the trainer's defaults, adding only
what does not change the training: the learning curve's opponents (``--eval-against rule_based
REFERENCE``: two copies of the batched ``rule_based`` and of the variant's frozen reference agent,
``benchmarks/reference_agents/``), ``--eval-every`` and no final arenas (the benchmark plays its own). Then
``manni arena AGENT pimc pimc`` over ``--pimc-deals`` duplicate deals × 6 seatings (seed
``--arena-seed`` + the training seed − 1: other deals for every seed, so the seeds' arenas pool
into that many independent deals). ``--train-args`` adds options to every run (to
measure a lever before it becomes a default). With ``--save-every N`` among them and
``--pimc-curve-deals D``, it also finds the learner decisions to be level with ``pimc``: the saved
copies (``agents/N``) are played against 2 × ``pimc`` over D duplicate deals, bisecting for the first
copy with a margin ≥ 0.

It writes, under ``--out``: the runs (``runs/``), the arenas (``pimc_V_sS/``), ``V.json`` (every
number) and ``V.md`` (the CPU's model, kind and matmul peaks, measured first; one row per seed:
training wall time, learner decisions, minutes and learner decisions until the agent was level with
the reference agent, final score against 2 × ``rule_based`` and 2 × reference,
the margin over ``pimc``; and the seeds pooled), and ``V.png`` (the learning curves against wall
time). Seeds run before into the same ``--out`` with the same ``--train-args`` stay in the report
(``--seeds 2 3`` after ``--seeds 1`` reports all three), each with the CPU it ran on. Every score
is a margin, the arena's "X − Y": the agent's mean deal score minus its opponents'. Level with the
reference means a margin ≥ 0 against two copies of it; a run that never got there shows "–". Run
it on an otherwise idle machine: the wall times are the point.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

from manni_env.rules import VARIANTS, Rules, make_rules

REFERENCE_DIR = Path(__file__).resolve().parent / "reference_agents"
Z95 = 1.959963984540054


def reference_path(variant: str, folder: Path = REFERENCE_DIR) -> str:
    """The checkpoint path of ``variant``'s frozen agent in ``folder`` (relative to the working
    directory where it lies below it, so the commands a run records work in any checkout)."""
    path = folder / f"{variant}_ppo"
    return str(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path)


def reference_spec(variant: str) -> str:
    """The ``ppo:`` spec of ``variant``'s frozen reference agent (:func:`reference_path`)."""
    return f"ppo:{reference_path(variant)}"


def manni(*args: str) -> list[str]:
    """The command line of ``manni ARGS`` with this interpreter."""
    return [sys.executable, "-m", "manni_env.cli", *args]


def train(variant: str, seed: int, out: Path, eval_every: int, extra: list[str]) -> Path:
    """Run ``manni train`` for one seed (kept when its agent exists already); its run directory."""
    run = out / "runs" / f"{variant}_s{seed}"
    if (run / "agent.json").is_file() and (run / "history.json").is_file():
        print(f"kept {run}", flush=True)
        return run
    command = manni("train", "--variant", variant, "--seed", str(seed), "--runs-dir", str(run.parent),
                    "--run-name", run.name, "--eval-against", "rule_based", reference_spec(variant),
                    "--eval-every", str(eval_every), "--final-eval-deals", "0", "--final-pimc-deals", "0",
                    "--no-progress-bar", *extra)
    print("$", shlex.join(command), flush=True)
    subprocess.run(command, check=True)
    return run


def versus_pimc(variant: str, run: Path, out: Path, deals: int, seed: int, workers: int,
                agent: str = "agent") -> dict:
    """``manni arena AGENT pimc pimc`` for the run's ``agent`` (or a copy it saved, ``agents/N``;
    kept when its result exists); the agent − pimc difference."""
    arena = out / f"pimc_{run.name}" if agent == "agent" else out / f"pimc_{run.name}_at{Path(agent).name}"
    if not (arena / "result.json").is_file():
        command = manni("arena", f"ppo:{run / agent}", "pimc", "pimc", "--variant", variant, "--deals", str(deals),
                        "--seed", str(seed), "--workers", str(workers), "--out", str(arena), "--force",
                        "--no-progress")
        print("$", shlex.join(command), flush=True)
        started = time.time()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        print(f"  arena took {(time.time() - started) / 60:.1f} min", flush=True)
    result = json.loads((arena / "result.json").read_text())
    pair = next(h for h in result["head_to_head"] if h["b"] == "pimc")
    return {**pair["difference"], "deals": result["settings"]["units"], "seed": result["settings"]["seed"]}


def level_with_pimc(variant: str, run: Path, out: Path, deals: int, seed: int, workers: int,
                    final: dict) -> tuple[int | None, list[dict]]:
    """The learner decisions of the first copy the run saved (``--save-every``) that is level with
    ``pimc`` (margin ≥ 0 over ``deals`` duplicate deals), found by bisection over the copies, the
    curve taken to rise (``final``: the agent's own arena, the last point); None when the final
    agent is behind. Also the points played: ``{"decisions", **margin}``."""
    saved = sorted((int(p.stem) for p in (run / "agents").glob("*.json")), key=int)
    points: list[dict] = []
    if final["mean"] < 0:
        return None, points
    low, high = 0, len(saved)  # saved[high] would be the final agent: level
    while low < high:
        middle = (low + high) // 2
        point = versus_pimc(variant, run, out, deals, seed, workers, f"agents/{saved[middle]}")
        points.append({"decisions": saved[middle], **point})
        low, high = (low, middle) if point["mean"] >= 0 else (middle + 1, high)
    steps = json.loads((run / "agent.json").read_text())["training"]["timesteps"]
    return (saved[low] if low < len(saved) else steps), sorted(points, key=lambda p: p["decisions"])


def margin(score: dict, rules: Rules) -> dict:
    """The agent's mean deal score minus its opponents' (95% CI) in one evaluation of the history:
    recorded as ``margin``, or, in histories from before it was, 1.5 × the score where deals are
    zero-sum (the two opponents' mean is then minus half the agent's)."""
    if "margin" in score:
        return score["margin"]
    if not rules.zero_sum:
        raise ValueError("this history has no margins, and deals of this variant are not zero-sum: train it again")
    return {k: 1.5 * score[k] for k in ("mean", "low", "high")}


def first_level(history: list[dict], key: str, rules: Rules) -> dict | None:
    """The first evaluation with a margin ≥ 0 against ``key``'s agents (None: never)."""
    return next((h for h in history if margin(h[key], rules)["mean"] >= 0), None)


def minutes_to_level(history: list[dict], key: str, rules: Rules) -> float | None:
    """Training minutes at the first evaluation with a margin ≥ 0 against ``key``'s agents (None: never)."""
    level = first_level(history, key, rules)
    return None if level is None else level["wall_time_s"] / 60


def decisions_to_level(history: list[dict], key: str, rules: Rules) -> int | None:
    """Learner decisions at the first evaluation with a margin ≥ 0 against ``key``'s agents (None:
    never): the figure that does not depend on the machine."""
    level = first_level(history, key, rules)
    return None if level is None else level["timesteps"]


def hardware(threads: int = 2) -> dict:
    """The CPU the wall times come from: model, kind (AMX, AVX-512 BF16, fp32; ``ONEDNN_MAX_CPU_ISA``
    read), and the matmul peaks at ``threads`` threads, measured now."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_trainer import matmul_peak
    from manni_train.cpu import describe

    torch.set_num_threads(threads)
    return {**describe(), "threads": threads,
            "matmul_peak_gflops": {name: round(matmul_peak(2048, dtype))
                                   for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16))}}


def pooled(intervals: list[dict]) -> dict:
    """The unweighted mean of independent runs' means (one per seed) with its 95% interval (normal
    approximation, each run's standard error from its own interval)."""
    mean = sum(i["mean"] for i in intervals) / len(intervals)
    se = math.sqrt(sum(((i["high"] - i["low"]) / (2 * Z95)) ** 2 for i in intervals)) / len(intervals)
    return {"mean": mean, "low": mean - Z95 * se, "high": mean + Z95 * se}


def text(interval: dict) -> str:
    return f"{interval['mean']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def plot(variant: str, rows: list[dict], path: Path) -> None:
    """Learning curves of every seed against wall time: margins vs 2 × reference and vs 2 × rule_based."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    for ax, key, title in ((axes[0], "reference", "vs 2 × reference agent"), (axes[1], "rule_based", "vs 2 × rule_based")):
        for row in rows:
            xs = [h["wall_time_s"] / 60 for h in row["history"]]
            ax.plot(xs, [margin(h[row["keys"][key]], make_rules(variant))["mean"] for h in row["history"]],
                    marker="o", label=f"seed {row['seed']}")
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(title=title, xlabel="training wall time (min)")
    axes[0].set(ylabel="agent − opponents, mean deal score")
    axes[0].legend()
    fig.suptitle(f"manni train --variant {variant}: time to strength")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def pimc_level(row: dict) -> str:
    """The report's cell of the decisions to level with pimc: "–" never level, "n/a" not measured
    (no ``--pimc-curve-deals``, or no saved copies), else the decisions and the points it rests on."""
    if "pimc_curve" not in row:
        return "n/a"
    if row["decisions_to_level_pimc"] is None:
        return "–"
    points = ", ".join(f"{p['decisions'] / 1e6:.1f} M {p['mean']:+.2f}" for p in row["pimc_curve"])
    return f"{row['decisions_to_level_pimc']:,}" + (f" ({points})" if points else "")


def cpu_line(cpu: dict) -> str:
    """The CPU a row's times come from, as the report says it."""
    peaks = cpu["matmul_peak_gflops"]
    return (f"{cpu['cpu_model']}, kind `{cpu['cpu_kind']}` (ONEDNN_MAX_CPU_ISA {cpu['onednn_max_cpu_isa']}); "
            f"matmul peak at {cpu['threads']} threads {peaks['bf16']:,} GFLOP/s bf16, {peaks['fp32']:,} fp32")


def earlier_rows(path: Path, train_args: list[str], seeds: list[int]) -> list[dict]:
    """The rows of an earlier report at ``path`` (``V.json``) of the same ``--train-args`` whose seeds are
    not among ``seeds``: a run of more seeds into the same ``--out`` adds to the report instead of
    replacing it. Each keeps the CPU it was measured on."""
    if not path.is_file():
        return []
    earlier = json.loads(path.read_text())
    if earlier.get("train_args") != train_args:
        print(f"{path}: made with other --train-args ({shlex.join(earlier.get('train_args', []))}); replaced")
        return []
    return [{"cpu": earlier["cpu"], **row} for row in earlier["rows"] if row["seed"] not in seeds]


def report(variant: str, rows: list[dict], train_args: list[str]) -> str:
    cpus = {cpu_line(row["cpu"]) for row in rows}
    lines = [f"## {variant}", "",
             f"`{shlex.join(['manni', 'train', '--variant', variant, *train_args])}` on its defaults otherwise; "
             "`manni arena AGENT pimc pimc` over the duplicate deals (× 6 seatings) and arena seed of each row. "
             "Every score is AGENT's mean deal score minus its two opponents' (95% CI).", "",
             *([f"CPU: {cpus.pop()} (measured by this benchmark before the runs).", ""] if len(cpus) == 1 else
               ["CPU of each seed (measured by this benchmark before its run):", "",
                *(f"- seed {row['seed']}: {cpu_line(row['cpu'])}" for row in rows), ""]),
             "| seed | training wall time | learner decisions | min to level with the reference | "
             "decisions to level with the reference | decisions to level with pimc | AGENT − reference | "
             "AGENT − rule_based | AGENT − pimc |",
             "|---|---|---|---|---|---|---|---|---|"]
    rules = make_rules(variant)
    for row in rows:
        last = row["history"][-1]
        level, decisions = row["minutes_to_level"], row["decisions_to_level"]
        lines.append(f"| {row['seed']} | {row['wall_time_s'] / 60:.1f} min | {row['steps']:,} | "
                     f"{'–' if level is None else f'{level:.1f}'} | {'–' if decisions is None else f'{decisions:,}'} | "
                     f"{pimc_level(row)} | "
                     f"{text(margin(last[row['keys']['reference']], rules))} | "
                     f"{text(margin(last[row['keys']['rule_based']], rules))} | **{text(row['pimc'])}** "
                     f"({row['pimc']['deals']} deals, seed {row['pimc']['seed']}) |")
    if len(rows) > 1:
        lines.append(f"| pooled ({len(rows)} seeds, {sum(r['pimc']['deals'] for r in rows):,} deals) | | | | | | | | "
                     f"**{text(pooled([r['pimc'] for r in rows]))}** |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="time_to_strength.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="training seeds (default 1 2 3)")
    parser.add_argument("--pimc-deals", type=int, default=500, help="duplicate deals of each arena against pimc (default 500)")
    parser.add_argument("--arena-seed", type=int, default=90210, help="seed of the arenas against pimc (default 90210)")
    parser.add_argument("--eval-every", type=int, default=1_000_000, help="learner decisions between points of the curve")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of each arena (default 1)")
    parser.add_argument("--train-args", default="", help="options added to every manni train run, quoted")
    parser.add_argument("--pimc-curve-deals", type=int, default=0, metavar="DEALS",
                        help="with --save-every N in --train-args: the decisions to level with pimc, bisecting "
                             "over the saved copies with arenas of DEALS duplicate deals (default 0: not measured)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/time_to_strength"), metavar="DIR")
    args = parser.parse_args(argv)
    if args.pimc_deals < 1 or not args.seeds:
        parser.error("--pimc-deals must be at least 1 and --seeds needs a seed")
    if args.pimc_curve_deals < 0 or (args.pimc_curve_deals and "--save-every" not in args.train_args):
        parser.error("--pimc-curve-deals needs --save-every N in --train-args (the copies it plays) and is not negative")
    extra = shlex.split(args.train_args)
    args.out.mkdir(parents=True, exist_ok=True)
    reference = reference_spec(args.variant)
    keys = {"reference": f"vs_ppo:{Path(reference).name}", "rule_based": "vs_rule_based"}
    cpu = hardware()
    rows = earlier_rows(args.out / f"{args.variant}.json", extra, args.seeds)
    for seed in args.seeds:
        run = train(args.variant, seed, args.out, args.eval_every, extra)
        history = json.loads((run / "history.json").read_text())
        meta = json.loads((run / "agent.json").read_text())["training"]
        rows.append({"seed": seed, "cpu": cpu, "run": str(run), "keys": keys, "history": history,
                     "wall_time_s": meta["wall_time_s"], "steps": meta["timesteps"],
                     "minutes_to_level": minutes_to_level(history, keys["reference"], make_rules(args.variant)),
                     "decisions_to_level": decisions_to_level(history, keys["reference"], make_rules(args.variant)),
                     "pimc": versus_pimc(args.variant, run, args.out, args.pimc_deals, args.arena_seed + seed - 1,
                                         args.workers)})
        if args.pimc_curve_deals:
            rows[-1]["decisions_to_level_pimc"], rows[-1]["pimc_curve"] = level_with_pimc(
                args.variant, run, args.out, args.pimc_curve_deals, args.arena_seed + seed - 1, args.workers,
                rows[-1]["pimc"])
    rows.sort(key=lambda row: row["seed"])
    summary = report(args.variant, rows, extra)
    (args.out / f"{args.variant}.md").write_text(summary)
    (args.out / f"{args.variant}.json").write_text(json.dumps({"train_args": extra, "cpu": cpu, "rows": rows}, indent=1) + "\n")
    plot(args.variant, rows, args.out / f"{args.variant}.png")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
