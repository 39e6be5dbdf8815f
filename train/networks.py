"""The trainers' networks and their checkpoints: the :class:`Actor` (observation → masked action
logits, what a ``ppo`` checkpoint holds) and the :class:`Critic` (observation → value, training
only; with ``--torso shared`` a value head on the actor's hidden layers: :func:`make_networks`),
built from :func:`mlp` layers with CleanRL's orthogonal initialisation; :func:`export` writes
an actor as a ``ppo`` agent checkpoint, :func:`ppo_network` loads one back as a plain network, and
:func:`greedy_policy` plays an actor in the vector env's batched loops.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from manni_agents.ppo_agent import (CheckpointError, PPOAgent, ShippedPPOAgent, make_ppo_agent, policy_metadata,
                                    save_checkpoint, split_options)
from manni_agents.vector_policy import NetworkPolicy, VectorPolicy
from manni_env.actions import NUM_ACTIONS
from manni_env.rules import Rules
from manni_train.args import TrainArgs
from manni_train.critic_view import unseen_size
from manni_train.precision import full_precision
from manni_train.reporting import training_metadata

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


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
        return self.head(self.pi(obs), mask)

    def head(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The masked float32 logits of the last hidden layer's output ``hidden``."""
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
    """Observation (and with ``--critic deal`` the cards hidden from the seat, ``unseen`` more inputs:
    :mod:`manni_train.critic_view`) → value. Used in training only; not part of the checkpoint.

    Given ``torso`` (an :class:`Actor`'s hidden layers: ``--torso shared``) the critic is a value head
    on those layers, and :func:`policy_and_value` runs them once for both networks."""

    def __init__(self, obs_size: int, hidden: list[int], activation: str, unseen: int = 0,
                 torso: nn.Sequential | None = None):
        super().__init__()
        if torso is not None and unseen:
            raise ValueError("a critic that shares the actor's layers reads the observation only (--critic seat)")
        self.vf = torso if torso is not None else mlp([obs_size + unseen, *hidden], ACTIVATIONS[activation])
        self.value = layer_init(nn.Linear(hidden[-1], 1), std=1.0)

    def forward(self, obs: torch.Tensor, unseen: torch.Tensor | None = None) -> torch.Tensor:
        """float32 values (the head runs in float32 under bf16 autocast)."""
        return self.head(self.vf(obs if unseen is None else torch.cat([obs, unseen.to(obs.dtype)], 1)))

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """The values of the last hidden layer's output ``hidden``, in float32."""
        with full_precision(hidden):
            return self.value(hidden.float()).squeeze(-1)


#: ``--torso``: whether the critic has hidden layers of its own or is a value head on the actor's
TORSOS = ("separate", "shared")


def make_networks(obs_size: int, hidden: list[int], activation: str, unseen: int = 0,
                  torso: str = "separate", critic_hidden: list[int] | None = None) -> tuple[Actor, Critic]:
    """A fresh (actor, critic) pair; the critic's hidden layers are ``critic_hidden`` (default:
    ``hidden``), or with ``torso="shared"`` the actor's (one torso, two heads: about half the
    arithmetic of a decision)."""
    if torso not in TORSOS:
        raise ValueError(f"--torso must be one of {', '.join(TORSOS)}, got {torso!r}")
    if torso == "shared" and critic_hidden is not None:
        raise ValueError("a critic that shares the actor's layers has no hidden layers of its own")
    actor = Actor(obs_size, hidden, activation)
    if torso == "shared":
        return actor, Critic(obs_size, hidden, activation, unseen, actor.pi)
    return actor, Critic(obs_size, critic_hidden or hidden, activation, unseen)


def run_networks(obs_size: int, args: TrainArgs) -> tuple[Actor, Critic]:
    """:func:`make_networks` as a fast-trainer run's options (``--hidden``, ``--activation``,
    ``--critic``, ``--torso``, ``--critic-hidden``) make them."""
    return make_networks(obs_size, args.hidden, args.activation, unseen_size(args.critic), args.torso,
                         args.critic_hidden)


def shares_torso(actor: Actor, critic: Critic) -> bool:
    """Whether ``critic`` is a value head on ``actor``'s hidden layers (any other pair of networks: no)."""
    torso = getattr(critic, "vf", None)
    return torso is not None and torso is getattr(actor, "pi", None)


def policy_and_value(actor: Actor, critic: Critic, obs: torch.Tensor, mask: torch.Tensor,
                     unseen: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked logits and the values of ``obs`` (float32); a shared torso runs once for both."""
    if shares_torso(actor, critic):
        hidden = actor.pi(obs)
        return actor.head(hidden, mask), critic.head(hidden)
    return actor(obs, mask), critic(obs, unseen)


def parameters(actor: Actor, critic: Critic) -> list[nn.Parameter]:
    """The trainable parameters of both networks, each once (a shared torso belongs to both)."""
    return list(nn.ModuleList([actor, critic]).parameters())


def ppo_network(spec: str, rules: Rules) -> PPOAgent:
    """The ``ppo`` network that ``spec`` (``ppo``, ``ppo:VARIANT``, ``ppo:PATH``) names, checked to play
    ``rules``, loaded plain and greedy: the network itself, as the trainers fine-tune it (a spec's
    options and a checkpoint's ``play`` do not change its weights). ``ValueError`` for another kind of
    spec or a bad one, :class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint that cannot
    play ``rules``."""
    kind, _, arg = spec.strip().partition(":")
    if kind != "ppo":
        raise ValueError(f"--init-from takes a ppo checkpoint (ppo, ppo:VARIANT, ppo:PATH), got {spec!r}")
    try:
        agent = make_ppo_agent(split_options(arg)[0], symmetric=False)
        network = agent.agent_for(rules) if isinstance(agent, ShippedPPOAgent) else agent
    except CheckpointError:
        raise
    except ValueError as err:
        raise ValueError(f"bad agent spec {spec!r}: {err}") from None
    network.check_rules(rules)
    return network


def export(actor: Actor, path: Path, args: TrainArgs, steps: int, wall_time: float, algorithm: str,
           init_from: dict | None = None, play: str = "plain") -> Path:
    """Write ``actor`` as a ``ppo`` agent checkpoint (safetensors + JSON); ``algorithm`` names the trainer;
    ``init_from`` (what :func:`manni_train.init_from.load_actor` returned) becomes the metadata's
    ``training.init_from``; ``play`` is how the agent plays its network by default (the metadata's ``play``)."""
    metadata = {
        **policy_metadata(args.rules(), args.history, args.activation, args.observation),
        **training_metadata(args, algorithm, steps, wall_time),
        "play": play,
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
