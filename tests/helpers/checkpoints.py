"""A ``ppo`` checkpoint with random weights, for the agent and symmetry tests."""

from __future__ import annotations

import numpy as np

from manni_agents.ppo_agent import layout_fingerprint, save_checkpoint
from manni_env.observation import ObservationEncoder
from manni_env.rules import make_rules


def random_checkpoint(path, variant="hornafjardar", hidden=(32, 16), obs_size=None, seed=0, play=None):
    """A checkpoint with random weights in the documented format (``play``: the metadata's play mode, if any)."""
    rng = np.random.default_rng(seed)
    encoder = ObservationEncoder(make_rules(variant))
    sizes = [obs_size or encoder.size, *hidden, 63]
    layers = [(rng.normal(size=(o, i)).astype(np.float32), rng.normal(size=o).astype(np.float32))
              for i, o in zip(sizes, sizes[1:])]
    meta = {"variant": variant, "history": "summary", "obs_size": sizes[0], "activation": "tanh",
            "layout_sha256": layout_fingerprint(encoder)}
    if play is not None:
        meta["play"] = play
    return save_checkpoint(path, layers, meta)
