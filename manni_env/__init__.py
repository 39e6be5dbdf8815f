"""manni-env: rules engine and PettingZoo environment for Manni, the Icelandic three-player
trick-taking game (Hornafjarðarmanni, Basic Manni, Trjámann, Laugarvatnsmanni)."""

from .engine import Contract, Deal, GameState, IllegalActionError, Phase
from .rules import VARIANTS, Rules, make_rules

__all__ = ["Contract", "Deal", "GameState", "IllegalActionError", "Phase", "Rules", "VARIANTS", "make_rules"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """``manni_env.manni_v0`` on first use (PettingZoo is imported only by code that needs the env)."""
    if name == "manni_v0":
        import importlib

        return importlib.import_module(f"{__name__}.manni_v0")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
