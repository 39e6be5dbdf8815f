"""A ``manni-record/1`` game as replay frames: every hand face up, one frame per decision.

:func:`build_replay` validates a record (:func:`~manni_env.records.validate_record`), then replays
it through the engine from its explicit deals: a frame at the start of each deal, then one after
every decision (each discard, exchange end, swap, pickup, announcement and card) with the hands,
the cards discarded, the trick on the table, tricks won and tallies. The optional extra record
field ``probabilities`` (one list per deal, one entry per decision in this order: ``null`` or
``{action: probability}``, written by ``manni serve`` for agents that expose them) is shown beside
each decision; for a person's decision (player ``human``, at a table) they are the shipped agent's
advice and the frame names its choice (``agent_choice``). :func:`parse_records` reads an uploaded
JSON Lines file from memory, its first :data:`MAX_LISTED` games only. A player's name is shown
cut to :data:`NAME_SHOWN` characters, and only the known fields of ``final`` are copied, so no
field of a record is repeated into the answer at full length. Each deal carries its par (:mod:`manni_agents.evaluation.par`): the
shipped agent's points in each seat playing all three seats on the deal's cards, and the players'
points minus it; ``par`` sums them over the game.
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Sequence

from manni_agents.evaluation import par
from manni_agents.play.human import contract_name
from manni_env import actions as A
from manni_env.cards import card_to_str, sort_for_display
from manni_env.engine import GameState, Phase
from manni_env.records import RecordError, json_problem, record_deals, record_rules, round_actions, validate_record

_EXCHANGE_PHASES = (Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP, Phase.DISCARD)
#: Games of an uploaded file that are read and listed (the rest of the file is not parsed).
MAX_LISTED = 1000
#: Characters of a player's name (a variant's: 20) shown in a replay and a list of games.
NAME_SHOWN = 64


def shown(name: str, limit: int = NAME_SHOWN) -> str:
    """``name`` cut to ``limit`` characters (the last one ``…`` when cut)."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def parse_records(data: bytes, limit: int = MAX_LISTED) -> tuple[list[dict], bool]:
    """The first ``limit`` records of a JSON Lines file held in memory, and whether the file holds
    more lines after them; :class:`RecordError` naming the first line that is not a JSON object."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(f"the file is not UTF-8 text (bad byte at offset {err.start})") from None
    records: list[dict] = []
    for number, line in enumerate(io.StringIO(text, newline=""), 1):  # lazily: a line at a time
        if not line.strip():
            continue
        if len(records) == limit:
            return records, True
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise RecordError(f"line {number}: {json_problem(err)}", line=number) from None
        except (ValueError, RecursionError) as err:  # over-long integers, too deep nesting
            raise RecordError(f"line {number}: not a usable JSON record ({type(err).__name__})", line=number) from None
        if not isinstance(record, dict):
            raise RecordError(f"line {number}: a record is a JSON object, got {type(record).__name__}", line=number)
        records.append(record)
    if not records:
        raise RecordError("the file holds no records (one manni-record/1 JSON object per line)")
    return records, False


def summary(record: dict, index: int) -> dict:
    """What a list of games shows, read defensively (the record may be invalid)."""
    players, rounds, final = record.get("players"), record.get("rounds"), record.get("final")
    if not (isinstance(players, list) and len(players) == 3 and all(isinstance(p, str) for p in players)):
        players = None
    winners = final.get("winners") if isinstance(final, dict) else None
    variant = record.get("variant")
    return {
        "index": index,
        "variant": shown(variant, 20) if isinstance(variant, str) else None,
        "players": [shown(p) for p in players] if players else None,
        "deals": len(rounds) if isinstance(rounds, list) else 0,
        "winners": winners if isinstance(winners, list) and all(type(w) is int for w in winners) else None,
    }


def _strs(cards) -> list[str]:
    return [card_to_str(c) for c in sort_for_display(cards)]


def _is_distribution(value) -> bool:
    return isinstance(value, dict) and len(value) <= A.NUM_ACTIONS and all(
        isinstance(k, str) and len(k) <= 20 and type(p) in (int, float) and math.isfinite(p) and 0 <= p <= 1
        for k, p in value.items()
    )


def _probabilities(record: dict) -> list:
    value = record.get("probabilities")
    if value is None:
        return []
    if isinstance(value, list) and all(
        isinstance(deal, list) and all(p is None or _is_distribution(p) for p in deal) for deal in value
    ):
        return value
    raise RecordError("'probabilities' must be a list per deal of lists holding null or {action: probability in [0, 1]}")


def _contract_text(contract, names: Sequence[str]) -> str | None:
    if contract is None:
        return None
    text = contract_name(contract)
    return text + (f", declared by {names[contract.declarer]}" if contract.declarer is not None else "")


def build_replay(record: dict, deadline: float | None = None) -> dict:
    """The replay of ``record``: ``{"variant", "players", "deals", "frames", ...}``; raises
    :class:`~manni_env.records.RecordError` (with round and trick) for an invalid record, and
    ``TimeoutError`` when a deal starts after ``deadline`` (``time.monotonic()``)."""
    validate_record(record)
    probabilities = _probabilities(record)
    rules = record_rules(record)
    state = GameState(rules, seed=0, deals=record_deals(record))
    players = record.get("players")
    names = [f"seat {s} ({shown(p)})" for s, p in enumerate(players)] if players else [f"seat {s}" for s in range(3)]
    frames: list[dict] = []
    deals = []
    pars = par.tracker_for(state)
    for i, r in enumerate(record["rounds"]):
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"the replay was still building at deal {i + 1} of {len(record['rounds'])}")
        deal_probs = probabilities[i] if i < len(probabilities) else []
        discarded: list[list[int]] = [[], [], []]
        contract = _contract_text(state.contract, names)
        cut = f"; cut card {r['cut_card']}" if r["cut_card"] else ""
        deals.append({"deal": i + 1, "dealer": r["dealer"], "cut_card": r["cut_card"], "manni": r["manni"],
                      "first_frame": len(frames)})
        frames.append(_frame(state, i, "deal", None, None, f"Deal {i + 1}: {names[r['dealer']]} deals{cut}"
                             + (f" — {contract}" if contract else ""), [state.hand(s) for s in range(3)],
                             discarded, [], None, contract, None))
        for step, (action, drawn) in enumerate(round_actions(state, r)):
            seat, phase = state.to_move, state.phase
            before = [state.hand(s) for s in range(3)]
            state.apply(action)
            ended = len(state.rounds) > i
            hands = [[c for c in h if s != seat or c != action] for s, h in enumerate(before)] if ended else \
                [state.hand(s) for s in range(3)]
            kind = "exchange" if phase in _EXCHANGE_PHASES else phase.name.lower()
            if kind == "exchange" and action < 52:
                discarded[seat].append(action)
            text = f"{names[seat]} {_describe(action, phase, drawn)}"
            trick, winner = _table(state, i, phase, ended)
            if winner is not None:
                text += f"; the trick goes to {names[winner]}"
            contract = _contract_text(state.rounds[i].contract if ended else state.contract, names)
            probs = deal_probs[step] if step < len(deal_probs) else None
            frames.append(_frame(state, i, kind, seat, action, text, hands, discarded, trick, winner, contract, probs))
            if probs and players and players[seat] == "human":  # a person's move beside the agent's (a table's review)
                frames[-1]["agent_choice"] = max(probs, key=probs.get)
        frames[-1]["deal_over"] = {key: r[key] for key in ("tricks_won", "points", "totals")}
        if pars is not None:
            pars.update(state)
            deals[-1]["par"] = frames[-1]["deal_over"]["par"] = pars.pars[-1].to_dict()
        frames[-1]["text"] += f". Deal {i + 1} over: points " + ", ".join(
            f"{names[s]} {r['points'][s]:+d}" for s in range(3))
    return {
        "variant": rules.variant,
        "scoring": rules.scoring,
        "seed": record.get("seed"),
        "players": names,
        "final": _final(record.get("final")),
        "deals": deals,
        "frames": frames,
        "par": par.summary(pars),
    }


def _final(final: dict | None) -> dict | None:
    """A validated record's ``final`` without the fields the format does not define."""
    return None if final is None else {key: final[key] for key in ("net", "winners", "truncated") if key in final}


def _table(state: GameState, i: int, phase: Phase, ended: bool) -> tuple[list[dict], int | None]:
    """The cards on the table after a decision taken in ``phase`` and, when it completed the
    trick, the trick's winner."""
    if phase != Phase.PLAY:
        return [], None
    if ended:
        leader, cards, winner = state.rounds[i].tricks[-1]
        return [{"seat": (leader + k) % 3, "card": card_to_str(c)} for k, c in enumerate(cards)], winner
    view = state.view(0)
    if view.trick:
        plays, winner = view.plays[-len(view.trick):], None
    else:
        plays, winner = view.plays[-3:], view.leader
    return [{"seat": s, "card": card_to_str(c)} for s, c in plays], winner


def _describe(action: int, phase: Phase, drawn: list[str] | None) -> str:
    if phase == Phase.EXCHANGE:
        text = "ends the exchange" if action == A.EXCHANGE_DONE else f"discards {card_to_str(action)}"
        if drawn is not None:
            text += f" and draws {' '.join(drawn)}" if drawn else " and keeps the hand"
        return text
    if phase == Phase.DISCARD:
        return f"discards {card_to_str(action)}"
    if phase == Phase.PLAY:
        return f"plays {card_to_str(action)}"
    return {
        A.KEEP_HAND: "keeps the hand",
        A.SWAP_HAND: "swaps the hand for the Manni",
        A.TAKE_MANNI: "takes the Manni",
        A.PASS_MANNI: "passes",
    }.get(action, f"announces {A.action_to_str(action).removeprefix('announce_')}")


def _frame(state, i, kind, seat, action, text, hands, discarded, trick, winner, contract, probs) -> dict:
    ended = len(state.rounds) > i
    return {
        "deal": i + 1,
        "kind": kind,
        "seat": seat,
        "action": None if action is None else A.action_to_str(action),
        "text": text,
        "hands": [_strs(h) for h in hands],
        "discarded": [[card_to_str(c) for c in d] for d in discarded],
        "trick": trick,
        "trick_winner": winner,
        "contract": contract,
        "tricks_won": list(state.rounds[i].tricks_won if ended else state.view(0).tricks_won),
        "totals": list(state.totals),
        "plus": list(state.plus),
        "minus": list(state.minus),
        "probabilities": probs,
        "agent_choice": None,
        "deal_over": None,
    }
