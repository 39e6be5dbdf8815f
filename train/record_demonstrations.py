"""Warm-start data from game records: the decisions people and bots made, as :class:`Demonstrations`.

``manni train --warm-start-records FILE [FILE ...]`` imitates the games of ``manni-record/1`` JSON
Lines files (``manni records export`` writes the server's; docs/RECORD.md) instead of the
``--bc-teacher``'s. :func:`load_records` reads and validates every record first (one
``ValueError`` naming the file, line and problem, before anything trains) and checks that it was
played under the run's rules; :func:`record_demonstrations` replays each game through the engine
(:func:`~manni_env.records.round_actions`) and keeps, for each decision of the chosen seats, what
:func:`~manni_train.demonstrations.collect_demonstrations` keeps of a teacher's: the observation of
that seat (its :class:`~manni_env.view.SeatView` only, in the run's ``--history`` / ``--observation``
layout), the legal mask, the action, the return to go under ``--reward`` / ``--reward-of`` (its seat's
rewards from that decision to the end of the deal, :func:`~manni_env.episodes.engine_rewards`), and
with ``--critic deal`` the cards hidden from the seat (:mod:`manni_train.critic_view`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from manni_env.engine import GameState
from manni_env.episodes import engine_rewards, relative_points
from manni_env.observation import ObservationEncoder
from manni_env.records import (RecordError, iter_record_lines, record_deals, record_rules, round_actions,
                               validate_record)
from manni_env.rules import Rules
from manni_train.critic_view import UNSEEN_SIZE, pack_flags
from manni_train.demonstrations import Demonstrations, ObservationCodec


def _rules_text(rules: Rules) -> str:
    options = ", ".join(f"{k}={v}" for k, v in rules.options().items() if k != "first_dealer")
    return f"{rules.variant}" + (f" ({options})" if options else "")


def same_rules(a: Rules, b: Rules) -> bool:
    """Whether ``a`` and ``b`` are the same variant with the same options (the first dealer aside)."""
    return _rules_text(a) == _rules_text(b)


def plays(player: str | None, names: Iterable[str]) -> bool:
    """Whether the record's ``player`` (``human``, ``remote-bot:NAME``, an agent spec such as
    ``ppo:runs/x/agent``) is one of ``names``: the whole string or its kind (before the first ``:``)."""
    return player is not None and (player in names or player.split(":", 1)[0] in names)


def load_records(paths: Sequence[str], rules: Rules, players: Sequence[str] = ()) -> list[dict]:
    """Every record of the JSON Lines files ``paths``, validated (:func:`~manni_env.records.validate_record`)
    and played under ``rules`` (variant and options; any first dealer); with ``players``, every record
    names its players. ``ValueError`` (``"FILE:LINE: problem"``) at the first that is not."""
    records = []
    for path in paths:
        try:
            for number, record in iter_record_lines(path):
                where = f"{path}:{number}"
                if isinstance(record, RecordError):
                    raise ValueError(f"{where}: {record.message}")
                try:
                    validate_record(record)
                except RecordError as err:
                    raise ValueError(f"{where}: not a valid game record: {err}") from None
                own = record_rules(record)
                if not same_rules(own, rules):
                    raise ValueError(f"{where}: a game of {_rules_text(own)}, but this run trains "
                                     f"{_rules_text(rules)} (--variant and the rule options)")
                if players and not record.get("players"):
                    raise ValueError(f"{where}: the record does not name its players, which --warm-start-players needs")
                records.append(record)
        except OSError as err:
            raise ValueError(f"--warm-start-records {path}: {err.strerror or err}") from None
        except UnicodeDecodeError:
            raise ValueError(f"--warm-start-records {path}: not a text file (UTF-8)") from None
    if not records:
        raise ValueError(f"--warm-start-records {' '.join(paths)}: no game records")
    if players and not any(plays(p, players) for record in records for p in record["players"]):
        raise ValueError(f"--warm-start-players {' '.join(players)}: no seat of the game records was played by them")
    return records


def game_rows(record: dict, encoder: ObservationEncoder, reward: str = "trick", reward_of: str = "own",
              critic: str = "seat", seats: Iterable[int] = (0, 1, 2)) -> dict[str, np.ndarray]:
    """The decisions of ``seats`` in the validated ``record``, replayed in the engine, as
    :meth:`Demonstrations.rows` gives them (``obs``, ``masks``, ``actions``, ``returns`` and with
    ``critic="deal"`` ``unseen``), in the order they were made."""
    state = GameState(record_rules(record), seed=0, deals=record_deals(record))
    pack, keep = pack_flags(state.rules), set(seats)
    out: dict[str, list] = {"obs": [], "masks": [], "actions": [], "returns": [], "unseen": []}
    for r in record["rounds"]:
        deal = len(state.rounds)
        deciders, rewards = [], []  # per decision: its seat (None: not kept), the step's (3,) rewards
        paid, tricks = np.zeros(3), np.zeros(3, np.int64)
        for action, _ in round_actions(state, r):
            seat = state.to_move
            deciders.append(seat if seat in keep else None)
            if seat in keep:
                view = state.view(seat)  # what the seat may know: nothing else reaches the observation
                out["obs"].append(encoder.encode(view))
                out["masks"].append(encoder.action_mask(view).astype(bool))
                out["actions"].append(action)
                if critic == "deal":
                    out["unseen"].append(_unseen(state, seat, pack))
            state.apply(action)
            step = np.zeros(3)
            if len(state.rounds) > deal:  # the deal is over: its points, less what its tricks paid
                step = np.array(engine_rewards(reward, state, True, paid=paid))
            elif reward == "trick" and state.tricks_won != tuple(tricks):
                won = np.subtract(state.tricks_won, tricks)
                step = np.array(engine_rewards(reward, state, False, won=won))
                paid, tricks = paid + step, tricks + won
            rewards.append(relative_points(step) if reward_of == "relative" else step)
        togo = np.cumsum(np.array(rewards, np.float32)[::-1], 0)[::-1]  # (decisions, 3)
        out["returns"] += [togo[t, seat] for t, seat in enumerate(deciders) if seat is not None]
    rows = {"obs": np.array(out["obs"], np.float32).reshape(-1, encoder.size),
            "masks": np.array(out["masks"], bool).reshape(len(out["actions"]), -1),
            "actions": np.array(out["actions"], np.int64), "returns": np.array(out["returns"], np.float32)}
    if critic == "deal":
        rows["unseen"] = np.array(out["unseen"], np.float32).reshape(-1, UNSEEN_SIZE)
    return rows


def _unseen(state: GameState, seat: int, pack: np.ndarray) -> np.ndarray:
    """:func:`~manni_train.critic_view.unseen_cards` of ``seat`` in the engine's ``state``."""
    hands = np.array([[m >> c & 1 for c in range(52)] for m in map(state.hand_mask, range(3))], bool)
    played = np.array([[m >> c & 1 for c in range(52)] for m in state.played], bool)
    rest = pack & ~hands.any(0) & ~played.any(0)
    return np.concatenate([hands[(seat + 1) % 3], hands[(seat + 2) % 3], rest]).astype(np.float32)


def record_demonstrations(records: Sequence[dict], rules: Rules, samples: int | None = None,
                          history: str = "summary", reward: str = "trick", reward_of: str = "own",
                          critic: str = "seat", layout: str = "v0",
                          players: Sequence[str] = ()) -> Demonstrations:
    """The decisions of ``records`` (from :func:`load_records`) as :class:`Demonstrations`, the first
    ``samples`` of them (default: all), in file order: every seat's, or with ``players`` only those
    of the seats whose player (the record's ``players``) is one of them (:func:`plays`).
    ``ValueError`` if no decision is kept."""
    encoder, codec = ObservationEncoder(rules, history, layout), ObservationCodec(rules, history, layout)
    parts: list[tuple] = []
    kept = 0
    for record in records:
        if samples is not None and kept >= samples:
            break
        seats = [s for s in range(3) if not players or plays(record["players"][s], players)]
        if not seats:
            continue
        rows = game_rows(record, encoder, reward, reward_of, critic, seats)
        if samples is not None:
            rows = {k: v[: samples - kept] for k, v in rows.items()}
        kept += len(rows["actions"])
        if len(rows["actions"]):
            parts.append((*codec.encode(rows["obs"]), np.packbits(rows["masks"], axis=1),
                          rows["actions"].astype(np.uint8), rows["returns"],
                          np.packbits(rows["unseen"].astype(bool), axis=1) if critic == "deal" else None))
    if not parts:
        who = f" by {', '.join(players)}" if players else ""
        raise ValueError(f"the game records hold no decisions{who} to imitate")
    columns = list(zip(*parts))
    return Demonstrations(codec, *(np.concatenate(c) for c in columns[:5]),
                          np.concatenate(columns[5]) if critic == "deal" else None)
