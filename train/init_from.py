"""``--init-from``: a run that starts from a ``ppo`` checkpoint instead of from scratch.

:func:`load_actor` copies the checkpoint's weights into the run's actor, checked against the run
(:func:`init_network`) and, where the run reads more observations (``--history full`` after
``summary``, ``--observation v1`` after ``v0``) or has wider ``--hidden`` layers, grown to it (:func:`widen`: the added weights start
at zero, so the actor starts playing exactly as the checkpoint does); it returns what the exported
agent records of its start (:func:`checkpoint_provenance`).
"""

from __future__ import annotations

import numpy as np

from manni_agents.ppo_agent import CheckpointError, PPOAgent
from manni_env.observation import ObservationEncoder
from manni_env.rules import Rules
from manni_train.args import TrainArgs
from manni_train.networks import Actor, ppo_network


def init_network(spec: str, args: TrainArgs) -> PPOAgent:
    """The ``ppo`` network that ``--init-from`` ``spec`` names (:func:`ppo_network`), checked against
    the run: ``ValueError`` (:class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint)
    naming what does not match."""
    network = ppo_network(spec, args.rules())
    have = {**network.meta, "layout": network.layout}
    wanted = {"history": args.history, "layout": args.observation, "activation": args.activation,
              "net_arch": list(args.hidden)}
    observation = (have["history"], have["layout"]), (args.history, args.observation)
    grows = {"history": lambda *_: widens(args.rules(), *observation),
             "layout": lambda *_: widens(args.rules(), *observation), "net_arch": wider}
    for key, value in wanted.items():
        if have[key] != value and not (key in grows and grows[key](have[key], value)):
            raise CheckpointError(f"--init-from {spec}: {network.path} has {key}={have[key]!r}, "
                                  f"the run has {value!r}")
    return network


def widens(rules: Rules, checkpoint: tuple[str, str], run: tuple[str, str]) -> bool:
    """Whether a network that reads the observations ``checkpoint`` (history, layout) can start a run
    that reads ``run`` ones by :func:`widen`: the checkpoint's segments are the start of the run's
    (``summary`` into ``full``, which appends the ordered history; ``v0`` into ``v1``, which appends
    the trick-play segments; ``summary`` ``v0`` into ``full`` ``v1``)."""
    start, grown = (ObservationEncoder(rules, history, layout).segments for history, layout in (checkpoint, run))
    return len(start) < len(grown) and grown[:len(start)] == start


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


def load_actor(actor: Actor, spec: str, args: TrainArgs) -> dict:
    """Copy the weights of the ``--init-from`` checkpoint ``spec`` (:func:`init_network`) into ``actor``
    (into a ``--history full`` or ``--observation v1`` run or wider ``--hidden`` layers by :func:`widen`); what the exported
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
