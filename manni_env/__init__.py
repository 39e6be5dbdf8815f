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

Observation layout v1 (v0's observation followed by the trick-play segments,
:mod:`manni_env.observation`) is PettingZoo's ``manni/manni-v1`` (the module ``manni_env.manni_v1``)
and, in Gymnasium, ``layout="v1"`` on the ``-v0`` ids: a ``-v1`` of the same Gymnasium name would
be read as v0's successor, and Gymnasium would call v0 out of date, while both layouts are current.
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
PETTINGZOO_V1_ID = "manni/manni-v1"

if GYM_ID not in _gymnasium.registry:  # opponents by agent spec
    _gymnasium.register(GYM_ID, entry_point="manni_agents.envs:single_agent_env")
if GYM_SELF_PLAY_ID not in _gymnasium.registry:
    _gymnasium.register(GYM_SELF_PLAY_ID, vector_entry_point="manni_env.vector_gym:ManniVectorEnv")
for _layout, _aec in (("v0", PETTINGZOO_ID), ("v1", PETTINGZOO_V1_ID)):
    if _aec not in _pettingzoo.aec_registry:
        _pettingzoo.register("aec", _aec, entry_point=f"manni_env.manni_{_layout}:env")


def __getattr__(name: str):
    """``manni_env.manni_v0`` / ``manni_v1`` on first use (the AEC env modules are imported only by
    code that needs them)."""
    if name in ("manni_v0", "manni_v1"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
