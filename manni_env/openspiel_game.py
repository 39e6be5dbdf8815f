"""Manni as OpenSpiel games: ``pyspiel.load_game("python_manni_hornafjardar")``, one per variant.

Importing this module (it needs the ``openspiel`` extra: ``pip install -e ".[openspiel]"``)
registers ``python_manni_<variant>`` with OpenSpiel for every variant of the table
(``python_manni_hornafjardar``, ``python_manni_basic``, ``python_manni_trjamann``,
``python_manni_laugarvatn``). The rules are the engine's
(:class:`~manni_env.engine.GameState`); this module only adds OpenSpiel's chance nodes, strings,
tensors and returns, so OpenSpiel's algorithms (ISMCTS, MCTS, CFR family, NFSP, ...) run on Manni.

==========================  =========================================================================
players                     3; player ``i`` is seat ``i``
parameters                  the variant's options (``target``, ``max_deals``, ``negative`` where the
                            variant has them; ``first_dealer``: -1 = drawn by chance) and
                            ``episode``: ``"deal"`` (default, :data:`~manni_env.episodes.DEFAULT_EPISODE`:
                            one deal, the first of a game) or ``"game"`` (a whole game)
chance                      the first dealer (3 outcomes, unless ``first_dealer`` fixes it), then each
                            card of every deal, uniform over the pack's cards not dealt yet: the
                            forehand's hand, the middlehand's, the dealer's (Hornafjarðarmanni: its
                            last card is the cut card), then the Manni, top card first. Every deal
                            is as likely as with the engine's shuffle.
actions                     the 63 actions of :mod:`manni_env.actions`; chance outcomes are card
                            numbers (0-51) or the first dealer's seat
returns                     ``"deal"``: each seat's points for the deal (RULES.md; in
                            :attr:`~manni_env.rules.Rules.deal_points_range`: [-8, 8], Basic [0, 8]
                            or [-4, 8] with ``negative``, announcement variants [-12, 12]); ``"game"``: the zero-sum outcome of
                            :func:`manni_env.episodes.outcome` (winners share +1, the others -1)
observation tensor          :class:`~manni_env.observation.ObservationEncoder` (``history="summary"``)
                            of the seat's :class:`~manni_env.view.SeatView`
information state tensor    the same with ``history="full"`` (adds every play of the deal in order)
strings                     :func:`manni_env.render.view_text` of the seat's view; the information
                            state string also lists the earlier deals of the episode as the seat
                            saw them (own cards, public exchange decisions, every trick)
==========================  =========================================================================

Everything a player observes comes from its ``SeatView``, so no hidden card reaches it. Two
documented simplifications: the order in which a seat chose its own discards is not part of its
information state (it changes nothing in the game), and in ``episode="deal"`` the tensors of the
terminal state are zeros (the engine has already moved on to the next deal; the strings describe
the finished deal). :meth:`ManniGame.state_from` wraps any engine state, e.g. a world drawn by the
belief sampler (``agents/ismcts.py`` uses it for ISMCTS's ``resample_from_infostate``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyspiel

from manni_env.actions import NUM_ACTIONS, action_to_str
from manni_env.cards import card_to_str, cards_of
from manni_env.engine import Deal, GameState, Phase
from manni_env.episodes import DEFAULT_EPISODE, check_episode, engine_rewards, episode_over
from manni_env.observation import ObservationEncoder
from manni_env.render import view_text
from manni_env.rules import VARIANT_TABLE, VARIANTS, Rules, make_rules


def _parameters(variant: str) -> dict:
    """The game's parameters besides ``first_dealer`` and ``episode``: the variant's options
    (:meth:`~manni_env.rules.Rules.options`) with their defaults."""
    return {k: v for k, v in make_rules(variant).options().items() if k != "first_dealer"}


def game_name(variant: str) -> str:
    """The OpenSpiel short name of a variant's game: ``python_manni_<variant>``."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")
    return f"python_manni_{variant}"


def load_game(variant: str = "hornafjardar", **parameters) -> ManniGame:
    """``pyspiel.load_game`` of a variant's game, e.g. ``load_game("basic", target=5, episode="game")``."""
    return pyspiel.load_game(game_name(variant), parameters)


def _game_type(variant: str) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=game_name(variant),
        long_name=f"Manni ({variant})",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        # Basic's default max(0, t - 4) scoring is not zero-sum; every other variant's deals are
        utility=pyspiel.GameType.Utility.ZERO_SUM if VARIANT_TABLE[variant].zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=3,
        min_num_players=3,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={**_parameters(variant), "first_dealer": -1, "episode": DEFAULT_EPISODE},
    )


@dataclass(frozen=True)
class _Config:
    """A game's settings. pyspiel games keep no Python attributes (OpenSpiel aborts at interpreter exit
    when a cached game holds some), so each game's config lives in :data:`_CONFIGS` and each state
    keeps a reference (shared by clones)."""

    variant: str
    rules: Rules
    episode: str
    pack: tuple[int, ...]

    def __deepcopy__(self, memo) -> _Config:
        return self


_CONFIGS: dict[int, _Config] = {}  # id(game) -> its config


class ManniGame(pyspiel.Game):
    """One variant of Manni for OpenSpiel (see the module docstring); one subclass per variant."""

    VARIANT = "hornafjardar"

    def __init__(self, params: dict | None = None):
        variant = self.VARIANT
        params = dict(params or {})
        episode = params.pop("episode", DEFAULT_EPISODE)
        check_episode(episode)
        first_dealer = params.pop("first_dealer", -1)
        rules = make_rules(variant, first_dealer=None if first_dealer == -1 else first_dealer, **params)
        low, high = rules.deal_points_range
        if episode == "game":
            low, high = -1, 1
        decisions = 3 + rules.manni_size + 1 + 3 * rules.hand_size  # exchange decisions + discards + plays, a bound
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=52,
            num_players=3,
            min_utility=float(low),
            max_utility=float(high),
            utility_sum=0.0 if VARIANT_TABLE[variant].zero_sum else None,  # matches the game type's utility
            max_game_length=decisions * (rules.max_deals if episode == "game" else 1),
        )
        super().__init__(_game_type(variant), info, {**params, "first_dealer": first_dealer, "episode": episode})
        _CONFIGS[id(self)] = _Config(variant, rules, episode, tuple(cards_of(rules.pack)))

    @property
    def rules(self) -> Rules:
        return _CONFIGS[id(self)].rules

    def new_initial_state(self) -> ManniState:
        """The start of an episode: chance nodes deal the first deal."""
        return ManniState(self)

    def state_from(self, engine: GameState) -> ManniState:
        """A state playing on from ``engine`` (a copy is taken) to the end of its current deal
        (``episode="deal"``) or game; its history is empty."""
        if engine.rules.variant != self.rules.variant:
            raise ValueError(f"an engine state of {engine.rules.variant!r} cannot be a {self.rules.variant!r} state")
        state = ManniState(self)
        state._engine = _Engine(engine.clone())
        state._start = len(engine.rounds)
        state._dealer = engine.dealer
        return state

    def deserialize_state(self, text: str) -> ManniState:
        """The state that :meth:`ManniState.serialize` wrote: its action history replayed from the
        initial state, every action checked as it is applied (``ValueError`` naming the first bad
        line). Nothing is unpickled, unlike OpenSpiel's default for Python games."""
        if not isinstance(text, str):
            raise ValueError(f"a serialized Manni state is a str, got {type(text).__name__}")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        most = self.max_game_length() + self.max_chance_nodes_in_history()
        if len(lines) > most:
            raise ValueError(f"a serialized Manni state holds at most {most} actions, got {len(lines)} lines")
        state = self.new_initial_state()
        for number, line in enumerate(lines, 1):
            if not (line.isascii() and line.isdigit() and len(line) <= 3):
                raise ValueError(f"not a serialized Manni state: line {number} is {line[:40]!r}, expected an action "
                                 "number (one per line)")
            try:
                state.apply_action(int(line))
            except ValueError as err:
                raise ValueError(f"not a serialized Manni state: line {number}: {err}") from None
        return state

    def max_chance_nodes_in_history(self) -> int:
        """The first dealer and every card of every deal of an episode."""
        config = _CONFIGS[id(self)]
        deals = config.rules.max_deals if config.episode == "game" else 1
        return 1 + deals * len(config.pack)

    def make_py_observer(self, iig_obs_type=None, params=None) -> ManniObserver:
        """Observation (``perfect_recall=False``) or information state (``True``) of one seat."""
        if params:
            raise ValueError(f"the Manni observer takes no parameters, got {params}")
        iig = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        if not iig.public_info or iig.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("Manni observes one seat's information (public and its own private information) only")
        return ManniObserver(self.rules, perfect_recall=iig.perfect_recall)


class _Engine:
    """Holds the engine state; OpenSpiel's ``clone()`` deep-copies attributes, and this copy is the
    engine's fast :meth:`GameState.clone` (finished deals are shared, never changed)."""

    __slots__ = ("game",)

    def __init__(self, game: GameState):
        self.game = game

    def __deepcopy__(self, memo) -> _Engine:
        return _Engine(self.game.clone())


class ManniState(pyspiel.State):
    """A Manni state for OpenSpiel: the engine's game plus the chance nodes that deal it."""

    def __init__(self, game: ManniGame):
        super().__init__(game)
        self._config = _CONFIGS[id(game)]
        self._engine: _Engine | None = None
        self._dealer: int | None = self._config.rules.first_dealer  # dealer of the deal being dealt
        self._cards: list[int] = []  # cards of the deal being dealt, in dealing order
        self._pending: int | None = None  # "game": the last card of a deal, played once the next is dealt
        self._start = 0  # deals finished before this episode began

    # ---------------------------------------------------------------- OpenSpiel API
    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if self._engine is None or self._pending is not None:
            return pyspiel.PlayerId.CHANCE
        return self._engine.game.to_move

    def is_terminal(self) -> bool:
        if self._engine is None:
            return False
        game = self._engine.game
        return episode_over(self._config.episode, len(game.rounds) > self._start, game.finished)

    def returns(self) -> list[float]:
        """Terminal returns: the episode's deal points (``"deal"``) or the game's outcome (``"game"``)."""
        if not self.is_terminal():
            return [0.0, 0.0, 0.0]
        reward = "outcome" if self._config.episode == "game" else "deal"
        return list(engine_rewards(reward, self._engine.game, True))

    def _legal_actions(self, player: int) -> list[int]:
        return self._engine.game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._dealer is None:
            return [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
        dealt = set(self._cards)
        left = [c for c in self._config.pack if c not in dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"the episode is over: no action is legal, got {action}")
        if self.is_chance_node():
            self._check_outcome(action)
            self._deal(action)
            return
        game = self._engine.game
        if self._config.episode == "game" and _ends_deal(game) and not _ends_game(game, action):
            self._pending = action  # the next deal is dealt by chance first
            self._dealer = (game.dealer + 1) % 3
            return
        game.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"first dealer seat {action}" if self._dealer is None else f"deal {card_to_str(action)}"
        return action_to_str(action)

    def __str__(self) -> str:
        """The full state (privileged: every hand), for debugging and OpenSpiel's clone checks."""
        if self._engine is None:
            return f"dealing: dealer {self._dealer}, cards {' '.join(map(card_to_str, self._cards))}"
        text = repr(self._engine.game)
        if self._pending is not None:
            text += f"; dealing the next deal, then {card_to_str(self._pending)}: {len(self._cards)} cards dealt"
        return text

    def serialize(self) -> str:
        """The action history, one action number per line (OpenSpiel's format for C++ games; read
        back by :meth:`ManniGame.deserialize_state`). ``ValueError`` for a state made by
        :meth:`ManniGame.state_from`, which has no history (serialize its engine state with
        :meth:`GameState.to_dict` instead)."""
        if self._start or (self._engine is not None and not self.history()):
            raise ValueError("a state made by state_from has no action history to serialize; "
                             "use its engine state's to_dict() instead")
        return "".join(f"{a}\n" for a in self.history())

    def _check_outcome(self, action: int) -> None:
        """``ValueError`` for a chance outcome this node cannot have (as player nodes reject illegal actions)."""
        if self._dealer is None:
            if action not in (0, 1, 2):
                raise ValueError(f"the first dealer is seat 0, 1 or 2, got {action}")
            return
        if not (0 <= action < 52 and self._config.rules.pack >> action & 1):
            raise ValueError(f"chance outcome {action} is not a card of the {self._config.variant} pack")
        if action in self._cards:
            raise ValueError(f"chance outcome {action} ({card_to_str(action)}) was dealt already in this deal")

    # ---------------------------------------------------------------- queries and dealing
    def engine(self) -> GameState | None:
        """The engine's game state (privileged; ``None`` while the first deal is dealt)."""
        return None if self._engine is None else self._engine.game

    def seat_view(self, player: int):
        """``player``'s :class:`~manni_env.view.SeatView`, or ``None`` before the first deal is dealt."""
        return None if self._engine is None else self._engine.game.view(player)

    def _deal(self, action: int) -> None:
        config = self._config
        if self._dealer is None:
            self._dealer = action
            return
        self._cards.append(action)
        if len(self._cards) < len(config.pack):
            return
        deal = _deal_of(config.rules, self._dealer, self._cards)
        self._cards = []
        if self._engine is None:
            rules = make_rules(config.variant, **{**config.rules.options(), "first_dealer": self._dealer})
            self._engine = _Engine(GameState(rules, seed=0, deals=[deal]))
            return
        # a later deal of the game: queue it through the public serialization, then play the pending card
        data = self._engine.game.to_dict()
        data["deal_queue"] = [{"hands": deal.hands, "manni": deal.manni, "cut_card": deal.cut_card}]
        engine = GameState.from_dict(data)
        engine.apply(self._pending)
        self._engine = _Engine(engine)
        self._pending = None


def _deal_of(rules, dealer: int, cards: list[int]) -> Deal:
    """The deal from cards in dealing order: forehand, middlehand, dealer (cut card last), Manni."""
    h = rules.hand_size
    order = ((dealer + 1) % 3, (dealer + 2) % 3, dealer)
    hands: list[tuple[int, ...]] = [(), (), ()]
    for j, seat in enumerate(order):
        hands[seat] = tuple(cards[j * h : (j + 1) * h])
    cut = cards[3 * h - 1] if rules.spec.cut else None
    return Deal(tuple(hands), tuple(cards[3 * h :]), cut)


def _ends_deal(game: GameState) -> bool:
    """The card about to be played is the deal's last: the seat on turn holds one card, the others none."""
    if game.phase != Phase.PLAY:
        return False
    seat = game.to_move
    return len(game.hand(seat)) == 1 and not game.hand((seat + 1) % 3) and not game.hand((seat + 2) % 3)


def _ends_game(game: GameState, action: int) -> bool:
    probe = game.clone()
    probe.apply(action)
    return probe.finished


class ManniObserver:
    """OpenSpiel's Python observer: one seat's tensor (with named segments in ``dict``) and string."""

    def __init__(self, rules: Rules, perfect_recall: bool):
        self.encoder = ObservationEncoder(rules, "full" if perfect_recall else "summary")
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(self.encoder.size, np.float32)
        self.dict = {s.name: self.tensor[s.offset : s.offset + s.size] for s in self.encoder.segments}

    def set_from(self, state: ManniState, player: int) -> None:
        if state.seat_view(player) is None or (state.is_terminal() and state._config.episode == "deal"):
            self.tensor.fill(0.0)
        else:
            self.encoder.encode(state.seat_view(player), out=self.tensor)

    def string_from(self, state: ManniState, player: int) -> str:
        engine = state.engine()
        if engine is None:
            return f"seat {player}: waiting for the deal"
        rounds = engine.rounds[state._start :]
        past = [_round_text(r, player) for r in rounds] if self.perfect_recall or state.is_terminal() else []
        if state.is_terminal() and state._config.episode == "deal":
            return "\n".join(past)
        return "\n".join([*past, view_text(engine.view(player))])


def _round_text(result, seat: int) -> str:
    """A finished deal as ``seat`` saw it: its own cards and exchange, the public decisions, every trick."""
    lines = [f"Deal {result.index + 1} (dealer seat {result.dealer}, {result.contract.describe()}): "
             f"dealt {_cards(result.hands[seat])}"]
    for e in result.exchanges:
        own = e.seat == seat
        if e.swap is not None:  # Basic: public; the swapper sees the Manni it takes
            lines.append(f"seat {e.seat} {'swapped' if e.swap else 'kept'}"
                         + (f", got {_cards(result.manni)}" if e.swap and own else ""))
        elif e.take is not None:  # announcement variants: public; the taker sees the Manni and its discards
            lines.append(f"seat {e.seat} {'took' if e.take else 'passed'} the Manni"
                         + (f" {_cards(result.manni)}, discarded {_cards(e.discards)}" if e.take and own else ""))
        elif own:  # Hornafjarðarmanni: the others see how many cards were exchanged
            lines.append(f"seat {seat} discarded {_cards(e.discards)}, drew {_cards(e.drawn)}")
        else:
            lines.append(f"seat {e.seat} exchanged {len(e.discards)}")
    lines.append("tricks: " + " / ".join(f"{leader}:{_cards(cards)}>{winner}" for leader, cards, winner in result.tricks))
    lines.append(f"points {' '.join(f'{p:+d}' for p in result.points)}")
    return "\n".join(lines)


def _cards(cards) -> str:
    return " ".join(map(card_to_str, cards)) or "-"


# OpenSpiel keeps each game's creator until after the interpreter has shut down, and aborts then if
# the creator is a closure: one class per variant, like OpenSpiel's own Python games.
GAMES = {v: type(f"Manni{v.capitalize()}Game", (ManniGame,), {"VARIANT": v, "__module__": __name__}) for v in VARIANTS}
for _variant, _cls in GAMES.items():
    if game_name(_variant) not in pyspiel.registered_names():
        pyspiel.register_game(_game_type(_variant), _cls)
