"""manni-env: rules engine and environments for Manni, the Icelandic three-player trick-taking game
(Hornafjarðarmanni, Basic Manni, Trjámann, Laugarvatnsmanni).

Importing the package registers the environments by entry-point strings (nothing else is imported):

- Gymnasium ``manni_env/Manni-v0``: the single-agent env (one learner, two embedded opponents,
  :mod:`manni_env.single_agent`): ``gymnasium.make("manni_env/Manni-v0", variant="basic",
  opponents=("rule_based", "random"))``; ``gymnasium.make_vec("manni_env/Manni-v0", num_envs=8)``
  runs copies of it in Gymnasium's vector envs;
- Gymnasium ``manni_env/ManniSelfPlay-v0``: the batched self-play vector env
  (:mod:`manni_env.vector_gym`, every seat's decisions): ``gymnasium.make_vec(
  "manni_env/ManniSelfPlay-v0", num_envs=64)``;
- PettingZoo ``manni/manni-v0``: the AEC env, ``pettingzoo.make("aec", "manni/manni-v0")``.
"""

import gymnasium as _gymnasium
import pettingzoo as _pettingzoo

from manni_env.engine import Contract, Deal, GameState, IllegalActionError, Phase
from manni_env.rules import VARIANTS, Rules, make_rules

__all__ = ["Contract", "Deal", "GameState", "IllegalActionError", "Phase", "Rules", "VARIANTS", "make_rules"]
__version__ = "0.2.0"  # the distribution's version (pyproject.toml reads it); CHANGELOG.md says what changed

GYM_ID = "manni_env/Manni-v0"
GYM_SELF_PLAY_ID = "manni_env/ManniSelfPlay-v0"
PETTINGZOO_ID = "manni/manni-v0"

if GYM_ID not in _gymnasium.registry:
    _gymnasium.register(GYM_ID, entry_point="manni_agents.envs:single_agent_env")  # opponents by agent spec
if GYM_SELF_PLAY_ID not in _gymnasium.registry:
    _gymnasium.register(GYM_SELF_PLAY_ID, vector_entry_point="manni_env.vector_gym:ManniVectorEnv")
if PETTINGZOO_ID not in _pettingzoo.aec_registry:
    _pettingzoo.register("aec", PETTINGZOO_ID, entry_point="manni_env.manni_v0:env")


def __getattr__(name: str):
    """``manni_env.manni_v0`` on first use (the AEC env module is imported only by code that needs it)."""
    if name == "manni_v0":
        import importlib

        return importlib.import_module(f"{__name__}.manni_v0")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
