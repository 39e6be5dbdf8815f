"""The state an interrupted vector-trainer run keeps for ``--resume RUN_DIR``.

``resume.safetensors`` holds tensors only (the actor, the critic, Adam's moments and step counts,
the torch generator's state), so loading it runs no code (no pickle); ``resume.json`` holds the
rest: the phase the run was in, learner decisions and updates done, wall time, the next snapshot
and evaluation, the record of the ``--init-from`` checkpoint, Adam's hyperparameters and the numpy
generator's state. The evaluation history is the run's ``history.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import safetensors.torch
import torch
from torch import nn

from manni_agents.evaluation.results import atomic_write

STATE, META = "resume.safetensors", "resume.json"


@dataclass
class Progress:
    """Where a run stands: ``phase`` is "warm start" or "ppo" (only the latter is saved: an
    interrupted warm start starts again)."""

    phase: str = "warm start"
    steps: int = 0
    updates: int = 0
    wall_time_s: float = 0.0
    next_snapshot: int = 0
    next_eval: int = 0
    init_from: dict | None = None  # what the run recorded of its --init-from checkpoint when it loaded it


def save(run_dir: Path, progress: Progress, actor: nn.Module, critic: nn.Module,
         optimizer: torch.optim.Optimizer | None, gen: torch.Generator, rng: np.random.Generator) -> None:
    """Write ``resume.safetensors`` and ``resume.json`` (each replaced in one step)."""
    tensors = {f"actor.{k}": v for k, v in actor.state_dict().items()}
    tensors |= {f"critic.{k}": v for k, v in critic.state_dict().items()}
    tensors["generator"] = gen.get_state()
    groups = None
    if optimizer is not None:
        state = optimizer.state_dict()
        groups = state["param_groups"]
        for i, moments in state["state"].items():
            tensors |= {f"optimizer.{i}.{k}": torch.as_tensor(v) for k, v in moments.items()}
    meta = {**progress.__dict__, "optimizer_groups": groups, "numpy_rng": rng.bit_generator.state}
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    atomic_write(run_dir / STATE, lambda p: safetensors.torch.save_file(tensors, str(p)))
    atomic_write(run_dir / META, lambda p: p.write_text(json.dumps(meta, indent=1) + "\n"))


def load(run_dir: Path, actor: nn.Module, critic: nn.Module, gen: torch.Generator,
         rng: np.random.Generator) -> tuple[Progress, dict | None]:
    """Restore the networks and generators from ``run_dir``; its :class:`Progress` and the optimizer's
    state dict (``None`` if none was saved), for :meth:`torch.optim.Optimizer.load_state_dict`."""
    tensors = safetensors.torch.load_file(str(run_dir / STATE))
    meta = json.loads((run_dir / META).read_text())
    actor.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("actor.")})
    critic.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("critic.")})
    gen.set_state(tensors["generator"])
    rng.bit_generator.state = meta.pop("numpy_rng")
    groups = meta.pop("optimizer_groups")
    optimizer = None
    if groups is not None:
        state: dict[int, dict] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, i, name = key.split(".", 2)
                state.setdefault(int(i), {})[name] = value
        optimizer = {"state": state, "param_groups": groups}
    return Progress(**meta), optimizer


def saved(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a resume state."""
    return (run_dir / STATE).is_file() and (run_dir / META).is_file()


def remove(run_dir: Path) -> None:
    """Delete the resume state of ``run_dir`` (if any)."""
    for name in (STATE, META):
        (run_dir / name).unlink(missing_ok=True)
