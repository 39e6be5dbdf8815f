"""manni-env: rules engine and PettingZoo environment for Manni, the Icelandic three-player
trick-taking game (Hornafjarðarmanni, Basic Manni, Trjámann, Laugarvatnsmanni)."""

from .engine import Contract, Deal, GameState, IllegalActionError, Phase
from .rules import VARIANTS, Rules, make_rules

__all__ = ["Contract", "Deal", "GameState", "IllegalActionError", "Phase", "Rules", "VARIANTS", "make_rules"]
__version__ = "0.1.0"
