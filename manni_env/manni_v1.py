"""``from manni_env import manni_v1``: the Manni AEC environment with observation layout v1.

The same environment as :mod:`manni_env.manni_v0` (``raw_env(..., layout="v1")``, the module
docstring of :mod:`manni_env.env` describes both); its observation is v0's followed by the
trick-play segments. ``import manni_env`` registers it with PettingZoo's registry as
``manni/manni-v1``, so ``pettingzoo.make("aec", "manni/manni-v1", variant="basic")`` works.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from manni_env import PETTINGZOO_V1_ID as ENV_ID
from manni_env import env as _env_module

LAYOUT = "v1"

__all__ = ["ENV_ID", "LAYOUT", "env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """:func:`manni_env.env.env` with observation layout v1."""
    return _env_module.env(layout=LAYOUT, **kwargs)


def raw_env(**kwargs: Any) -> _env_module.raw_env:
    """:class:`manni_env.env.raw_env` with observation layout v1 (no wrappers)."""
    return _env_module.raw_env(layout=LAYOUT, **kwargs)
