"""Self-play MaskablePPO for Manni (sb3-contrib), in one readable file.

    python -m train.ppo_sb3 --total-timesteps 300000 --seed 1      # or: manni train ...

1. Warm start (``--bc-samples``): the policy imitates ``rule_based`` self-play (cross-entropy under
   the legal mask) and the critic fits its returns, so PPO starts near the baseline's level.
2. PPO: the learner plays in :class:`manni_env.single_agent.SingleAgentManniEnv` (one deal per
   episode, shaped ``trick`` reward) against two opponents drawn per episode and per seat from a
   pool: frozen snapshots of itself (``--p-snapshot``, once one exists), ``random``
   (``--p-random``) and otherwise ``rule_based``.

The reported wall time (``history`` and the agent's metadata) counts the warm start and learning,
not the periodic arena evaluations.

Everything goes to ``runs/<run_name>/``:

- ``args.json``; ``tb/`` (TensorBoard and ``progress.csv``: SB3's losses and ``time/fps``, ``bc/*`` of the
  warm start, ``arena/*`` scores);
- ``pool/`` (snapshots, in the safe ``ppo`` checkpoint format of :mod:`agents.ppo_agent`);
- ``checkpoints/latest.pt`` (resumable with ``--resume``; plain tensors and JSON-like values, read
  back with ``torch.load(weights_only=True)``);
- ``agent.safetensors`` + ``agent.json`` (the playable agent: ``manni arena ppo:runs/<run>/agent ...``);
- ``learning_curve.png`` and ``arena_final.md`` / ``.json`` (duplicate arena vs the baselines).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from agents.arena import BASELINES, ArenaResult, against_baselines
from agents.ppo_agent import PPOAgent, policy_metadata, save_checkpoint
from agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.observation import ObservationEncoder
from manni_env.rules import make_rules
from manni_env.single_agent import SingleAgentManniEnv
from train.args import Args, check_args, parse_args

TRAIN_FORMAT = "manni-ppo-train/1"
ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


class OpponentPool:
    """``pool(rng) -> (Policy, Policy)`` for the env: each seat independently a frozen snapshot
    from ``pool_dir`` (newest ``pool_size``), ``random`` or ``rule_based``. Snapshots are files,
    so envs in subprocesses see new ones without any messaging."""

    def __init__(self, pool_dir: Path, p_snapshot: float, p_random: float, pool_size: int):
        self.pool_dir, self.p_snapshot, self.p_random, self.pool_size = Path(pool_dir), p_snapshot, p_random, pool_size
        self._loaded: dict[str, object] = {}  # snapshot path or baseline name -> policy

    def snapshots(self) -> list[Path]:
        """The newest ``pool_size`` snapshot files, oldest first."""
        return sorted(self.pool_dir.glob("snapshot_*.safetensors"))[-self.pool_size :]

    def __call__(self, rng: np.random.Generator) -> tuple:
        snapshots = self.snapshots()
        pair = []
        for _ in range(2):
            u = rng.random()
            if snapshots and u < self.p_snapshot:
                pair.append(self._policy(str(snapshots[int(rng.integers(len(snapshots)))])))
            elif u < self.p_snapshot + self.p_random:
                pair.append(self._policy("random"))
            else:
                pair.append(self._policy("rule_based"))
        return tuple(pair)

    def _policy(self, key: str):
        if key not in self._loaded:
            self._loaded[key] = make_agent(key) if key in BASELINES else PPOAgent(key)
        return self._loaded[key]


def make_env(args: Args, rank: int, seed: int, pool: OpponentPool):
    """A thunk building env ``rank`` (for DummyVecEnv / SubprocVecEnv)."""

    def thunk():
        env = SingleAgentManniEnv(
            args.variant, opponents=pool, history=args.history, episode=args.episode, seed=seed + rank, reward=args.reward
        )
        return Monitor(env)

    return thunk


def actor_layers(model: MaskablePPO) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor of an SB3 MlpPolicy as (weight, bias) pairs: hidden layers, then the action head."""
    linears = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    linears.append(model.policy.action_net)
    return [(m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()) for m in linears]


def command_line() -> str:
    """How this process was started, without the interpreter's or the script's location."""
    program = {"manni": "manni", "ppo_sb3.py": "python -m train.ppo_sb3"}.get(Path(sys.argv[0]).name, Path(sys.argv[0]).name)
    return " ".join([program, *sys.argv[1:]])


def export_agent(model: MaskablePPO, path: Path, args: Args, timesteps: int, wall_time: float) -> Path:
    """Write the playable agent (safetensors + JSON metadata with the training provenance)."""
    import sb3_contrib
    import stable_baselines3

    metadata = {
        **policy_metadata(make_rules(args.variant), args.history, args.activation),
        "training": {
            "algorithm": "sb3-contrib MaskablePPO, self-play opponent pool",
            "command": command_line(),
            "args": dataclasses.asdict(args),
            "timesteps": int(timesteps),
            "wall_time_s": round(wall_time, 1),
            "hardware": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip(),
            "torch_threads": torch.get_num_threads(),
        },
        "provenance": {
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__,
        },
    }
    return save_checkpoint(path, actor_layers(model), metadata)


def evaluate(agent: str, variant: str, deals: int, seed: int, workers: int = 1, progress: bool = False) -> dict[str, ArenaResult]:
    """Duplicate arena of ``agent`` against two copies of each baseline."""
    return against_baselines(agent, make_rules(variant), deals, seed, workers, progress)


def score_of(result: ArenaResult, spec: str) -> dict:
    """Mean deal score and 95% CI of ``spec`` in an arena result."""
    stats = next(a for a in result.agents if a.spec == spec)
    return dataclasses.asdict(stats.deal_score)


def collect_demonstrations(args: Args, samples: int, seed: int) -> dict[str, np.ndarray]:
    """``samples`` decisions of three ``--bc-teacher`` players in whole games: observation, legal
    mask, action, and the return to go under the training reward (the rest of the deal score)."""
    rules = make_rules(args.variant)
    encoder = ObservationEncoder(rules, history=args.history)
    teacher = make_agent(args.bc_teacher)
    rng = np.random.default_rng(seed)
    obs, masks, actions, returns = [], [], [], []
    while len(actions) < samples:
        state = GameState(rules, seed=int(rng.integers(2**63)))
        teacher.reset()
        pending: list[tuple[int, int, float]] = []  # (sample index, seat, reward already paid this deal)
        while not state.finished:
            seat = state.to_move
            view = state.view(seat)
            paid = 0.0
            if args.reward == "trick" and state.contract is not None:
                paid = state.tricks_won[seat] * (-1.0 if state.contract.nullo else 1.0)
            pending.append((len(actions), seat, paid))
            obs.append(encoder.encode(view))
            masks.append(encoder.action_mask(view).astype(bool))
            actions.append(teacher.act(view, rng))
            returns.append(0.0)
            deals = len(state.rounds)
            state.apply(actions[-1])
            if len(state.rounds) > deals:  # a deal ended: fill in its returns to go
                points = state.rounds[-1].points
                for i, s, already in pending:
                    returns[i] = points[s] - already
                pending = []
                if len(actions) >= samples:  # stop only between deals
                    break
    return {"obs": np.stack(obs), "masks": np.stack(masks), "actions": np.array(actions), "returns": np.array(returns, np.float32)}


def imitate(model: MaskablePPO, data: dict[str, np.ndarray], epochs: int, learning_rate: float, batch_size: int, seed: int) -> dict:
    """Behaviour cloning warm start: the actor learns the teacher's moves (cross-entropy under the
    legal mask), the critic its returns (MSE), so PPO starts from a sensible policy and critic."""
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    n = len(data["actions"])
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(tensors["obs"][idx], tensors["actions"][idx], tensors["masks"][idx])
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(values.flatten(), tensors["returns"][idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
    with torch.no_grad():
        dist = policy.get_distribution(tensors["obs"], action_masks=tensors["masks"].numpy())
        accuracy = (dist.distribution.probs.argmax(-1) == tensors["actions"]).float().mean().item()
        values = policy.predict_values(tensors["obs"]).flatten()
        value_mse = torch.nn.functional.mse_loss(values, tensors["returns"]).item()
    return {"bc/accuracy": accuracy, "bc/value_mse": value_mse, "bc/samples": n}


class SelfPlayCallback(BaseCallback):
    """Adds snapshots to the pool, evaluates in the arena, and saves resumable checkpoints."""

    def __init__(self, args: Args, run_dir: Path, history: list[dict], wall_time: float):
        super().__init__()
        self.args, self.run_dir, self.history = args, run_dir, history
        self.wall_before = wall_time  # the warm start, or the earlier sessions of a resumed run
        self.started = time.time()
        self.eval_seconds = 0.0
        self.last = {"snapshot": 0, "eval": 0, "checkpoint": 0}

    def wall_time(self) -> float:
        """Training wall time: the warm start and learning, not the periodic evaluations."""
        return self.wall_before + time.time() - self.started - self.eval_seconds

    def _due(self, what: str, every: int) -> bool:
        if every <= 0 or self.num_timesteps - self.last[what] < every:
            return False
        self.last[what] = self.num_timesteps
        return True

    def _on_training_start(self) -> None:
        self.last = dict.fromkeys(self.last, self.num_timesteps)

    def _on_step(self) -> bool:
        a = self.args
        if self._due("snapshot", a.snapshot_every):
            export_agent(self.model, self.run_dir / "pool" / f"snapshot_{self.num_timesteps:010d}", a, self.num_timesteps, self.wall_time())
        if self._due("eval", a.eval_every):
            self.evaluate()
        if self._due("checkpoint", a.checkpoint_every):
            save_training_checkpoint(self.model, self.run_dir, a, self.history, self.wall_time())
        return True

    def evaluate(self) -> None:
        eval_start = time.time()
        path = export_agent(self.model, self.run_dir / "eval" / "current", self.args, self.num_timesteps, self.wall_time())
        spec = f"ppo:{path.with_suffix('')}"
        results = evaluate(spec, self.args.variant, self.args.eval_deals, self.args.eval_seed)
        entry = {"timesteps": self.num_timesteps, "wall_time_s": round(self.wall_time(), 1)}
        for baseline, result in results.items():
            entry[f"vs_{baseline}"] = score_of(result, spec)
            self.logger.record(f"arena/vs_{baseline}", entry[f"vs_{baseline}"]["mean"])
        self.history.append(entry)
        self.logger.dump(self.num_timesteps)
        self.eval_seconds += time.time() - eval_start


def save_training_checkpoint(model: MaskablePPO, run_dir: Path, args: Args, history: list[dict], wall_time: float) -> Path:
    """``checkpoints/latest.pt``: policy + optimizer tensors and plain values only (weights_only-safe)."""
    path = run_dir / "checkpoints" / "latest.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": TRAIN_FORMAT,
        "args": json.dumps(dataclasses.asdict(args)),
        "history": json.dumps(history),
        "num_timesteps": int(model.num_timesteps),
        "wall_time_s": float(wall_time),
        "policy": model.policy.state_dict(),
        "optimizer": model.policy.optimizer.state_dict(),
    }
    torch.save(data, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)  # never leave a half-written latest.pt
    return path


def load_training_checkpoint(path: str | Path) -> dict:
    """Read a checkpoint written by :func:`save_training_checkpoint` (no code execution)."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, pickle opcodes outside the allowed set, ...
        raise ValueError(f"{path}: not a readable training checkpoint ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != TRAIN_FORMAT:
        raise ValueError(f"{path}: not a {TRAIN_FORMAT} training checkpoint")
    return data


def plot_learning_curve(history: list[dict], path: Path, title: str) -> None:
    """Arena deal score (95% CI band) against training steps, one line per baseline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [h["timesteps"] for h in history]
    for baseline in BASELINES:
        scores = [h[f"vs_{baseline}"] for h in history]
        mean = [s["mean"] for s in scores]
        ax.plot(steps, mean, marker="o", label=f"vs 2 × {baseline}")
        if all(s["low"] is not None for s in scores):
            ax.fill_between(steps, [s["low"] for s in scores], [s["high"] for s in scores], alpha=0.2)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set(xlabel="training steps (learner decisions)", ylabel="mean deal score (95% CI)", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


@dataclasses.dataclass
class TrainResult:
    """Where a finished run put its agent and how it scored."""

    run_dir: Path
    agent_path: Path
    final: dict[str, ArenaResult]
    history: list[dict]
    wall_time_s: float


def train(args: Args) -> TrainResult:
    """Train, export, evaluate and plot; see the module docstring."""
    check_args(args)
    # 1. resume: the saved arguments win, except the run length and the evaluation sizes
    checkpoint = None
    if args.resume:
        checkpoint = load_training_checkpoint(args.resume)
        keep = {k: getattr(args, k) for k in ("total_timesteps", "resume", "final_eval_deals", "eval_workers", "export", "progress_bar")}
        args = dataclasses.replace(Args(**json.loads(checkpoint["args"])), **keep)
    if args.run_name is None:
        args.run_name = f"{args.variant}_ppo_s{args.seed}_{datetime.now(timezone.utc):%Y%m%d_%H%M%S}"
    run_dir = Path(args.runs_dir) / args.run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2) + "\n")

    # 2. seeding: torch and SB3 from args.seed; each env owns a generator seeded from it
    torch.set_num_threads(args.torch_threads)
    done = checkpoint["num_timesteps"] if checkpoint else 0
    env_seed = args.seed * 100_003 + done  # a resumed run continues on fresh deals
    pool = OpponentPool(run_dir / "pool", args.p_snapshot, args.p_random, args.pool_size)
    thunks = [make_env(args, i, env_seed, pool) for i in range(args.num_envs)]
    envs = SubprocVecEnv(thunks) if args.subproc else DummyVecEnv(thunks)

    # 3. the model (fresh or from the checkpoint's tensors)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        policy_kwargs={"net_arch": list(args.net_arch), "activation_fn": ACTIVATIONS[args.activation]},
        seed=args.seed + done,
        device="cpu",
        verbose=0,
    )
    model.set_logger(configure(str(run_dir / "tb"), ["tensorboard", "csv"]))
    history: list[dict] = []
    wall_before = 0.0
    if checkpoint is None and args.bc_samples > 0:
        bc_start = time.time()
        data = collect_demonstrations(args, args.bc_samples, seed=args.seed)
        for key, value in imitate(model, data, args.bc_epochs, args.bc_learning_rate, args.batch_size, args.seed).items():
            model.logger.record(key, value)
        model.logger.dump(0)
        wall_before = time.time() - bc_start  # the warm start counts in the training wall time
    if checkpoint:
        model.policy.load_state_dict(checkpoint["policy"])
        model.policy.optimizer.load_state_dict(checkpoint["optimizer"])
        model.num_timesteps = done
        history = json.loads(checkpoint["history"])
        wall_before = checkpoint["wall_time_s"]

    # 4. learn
    callback = SelfPlayCallback(args, run_dir, history, wall_before)
    remaining = max(0, args.total_timesteps - done)
    if remaining:
        model.learn(remaining, callback=callback, progress_bar=args.progress_bar, reset_num_timesteps=False)
    envs.close()
    if not history or history[-1]["timesteps"] != model.num_timesteps:
        callback.evaluate()  # the curve ends at the final model
    save_training_checkpoint(model, run_dir, args, history, callback.wall_time())

    # 5. export the playable agent, evaluate it, plot the curve
    wall_time = callback.wall_time()
    agent_path = export_agent(model, run_dir / "agent", args, model.num_timesteps, wall_time)
    if args.export:
        export_agent(model, Path(args.export), args, model.num_timesteps, wall_time)
    spec = f"ppo:{agent_path.with_suffix('')}"
    final = evaluate(spec, args.variant, args.final_eval_deals, args.eval_seed + 1, args.eval_workers, args.progress_bar)
    (run_dir / "arena_final.md").write_text("\n".join(r.to_markdown() for r in final.values()))
    (run_dir / "arena_final.json").write_text(json.dumps({b: r.to_dict() for b, r in final.items()}, indent=2) + "\n")
    plot_learning_curve(history, run_dir / "learning_curve.png", f"{args.run_name}: arena score while training")
    return TrainResult(run_dir, agent_path, final, history, wall_time)


def report(result: TrainResult) -> str:
    """The final Markdown tables and where everything is."""
    lines = [f"Trained in {result.wall_time_s / 60:.1f} min; agent: {result.agent_path.with_suffix('')}", ""]
    for baseline, arena in result.final.items():
        lines += [f"### vs 2 × {baseline}", "", arena.to_markdown()]
    lines.append(f"Learning curve: {result.run_dir / 'learning_curve.png'}; TensorBoard: tensorboard --logdir {result.run_dir / 'tb'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    print(report(train(parse_args(argv))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
