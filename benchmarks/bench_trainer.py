"""Trainer benchmark: the PPO update against the CPU's matmul peak, and end-to-end learner decisions/s.

Run ``python benchmarks/bench_trainer.py`` (``--help`` for the options). It prints three tables:

1. **matmul peak**: GFLOP/s of a bare ``(B, 616) @ (616, 256)`` product in float32 and bfloat16
   (the first layer of the actor and the critic), at ``--threads`` torch threads: the ceiling the
   update can reach.
2. **update**: one PPO update (:class:`manni_train.learner.PPOLearner`, actor + critic
   616→256→256, ``--update-epochs`` epochs) on a synthetic batch of ``--batch`` learner
   decisions (about one default rollout), for each precision and minibatch size: seconds, and the
   achieved GFLOP/s (forward + backward, 3 × the forward's multiply-adds × 2) as a share of the
   bf16 matmul peak measured between the update's timings (best of ``--repeats`` each). With
   ``--device cuda`` both tables run on the GPU (the Ray trainer's GPU learner: the batch is moved
   to the GPU inside each timed update, as there).
3. **end to end** (``--e2e-steps`` > 0): ``manni train`` on its defaults but without the warm start
   and the evaluations (``--bc-samples 0 --eval-every 0 --final-eval-deals 0``), for each
   ``--precisions`` and, with ``--baseline-src DIR`` (a checkout of another commit), that code too;
   learner decisions per second of training wall time from the exported agent's metadata. After
   one short warm-up run of each (numba's compile cache), the runs take turns (``--repeats``
   rounds), so a shared machine's load falls on all alike; the table gives the median and the range,
   and the learner decisions per CPU-second (the run's CPU time beyond its warm-up run's, so that
   start-up cancels; with one thread this moves less with the machine's load than wall time), and
   where the training time went (rollouts, updates, the rest; from each run's TensorBoard scalars),
   and the share of the compute limit each reaches: a learner decision's FLOP (its rollout forward
   passes and ``update_epochs`` × forward + backward, actor and critic, from the run's
   ``args.json``) × decisions/s ÷ the bf16 matmul peak measured before each round.
   ``--baseline-src`` runs with that checkout's own ``.venv`` where it has one. The runs take
   ``--e2e-threads`` torch threads (default ``--threads``; 0 leaves the trainer's default, threads
   fitted to the free cores: the way to compare ``--overlap``, whose rollout process takes a core of
   its own); with ``--overlap`` the rollout column is the time the trainer waited for its rollouts.

Numbers and how they were measured: ``docs/training.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from manni_train.cpu import describe  # noqa: E402
from manni_train.critic_view import unseen_size  # noqa: E402
from manni_train.learner import PPOLearner  # noqa: E402
from manni_train.networks import TORSOS, make_networks  # noqa: E402
from manni_train.ppo_vector import Args  # noqa: E402
from manni_train.vector_rollout import RolloutBatch  # noqa: E402

OBS, HIDDEN, ACTIONS = 616, [256, 256], 63


def gflops_of(seconds: float, flop: float) -> float:
    return flop / seconds / 1e9


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]  # --clock
device = torch.device("cpu")  # --device


def synchronize() -> None:
    """Wait for the work queued on ``--device`` (a GPU runs it asynchronously)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, repeats: int) -> float:
    """Best of ``repeats`` timings of ``fn()`` (after one warm-up call), in seconds of ``--clock``."""
    fn()
    synchronize()
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        fn()
        synchronize()
        best = min(best, clock() - start)
    return best


def matmul_peak(rows: int, dtype: torch.dtype, repeats: int = 5) -> float:
    """GFLOP/s of ``(rows, 616) @ (616, 256)`` in ``dtype`` (20 products a call, best of ``repeats``)."""
    a, b = torch.rand(rows, OBS, device=device).to(dtype), torch.rand(OBS, HIDDEN[0], device=device).to(dtype)

    def run() -> None:
        for _ in range(20):
            torch.mm(a, b)

    return gflops_of(timed(run, repeats), 20 * 2 * rows * OBS * HIDDEN[0])


def synthetic_batch(size: int, gen: torch.Generator) -> RolloutBatch:
    """``size`` decisions with 0/1 observations, legal masks and plausible advantages."""
    obs = (torch.rand(size, OBS, generator=gen) < 0.1).float()
    mask = torch.rand(size, ACTIONS, generator=gen) < 0.3
    mask[:, 0] = True
    actions = torch.zeros(size, dtype=torch.long)
    values, advantages = torch.randn(size, generator=gen), torch.randn(size, generator=gen)
    return RolloutBatch(obs=obs, mask=mask, actions=actions, logp=torch.full((size,), -1.0), values=values,
                        advantages=advantages, returns=values + advantages)


def update_row(precision: str, minibatch: int, batch: RolloutBatch, epochs: int, repeats: int,
               torso: str = "separate") -> tuple[float, float, float]:
    """(seconds, GFLOP/s) of one PPO update, and the bf16 matmul peak measured between its timings
    (best of ``repeats`` each, taking turns, so that both see the same load)."""
    args = Args(precision=precision, minibatch_size=minibatch, update_epochs=epochs, hidden=HIDDEN, torso=torso)
    gen = torch.Generator().manual_seed(0)
    actor, critic = make_networks(OBS, HIDDEN, "relu", torso=torso)
    learner = PPOLearner(actor.to(device), critic.to(device), args, gen, str(device))
    seconds, peak = float("inf"), 0.0
    for _ in range(repeats):
        peak = max(peak, matmul_peak(2048, torch.bfloat16, 1))
        seconds = min(seconds, timed(lambda: learner.update(batch, 1e-4), 1))
    forward = batch.steps * forward_flop(HIDDEN, 0, torso)
    return seconds, gflops_of(seconds, 3 * forward * epochs), peak


def forward_flop(hidden: list[int], extra: int, torso: str, critic_hidden: list[int] | None = None) -> float:
    """FLOP of the actor's and the critic's forward pass on one observation (multiply-adds × 2; the
    critic's ``extra`` inputs under ``--critic deal`` and its own ``critic_hidden`` layers, default
    ``hidden``; one pass through a shared torso)."""

    def macs(inputs: int, sizes: list[int]) -> int:
        sizes = [inputs, *sizes]
        return sum(a * b for a, b in zip(sizes, sizes[1:]))

    if torso == "shared":
        return 2 * (macs(OBS, hidden) + hidden[-1] * (ACTIONS + 1))
    critic = critic_hidden or hidden
    return 2 * (macs(OBS, hidden) + hidden[-1] * ACTIONS + macs(OBS + extra, critic) + critic[-1])


def decision_flop(args: dict) -> float:
    """FLOP of one learner decision under a run's ``args.json``: the actor's and the critic's forward
    pass in the rollout, and forward + backward (3 × the forward) in each of ``update_epochs`` epochs
    (multiply-adds × 2; the critic's extra inputs under ``--critic deal`` and its ``--critic-hidden``
    counted, a shared torso once; a run saved before there were options for it counts their defaults)."""
    forward = forward_flop(args.get("hidden", HIDDEN), unseen_size(args.get("critic", "seat")),
                           args.get("torso", "separate"), args.get("critic_hidden"))
    return forward * (1 + 3 * args.get("update_epochs", 4))


def trainer_command(src: Path) -> list[str]:
    """How to start the fast trainer of the checkout ``src``: its own ``.venv``'s Python where it has
    one (else this one), and the module under the import name that checkout uses (``manni_train``,
    or ``train`` before the package was renamed)."""
    python = src / ".venv" / "bin" / "python"
    renamed = "manni_train" in (src / "pyproject.toml").read_text()
    return [str(python) if python.is_file() else sys.executable, "-m",
            "manni_train.ppo_vector" if renamed else "train.ppo_vector"]


def time_split(tb_dir: Path) -> dict[str, float]:
    """Seconds of a run spent in rollouts and in updates (summed from its TensorBoard scalars; the
    update's process valuing the rollouts, where a run logs it, counts as update)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]

    def total(name: str) -> float:
        tag = f"charts/{name}_seconds"
        return sum(e.value for e in events.Scalars(tag)) if tag in tags else 0.0

    # the trainer's wait for its rollouts where it logs it (with --overlap a rollout runs during an update)
    return {"rollout": total("rollout_wait" if "charts/rollout_wait_seconds" in tags else "rollout"),
            "update": total("update") + total("value")}


def precisions_of(options: list[str], precisions: list[str]) -> list[str]:
    """The precisions an end-to-end row runs in: the one its own ``--precision`` names, else every one of
    ``--precisions``."""
    return [options[options.index("--precision") + 1]] if "--precision" in options[:-1] else precisions


def without_precision(options: list[str]) -> list[str]:
    """``options`` without their ``--precision X`` (the row's label and command name it once)."""
    if "--precision" not in options[:-1]:
        return options
    at = options.index("--precision")
    return options[:at] + options[at + 2:]


def e2e_run(src: Path, extra: list[str], steps: int, threads: int, workdir: Path,
            name: str) -> tuple[float, float, dict[str, float]]:
    """Learner decisions per second of training wall time of one ``manni train`` run of the code in
    ``src``, the CPU-seconds the whole process used (start-up included) and the seconds per 1,000
    learner decisions in rollouts, updates and the rest of the training loop."""
    argv = [*trainer_command(src), "--total-steps", str(steps), "--bc-samples", "0",
            "--eval-every", "0", "--final-eval-deals", "0", "--eval-deals", "10", "--no-progress-bar",
            *(["--torch-threads", str(threads)] if threads else []), "--runs-dir", str(workdir),
            "--run-name", name, *extra]
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=src, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    meta = json.loads((workdir / name / "agent.json").read_text())["training"]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    split = {**time_split(workdir / name / "tb"), "wall": meta["wall_time_s"]}
    split["rest"] = split["wall"] - split["rollout"] - split["update"]
    per_1000 = {k: 1000 * v / meta["timesteps"] for k, v in split.items()}
    return (meta["timesteps"] / meta["wall_time_s"], cpu,
            {**per_1000, "flop": decision_flop(json.loads((workdir / name / "args.json").read_text()))})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--batch", type=int, default=5500, help="learner decisions per update (default: 5500)")
    parser.add_argument("--update-epochs", type=int, default=4)
    parser.add_argument("--minibatches", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeats", type=int, default=3, help="timings per row (best kept); e2e rounds")
    parser.add_argument("--e2e-steps", type=int, default=0, help="learner decisions per end-to-end run (0: none)")
    parser.add_argument("--e2e-threads", type=int, help="torch threads of the end-to-end runs (default: --threads; "
                                                         "0: the trainer's default, fitted to the free cores)")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    parser.add_argument("--torsos", nargs="+", choices=TORSOS, default=["separate", "shared"],
                        help="the update table's networks: the critic's own hidden layers, or the actor's")
    parser.add_argument("--baseline-src", type=Path, help="a checkout of the code to compare with (end to end)")
    parser.add_argument("--train-args", nargs="+", default=[""], metavar="ARGS",
                        help="end to end: one row of this code per string of extra manni train options, e.g. "
                             "'--minibatch-size 512' (default: the defaults only)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where the matmul and update tables run (end to end runs on the CPU: cuda takes no "
                             "--e2e-steps)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="time the matmuls and updates in wall seconds (default) or in this process's CPU "
                             "seconds (with --threads 1 on a busy machine: the time it actually ran)")
    ns = parser.parse_args()
    global clock, device
    clock, device = CLOCKS[ns.clock], torch.device(ns.device)
    if device.type == "cuda" and (ns.e2e_steps or ns.clock == "cpu" or not torch.cuda.is_available()):
        parser.error("--device cuda needs a GPU torch sees, the wall clock and no --e2e-steps")
    torch.set_num_threads(ns.threads)
    results: dict = {"threads": ns.threads, "clock": ns.clock, "cpu": torch.backends.cpu.get_cpu_capability(),
                     **describe(), "torch": torch.__version__, "device": ns.device}
    print(f"CPU: {results['cpu_model']} ({results['cpu_kind']}; torch's ISA {results['cpu']}, "
          f"ONEDNN_MAX_CPU_ISA {results['onednn_max_cpu_isa']})\n")
    if device.type == "cuda":
        results["gpu"] = torch.cuda.get_device_name(device)

    peak = {name: matmul_peak(2048, dtype) for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16))}
    results["matmul_peak_gflops"] = peak
    where = f"{ns.threads} thread(s)" if device.type == "cpu" else results["gpu"]
    print(f"## matmul peak, (2048, 616) @ (616, 256), {where}\n")
    print("| dtype | GFLOP/s |\n|---|---|")
    for name, value in peak.items():
        print(f"| {name} | {value:.0f} |")

    batch = synthetic_batch(ns.batch, torch.Generator().manual_seed(1))
    print(f"\n## PPO update: {ns.batch} decisions × {ns.update_epochs} epochs, {where}\n")
    print("| torso | precision | minibatch | seconds | GFLOP/s | bf16 peak meanwhile, GFLOP/s | share of that peak |\n"
          "|---|---|---|---|---|---|---|")
    results["update"] = []
    for torso in ns.torsos:
        for minibatch in ns.minibatches:
            for precision in ns.precisions:
                seconds, achieved, row_peak = update_row(precision, minibatch, batch, ns.update_epochs, ns.repeats,
                                                         torso)
                results["update"].append({"torso": torso, "precision": precision, "minibatch": minibatch,
                                          "seconds": seconds, "gflops": achieved, "bf16_peak_gflops": row_peak,
                                          "share_of_bf16_peak": achieved / row_peak})
                print(f"| {torso} | {precision} | {minibatch} | {seconds:.3f} | {achieved:.0f} | {row_peak:.0f} "
                      f"| {achieved / row_peak:.0%} |")

    if ns.e2e_steps:
        rows = []
        for extra in ns.train_args:
            options = without_precision(extra.split())
            for p in precisions_of(extra.split(), ns.precisions):
                rows.append((" ".join([f"this code, {p}", *options]), ROOT,
                             ["--precision", p, "--final-pimc-deals", "0", *options]))
        if ns.baseline_src:
            rows.insert(0, (f"baseline {ns.baseline_src.name}", ns.baseline_src.resolve(), []))
        rates: dict[str, list[float]] = {label: [] for label, _, _ in rows}
        per_cpu: dict[str, list[float]] = {label: [] for label, _, _ in rows}
        splits: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in rows}
        warm_steps, start_cpu = 2000, {}
        e2e_threads = ns.threads if ns.e2e_threads is None else ns.e2e_threads
        with tempfile.TemporaryDirectory() as tmp:
            for i, (label, src, extra) in enumerate(rows):  # warm-up: numba's compile cache, file caches
                start_cpu[label] = e2e_run(src, extra, warm_steps, e2e_threads, Path(tmp), f"warmup_{i}")[1]
            peaks = []
            for round_ in range(ns.repeats):
                peaks.append(matmul_peak(2048, torch.bfloat16))  # the compute limit, measured between the runs
                for i, (label, src, extra) in enumerate(rows):
                    rate, cpu, split = e2e_run(src, extra, ns.e2e_steps, e2e_threads, Path(tmp), f"r{round_}_{i}")
                    rates[label].append(rate)
                    splits[label].append(split)
                    # the CPU time of the extra decisions over the warm-up run (start-up costs cancel)
                    per_cpu[label].append((ns.e2e_steps - warm_steps) / max(cpu - start_cpu[label], 1e-9))
        peak_now = statistics.median(peaks)
        results["e2e_bf16_peak_gflops"] = peaks
        results["e2e"] = rates
        results["e2e_decisions_per_cpu_second"] = per_cpu
        results["e2e_seconds_per_1000_decisions"] = splits
        threads = f"{e2e_threads} thread(s)" if e2e_threads else "torch threads fitted by the trainer"
        print(f"\n## end to end: manni train, {ns.e2e_steps} learner decisions, no warm start or evaluations, "
              f"{threads}, {ns.repeats} interleaved rounds\n")
        print(f"The compute limit: the bf16 matmul peak at {ns.threads} thread(s), measured before each round "
              f"(median {peak_now:,.0f} GFLOP/s); the share is a learner decision's FLOP (rollout forward "
              "passes, and forward + backward in each update epoch, actor and critic) × decisions/s ÷ that peak.\n")
        print("| code | decisions/s (median) | range | decisions per CPU-second (median) | MFLOP a decision "
              "| share of the compute limit |\n|---|---|---|---|---|---|")
        for label, values in rates.items():
            flop = splits[label][0]["flop"]
            share = flop * statistics.median(values) / (peak_now * 1e9)
            print(f"| {label} | {statistics.median(values):,.0f} | {min(values):,.0f}–{max(values):,.0f} "
                  f"| {statistics.median(per_cpu[label]):,.0f} | {flop / 1e6:.1f} | {share:.0%} |")
        print("\nWhere the training wall time goes: seconds per 1,000 learner decisions (median of the rounds)\n")
        print("| code | rollouts | updates | rest | total |\n|---|---|---|---|---|")
        for label, runs in splits.items():
            parts = [statistics.median(run[k] for run in runs) for k in ("rollout", "update", "rest", "wall")]
            print(f"| {label} | " + " | ".join(f"{p:.3f}" for p in parts) + " |")
    if ns.json:
        ns.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
