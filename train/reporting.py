"""What every trainer writes around training: the export's provenance, the periodic evaluation and
its ``history.json``, the learning curve, the final arena against the baselines and the closing
summary."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from manni_agents.evaluation.arena import ArenaResult, against_baselines, run_arena
from manni_agents.evaluation.vector_arena import duplicate_interval, duplicate_margin, duplicate_seat_scores
from manni_agents.vector_policy import VectorPolicy, make_vector_policy
from manni_env.files import write_text
from manni_train.args import TrainArgs
from manni_train.cpu import describe
from manni_train.precision import compute_dtype


@dataclasses.dataclass
class TrainResult:
    """Where a finished run put its agent and how it scored."""

    run_dir: Path
    agent: Path  # the playable agent's path stem: ppo:<agent> (rllib:<agent> for RLlib runs)
    final: dict[str, ArenaResult]  # the final arena against each baseline (empty with --final-eval-deals 0)
    history: list[dict]  # evaluations while training: timesteps, wall_time_s, vs_<baseline> scores
    wall_time_s: float
    steps: int


def command_line() -> str:
    """How this process was started, without the interpreter's or the script's location."""
    program = Path(sys.argv[0])
    name = "manni" if program.name == "manni" else f"python -m manni_train.{program.stem}"
    return " ".join([name, *sys.argv[1:]])


def training_metadata(args: TrainArgs, algorithm: str, steps: int, wall_time: float, **versions: str) -> dict[str, Any]:
    """The ``training`` and ``provenance`` entries of an exported agent's metadata: among them the CPU
    (:func:`manni_train.cpu.describe`) and, for a trainer with ``--precision``, the arithmetic it
    resolved to on it (``bf16`` or ``fp32``)."""
    import torch

    training = {
        "algorithm": algorithm,
        "command": command_line(),
        "args": dataclasses.asdict(args),
        "timesteps": int(steps),
        "wall_time_s": round(wall_time, 1),
        "hardware": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip(),
        "cpu": describe(),
        "torch_threads": torch.get_num_threads(),
    }
    if (precision := getattr(args, "precision", None)) is not None:
        training["precision"] = "bf16" if compute_dtype(precision) == torch.bfloat16 else "fp32"
    return {
        "training": training,
        "provenance": {
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "torch": torch.__version__,
            **versions,
        },
    }


def evaluate(policy: VectorPolicy, args: TrainArgs, steps: int, wall_time: float, backend: str = "auto") -> dict[str, Any]:
    """Every trainer's periodic evaluation, one ``history.json`` entry: the learner decisions and
    training wall time so far and, for each agent of ``--eval-against`` (key ``vs_`` + its
    :func:`eval_label`), the mean deal score (95% CI) of the greedy
    batched ``policy`` against two copies of it over ``--eval-deals`` duplicate deals of seed
    ``--eval-seed`` on the vector env (:func:`manni_agents.evaluation.vector_arena.duplicate_score`; ``backend``
    changes the speed, not the numbers) and, as ``margin``, that score minus the opponents' (the
    arena's "X − Y"; 1.5 × the score where deals are zero-sum); with ``--opponents``, also against
    them (``vs_opponents``: a best response's score)."""
    rules = args.rules()
    layout = args.observation
    opponents: dict[str, Any] = {f"vs_{eval_label(spec)}": make_vector_policy(spec, rules, args.history, backend, layout)
                                 for spec in args.eval_against}
    if args.opponents:
        fixed = [make_vector_policy(spec, rules, args.history, backend, layout) for spec in args.opponents]
        opponents["vs_opponents"] = fixed[0] if len(fixed) == 1 else tuple(fixed)
    entry: dict[str, Any] = {"timesteps": int(steps), "wall_time_s": round(wall_time, 1)}
    for key, opponent in opponents.items():
        scores = duplicate_seat_scores(policy, rules, args.eval_deals, args.eval_seed, opponent, args.history, backend,
                                       layout)
        entry[key] = {**dataclasses.asdict(duplicate_interval(scores)),
                      "margin": dataclasses.asdict(duplicate_margin(scores))}
    return entry


def eval_label(spec: str) -> str:
    """A short name for an ``--eval-against`` agent: the spec, a checkpoint path shortened to its file
    name (``ppo:benchmarks/reference_agents/trjamann_ppo`` → ``ppo:trjamann_ppo``)."""
    kind, colon, arg = spec.strip().partition(":")
    return f"{kind}{colon}{Path(arg).name}" if "/" in arg else spec.strip()


def write_history(run_dir: Path, history: list[dict]) -> None:
    """``history.json``, replaced in one step (readers never see half a file)."""
    write_text(run_dir / "history.json", json.dumps(history, indent=1) + "\n")


def final_arena(spec: str, args: TrainArgs, run_dir: Path, progress: bool = False) -> dict[str, ArenaResult]:
    """The duplicate arena (``manni arena``) of ``spec`` against two copies of each baseline,
    ``--final-eval-deals`` deals × 6 seatings, and against two copies of ``pimc``,
    ``--final-pimc-deals`` deals, seed ``--eval-seed`` + 1; written to ``arena_final.md`` / ``.json``
    in ``run_dir``. Nothing where both are 0."""
    results = {}
    if args.final_eval_deals:
        results = against_baselines(spec, args.rules(), args.final_eval_deals, args.eval_seed + 1, args.eval_workers,
                                    progress)
    if args.final_pimc_deals:
        results["pimc"] = run_arena([spec, "pimc", "pimc"], args.rules(), args.final_pimc_deals, args.eval_seed + 1,
                                    workers=args.eval_workers, progress=progress)
    if not results:
        return {}
    write_text(run_dir / "arena_final.md", arena_tables(results))
    write_text(run_dir / "arena_final.json", json.dumps({b: r.to_dict() for b, r in results.items()}, indent=2) + "\n")
    return results


def arena_tables(results: dict[str, ArenaResult]) -> str:
    return "\n".join(f"### vs 2 × {baseline}\n\n{result.to_markdown()}" for baseline, result in results.items())


def plot_learning_curve(history: list[dict], path: Path, title: str) -> None:
    """Evaluation score (95% CI band) against learner decisions and against wall time, one line per
    baseline (and one against the fixed ``--opponents`` where the history has it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, key, label in ((axes[0], "timesteps", "learner decisions"), (axes[1], "wall_time_s", "wall time (s)")):
        xs = [h[key] for h in history]
        for key in (k for k in history[0] if k.startswith("vs_")):
            scores = [h[key] for h in history]
            line = "vs the --opponents" if key == "vs_opponents" else f"vs 2 × {key[3:]}"
            ax.plot(xs, [s["mean"] for s in scores], marker="o", label=line)
            if all(s["low"] is not None for s in scores):
                ax.fill_between(xs, [s["low"] for s in scores], [s["high"] for s in scores], alpha=0.2)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(xlabel=label)
    axes[0].set(ylabel="mean deal score (95% CI)")
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(result: TrainResult, agent_kind: str = "ppo") -> str:
    """The closing summary: time, where the agent is, the final arena tables."""
    lines = [f"Trained in {result.wall_time_s / 60:.1f} min ({result.steps:,} learner decisions); "
             f"agent: {agent_kind}:{result.agent}"]
    if result.final:
        lines += ["", arena_tables(result.final)]
    if result.history:
        lines.append(f"Learning curve: {result.run_dir / 'learning_curve.png'}")
    if (result.run_dir / "tb").is_dir():
        lines.append(f"TensorBoard: tensorboard --logdir {result.run_dir / 'tb'}")
    return "\n".join(lines)
