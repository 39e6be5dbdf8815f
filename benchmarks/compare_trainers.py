"""Arena score against ``rule_based`` over training wall time: the fast vector-env trainer vs the SB3 trainer.

    python benchmarks/compare_trainers.py --fast runs/<fast run> ... --sb3 runs/<sb3 run> ... --out trainers.png
    python benchmarks/compare_trainers.py --fast runs/<fast run> --ray runs/<ray run> --out ray_vs_fast.png

Plots the mean duplicate deal score against 2 × ``rule_based`` (95% CI bands) over training wall
time (both trainers count their warm start and not their periodic evaluations) on one chart, every
point measured the same way, by :func:`manni_agents.evaluation.vector_arena.duplicate_score` (``--deals`` deals,
``--seed``): ``train/ppo_vector.py`` and ``train/ray_vector.py`` runs are read from their
``history.json`` (the trainers evaluate with it while training, same defaults), and so are
``train/ppo_sb3.py`` runs evaluated on the same deals; for older SB3 runs the pool snapshots
(every ``--every`` learner decisions) and the final agent are evaluated here, with the wall time recorded in each checkpoint's metadata (cached in
``<run>/vector_eval.json``).

The target is the shipped SB3 agent's score: its mean deal score against 2 × ``rule_based`` in
``agents/models/evidence/ppo_vs_rule_based.json`` and its training wall time in
``agents/models/hornafjardar_ppo.json``; the chart marks the score and one fifth of that time.
The Markdown table gives, for each run, its best and last score and the wall time of the first
evaluation at or above the target (evaluations during training are small and noisy: confirm a
run's final agent with a large ``manni arena``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from tqdm import tqdm

MODELS = Path(__file__).resolve().parent.parent / "agents" / "models"


def fast_history(run_dir: Path) -> list[dict]:
    """The evaluation history a ``train/ppo_vector.py`` run wrote."""
    if not (run_dir / "history.json").is_file():
        raise SystemExit(f"{run_dir}: no history.json (not a train/ppo_vector.py run?)")
    return json.loads((run_dir / "history.json").read_text())


def sb3_history(run_dir: Path, every: int, deals: int, seed: int) -> list[dict]:
    """Vector-env evaluations of a ``train/ppo_sb3.py`` run: its own ``history.json`` when it was
    evaluated on these deals (every trainer evaluates the same way now), else its snapshots' and
    final agent's, measured here."""
    from manni_agents.evaluation.vector_arena import checkpoint_policy, duplicate_score
    from manni_env.rules import make_rules

    saved = json.loads((run_dir / "args.json").read_text()) if (run_dir / "args.json").is_file() else {}
    if (run_dir / "history.json").is_file() and (saved.get("eval_deals"), saved.get("eval_seed")) == (deals, seed):
        return json.loads((run_dir / "history.json").read_text())
    cache = run_dir / "vector_eval.json"
    key = {"every": every, "deals": deals, "seed": seed}
    cached = json.loads(cache.read_text()) if cache.is_file() else None
    if cached and cached["key"] == key:
        return cached["history"]
    checkpoints = sorted((run_dir / "pool").glob("snapshot_*.json")) + [run_dir / "agent.json"]
    if not checkpoints[-1].is_file():
        raise SystemExit(f"{run_dir}: no agent.json (not a finished train/ppo_sb3.py run?)")
    history, due = [], 0
    for path in tqdm(checkpoints, desc=run_dir.name, unit="checkpoint"):
        meta = json.loads(path.read_text())
        steps = meta["training"]["timesteps"]
        if steps < due and path.name != "agent.json":
            continue
        due = steps + every
        rules = make_rules(meta["variant"])
        score = duplicate_score(checkpoint_policy(path.with_suffix(""), rules), rules, deals, seed,
                                history=meta["history"])
        history.append({"timesteps": steps, "wall_time_s": meta["training"]["wall_time_s"],
                        "vs_rule_based": dataclasses.asdict(score)})
    cache.write_text(json.dumps({"key": key, "history": history}, indent=1) + "\n")
    return history


def shipped_reference() -> tuple[float, float]:
    """(mean deal score vs 2 × rule_based, training wall time in s) of the shipped SB3 agent."""
    evidence = json.loads((MODELS / "evidence" / "ppo_vs_rule_based.json").read_text())
    score = next(a["deal_score"]["mean"] for a in evidence["agents"] if a["spec"] == "ppo")
    wall = json.loads((MODELS / "hornafjardar_ppo.json").read_text())["training"]["wall_time_s"]
    return score, wall


def first_reach(history: list[dict], score: float) -> float | None:
    """Wall time of the first evaluation whose mean score vs rule_based is at least ``score``."""
    return next((h["wall_time_s"] for h in history if h["vs_rule_based"]["mean"] >= score), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", type=Path, nargs="+", default=[], help="run directories of train/ppo_vector.py")
    parser.add_argument("--sb3", type=Path, nargs="+", default=[], help="run directories of train/ppo_sb3.py")
    parser.add_argument("--ray", type=Path, nargs="+", default=[], help="run directories of train/ray_vector.py")
    parser.add_argument("--out", type=Path, default=Path("trainers_vs_rule_based.png"), help="PNG to write")
    parser.add_argument("--every", type=int, default=100_000, help="SB3 snapshots: learner decisions between evaluations")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation (as ppo_vector's default)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the deals (as ppo_vector's --eval-seed)")
    args = parser.parse_args(argv)
    if not args.fast and not args.sb3 and not args.ray:
        parser.error("give at least one run directory (--fast, --sb3, --ray)")
    runs = {f"ppo_vector {d.name}": fast_history(d) for d in args.fast}
    runs.update({f"ray_vector {d.name}": fast_history(d) for d in args.ray})  # the same history format
    runs.update({f"SB3 ppo_sb3 {d.name}": sb3_history(d, args.every, args.deals, args.seed) for d in args.sb3})
    target, sb3_wall = shipped_reference()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, history in runs.items():
        xs = [h["wall_time_s"] / 60 for h in history]
        scores = [h["vs_rule_based"] for h in history]
        ax.plot(xs, [s["mean"] for s in scores], marker="o", label=label)
        if all(s["low"] is not None for s in scores):
            ax.fill_between(xs, [s["low"] for s in scores], [s["high"] for s in scores], alpha=0.15)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.axhline(target, color="black", linestyle="--", linewidth=1,
               label=f"shipped SB3 agent: {target:+.3f} (2,000 deals × 6)")
    ax.axvline(sb3_wall / 5 / 60, color="black", linestyle=":", linewidth=1,
               label=f"1/5 of its training time ({sb3_wall / 5:.0f} s)")
    ax.set(xlabel="training wall time (minutes; evaluations excluded)",
           ylabel="mean deal score vs 2 × rule_based (95% CI)",
           title=f"Score against 2 × rule_based while training ({args.deals:,} duplicate deals per point)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)

    print(f"target: {target:+.3f} (shipped SB3 agent), 1/5 of its training wall time: {sb3_wall / 5:.0f} s\n")
    print("| run | evaluations | last wall time (s) | last score | best score | wall time to first reach the target (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, history in runs.items():
        best = max(h["vs_rule_based"]["mean"] for h in history)
        reach = first_reach(history, target)
        print(f"| {label} | {len(history)} | {history[-1]['wall_time_s']:.0f} | "
              f"{history[-1]['vs_rule_based']['mean']:+.3f} | {best:+.3f} | {'-' if reach is None else f'{reach:.0f}'} |")
    print(f"\nplot: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
