"""One small interface over the two implementations of the rules, so a test body runs on both.

:class:`EnginePath` drives ``GameState`` + ``ObservationEncoder`` (paying rewards as the AEC env
does, through :mod:`manni_env.episodes`); :class:`VectorPath` drives slot 0 of a ``VectorManni``
that plays explicit deals. Both start a game from explicit deals, expose the seat on turn, phase,
legal actions, its observation and any seat's view, and turn each step into a :class:`StepResult`. The vector path also steps an engine
alongside and asserts after every step that both agree exactly (step result, seat on turn, phase,
legal actions, observation bytes, every seat's view), so each scripted test on it is an
equivalence test too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import partial

import numpy as np

from manni_env.actions import action_to_str
from manni_env.engine import Deal, GameState, IllegalActionError
from manni_env.episodes import engine_rewards, episode_end
from manni_env.observation import ObservationEncoder
from manni_env.rules import Phase, Rules, make_rules
from manni_env.vector import VectorManni, random_legal_actions
from manni_env.view import SeatView

RESULT_FIELDS = ("tricks_won", "points", "plus", "minus", "totals")


@dataclass(frozen=True)
class StepResult:
    """What one step reports: rewards by absolute seat, the deal that ended (``RESULT_FIELDS``
    as tuples) or ``None``, and, once the game is over, its end flags and winners."""

    rewards: tuple[float, float, float]
    deal_end: dict | None
    terminated: bool
    truncated: bool
    winners: tuple[int, ...] | None



class EnginePath:
    """The reference engine: ``GameState(rules, deals=deals)``."""

    def __init__(self, rules: Rules, deals: list[Deal], history: str = "summary", reward: str = "deal"):
        self.state = GameState(rules, deals=list(deals))
        self.encoder = ObservationEncoder(rules, history)
        self.reward = reward

    @property
    def to_move(self) -> int:
        return self.state.to_move

    @property
    def phase(self) -> Phase:
        return self.state.phase

    def legal(self) -> list[int]:
        return self.state.legal_actions()

    def observation(self) -> np.ndarray:
        return self.encoder.encode(self.state.view(self.state.to_move))

    def view(self, seat: int) -> SeatView:
        return self.state.view(seat)

    def deal(self) -> Deal:
        return self.state.deal

    def snapshot(self):
        return self.state.to_dict()

    def step(self, action: int) -> StepResult:
        state = self.state
        deals = len(state.rounds)
        state.apply(action)
        deal_over = len(state.rounds) > deals
        rewards, deal_end = (0.0, 0.0, 0.0), None
        if deal_over:
            result = state.rounds[-1]
            deal_end = {name: tuple(getattr(result, name)) for name in RESULT_FIELDS}
            rewards = engine_rewards(self.reward, state, True)
        terminated, truncated = episode_end("game", deal_over, state.finished, state.truncated)
        return StepResult(rewards, deal_end, terminated, truncated, state.winners if state.finished else None)


class VectorPath:
    """Slot 0 of a ``VectorManni`` reset with ``deals`` as its explicit deals, checked against an
    engine playing the same deals after every step. With ``slots > 1`` the other slots play their
    own random deals by random legal actions alongside (in other phases, ending their games at
    other steps)."""

    def __init__(self, rules: Rules, deals: list[Deal], history: str = "summary", reward: str = "deal",
                 backend: str = "auto", slots: int = 1):
        self.venv = VectorManni(rules, slots, history=history, reward=reward, backend=backend)
        self.obs, self.mask, _ = self.venv.reset(seed=0, deals=[list(deals)] + [[]] * (slots - 1))
        self.others = np.random.default_rng(0)
        self.over = False
        self.engine = EnginePath(rules, deals, history, reward)
        self.steps = 0
        self._agree("after reset")

    @property
    def to_move(self) -> int:
        return -1 if self.over else int(self.venv.to_move[0])

    @property
    def phase(self) -> Phase:
        return Phase.GAME_OVER if self.over else Phase(int(self.venv.phase[0]))

    def legal(self) -> list[int]:
        return [] if self.over else np.flatnonzero(self.mask[0]).tolist()

    def observation(self) -> np.ndarray:
        return self.obs[0]

    def view(self, seat: int) -> SeatView:
        assert not self.over, "the vector slot has already started its next game"
        return self.venv.view(0, seat)

    def deal(self) -> Deal:
        return self.venv.deal(0)

    def snapshot(self):
        """Every array of the env (its whole state), copied."""
        arrays = {k: v.copy() for k, v in vars(self.venv).items() if isinstance(v, np.ndarray)}
        state = getattr(self.venv, "state", None)
        if state is not None and hasattr(state, "_asdict"):
            arrays.update({f"state.{k}": np.array(v, copy=True) for k, v in state._asdict().items()})
        return {k: (v.dtype.str, v.shape, v.tobytes()) for k, v in arrays.items()}

    def step(self, action: int) -> StepResult:
        assert not self.over, "the game is over"
        actions = random_legal_actions(self.mask, self.others)
        actions[0] = action
        self.obs, self.mask, _, rewards, terminated, truncated, infos = self.venv.step(actions)
        deal_end = winners = None
        if infos["deal_over"][0]:
            deal_end = {name: tuple(int(x) for x in infos[name][0]) for name in RESULT_FIELDS}
        if terminated[0] or truncated[0]:
            self.over = True
            winners = tuple(np.flatnonzero(infos["winners"][0]).tolist())
        result = StepResult(tuple(float(r) for r in rewards[0]), deal_end, bool(terminated[0]), bool(truncated[0]),
                            winners)
        self.steps += 1
        where = f"step {self.steps} ({action_to_str(action)})"
        try:
            expected = self.engine.step(action)
        except IllegalActionError as e:
            raise AssertionError(f"{where}: the vector env accepted an action the engine rejects: {e}") from None
        assert result == expected, f"{where}: vector env {result}, engine {expected}"
        self._agree(f"after {where}")
        return result

    def _agree(self, where: str) -> None:
        """Assert that the vector env and the engine are in the same position."""
        engine = self.engine
        assert self.over == engine.state.finished, f"{where}: game over {self.over}, engine {engine.state.finished}"
        if self.over:
            return
        assert (self.to_move, self.phase) == (engine.to_move, engine.phase), (
            f"{where}: seat {self.to_move} in {self.phase.name}, engine seat {engine.to_move} in {engine.phase.name}")
        assert self.legal() == engine.legal(), f"{where}: legal {self.legal()}, engine {engine.legal()}"
        obs, expected = self.observation(), engine.observation()
        if obs.tobytes() != expected.tobytes():
            differ = np.flatnonzero(obs != expected).tolist()
            raise AssertionError(f"{where}: observations differ at indices {differ}")
        for seat in range(3):
            mine, theirs = self.view(seat), engine.view(seat)
            differ = [f.name for f in fields(SeatView) if getattr(mine, f.name) != getattr(theirs, f.name)]
            assert not differ, f"{where}: seat {seat}'s view differs in {', '.join(differ)}"


#: "vector" runs VectorManni's default backend (numba when installed), "vector-python" the same
#: kernels run by Python, "vector-slots" slot 0 of three
PATHS = {
    "engine": EnginePath,
    "vector": VectorPath,
    "vector-python": partial(VectorPath, backend="python"),
    "vector-slots": partial(VectorPath, slots=3),
}


def padded(rules: Rules, deals: list[Deal]) -> list[Deal]:
    """``deals`` followed by seeded random deals up to the deal cap, so that both paths play the
    same deals however long the game goes on (``rules.first_dealer`` must be set)."""
    if rules.first_dealer is None:
        raise ValueError("explicit deals need rules with first_dealer set")
    more = [
        GameState(make_rules(rules.variant, **{**rules.options(), "first_dealer": (rules.first_dealer + k) % 3}),
                  seed=k).deal
        for k in range(len(deals), rules.max_deals)
    ]
    return [*deals, *more]


def open_path(name: str, rules: Rules, deals: list[Deal], history: str = "summary", reward: str = "deal"):
    """The path ``name`` (a key of :data:`PATHS`) playing ``deals``, then seeded random deals (see
    :func:`padded`). A path that cannot play ``rules`` raises: the test fails, it is not skipped."""
    return PATHS[name](rules, padded(rules, deals), history, reward)
