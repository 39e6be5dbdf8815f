"""``from manni_env import manni_v0``: the Manni AEC environment, PettingZoo-style versioned module.

Importing it registers the environment with PettingZoo's registry as ``manni/manni-v0``, so
``pettingzoo.make("aec", "manni/manni-v0", variant="basic")`` works once this module is imported.
"""

from pettingzoo import aec_registry, register

from .env import env, raw_env

ENV_ID = "manni/manni-v0"
if ENV_ID not in aec_registry:
    register("aec", ENV_ID, entry_point="manni_env.manni_v0:env")

__all__ = ["ENV_ID", "env", "raw_env"]
