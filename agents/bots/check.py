"""``manni bot check``: a bot program's conformance run over scripted situations of every variant.

For each variant a fixed deal is driven (the other seats' choices scripted so that every phase
occurs: an exchange with a discard chosen, keep and swap, take and pass, the taker's discards, the
announcement, leading and following, the last card); the bot is asked at the first position of
each kind. Then it plays whole games against ``random`` (with ``deal_end`` and ``game_end``
messages) and the first decision of a new game in another seat; last, it must exit after ``bye``.
Every check is one :class:`Check`; a failing check names the bot's fault. Both ways the lines are
checked against the ``manni-bot/1`` JSON Schema (:mod:`manni_env.schemas`): the bot's answers, as
always, and here also every message sent to it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from manni_agents.bots import protocol as P
from manni_agents.bots.agent import BotAgent, BotError
from manni_agents.bots.process import EXIT_GRACE_S, BotFault
from manni_agents.evaluation.match import play_game
from manni_agents.random_agent import RandomAgent
from manni_env import actions as A
from manni_env.engine import GameState
from manni_env.rules import VARIANT_TABLE, VARIANTS, Phase, make_rules

SEED = 7
#: the target that keeps a whole game short where the variant has one (the others have a fixed length)
SHORT_TARGET = 3


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'}  {self.name}: {self.detail}"


def situations(variant: str, seed: int = SEED) -> list[tuple[str, GameState]]:
    """The first position of each kind in one scripted deal of ``variant`` (name, state)."""
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    found: dict[str, GameState] = {}
    while not state.rounds:
        view = state.view(state.to_move)
        kind = _kind(state, view)
        found.setdefault(kind, state.clone())
        state.apply(_scripted(view, rng))
    return list(found.items())


def _kind(state: GameState, view) -> str:
    phase = view.phase
    if phase == Phase.EXCHANGE:
        return "exchange, a discard chosen" if view.pending else "exchange"
    if phase == Phase.PLAY:
        if bin(view.hand).count("1") == 1:
            return "play, the last card"
        return "play, following" if view.trick else "play, leading"
    return phase.name.lower()


def _scripted(view, rng: np.random.Generator) -> int:
    """Choices that make every phase occur: discard one card then stop, keep then swap, take."""
    legal = view.legal_actions
    if view.phase == Phase.EXCHANGE:
        return A.EXCHANGE_DONE if view.pending or A.EXCHANGE_DONE not in legal or len(legal) == 1 else legal[0]
    if view.phase == Phase.SWAP:
        return A.KEEP_HAND if not view.passed else A.SWAP_HAND
    if view.phase == Phase.PICKUP:
        return A.PASS_MANNI if not view.passed else A.TAKE_MANNI
    return int(legal[rng.integers(len(legal))])


def run_checks(command: str, time_limit: float = 10.0, variants: tuple[str, ...] = VARIANTS,
               start_limit: float = 10.0) -> Iterator[Check]:
    """Every check of ``command`` in order (see the module docstring); nothing after a failed hello."""
    bot = BotAgent(command, time_limit=time_limit, start_limit=start_limit, check_messages=True)
    try:
        hello = _hello(bot)
        yield hello
        if not hello.ok:
            return
        for variant in variants:
            for kind, state in situations(variant):
                yield _decision(bot, f"{variant} {kind}", state)
            yield _whole_game(bot, variant)
        yield _bye(bot)
    finally:
        bot.close()


def _hello(bot: BotAgent) -> Check:
    state = GameState(make_rules(VARIANTS[0]), seed=SEED)
    try:
        bot.start_game(state.rules, state.to_move)
    except BotFault as fault:
        return Check("hello", False, bot.explain(str(fault), fault.request or P.hello(bot.time_limit)))
    except BotError as err:  # a message that breaks the schema (ours, not the bot's)
        bot.close()
        return Check("hello", False, str(err))
    version = f", version {bot.bot_version!r}" if bot.bot_version is not None else ""
    return Check("hello", True, f"protocol manni-bot/1, name {bot.bot_name!r}{version}")


def _decision(bot: BotAgent, name: str, state: GameState) -> Check:
    view = state.view(state.to_move)
    bot.reset()
    start = time.perf_counter()
    try:
        action = bot.act(view, np.random.default_rng(0))
    except BotError as err:
        return Check(name, False, str(err))
    ms = 1000 * (time.perf_counter() - start)
    return Check(name, True, f"legal answer {action} ({A.action_to_str(action)}) in {ms:.1f} ms")


def _whole_game(bot: BotAgent, variant: str) -> Check:
    name = f"{variant} whole game, then a new game in another seat"
    rules = make_rules(variant, **({"target": SHORT_TARGET} if "target" in VARIANT_TABLE[variant].options else {}))
    try:
        state = GameState(rules, seed=SEED)
        play_game(state, [bot, RandomAgent(), RandomAgent()], [np.random.default_rng(s) for s in range(3)])
        again = GameState(rules, seed=SEED + 1)
        play_game(again, [RandomAgent(), bot, RandomAgent()], [np.random.default_rng(s) for s in range(3)], max_deals=1)
    except BotError as err:
        return Check(name, False, str(err))
    return Check(name, True, f"{len(state.rounds)} deals, totals {list(state.totals)}; then a deal in seat 1")


def _bye(bot: BotAgent) -> Check:
    try:
        bot.start_game(make_rules(VARIANTS[0]), 0)  # a bot stopped by a failed check is started again
    except BotFault as fault:
        return Check("bye", False, f"could not start it again: {bot.explain(str(fault), fault.request or P.bye())}")
    code = bot.close()
    if code < 0:
        return Check("bye", False, f"did not exit within {EXIT_GRACE_S} s of bye and the end of its input (killed)")
    return Check("bye", True, f"exited with code {code}")
