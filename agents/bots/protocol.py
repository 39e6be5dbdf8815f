"""The ``manni-bot/1`` messages: what a bot program reads and writes (see docs/bot-protocol.md).

Every function here is pure: a message is built from one seat's :class:`~manni_env.view.SeatView`
or from the public part of a finished deal, so it holds only what that seat may know. Cards and
actions use the names of :mod:`manni_env.cards` and :mod:`manni_env.actions`. The messages and
answers are described by the ``manni-bot/1`` JSON Schema (:mod:`manni_env.schemas`): a bot's
answers are checked against it (:func:`parse_hello`, :func:`parse_action`; whether the action is
legal is the game's rule, checked here after the schema), and :func:`check_message` checks a
message before it is sent (``manni bot check``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import numpy as np

from manni_env import actions as A
from manni_env.cards import NUM_CARDS, SUITS, card_to_str, cards_of
from manni_env.rules import Contract, ContractKind, ContractSource, ExchangeScheme, Phase, Rules
from manni_env.schemas import BOT, problem, where
from manni_env.view import SeatView

if TYPE_CHECKING:
    from manni_env.engine import RoundResult

PROTOCOL = "manni-bot/1"
#: deepest nesting of arrays and objects read in a bot's answer (an answer needs 1)
MAX_DEPTH = 32
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
PHASE_NAMES = {phase: phase.name.lower() for phase in Phase}
#: every action's name by number (cards first), looked up once per message field
_NAMES = tuple(A.action_to_str(a) for a in range(A.NUM_ACTIONS))
_CARDS = _NAMES[:NUM_CARDS]


def hello(time_limit: float) -> dict:
    """The first message to a new bot process; the bot answers ``{"type": "hello", "protocol", "name"}``."""
    return {"type": "hello", "protocol": PROTOCOL, "time_limit": time_limit}


def game(rules: Rules, seat: int, time_limit: float) -> dict:
    """A new game begins with this bot in ``seat`` (no answer)."""
    return {"type": "game", "protocol": PROTOCOL, "variant": rules.variant, "options": rules.options(),
            "seat": seat, "time_limit": time_limit}


def act(view: SeatView) -> dict:
    """The decision request of the seat on turn: everything it may know and nothing else."""
    legal = list(view.legal_actions)
    return {
        "type": "act",
        "seat": view.seat,
        "variant": view.rules.variant,
        "deal": view.deal_index,
        "dealer": view.dealer,
        "phase": PHASE_NAMES[view.phase],
        "legal": legal,
        "legal_names": [_NAMES[a] for a in legal],
        "hand": _card_names(view.hand),
        "contract": contract_of(view.contract),
        "cut_card": None if view.cut_card is None else _CARDS[view.cut_card],
        "history": history(view),
        "trick": [_CARDS[c] for c in view.trick],
        "leader": view.leader,
        "own": {
            "dealt": _card_names(view.dealt_hand),
            "discards": _card_names(view.discards),
            "drawn": _card_names(view.drawn),
            "pending": [_CARDS[c] for c in view.pending],
            "exchange_limit": view.exchange_limit,
        },
        "manni_used": view.manni_used,
        "tricks_won": list(view.tricks_won),
        "used_contracts": [list(names) for names in view.used_contracts],
        "plus": list(view.plus),
        "minus": list(view.minus),
        "totals": list(view.totals),
    }


def deal_end(result: RoundResult, seat: int) -> dict:
    """A deal is over (no answer): its public outcome, the last trick included."""
    leader, cards, winner = result.tricks[-1]
    return {
        "type": "deal_end", "seat": seat, "deal": result.index, "contract": contract_of(result.contract),
        "last_trick": {"leader": leader, "cards": [card_to_str(c) for c in cards], "winner": winner},
        "tricks_won": list(result.tricks_won), "points": list(result.points),
        "plus": list(result.plus), "minus": list(result.minus), "totals": list(result.totals),
    }


def game_end(result: RoundResult, seat: int, winners: tuple[int, ...]) -> dict:
    """The game is over (no answer)."""
    return {"type": "game_end", "seat": seat, "deals": result.index + 1, "totals": list(result.totals),
            "plus": list(result.plus), "minus": list(result.minus), "winners": list(winners)}


def bye() -> dict:
    """The last message: the bot should exit (its stdin closes next)."""
    return {"type": "bye"}


def contract_of(contract: Contract | None) -> dict | None:
    """``{"kind": "trump", "trump": "S", "declarer": 1, "name": "spades"}`` (``None`` before it is known)."""
    if contract is None:
        return None
    trump = None if contract.trump is None else SUITS[contract.trump]
    return {"kind": contract.kind.label, "trump": trump, "declarer": contract.declarer, "name": contract.name}


def history(view: SeatView) -> list[dict]:
    """The public decisions of this deal in order, each ``[seat, action, name]``: the exchange
    decisions (Hornafjarðarmanni: ``[seat, 52, "exchange_done", count]`` with the public count of
    cards exchanged; which cards is private), keep/swap, pass/take, the announcement, then every
    card played."""
    spec = view.rules.spec
    order = (view.forehand, (view.dealer + 2) % 3, view.dealer)
    events: list[list] = []
    if spec.exchange == ExchangeScheme.EXCHANGE:
        for seat in order:
            if view.exchange_counts[seat] >= 0:
                events.append([seat, A.EXCHANGE_DONE, _NAMES[A.EXCHANGE_DONE], view.exchange_counts[seat]])
    else:
        keep, take = (A.KEEP_HAND, A.SWAP_HAND) if spec.exchange == ExchangeScheme.SWAP else (A.PASS_MANNI, A.TAKE_MANNI)
        events += [_event(seat, keep) for seat in view.passed]
        owner = view.swapper if spec.exchange == ExchangeScheme.SWAP else view.taker
        if owner is not None:
            events.append(_event(owner, take))
    contract = view.contract
    if spec.contract_source == ContractSource.ANNOUNCE and contract is not None:
        row = next(a for a in spec.announcements if a.name == contract.name and a.trump == contract.trump)
        events.append(_event(contract.declarer, row.action))
    events += [[seat, card, _CARDS[card]] for seat, card in view.plays]
    return events


def _event(seat: int, action: int) -> list:
    return [seat, action, _NAMES[action]]


def _card_names(mask: int) -> list[str]:
    return [_CARDS[c] for c in cards_of(mask)]


def encode(message: dict) -> bytes:
    """One message as one line of compact UTF-8 JSON (no spaces), its keys in the order they are built."""
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


#: a positive float with the longest ``repr`` there is (23 characters): the widest ``time_limit``
_WIDEST_SECONDS = 1.2345678901234567e-300


def longest_line(rules: Rules) -> int:
    """An upper bound on the bytes of any line (its newline included) sent to a bot playing under
    ``rules``: each message built with every field at its longest (a card list holding the whole
    pack, ``legal`` every action, a tally as wide as ``max_deals`` deals at the widest deal score,
    the longest ``time_limit``) and encoded as :func:`encode` sends it. The fields never all reach
    their longest at once, so no message comes near it."""
    spec = rules.spec
    pack = [_CARDS[c] for c in cards_of(spec.pack)]
    low, high = rules.deal_points_range
    tally = -max(abs(low), abs(high)) * rules.max_deals  # a total, plus or minus tally after every deal
    points = _widest([low, high])
    contract = {"kind": _widest([kind.label for kind in ContractKind]), "trump": SUITS[0], "declarer": 2,
                "name": _widest([None, *(a.name for a in spec.announcements)])}
    events = ([[2, A.EXCHANGE_DONE, _NAMES[A.EXCHANGE_DONE], max(spec.exchange_limits)]] * 3
              + [[2, 62, _widest(_NAMES[A.EXCHANGE_DONE + 1:])]] * 5  # keep/swap or pass/take, owner, announcement
              + [[2, 51, card] for card in pack])  # every card played
    longest = {
        "hello": hello(_WIDEST_SECONDS),
        "game": game(rules, 2, _WIDEST_SECONDS),
        "act": {
            "type": "act", "seat": 2, "variant": rules.variant, "deal": rules.max_deals - 1, "dealer": 2,
            "phase": _widest(list(PHASE_NAMES.values())), "legal": list(range(A.NUM_ACTIONS)), "legal_names": list(_NAMES),
            "hand": pack, "contract": contract, "cut_card": pack[0], "history": events, "trick": pack[:3], "leader": None,
            "own": {"dealt": pack, "discards": pack, "drawn": pack, "pending": pack, "exchange_limit": max(spec.exchange_limits)},
            "manni_used": spec.manni_size, "tricks_won": [spec.hand_size] * 3, "used_contracts": [list(spec.contracts)] * 3,
            "plus": [tally] * 3, "minus": [tally] * 3, "totals": [tally] * 3,
        },
        "deal_end": {
            "type": "deal_end", "seat": 2, "deal": rules.max_deals - 1, "contract": contract,
            "last_trick": {"leader": 2, "cards": pack[:3], "winner": 2}, "tricks_won": [spec.hand_size] * 3,
            "points": [points] * 3, "plus": [tally] * 3, "minus": [tally] * 3, "totals": [tally] * 3,
        },
        "game_end": {"type": "game_end", "seat": 2, "deals": rules.max_deals, "totals": [tally] * 3,
                     "plus": [tally] * 3, "minus": [tally] * 3, "winners": [0, 1, 2]},
        "bye": bye(),
    }
    return max(len(encode(message)) for message in longest.values())


def _widest(values: list) -> object:
    """The value of ``values`` whose JSON is longest."""
    return max(values, key=lambda value: len(json.dumps(value, ensure_ascii=False).encode()))


def decode(line: bytes, what: str) -> object:
    """A bot's answer line as JSON; ``ValueError`` naming ``what`` if it is not JSON or nests
    deeper than :data:`MAX_DEPTH` (checked before parsing, in linear time)."""
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH:
        codes = np.frombuffer(_STRINGS.sub(b"", line), dtype=np.uint8)
        steps = np.isin(codes, (91, 123)).astype(np.int64) - np.isin(codes, (93, 125))
        if steps.size and int(np.cumsum(steps).max()) > MAX_DEPTH:
            raise ValueError(f"{what} nests deeper than {MAX_DEPTH} levels: {_shorten(line, 60)}")
    try:
        return json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{what} is not JSON: {_shorten(line)}") from None


def check_message(message: dict) -> None:
    """``ValueError`` if ``message`` (to a bot) breaks the ``manni-bot/1`` schema's definition of its type."""
    broken = problem(BOT, message, message["type"])
    if broken is not None:
        raise ValueError(f"the {message['type']} message breaks the manni-bot/1 schema: "
                         f"{where(broken.path) or 'the message'}: {broken.message}")


def parse_action(line: bytes, legal: tuple[int, ...]) -> int:
    """The action of a bot's answer ``{"action": 34}`` (or its name, ``{"action": "TH"}``);
    ``ValueError`` naming the problem if the line is not such an answer (the schema's
    ``act_answer``) or the action is not legal."""
    answer = decode(line, "answer")
    if type(answer) is dict and type(answer.get("action")) is int and answer["action"] in legal:
        return answer["action"]  # the usual answer, which the schema passes: not checked again (a tenth of a ms)
    broken = problem(BOT, answer, "act_answer")
    if broken is not None and not broken.path:
        raise ValueError(f'answer is not an object with "action" ({broken.message}): {_shorten(line)}')
    action = answer["action"]
    if isinstance(action, str):
        try:
            action = A.action_from_str(action)
        except ValueError:
            raise ValueError(f"answer names no action: {action!r}") from None
    if broken is not None or not isinstance(action, int):  # the schema's integer lets 3.0 pass
        raise ValueError(f"answer's action is not an action number or name: {action!r}")
    if action not in legal:
        raise ValueError(f"illegal action {action} (legal: {', '.join(map(str, legal))})")
    return action


def parse_hello(line: bytes) -> tuple[str, str | None]:
    """The bot's name and version (``None`` if it gives none) from its hello answer (the schema's
    ``hello_answer``); ``ValueError`` for another answer or protocol."""
    answer = decode(line, "hello answer")
    broken = problem(BOT, answer, "hello_answer")
    if broken is not None and broken.path not in (("name",), ("version",)):
        raise ValueError(f'hello answer is not {{"type": "hello", "protocol", "name"}} '
                         f'({where(broken.path) or "the answer"}: {broken.message}): {_shorten(line)}')
    if answer["protocol"] != PROTOCOL:
        raise ValueError(f"bot speaks protocol {answer['protocol']!r}, not {PROTOCOL!r}")
    if broken is not None and broken.path == ("name",):
        raise ValueError(f"hello answer has no name: {_shorten(line)}")
    if broken is not None:
        raise ValueError(f"hello answer's version is not a string: {answer['version']!r}")
    version = answer.get("version")
    return answer["name"].strip(), None if version is None else str(version).strip()[:100]


def _shorten(line: bytes, keep: int = 200) -> str:
    text = line.decode(errors="replace").rstrip("\n")
    return repr(text if len(text) <= keep else text[:keep] + "…")
