"""``from manni_env import manni_v0``: the Manni AEC environment, PettingZoo-style versioned module.

``import manni_env`` registers it with PettingZoo's registry as ``manni/manni-v0``, so
``pettingzoo.make("aec", "manni/manni-v0", variant="basic")`` works.
"""

from manni_env import PETTINGZOO_ID as ENV_ID
from manni_env.env import env, raw_env

__all__ = ["ENV_ID", "env", "raw_env"]
