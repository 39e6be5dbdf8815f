"""The state a vector-trainer run keeps for ``--resume RUN_DIR``, and what resuming it means.

``resume.json`` says which phase the run is in (:data:`PHASES`): ``warm start`` and ``ppo`` while
it trains, ``arena`` once training is over and the policy exported (the final arena remains),
``done`` when the arena is written. In the ``ppo`` phase (written on Ctrl-C) it holds where
training stands: learner decisions and updates done, wall time, the next snapshot and
evaluation, the record of the ``--init-from`` checkpoint, Adam's hyperparameters and the numpy
generator's state, and ``resume.safetensors`` holds the tensors (the actor, the critic, Adam's
moments and step counts, the torch generator's state), so loading them runs no code (no pickle).
The evaluation history is the run's ``history.json``.

Resuming never loses what a run kept (:func:`read`): a ``done`` run is finished (:class:`Finished`),
an ``arena`` run plays its final arena again, a ``ppo`` run continues, a ``warm start`` run starts
its warm start again. A directory that kept a policy or a history but has no readable resume
state (a run of an older release, a deleted or damaged ``resume.json``) is refused with one error
line, as is anything unreadable or foreign (:class:`ResumeError`): training from step 0 would
overwrite what it kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import safetensors.torch
import torch
from torch import nn

from manni_env.files import replace_atomically, write_text

STATE, META = "resume.safetensors", "resume.json"
#: A run's phases, in order (see the module docstring).
PHASES = ("warm start", "ppo", "arena", "done")
#: What a run keeps that training from step 0 would overwrite.
KEPT = ("agent.safetensors", "agent.json", "history.json", "arena_final.json")
#: The largest resume.json read (it holds a few numbers and Adam's hyperparameters: about 2 kB).
MAX_META_BYTES = 1_000_000
#: The largest history.json read (an entry is about 500 bytes: 100,000 evaluations).
MAX_HISTORY_BYTES = 64_000_000


class ResumeError(ValueError):
    """``--resume`` cannot continue this directory (one error line, exit code 2)."""


class Finished(ResumeError):
    """``--resume`` names a run that is finished: nothing to do."""


@dataclass
class Progress:
    """Where a run stands: its phase (one of :data:`PHASES`) and, in the ``ppo`` phase, how far
    training went."""

    phase: str = "warm start"  # one of PHASES
    steps: int = 0
    updates: int = 0
    wall_time_s: float = 0.0
    next_snapshot: int = 0
    next_eval: int = 0
    init_from: dict | None = None  # what the run recorded of its --init-from checkpoint when it loaded it


def save_phase(run_dir: Path, progress: Progress) -> None:
    """Write ``resume.json`` for a phase without tensors (``warm start``, ``arena``, ``done``) and
    drop the tensors of an earlier ``ppo`` state."""
    assert progress.phase != "ppo", "a ppo state has tensors: save() it"
    write_text(run_dir / META, json.dumps(progress.__dict__, indent=1) + "\n")
    (run_dir / STATE).unlink(missing_ok=True)


def save(run_dir: Path, progress: Progress, actor: nn.Module, critic: nn.Module,
         optimizer: torch.optim.Optimizer | None, gen: torch.Generator, rng: np.random.Generator) -> None:
    """Write ``resume.safetensors`` and ``resume.json`` of the ``ppo`` phase (each replaced in one
    step, the tensors first: a ``resume.json`` of phase ``ppo`` always has its tensors)."""
    tensors = {f"actor.{k}": v for k, v in actor.state_dict().items()}
    # a shared torso (--torso shared) is in both networks: safetensors stores no tensor twice, so a copy
    actors = {v.data_ptr() for v in actor.state_dict().values()}
    tensors |= {f"critic.{k}": v.clone() if v.data_ptr() in actors else v for k, v in critic.state_dict().items()}
    tensors["generator"] = gen.get_state()
    groups = None
    if optimizer is not None:
        state = optimizer.state_dict()
        groups = state["param_groups"]
        for i, moments in state["state"].items():
            tensors |= {f"optimizer.{i}.{k}": torch.as_tensor(v) for k, v in moments.items()}
    meta = {**progress.__dict__, "optimizer_groups": groups, "numpy_rng": rng.bit_generator.state}
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    text = json.dumps(meta, indent=1) + "\n"
    replace_atomically((run_dir / STATE, lambda p: safetensors.torch.save_file(tensors, str(p))),
                       (run_dir / META, lambda p: p.write_text(text)))


def read(run_dir: Path) -> tuple[Progress, list[dict]] | None:
    """The phase and history of the run in ``run_dir`` (see the module docstring); ``None`` when
    it kept nothing yet (start afresh). :class:`Finished` for a finished run, :class:`ResumeError`
    for a directory that cannot be resumed without losing what it kept."""
    if not (run_dir / META).exists():
        kept = [name for name in KEPT if (run_dir / name).exists()]
        if not kept:
            return None
        if "arena_final.json" in kept:  # a finished run of a release before resume.json kept the phase
            raise Finished(f"the run in {run_dir} is finished (its final arena is {run_dir / 'arena_final.md'}): "
                           "nothing to resume")
        raise ResumeError(f"--resume {run_dir}: it kept {', '.join(kept)} but has no resume state ({META}); "
                          "training again from step 0 would overwrite them (continue from its policy in a new run: "
                          f"--init-from ppo:{run_dir / 'agent'})")
    meta = _json(run_dir / META, dict)
    try:
        progress = Progress(**{f.name: meta[f.name] for f in fields(Progress) if f.name in meta})
    except TypeError as err:
        raise ResumeError(f"--resume {run_dir}: {META} is not a resume state ({err})") from None
    numbers = [getattr(progress, f.name) for f in fields(Progress) if f.type in ("int", "float")]
    if (progress.phase not in PHASES or not all(type(v) in (int, float) and v >= 0 for v in numbers)
            or not isinstance(progress.init_from, dict | None)):
        raise ResumeError(f"--resume {run_dir}: {META} is not a resume state (phase {str(progress.phase)[:40]!r}, "
                          "a count that is not a non-negative number, or a bad init_from)")
    if progress.phase == "done":
        raise Finished(f"the run in {run_dir} is finished ({progress.steps:,} learner decisions; its final arena is "
                       f"{run_dir / 'arena_final.md'}): nothing to resume")
    if progress.phase == "ppo" and not (run_dir / STATE).is_file():
        raise ResumeError(f"--resume {run_dir}: {META} says training stopped at {progress.steps:,} learner decisions "
                          f"but {STATE} is missing")
    history = _json(run_dir / "history.json", list) if (run_dir / "history.json").exists() else []
    return progress, history


def load(run_dir: Path, actor: nn.Module, critic: nn.Module, gen: torch.Generator,
         rng: np.random.Generator) -> tuple[Progress, dict | None]:
    """Restore the networks and generators of a ``ppo`` state from ``run_dir``; its
    :class:`Progress` and the optimizer's state dict (``None`` if none was saved), for
    :meth:`torch.optim.Optimizer.load_state_dict`. :class:`ResumeError` if anything does not fit."""
    try:
        return _load(run_dir, actor, critic, gen, rng)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, safetensors.SafetensorError) as err:
        raise ResumeError(f"--resume {run_dir}: its resume state does not fit this run "
                          f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''})") from None


def _load(run_dir: Path, actor: nn.Module, critic: nn.Module, gen: torch.Generator,
          rng: np.random.Generator) -> tuple[Progress, dict | None]:
    tensors = safetensors.torch.load_file(str(run_dir / STATE))
    meta = _json(run_dir / META, dict)
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


def _json(path: Path, kind: type):
    """The JSON ``kind`` (``dict``: resume.json, at most :data:`MAX_META_BYTES`; ``list``: the
    history, at most :data:`MAX_HISTORY_BYTES`); :class:`ResumeError` naming the file otherwise."""
    limit = MAX_HISTORY_BYTES if kind is list else MAX_META_BYTES
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"larger than {limit:,} bytes")
        value = json.loads(data)
    except (OSError, ValueError, RecursionError) as err:
        raise ResumeError(f"--resume {path.parent}: cannot read {path.name}: {err}") from None
    if not isinstance(value, kind):
        raise ResumeError(f"--resume {path.parent}: {path.name} holds no {kind.__name__}")
    return value
