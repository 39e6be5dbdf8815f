"""Self-play MaskablePPO for Manni (sb3-contrib), in one readable file.

    manni train --trainer sb3 --total-steps 300000 --seed 1      # or: python -m manni_train.ppo_sb3 ...

The options every trainer shares come from :class:`manni_train.args.TrainArgs` (the PPO options under
CleanRL's names, translated for MaskablePPO by :func:`sb3_options`); this trainer's own are the
fields of :class:`Args`.

1. Warm start (``--bc-samples``): the policy imitates ``--bc-teacher`` (``rule_based``) playing
   every seat (cross-entropy under the legal mask; the data come from the vector env,
   :mod:`manni_train.demonstrations`) and the critic fits its returns, so PPO starts near the
   baseline's level.
2. PPO: the learner plays in :class:`manni_env.single_agent.SingleAgentManniEnv` (one deal per
   episode, shaped ``trick`` reward) against two opponents drawn per episode and per seat from
   ``--opponent-mix`` (:class:`OpponentPool`: frozen snapshots of itself, the first one taken when
   PPO starts, ``rule_based``, ``random``; the learner has one seat, so the shares must sum to 1).
3. Every ``--eval-every`` steps and at the end, the greedy policy plays the duplicate deals every
   trainer evaluates on (:func:`manni_train.reporting.evaluate`: ``--eval-deals``, ``--eval-seed``).

The reported wall time (``history`` and the agent's metadata) counts the warm start and learning,
not the periodic evaluations.

Everything goes to ``runs/<run_name>/``:

- ``args.json``; ``history.json`` (the evaluations); ``tb/`` (TensorBoard and ``progress.csv``: SB3's
  losses and ``time/fps``, ``losses/approx_kl``, ``losses/clipfrac`` and ``losses/explained_variance``
  under the fast trainer's names, :data:`LOG_NAMES`; ``bc/*`` of the warm start, ``arena/*`` scores);
- ``pool/`` (snapshots, in the safe ``ppo`` checkpoint format of :mod:`manni_agents.ppo_agent`);
- ``checkpoints/latest.pt`` (resumable with ``--resume``; plain tensors and JSON-like values, read
  back with ``torch.load(weights_only=True)``);
- ``agent.safetensors`` + ``agent.json`` (the playable agent: ``manni arena ppo:runs/<run>/agent ...``);
- ``learning_curve.png`` and ``arena_final.md`` / ``.json`` (duplicate arena vs the baselines;
  :mod:`manni_train.reporting`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger, make_output_format
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from manni_agents.evaluation.arena import BASELINES
from manni_agents.evaluation.vector_arena import checkpoint_policy
from manni_agents.ppo_agent import PPOAgent, policy_metadata, save_checkpoint
from manni_agents.registry import make_agent
from manni_env.files import replace_atomically
from manni_env.single_agent import SingleAgentManniEnv
from manni_train.args import SelfPlayArgs, parse_args
from manni_train.demonstrations import Demonstrations, collect_demonstrations, imitate
from manni_train.networks import ACTIVATIONS
from manni_train.reporting import (TrainResult, evaluate, final_arena, plot_learning_curve, report,
                                   training_metadata, write_history)

TRAIN_FORMAT = "manni-ppo-train/1"
#: SB3's names of the diagnostics every trainer logs → the names the fast trainer (and CleanRL) uses
LOG_NAMES = {"train/approx_kl": "losses/approx_kl", "train/clip_fraction": "losses/clipfrac",
             "train/explained_variance": "losses/explained_variance", "train/learning_rate": "charts/learning_rate"}


@dataclass
class Args(SelfPlayArgs):
    """Self-play MaskablePPO (sb3-contrib) on the single-agent env against an opponent pool."""

    TRAINER = "sb3"

    total_steps: int = 300_000
    final_eval_deals: int = 150
    num_envs: int = 8
    num_steps: int = 256
    subproc: bool = False
    """run the environments in subprocesses (SubprocVecEnv) instead of in this process"""
    torch_threads: int = 1
    """torch CPU threads"""
    checkpoint_every: int = 100_000
    """steps between resumable checkpoints"""
    resume: str | None = None
    """continue the run saved in this checkpoint (.pt) with its saved arguments; only
    --total-steps, --resume and the final evaluation's options come from this command line"""
    export: str | None = None
    """also write the final agent to this path (NAME → NAME.safetensors + NAME.json)"""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        super().check()
        self.check_at_least(1, "torch_threads")
        if abs(sum(self.mix().values()) - 1.0) > 1e-9:
            raise ValueError(f"--opponent-mix {self.opponent_mix}: the sb3 trainer's learner plays one seat of the "
                             "single-agent env, so the shares must fill the other two (sum to 1)")


def sb3_options(args: Args) -> dict:
    """The PPO options (CleanRL's names, :class:`~manni_train.args.TrainArgs`) as MaskablePPO's keywords."""
    rate = args.learning_rate
    return {"learning_rate": (lambda remaining: rate * remaining) if args.anneal_lr else rate,
            "n_steps": args.num_steps, "batch_size": args.minibatch_size, "n_epochs": args.update_epochs,
            "gamma": args.gamma, "gae_lambda": args.gae_lambda, "clip_range": args.clip_coef,
            "clip_range_vf": args.clip_coef if args.clip_vloss else None, "ent_coef": args.ent_coef,
            "vf_coef": args.vf_coef, "max_grad_norm": args.max_grad_norm}


class OpponentPool:
    """``pool(rng) -> (Policy, Policy)`` for the env: each opponent seat independently drawn from
    ``mix`` (:meth:`~manni_train.args.TrainArgs.mix`, shares summing to 1): a frozen snapshot from
    ``pool_dir`` (newest ``pool_size``), ``rule_based`` or ``random``; until the pool has a snapshot
    the snapshot share goes to the others in proportion. Snapshots are files, so envs in
    subprocesses see new ones without any messaging."""

    def __init__(self, pool_dir: Path, mix: dict[str, float], pool_size: int):
        self.pool_dir, self.mix, self.pool_size = Path(pool_dir), mix, pool_size
        self._loaded: dict[str, object] = {}  # snapshot path or baseline name -> policy

    def snapshots(self) -> list[Path]:
        """The newest ``pool_size`` snapshot files, oldest first."""
        return sorted(self.pool_dir.glob("snapshot_*.safetensors"))[-self.pool_size :]

    def __call__(self, rng: np.random.Generator) -> tuple:
        snapshots = self.snapshots()
        kinds = [(k, p) for k, p in self.mix.items() if p > 0 and (snapshots or k != "snapshot")]
        total = sum(p for _, p in kinds)
        pair = []
        for _ in range(2):
            u = rng.random() * total
            for kind, share in kinds:
                if u < share:
                    break
                u -= share
            if kind == "snapshot":
                pair.append(self._policy(str(snapshots[int(rng.integers(len(snapshots)))])))
            else:
                pair.append(self._policy(kind))
        return tuple(pair)

    def _policy(self, key: str):
        if key not in self._loaded:
            self._loaded[key] = make_agent(key) if key in BASELINES else PPOAgent(key)
        return self._loaded[key]


class RenamingLogger(Logger):
    """SB3's logger (TensorBoard and ``progress.csv`` in ``folder``), writing the diagnostics of
    :data:`LOG_NAMES` under the names the other trainers use."""

    def __init__(self, folder: str):
        super().__init__(folder, [make_output_format(kind, folder) for kind in ("tensorboard", "csv")])

    def record(self, key: str, value, exclude=None) -> None:
        super().record(LOG_NAMES.get(key, key), value, exclude)


def make_env(args: Args, rank: int, seed: int, pool: OpponentPool):
    """A thunk building env ``rank`` (for DummyVecEnv / SubprocVecEnv)."""

    def thunk():
        env = SingleAgentManniEnv(
            args.variant, opponents=pool, history=args.history, episode=args.episode, seed=seed + rank,
            reward=args.reward, layout=args.observation, **args.rule_options(),
        )
        return Monitor(env)

    return thunk


def actor_layers(model: MaskablePPO) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor of an SB3 MlpPolicy as (weight, bias) pairs: hidden layers, then the action head."""
    linears = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    linears.append(model.policy.action_net)
    return [(m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()) for m in linears]


def export_agent(model: MaskablePPO, path: Path, args: Args, timesteps: int, wall_time: float) -> Path:
    """Write the playable agent (safetensors + JSON metadata with the training provenance)."""
    metadata = {
        **policy_metadata(args.rules(), args.history, args.activation, args.observation),
        **training_metadata(args, "sb3-contrib MaskablePPO, self-play opponent pool", timesteps, wall_time,
                            stable_baselines3=stable_baselines3.__version__, sb3_contrib=sb3_contrib.__version__),
    }
    return save_checkpoint(path, actor_layers(model), metadata)


def warm_start(model: MaskablePPO, data: Demonstrations, args: Args) -> dict:
    """Behaviour cloning of the teacher (:func:`~manni_train.demonstrations.imitate`) into the
    MaskablePPO policy's actor and critic, so PPO starts from a sensible policy and critic."""
    policy = model.policy

    def evaluate(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        values, log_prob, _ = policy.evaluate_actions(batch["obs"], batch["actions"], batch["masks"])
        return log_prob, values.flatten()

    def greedy(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        dist = policy.get_distribution(batch["obs"], action_masks=batch["masks"].numpy())
        return dist.distribution.probs.argmax(-1)

    return imitate(evaluate, greedy, list(policy.parameters()), data, epochs=args.bc_epochs, lr=args.bc_lr,
                   batch_size=args.minibatch_size, generator=torch.Generator().manual_seed(args.seed))


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
        """The shared periodic evaluation (:func:`manni_train.reporting.evaluate`) of the exported greedy
        policy, into the history, ``history.json`` and the logs."""
        eval_start = time.time()
        path = export_agent(self.model, self.run_dir / "eval" / "current", self.args, self.num_timesteps, self.wall_time())
        entry = evaluate(checkpoint_policy(path, self.args.rules(), self.args.observation), self.args,
                         self.num_timesteps, self.wall_time())
        for baseline in BASELINES:
            self.logger.record(f"arena/vs_{baseline}", entry[f"vs_{baseline}"]["mean"])
        self.history.append(entry)
        write_history(self.run_dir, self.history)
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
    replace_atomically((path, lambda p: torch.save(data, p)))  # never leave a half-written latest.pt
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


def train(args: Args) -> TrainResult:
    """Train, export, evaluate and plot; see the module docstring."""
    args.check()
    # 1. resume: the saved arguments win, except the run length and the final evaluation
    checkpoint = None
    if args.resume:
        checkpoint = load_training_checkpoint(args.resume)
        keep = {k: getattr(args, k) for k in ("total_steps", "resume", "final_eval_deals", "eval_workers", "export",
                                              "progress_bar")}
        args = dataclasses.replace(Args.from_dict(json.loads(checkpoint["args"])), **keep)
    run_dir = args.run_dir()

    # 2. seeding: torch and SB3 from args.seed; each env owns a generator seeded from it
    torch.set_num_threads(args.torch_threads)
    done = checkpoint["num_timesteps"] if checkpoint else 0
    env_seed = args.seed * 100_003 + done  # a resumed run continues on fresh deals
    pool = OpponentPool(run_dir / "pool", args.mix(), args.pool_size)
    thunks = [make_env(args, i, env_seed, pool) for i in range(args.num_envs)]
    envs = SubprocVecEnv(thunks) if args.subproc else DummyVecEnv(thunks)

    # 3. the model (fresh or from the checkpoint's tensors)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        **sb3_options(args),
        policy_kwargs={"net_arch": list(args.hidden), "activation_fn": ACTIVATIONS[args.activation]},
        seed=args.seed + done,
        device="cpu",
        verbose=0,
    )
    model.set_logger(RenamingLogger(str(run_dir / "tb")))
    history: list[dict] = []
    wall_before = 0.0
    if checkpoint is None and args.warm_start_samples() > 0:
        bc_start = time.time()
        data = collect_demonstrations(args.rules(), args.warm_start_samples(), args.seed, args.history, args.reward,
                                      args.bc_teacher, layout=args.observation)
        for key, value in warm_start(model, data, args).items():
            model.logger.record(key, value)
        model.logger.dump(0)
        wall_before = time.time() - bc_start  # the warm start counts in the training wall time
    if checkpoint:
        model.policy.load_state_dict(checkpoint["policy"])
        model.policy.optimizer.load_state_dict(checkpoint["optimizer"])
        model.num_timesteps = done
        history = json.loads(checkpoint["history"])
        wall_before = checkpoint["wall_time_s"]

    # 4. learn (from the first episode on, the snapshot seats have a snapshot to play)
    if args.mix().get("snapshot") and not pool.snapshots():
        export_agent(model, run_dir / "pool" / f"snapshot_{done:010d}", args, done, wall_before)
    callback = SelfPlayCallback(args, run_dir, history, wall_before)
    remaining = max(0, args.total_steps - done)
    if remaining:
        model.learn(remaining, callback=callback, progress_bar=args.progress_bar, reset_num_timesteps=False)
    envs.close()
    if history and history[-1]["timesteps"] == model.num_timesteps:
        history.pop()  # taken during the last rollout, before the last update
    callback.evaluate()  # the curve ends at the final model
    save_training_checkpoint(model, run_dir, args, history, callback.wall_time())

    # 5. export the playable agent, evaluate it, plot the curve
    wall_time = callback.wall_time()
    agent_path = export_agent(model, run_dir / "agent", args, model.num_timesteps, wall_time)
    if args.export:
        export_agent(model, Path(args.export), args, model.num_timesteps, wall_time)
    agent = agent_path.with_suffix("")
    plot_learning_curve(history, run_dir / "learning_curve.png", f"{args.run_name}: arena score while training")
    final = final_arena(f"ppo:{agent}", args, run_dir, args.progress_bar)
    return TrainResult(run_dir, agent, final, history, wall_time, model.num_timesteps)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    print(report(train(parse_args(Args, argv, prog))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
