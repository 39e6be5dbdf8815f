"""The ``rllib`` agent: an RLlib-trained policy, exported to the common :class:`~manni_agents.base.Policy`.

``rllib:PATH`` loads the policy that ``train/rllib_ppo.py`` exports next to every RLlib checkpoint:
``PATH`` is that checkpoint directory (holding ``manni_policy.json`` + ``manni_policy.safetensors``)
or the export itself (``…/manni_policy``). ``rllib:PATH,sample`` draws from the policy instead of
playing its most likely legal action.

Why an export instead of ``RLModule.from_checkpoint``: an RLlib checkpoint restores its classes
and state with ``pickle``, which can run code from the file. The export holds only the actor
network's weights (the RLModule's actor encoder + policy head, masked logits → action) in the
safe ``manni-ppo/1`` format of :mod:`manni_agents.ppo_agent` (safetensors + JSON with the variant,
observation layout and checksums), so ``manni arena`` and ``manni play`` run it with numpy only —
no ray, no torch — and reject a file that was edited or does not fit the game. The export is
checked against the RLModule's own masked forward pass in the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from manni_agents.ppo_agent import CheckpointError, PPOAgent, policy_metadata, save_checkpoint
from manni_env.observation import ObservationEncoder
from manni_env.rules import Rules

#: File stem of the export inside an RLlib checkpoint directory.
EXPORT_NAME = "manni_policy"
_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}


def export_path(path: str | Path) -> Path:
    """A checkpoint directory or an export path → the export's path stem (``…/manni_policy``)."""
    path = Path(path)
    return path / EXPORT_NAME if path.is_dir() else path


def actor_layers(module: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The actor of an RLlib PPO torch RLModule (default MLP encoder + policy head) as
    ``(weight, bias)`` pairs and the hidden activation name; ``ValueError`` for other networks."""
    encoder = getattr(module.encoder, "actor_encoder", None)
    if encoder is None:  # vf_share_layers=True: one encoder for actor and critic
        encoder = getattr(module.encoder, "encoder", None)
    try:
        parts = [*encoder.net.mlp, *module.pi.net.mlp]
    except AttributeError:
        name = type(module).__name__
        raise ValueError(f"{name}: not a default-MLP PPO module (encoder.net.mlp + pi.net.mlp)") from None
    layers, activations = [], set()
    for i, part in enumerate(parts):
        kind = type(part).__name__
        if i % 2 == 0 and kind == "Linear":
            w, b = part.weight.detach().cpu().numpy(), part.bias.detach().cpu().numpy()
            layers.append((w.astype(np.float32), b.astype(np.float32)))
        elif i % 2 == 1 and kind in _ACTIVATIONS:
            activations.add(_ACTIVATIONS[kind])
        else:
            raise ValueError(f"unsupported actor layer {i} ({kind}): export needs Linear layers with one "
                             f"activation ({', '.join(_ACTIVATIONS)}) in between and none after the last")
    if len(parts) % 2 == 0 or len(activations) > 1:
        raise ValueError(f"unsupported actor: {len(parts)} parts, activations {sorted(activations)}")
    return layers, activations.pop() if activations else "tanh"


def export_policy(module: Any, path: str | Path, rules: Rules, history: str, info: dict | None = None) -> Path:
    """Write the actor of ``module`` (trained on ``rules`` with observation ``history``) as a
    ``manni-ppo/1`` export at ``path`` (a checkpoint directory or an explicit stem); returns the stem."""
    stem = export_path(path)
    layers, activation = actor_layers(module)
    encoder = ObservationEncoder(rules, history)
    if layers[0][0].shape[1] != encoder.size:
        raise ValueError(f"the module reads {layers[0][0].shape[1]} inputs; {rules.variant} observations "
                         f"(history={history!r}) have {encoder.size}")
    metadata = {
        **policy_metadata(rules, history, activation),
        "trained_with": "rllib",
        **(info or {}),
    }
    save_checkpoint(stem, layers, metadata)
    return stem


class RLlibAgent(PPOAgent):
    """An exported RLlib policy (see the module docstring)."""

    def __init__(self, path: str | Path, sample: bool = False):
        stem = export_path(path)
        try:
            super().__init__(stem, sample=sample)
        except CheckpointError as err:
            if Path(path).is_dir():
                raise CheckpointError(f"{path}: no usable {EXPORT_NAME} export in this RLlib checkpoint "
                                      f"directory ({err}); train/rllib_ppo.py writes one at every checkpoint") from None
            raise
        self.name = f"rllib:{path}"


def make_rllib_agent(arg: str | None) -> RLlibAgent:
    """Registry factory: ``rllib:PATH`` (argmax) or ``rllib:PATH,sample`` (like ``ppo:PATH``)."""
    if not arg:
        raise ValueError("the rllib agent needs a path: rllib:CHECKPOINT_DIR (written by train/rllib_ppo.py)")
    path, _, option = arg.rpartition(",")
    if option not in ("sample", "greedy"):
        path, option = arg, "greedy"
    return RLlibAgent(path, sample=option == "sample")
