"""Fast self-play PPO for Manni on the vector env, in plain torch and one readable file.

    manni train --total-steps 2000000 --seed 1          # or: python -m manni_train.ppo_vector ...

CleanRL-style (``cleanrl/ppo.py``): a documented :class:`Args` dataclass (the options every trainer
shares, the PPO ones under CleanRL's names, come from :class:`manni_train.args.TrainArgs`), a linear
:func:`train`. It serves every variant
the vector env plays. Like ``train/ppo_sb3.py`` it starts with an imitation warm start
(``bc_samples`` decisions of ``bc_teacher`` playing every seat, :mod:`manni_train.demonstrations`,
cloned by the actor with cross-entropy and by the critic with the return to go; counted in the
reported wall time). ``num_envs`` games run in lockstep in :class:`manni_env.vector.VectorManni`. At the start of every game each seat is given,
independently, to a frozen snapshot of the learner (once the pool holds one), to ``rule_based`` or
``random`` with the shares of ``--opponent-mix``, or else to the learner; at least one seat stays
with the learner. Every step runs one batched forward pass per network that has a seat
on turn, and the baselines act in batches too (:class:`manni_agents.rule_based_vector.VectorRuleBased`,
compiled with numba when installed; ``random`` draws from the masks). Each (game, seat) played by
the learner is its own trajectory: with ``reward="trick"`` (the default, as in ``ppo_sb3``;
:mod:`manni_env.shaping`) each trick a seat wins pays its worth (+1, Nullo −1) to that seat's
latest decision and the deal's end pays the rest of the deal score; with ``reward="deal"`` the deal
score is paid at the end. The deal
(``episode="deal"``) or the game ends a seat's episode, and a trajectory cut by the end of a rollout
is bootstrapped with the value of that seat's current observation. Then GAE, the clipped PPO
objective with masked categorical policies (illegal logits set to -1e8), the value loss (clipped
with ``--clip-vloss``) and an entropy bonus, over ``update_epochs`` epochs of minibatches.
The rollout (games, seats, rewards, GAE) is :class:`manni_train.vector_rollout.VectorRollout`, the
update :class:`PPOLearner`; the Ray trainer (:mod:`manni_train.ray_vector`) runs the same two, its
rollouts in runner actors.

``--opponents SPEC [SPEC]`` replaces that mix with fixed agents (:mod:`manni_train.opponents`);
``--precision`` runs the networks' hidden layers in bfloat16 (:mod:`manni_train.precision`); the warm
start and the final arena scale with ``--total-steps``; Ctrl-C keeps the policy, the history and a
resume state for ``--resume RUN_DIR`` (:mod:`manni_train.resume`); ``--torch-threads 0`` fits torch's
threads to the free cores (:mod:`manni_train.threads`). See ``docs/training.md``.

The reported wall time counts everything but the periodic evaluations (warm start included).

Everything goes to ``runs/<run_name>/``: ``args.json``; ``tb/`` (TensorBoard scalars: losses,
steps/s, evaluation scores); ``history.json`` (every ``eval_every`` learner decisions, the greedy
policy's mean deal score against 2 × ``random`` and 2 × ``rule_based`` over ``eval_deals`` duplicate
deals, :func:`manni_train.reporting.evaluate` as in every trainer, with the training wall time;
with ``--opponents`` also against them, ``vs_opponents``);
``agent.safetensors`` + ``agent.json`` (the actor in the ``ppo`` agent's checkpoint format:
``manni arena ppo:runs/<run>/agent rule_based rule_based``); ``learning_curve.png``; and
``arena_final.md`` / ``.json``, the final agent's duplicate arena against both baselines (printed;
:mod:`manni_train.reporting`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from torch import nn

from manni_agents.ppo_agent import (CheckpointError, PPOAgent, ShippedPPOAgent, policy_metadata, save_checkpoint,
                                    split_options)
from manni_agents.registry import make_agent
from manni_agents.vector_policy import NetworkPolicy, VectorPolicy
from manni_env.actions import NUM_ACTIONS
from manni_env.interrupts import deferred_interrupt
from manni_env.observation import ObservationEncoder
from manni_env.rules import Rules
from manni_env.shaping import REWARD_BASES
from manni_env.vector import BACKENDS
from manni_train import resume
from manni_train.args import SelfPlayArgs, parse_args
from manni_train.demonstrations import Demonstrations, collect_demonstrations, imitate
from manni_train.precision import PRECISIONS, autocast, compute_dtype, full_precision, padded_rows
from manni_train.reporting import (TrainResult, evaluate, final_arena, plot_learning_curve, report,
                                   training_metadata, write_history)
from manni_train.threads import ThreadFitter
from manni_train.vector_rollout import RolloutBatch, VectorRollout

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


@dataclass
class Args(SelfPlayArgs):
    """Self-play PPO on the vector env (plain torch): the fast trainer, manni train's default."""

    TRAINER = "ppovec"
    FIXED_OPPONENTS = True

    total_steps: int = 3_000_000  # in less time than 2 M took before the speed-ups (docs/training.md)
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    # many games per vector step and large minibatches: the per-step and per-minibatch overheads are
    # spread over more decisions (docs/training.md, "Throughput, third round")
    num_envs: int = 1024
    num_steps: int = 32
    minibatch_size: int = 1024
    eval_every: int = 250_000
    final_eval_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based, seed
    --eval-seed + 1 (default: --total-steps / 4,000 between 100 and 500, so a short run has a short
    arena; 0: none)"""
    bc_samples: int | None = None
    """imitation warm start: decisions of --bc-teacher playing every seat, cloned before PPO (default:
    30% of --total-steps, at most 600,000, so a short run has a short warm start; 0: start from
    scratch; about 160 bytes each in memory)"""
    bc_epochs: int = 4
    bc_lr: float = 2e-3
    bc_batch_size: int = 1024
    """minibatch size of the imitation phase"""
    time_limit_s: float = 0.0
    """stop after this many seconds of wall time (0: no limit)"""
    backend: str = "auto"
    """vector env backend: numba, python (the same kernels, slow) or auto (numba when installed)"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before training"""
    reward_of: str = "own"
    """whose points the reward counts: own, or relative (own minus the mean of the two others': what
    pimc and search maximise and the arena's differences measure; 1.5 x own in the zero-sum
    variants, different in Basic Manni, whose deal scores are never negative)"""
    torch_threads: int = 0
    """torch CPU threads (0: fitted to the cores other processes leave free, measured again every 30 s)"""
    precision: str = "auto"
    """arithmetic of the networks' hidden layers in the warm start, the rollouts and the update: fp32,
    bf16 (autocast; weights and checkpoints stay float32) or auto (bf16 where the CPU or GPU runs it
    natively)"""
    init_from: str | None = None
    """start the actor from this ppo checkpoint instead of from scratch: ppo (the variant's shipped
    agent), ppo:VARIANT or ppo:PATH (same observations, --hidden and --activation; a summary network
    also starts a --history full run, at zero weight on the added inputs); the warm start,
    if any, then trains only the critic (e.g. a best response that starts as the agent it exploits)"""
    resume: str | None = None
    """continue the interrupted run in this directory (RUN_DIR: its args.json, networks, optimizer,
    step count, history and random states; the other options are ignored)"""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        super().check()
        self.check_choices({"backend": BACKENDS, "precision": PRECISIONS, "reward_of": REWARD_BASES})
        self.check_at_least(1, "bc_batch_size")
        if self.torch_threads < 0:
            raise ValueError(f"--torch-threads must not be negative, got {self.torch_threads}")

    def final_arena_deals(self) -> int:
        """``--final-eval-deals``, by default ``--total-steps`` / 4,000 between 100 and 500."""
        return min(500, max(100, self.total_steps // 4000)) if self.final_eval_deals is None else self.final_eval_deals

    def warm_start_samples(self) -> int:
        """``--bc-samples``, by default 30% of ``--total-steps`` (at most 600,000)."""
        return min(600_000, round(0.3 * self.total_steps)) if self.bc_samples is None else self.bc_samples


def mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    """Linear layers with ``activation`` after each (orthogonal init, gain √2)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [layer_init(nn.Linear(a, b)), activation()]
    return nn.Sequential(*layers)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2)) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


class Actor(nn.Module):
    """Observation → action logits (the part a ``ppo`` checkpoint holds)."""

    def __init__(self, obs_size: int, hidden: list[int], activation: str):
        super().__init__()
        self.pi = mlp([obs_size, *hidden], ACTIVATIONS[activation])
        self.action = layer_init(nn.Linear(hidden[-1], NUM_ACTIONS), std=0.01)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked float32 logits: illegal actions get -1e8 (the head runs in float32 under bf16 autocast)."""
        hidden = self.pi(obs)
        with full_precision(hidden):
            return self.action(hidden.float()).masked_fill(~mask, -1e8)

    def linears(self) -> list[nn.Linear]:
        """The linear layers in the checkpoint's order: hidden layers, then the action head."""
        return [m for m in self.pi if isinstance(m, nn.Linear)] + [self.action]

    def load_layers(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Copy a checkpoint's (weight, bias) pairs (:meth:`layers`' layout) into this actor."""
        with torch.no_grad():
            for module, (weight, bias) in zip(self.linears(), layers, strict=True):
                module.weight.copy_(torch.from_numpy(weight))
                module.bias.copy_(torch.from_numpy(bias))

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight, bias) pairs, hidden layers then the action head (the checkpoint's layout)."""
        return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in self.linears()]


class Critic(nn.Module):
    """Observation → value (used in training only; not part of the checkpoint)."""

    def __init__(self, obs_size: int, hidden: list[int], activation: str):
        super().__init__()
        self.vf = mlp([obs_size, *hidden], ACTIVATIONS[activation])
        self.value = layer_init(nn.Linear(hidden[-1], 1), std=1.0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """float32 values (the head runs in float32 under bf16 autocast)."""
        hidden = self.vf(obs)
        with full_precision(hidden):
            return self.value(hidden.float()).squeeze(-1)


def ppo_network(spec: str, rules: Rules) -> PPOAgent:
    """The ``ppo`` network that ``--init-from`` ``spec`` (``ppo``, ``ppo:VARIANT``, ``ppo:PATH``) names,
    checked to play ``rules``, played plain and greedy: the network itself, as the trainers fine-tune it
    (a spec's options and a checkpoint's ``play`` do not change its weights). ``ValueError`` for
    another kind of spec, :class:`CheckpointError` for a checkpoint that cannot play them."""
    kind, _, arg = spec.strip().partition(":")
    if kind != "ppo":
        raise ValueError(f"--init-from takes a ppo checkpoint (ppo, ppo:VARIANT, ppo:PATH), got {spec!r}")
    path = split_options(arg)[0]
    agent = make_agent(f"ppo:{path},plain" if path else "ppo:plain", rules)
    return agent.agent_for(rules) if isinstance(agent, ShippedPPOAgent) else agent


def init_network(spec: str, args: Args) -> PPOAgent:
    """The ``ppo`` network that ``--init-from`` ``spec`` names (:func:`ppo_network`), checked against
    the run: ``ValueError`` (:class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint)
    naming what does not match."""
    network = ppo_network(spec, args.rules())
    wanted = {"history": args.history, "activation": args.activation, "net_arch": list(args.hidden)}
    grows = {"history": lambda start, run: widens(args.rules(), start, run), "net_arch": wider}
    for key, value in wanted.items():
        if network.meta[key] != value and not (key in grows and grows[key](network.meta[key], value)):
            raise CheckpointError(f"--init-from {spec}: {network.path} has {key}={network.meta[key]!r}, "
                                  f"the run has {value!r}")
    return network


def widens(rules: Rules, checkpoint_history: str, run_history: str) -> bool:
    """Whether a network that reads ``checkpoint_history`` observations can start a run that reads
    ``run_history`` ones by :func:`widen`: the checkpoint's layout is the start of the run's
    (``summary`` into ``full``, which appends the ordered history)."""
    start, run = (ObservationEncoder(rules, history).segments for history in (checkpoint_history, run_history))
    return len(start) < len(run) and run[:len(start)] == start


def wider(checkpoint_hidden: list[int], run_hidden: list[int]) -> bool:
    """Whether a network with hidden layers ``checkpoint_hidden`` can start a run with ``run_hidden``
    by :func:`widen`: as many layers, none narrower (Net2Net-style widening)."""
    return len(checkpoint_hidden) == len(run_hidden) and all(a <= b for a, b in zip(checkpoint_hidden, run_hidden))


def widen(layers: list[tuple[np.ndarray, np.ndarray]],
          fresh: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """A checkpoint's ``layers`` grown to the shapes of ``fresh`` (a new actor's initial layers, as
    wide or wider, with the inputs added at the end of the observation): each checkpoint weight and
    bias keeps its place, the weights from added inputs or units into the checkpoint's units are
    zero, and the added units keep their fresh weights. The added inputs and units change nothing
    until training gives them weight, so the network starts playing exactly as the checkpoint does."""
    grown = []
    for (weight, bias), (fresh_weight, fresh_bias) in zip(layers, fresh, strict=True):
        outputs, inputs = weight.shape
        new_weight, new_bias = fresh_weight.copy(), fresh_bias.copy()
        new_weight[:outputs] = 0.0
        new_weight[:outputs, :inputs] = weight
        new_bias[:outputs] = bias
        grown.append((new_weight, new_bias))
    return grown


def load_actor(actor: Actor, spec: str, args: Args) -> dict:
    """Copy the weights of the ``--init-from`` checkpoint ``spec`` (:func:`init_network`) into ``actor``
    (into a ``--history full`` run or wider ``--hidden`` layers by :func:`widen`); what the exported
    agent records of that checkpoint (``training.init_from``): the spec, its weights' SHA-256, its
    learner decisions and wall time, and its own ``init_from`` where it has one (so a chain of
    fine-tunings adds up to the whole training budget)."""
    network = init_network(spec, args)
    actor.load_layers(widen(network.layers, actor.layers()))
    return checkpoint_provenance(spec, network)


def checkpoint_provenance(spec: str, network: PPOAgent) -> dict:
    """What an agent trained on from ``network`` (loaded from ``spec``) records of it: the spec, its
    weights' SHA-256, its learner decisions and wall time, and its own ``training.init_from``."""
    training = network.meta.get("training", {})
    provenance = {"spec": spec, "weights_sha256": network.meta["weights_sha256"],
                  "timesteps": training.get("timesteps"), "wall_time_s": training.get("wall_time_s")}
    if "init_from" in training:
        provenance["init_from"] = training["init_from"]
    return provenance


def warm_start(actor: Actor, critic: Critic, data: Demonstrations, args: Args, gen: torch.Generator) -> dict:
    """Behaviour cloning of the teacher (:func:`~manni_train.demonstrations.imitate`) under
    ``--precision``, the critic's targets scaled by ``reward_scale``; with ``--init-from`` only the
    critic learns (the actor keeps the checkpoint's weights)."""

    def evaluate(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits = actor(batch["obs"], batch["masks"])
        log_prob = torch.log_softmax(logits.float(), 1).gather(1, batch["actions"][:, None]).squeeze(1)
        return log_prob, critic(batch["obs"])

    learning = ([] if args.init_from else list(actor.parameters())) + list(critic.parameters())
    what = "the critic, values of" if args.init_from else "imitating"
    return imitate(evaluate, lambda batch: actor(batch["obs"], batch["masks"]).argmax(1),
                   learning, data, epochs=args.bc_epochs, lr=args.bc_lr,
                   batch_size=args.bc_batch_size, generator=gen, value_scale=args.reward_scale,
                   precision=autocast(compute_dtype(args.precision)),
                   desc=f"warm start ({what} {args.bc_teacher})", progress_bar=args.progress_bar)


def export(actor: Actor, path: Path, args: Args, steps: int, wall_time: float, algorithm: str,
           init_from: dict | None = None) -> Path:
    """Write ``actor`` as a ``ppo`` agent checkpoint (safetensors + JSON); ``algorithm`` names the trainer;
    ``init_from`` (what :func:`load_actor` returned) becomes the metadata's ``training.init_from``."""
    metadata = {
        **policy_metadata(args.rules(), args.history, args.activation),
        **training_metadata(args, algorithm, steps, wall_time),
    }
    if init_from is not None:
        metadata["training"]["init_from"] = init_from
    return save_checkpoint(path, actor.layers(), metadata)


def greedy_policy(actor: Actor) -> VectorPolicy:
    """The greedy batched policy of ``actor`` (for :func:`manni_train.reporting.evaluate`)."""

    def logits(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return actor(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()

    return NetworkPolicy(logits, "learner")


class PPOLearner:
    """The PPO update of ``actor`` and ``critic`` (one Adam optimizer) on a :class:`RolloutBatch`:
    ``update_epochs`` epochs of minibatches, normalised advantages, the clipped objective, the value
    loss (clipped with ``--clip-vloss``), the entropy bonus and gradient clipping. The networks
    live on ``device``; ``gen`` shuffles the minibatches."""

    def __init__(self, actor: Actor, critic: Critic, args: Args, gen: torch.Generator, device: str = "cpu"):
        self.actor, self.critic, self.args, self.gen, self.device = actor, critic, args, gen, torch.device(device)
        self.params = list(actor.parameters()) + list(critic.parameters())
        # fused: one kernel for all parameters instead of a Python loop over them (docs/training.md)
        self.optimizer = torch.optim.Adam(self.params, lr=args.learning_rate, eps=1e-5, fused=fused_adam(self.device))
        self.dtype = compute_dtype(args.precision, self.device)
        self.precision = autocast(self.dtype, self.device)

    def update(self, batch: RolloutBatch, lr: float, minibatches: int | None = None) -> dict[str, float]:
        """One PPO update with learning rate ``lr`` in ``minibatches`` minibatches per epoch (default:
        of about ``minibatch_size``); the last minibatch's losses and approximate KL divergence, the clip
        fraction and the explained variance of the rollout's values."""
        args = self.args
        self.optimizer.param_groups[0]["lr"] = lr
        # the observations only feed the first layers, which autocast runs in the compute dtype: cast them once
        f_obs = batch.obs.to(self.device, self.dtype)
        f_mask, f_act, f_logp, f_val, f_adv, f_ret = (
            t.to(self.device) for t in (batch.mask, batch.actions, batch.logp, batch.values, batch.advantages,
                                        batch.returns))
        size = f_obs.shape[0]
        clipfracs, count = [], minibatches or max(1, round(size / args.minibatch_size))
        for _ in range(args.update_epochs):
            for idx in torch.randperm(size, generator=self.gen).tensor_split(count):
                idx = idx.to(self.device)
                n = idx.numel()
                rows = padded_rows(idx, self.dtype)  # the padding rows' outputs are dropped below
                obs, mask = f_obs.index_select(0, rows), f_mask.index_select(0, rows)  # (faster than obs[rows])
                act, old_logp, old_v, a, ret = (t.index_select(0, idx) for t in (f_act, f_logp, f_val, f_adv, f_ret))
                with self.precision:  # the networks' hidden layers; their outputs and the losses are float32
                    logits = self.actor(obs, mask)[:n]
                    v = self.critic(obs)[:n]
                logp_all = torch.log_softmax(logits, 1)
                logp = logp_all.gather(1, act[:, None]).squeeze(1)
                ratio = (logp - old_logp).exp()
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                # e^-80 is 0 to float32's precision; exp of the masked actions' -1e8 (an underflow) is about 30x slower
                probs = logp_all.clamp(min=-80.0).exp()
                entropy = -(probs * logp_all.masked_fill(~mask[:n], 0.0)).sum(1).mean()
                v_loss = (v - ret) ** 2
                if args.clip_vloss:
                    v_clipped = old_v + (v - old_v).clamp(-args.clip_coef, args.clip_coef)
                    v_loss = torch.max(v_loss, (v_clipped - ret) ** 2)
                v_loss = 0.5 * v_loss.mean()
                loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                self.step(loss)
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
        with torch.no_grad():  # CleanRL's diagnostics: the last minibatch's KL estimate, the critic's fit
            log_ratio = logp - old_logp
            approx_kl = ((log_ratio.exp() - 1) - log_ratio).mean().item()
            variance = f_ret.var().item()
            explained = float("nan") if variance == 0 else 1.0 - (f_ret - f_val).var().item() / variance
        return {"losses/policy": pg_loss.item(), "losses/value": v_loss.item(), "losses/entropy": entropy.item(),
                "losses/clipfrac": float(np.mean(clipfracs)), "losses/approx_kl": approx_kl,
                "losses/explained_variance": explained}

    def step(self, loss: torch.Tensor) -> None:
        """One gradient step on ``loss`` (clipped to ``max_grad_norm``)."""
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.params, self.args.max_grad_norm)
        self.optimizer.step()


def fused_adam(device: torch.device) -> bool:
    """Whether torch's fused Adam kernel runs on ``device`` (CPU and CUDA)."""
    return device.type in ("cpu", "cuda")


class Sampler(Protocol):
    """Where rollouts come from: a :class:`~manni_train.vector_rollout.VectorRollout` in this process, or
    the Ray trainer's runner actors (:mod:`manni_train.ray_vector`)."""

    obs_size: int

    def collect(self, actor: Actor, critic: Critic) -> RolloutBatch: ...

    def add_snapshot(self, actor: Actor) -> None: ...


def train(args: Args, sampler: Sampler | None = None, make_learner: Callable[..., PPOLearner] = PPOLearner,
          algorithm: str = "plain-torch self-play PPO on the vector env (train/ppo_vector.py)") -> TrainResult:
    """Train, export, evaluate and plot; see the module docstring. ``sampler`` (default: one
    :class:`~manni_train.vector_rollout.VectorRollout` here) collects the rollouts and
    ``make_learner(actor, critic, args, gen)`` updates the networks (the Ray trainer passes its
    own); ``algorithm`` describes the run in the export's metadata. Ctrl-C
    (``KeyboardInterrupt``) writes the current policy, the history and the resume state
    (:mod:`manni_train.resume`) before it propagates."""
    args.final_eval_deals = args.final_arena_deals()  # saved in args.json as a number
    args.check()
    run_dir = args.run_dir()
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    writer = SummaryWriter(str(run_dir / "tb"))

    # seeding: torch (weights, action sampling), the vector env (deals), numpy (seat assignment)
    torch.manual_seed(args.seed)
    fitter = None if args.torch_threads else ThreadFitter()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    sampler = sampler or VectorRollout(args, gen, rng, args.seed)

    actor = Actor(sampler.obs_size, args.hidden, args.activation)
    critic = Critic(sampler.obs_size, args.hidden, args.activation)
    progress, optimizer_state = resume.Progress(next_snapshot=args.snapshot_every, next_eval=args.eval_every), None
    history: list[dict] = []
    if args.resume and resume.saved(run_dir):
        progress, optimizer_state = resume.load(run_dir, actor, critic, gen, rng)
        history = json.loads((run_dir / "history.json").read_text()) if (run_dir / "history.json").is_file() else []
    elif args.init_from:
        progress.init_from = load_actor(actor, args.init_from, args)
    start = time.time() - progress.wall_time_s
    eval_seconds = 0.0  # the training wall time counts the warm start but not the evaluations

    def wall_time() -> float:
        return time.time() - start - eval_seconds

    def record_eval() -> None:
        nonlocal eval_seconds
        eval_start = time.time()
        entry = evaluate(greedy_policy(actor), args, progress.steps, wall_time(), args.backend)
        history.append(entry)
        for key in (k for k in entry if k.startswith("vs_")):
            writer.add_scalar(f"arena/{key}", entry[key]["mean"], progress.steps)
        write_history(run_dir, history)
        eval_seconds += time.time() - eval_start

    learner = None
    try:
        if progress.phase == "warm start":
            if args.warm_start_samples():
                data = collect_demonstrations(args.rules(), args.warm_start_samples(), args.seed + 1_000_003,
                                              args.history, args.reward, args.bc_teacher, args.backend,
                                              args.reward_of)
                for name, value in warm_start(actor, critic, data, args, gen).items():
                    writer.add_scalar(name, value, 0)
                del data
            progress.phase = "ppo"
            optimizer_state = None  # a fresh optimizer after the warm start
        learner = make_learner(actor, critic, args, gen)
        if optimizer_state is not None and getattr(learner, "optimizer", None) is not None:
            learner.optimizer.load_state_dict(optimizer_state)
        pool_size = 0
        bar = tqdm(total=args.total_steps, initial=min(progress.steps, args.total_steps), desc="PPO", unit="step",
                   disable=not args.progress_bar)

        while progress.steps < args.total_steps and not (args.time_limit_s and wall_time() > args.time_limit_s):
            lr = args.learning_rate * max(0.0, 1.0 - progress.steps / args.total_steps) if args.anneal_lr else args.learning_rate
            batch = sampler.collect(actor, critic)

            # PPO update
            update_start = time.time()
            losses = learner.update(batch, lr)
            progress.steps += batch.steps
            progress.updates += 1
            steps = progress.steps
            elapsed = wall_time()
            bar.update(min(batch.steps, bar.total - bar.n))
            for name, value in (*losses.items(), ("charts/learning_rate", lr),
                                ("charts/steps_per_second", steps / elapsed),
                                ("charts/rollout_seconds", batch.seconds),
                                ("charts/rollout_cpu_seconds", batch.cpu_seconds),
                                ("charts/update_seconds", time.time() - update_start),
                                ("charts/pool_size", pool_size),
                                ("charts/torch_threads", torch.get_num_threads())):
                writer.add_scalar(name, value, steps)
            if batch.deal_scores:
                writer.add_scalar("charts/learner_deal_score", float(np.mean(batch.deal_scores)), steps)

            if args.snapshot_every and steps >= progress.next_snapshot:
                progress.next_snapshot += args.snapshot_every
                if not args.opponents:  # fixed opponents take every non-learner seat: no pool
                    sampler.add_snapshot(actor)
                    pool_size = min(pool_size + 1, args.pool_size)
            if args.eval_every and steps >= progress.next_eval:
                progress.next_eval += args.eval_every
                record_eval()
            if fitter is not None:
                fitter.maybe_refit()
        bar.close()
        resume.remove(run_dir)  # training is over: nothing left to resume
    except KeyboardInterrupt:
        with deferred_interrupt():  # a second Ctrl-C waits until everything is written
            progress.wall_time_s = wall_time()
            agent = export(actor, run_dir / "agent", args, progress.steps, progress.wall_time_s, algorithm,
                           progress.init_from)
            write_history(run_dir, history)
            if progress.phase == "ppo":  # an interrupted warm start starts again on --resume
                resume.save(run_dir, progress, actor, critic, getattr(learner, "optimizer", None), gen, rng)
            writer.close()
        print(f"\ninterrupted after {progress.steps:,} learner decisions ({progress.phase}): policy saved as "
              f"ppo:{agent.with_suffix('')}, history in {run_dir / 'history.json'}; continue with "
              f"manni train --resume {run_dir}", file=sys.stderr)
        raise
    if not history or history[-1]["timesteps"] != progress.steps:
        record_eval()
    wall = wall_time()
    agent = export(actor, run_dir / "agent", args, progress.steps, wall, algorithm,
                   progress.init_from).with_suffix("")
    plot_learning_curve(history, run_dir / "learning_curve.png", f"{args.run_name}: score while training")
    writer.close()
    final = final_arena(f"ppo:{agent}", args, run_dir, args.progress_bar)
    return TrainResult(run_dir, agent, final, history, wall, progress.steps)


class ResumeError(ValueError):
    """``--resume`` names no run (exit code 2 on the command line)."""


def resumed(args: Args) -> Args:
    """The saved arguments of the run in ``args.resume`` (:class:`ResumeError` if there is none)."""
    path = Path(args.resume)
    if not (path / "args.json").is_file():
        raise ResumeError(f"--resume {path}: no run there (no args.json)")
    saved = json.loads((path / "args.json").read_text())
    return type(args).from_dict({**saved, "resume": str(path), "runs_dir": str(path.parent), "run_name": path.name})


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = parse_args(Args, argv, prog)
    if args.resume:
        try:
            args = resumed(args)
        except ResumeError as err:
            print(f"{prog or 'manni_train.ppo_vector'}: error: {err}", file=sys.stderr)
            return 2
    print(report(train(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
