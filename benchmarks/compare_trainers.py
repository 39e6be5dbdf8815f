"""Arena score against ``rule_based`` over wall time: the fast vector-env trainer vs the SB3 trainer.

    python benchmarks/compare_trainers.py --fast runs/<fast run> ... --sb3 runs/<sb3 run> ... --out trainers.png

Reads each run's evaluation history (``history.json`` of ``train/ppo_vector.py``; the history inside
``checkpoints/latest.pt`` of ``train/ppo_sb3.py``, loaded with ``weights_only=True``), plots the
mean duplicate-arena deal score against 2 × ``rule_based`` (95% CI bands) against wall time on one
chart, and prints a Markdown table with, for each run, its best score and the wall time at which it
first reached the best score of the SB3 runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load_history(run_dir: Path) -> list[dict]:
    """Evaluation history of a run directory of either trainer."""
    if (run_dir / "history.json").is_file():
        return json.loads((run_dir / "history.json").read_text())
    checkpoint = run_dir / "checkpoints" / "latest.pt"
    if checkpoint.is_file():
        import torch

        return json.loads(torch.load(checkpoint, map_location="cpu", weights_only=True)["history"])
    raise SystemExit(f"{run_dir}: no history.json or checkpoints/latest.pt")


def first_reach(history: list[dict], score: float) -> float | None:
    """Wall time of the first evaluation whose mean score vs rule_based is at least ``score``."""
    return next((h["wall_time_s"] for h in history if h["vs_rule_based"]["mean"] >= score), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", type=Path, nargs="+", default=[], help="run directories of train/ppo_vector.py")
    parser.add_argument("--sb3", type=Path, nargs="+", required=True, help="run directories of train/ppo_sb3.py")
    parser.add_argument("--out", type=Path, default=Path("trainers_vs_rule_based.png"), help="PNG to write")
    args = parser.parse_args(argv)
    runs = {f"ppo_vector {d.name}": load_history(d) for d in args.fast}
    sb3 = {f"SB3 ppo_sb3 {d.name}": load_history(d) for d in args.sb3}
    runs.update(sb3)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, history in runs.items():
        xs = [h["wall_time_s"] / 60 for h in history]
        scores = [h["vs_rule_based"] for h in history]
        ax.plot(xs, [s["mean"] for s in scores], marker="o", label=label)
        if all(s["low"] is not None for s in scores):
            ax.fill_between(xs, [s["low"] for s in scores], [s["high"] for s in scores], alpha=0.2)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set(xlabel="wall time (minutes)", ylabel="mean deal score vs 2 × rule_based (95% CI)",
           title="Arena score while training")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)

    sb3_best = max(h["vs_rule_based"]["mean"] for history in sb3.values() for h in history)
    print("| run | evaluations | last wall time (s) | best score vs rule_based | wall time to reach SB3's best (s) |")
    print("|---|---:|---:|---:|---:|")
    for label, history in runs.items():
        best = max(h["vs_rule_based"]["mean"] for h in history)
        reach = first_reach(history, sb3_best)
        print(f"| {label} | {len(history)} | {history[-1]['wall_time_s']:.0f} | {best:+.3f} | "
              f"{'-' if reach is None else f'{reach:.0f}'} |")
    print(f"\nplot: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
