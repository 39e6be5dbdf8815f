"""Game records in ``manni-record/1`` (see RECORD.md) and the validator that replays them.

:func:`game_record` turns a :class:`~manni_env.engine.GameState` into one JSON-safe dict;
:func:`write_records` / :func:`read_records` store them as JSON Lines. :func:`validate_record`
checks the record's form against the ``manni-record/1`` JSON Schema (:mod:`manni_env.schemas`),
then rebuilds every deal from the record's hands, Manni and cut card, replays the exchange
decisions and the tricks through the engine and compares the engine's results with the record's,
raising :class:`RecordError` at the first broken rule. The engine alone decides what is legal, who
wins a trick and what a deal scores; this module only compares. :func:`round_actions` gives a
validated round's decisions as the engine's actions (for replays and par scores).

Besides the fields of RECORD.md a record carries ``max_deals`` and ``first_dealer`` (so a replay
uses exactly the game's rules) and, in the announcement variants, ``contract.name`` (the contract
used up: ``"spades"``, ``"suit"``, ...). Optional fields are checked when present.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from manni_env import actions as A
from manni_env.cards import SUITS, card_from_str, card_to_str, rank_of, suit_of
from manni_env.engine import Contract, Deal, GameState, IllegalActionError, Phase, RoundResult
from manni_env.rules import VARIANTS, ContractSource, ExchangeScheme, Rules, make_rules
from manni_env.schemas import RECORD, problem, where
from manni_env.schemas import show as _show

FORMAT = "manni-record/1"
_RESULT_FIELDS = ("tricks_won", "points", "plus", "minus", "totals")
_EXCHANGE_PHASES = (Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP, Phase.DISCARD)

def announce_actions(rules: Rules) -> dict[tuple[str, str | None], int]:
    """(kind, trump letter) → the announce action, from the variant's contract table."""
    return {(a.kind.label, None if a.trump is None else SUITS[a.trump]): a.action for a in rules.spec.announcements}


def _same(value, expected) -> bool:
    """``value == expected`` with JSON's types kept apart: ``false`` is not ``0``, ``3.0`` not ``3``."""
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(map(_same, value, expected))
    return type(value) is type(expected) and value == expected


class RecordError(ValueError):
    """A record that breaks the format or a rule.

    ``round`` and ``trick`` locate the problem as indices from 0 into ``rounds`` and that round's
    ``tricks`` (``None`` when the problem is not about one round / trick); ``line`` is the line
    number in a JSON Lines file when known. ``str(err)`` reads ``"round 2, trick 5: message"``.
    """

    def __init__(self, message: str, round: int | None = None, trick: int | None = None, line: int | None = None):
        self.message = message
        self.round = round
        self.trick = trick
        self.line = line
        super().__init__(message)

    def __str__(self) -> str:
        where = []
        if self.round is not None:
            where.append(f"round {self.round}")
        if self.trick is not None:
            where.append(f"trick {self.trick}")
        return ", ".join(where) + ": " + self.message if where else self.message


# --------------------------------------------------------------------------- writing records
def game_record(state: GameState, players: Iterable[str] | None = None) -> dict:
    """The ``manni-record/1`` dict of ``state``: its finished deals, and ``final`` once the game is
    over (``None`` before). ``players`` names the player of each seat (e.g. agent specs)."""
    rules = state.rules
    return {
        "format": FORMAT,
        "variant": rules.variant,
        "scoring": rules.scoring,
        "target": rules.target,
        "seed": state.seed,
        "players": None if players is None else [str(p) for p in players],
        "max_deals": rules.max_deals,
        "first_dealer": (state.dealer - state.deal_index) % 3,
        "rounds": [_round_dict(r, rules) for r in state.rounds],
        "final": (
            {"net": list(state.totals), "winners": list(state.winners), "truncated": state.truncated}
            if state.finished
            else None
        ),
    }


def _strs(cards: Iterable[int]) -> list[str]:
    return [card_to_str(c) for c in cards]


def _contract_dict(contract: Contract) -> dict:
    out = {
        "kind": contract.kind.label,
        "trump": None if contract.trump is None else SUITS[contract.trump],
        "declarer": contract.declarer,
    }
    if contract.name is not None:
        out["name"] = contract.name
    return out


def _exchange_dict(e, rules: Rules) -> dict:
    scheme = rules.spec.exchange
    if scheme == ExchangeScheme.EXCHANGE:
        return {"seat": e.seat, "discards": _strs(e.discards), "drawn": _strs(e.drawn)}
    if scheme == ExchangeScheme.SWAP:
        return {"seat": e.seat, "swap": bool(e.swap)}
    if e.take:
        return {"seat": e.seat, "take": True, "discards": _strs(e.discards)}
    return {"seat": e.seat, "take": False}


def _round_dict(r: RoundResult, rules: Rules) -> dict:
    return {
        "index": r.index,
        "dealer": r.dealer,
        "cut_card": None if r.cut_card is None else card_to_str(r.cut_card),
        "contract": _contract_dict(r.contract),
        "hands": [_strs(h) for h in r.hands],
        "manni": _strs(r.manni),
        "exchanges": [_exchange_dict(e, rules) for e in r.exchanges],
        "tricks": [{"leader": leader, "cards": _strs(cards), "winner": winner} for leader, cards, winner in r.tricks],
        **{name: list(getattr(r, name)) for name in _RESULT_FIELDS},
    }


def write_records(path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Append ``records`` to the JSON Lines file ``path`` (created if missing), one object per line,
    each written as it comes; returns how many were written. A file whose last line lacks its
    newline (an interrupted write) gets one first, so earlier lines are never merged; a line whose
    write fails (a full disk) is cut off again before the error propagates, so the file holds
    whole lines only (cutting needs no space)."""
    path = Path(path)
    needs_newline = False
    if path.exists() and path.stat().st_size:
        with path.open("rb") as f:
            f.seek(-1, os.SEEK_END)
            needs_newline = f.read(1) != b"\n"
    count = 0
    with path.open("ab", buffering=0) as f:
        if needs_newline:
            _write_line(f, b"\n")
        for record in records:
            _write_line(f, json.dumps(record, separators=(",", ":")).encode() + b"\n")
            count += 1
    return count


def _write_line(f, data: bytes) -> None:
    """Append ``data`` to the unbuffered file ``f`` whole, or not at all (``OSError``)."""
    end = f.seek(0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[f.write(view):]
    except BaseException:
        f.truncate(end)
        raise


#: The longest line a records file may hold (characters): a 3,000-deal game is about 4 MB. A longer
#: line (or a file without newlines, such as /dev/zero) ends the reading with a RecordError.
MAX_LINE_CHARS = 32 * 2**20


def iter_record_lines(path: str | os.PathLike, max_line: int | None = None) -> Iterator[tuple[int, dict | RecordError]]:
    """``(line number, record)`` for each non-blank line of a JSON Lines file, or
    ``(line number, RecordError)`` for a line that is not a JSON object; a line longer than
    ``max_line`` characters (default :data:`MAX_LINE_CHARS`) is the last item (memory stays
    bounded whatever the file)."""
    max_line = MAX_LINE_CHARS if max_line is None else max_line
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(iter(lambda: f.readline(max_line + 1), ""), 1):
            if len(line) > max_line:
                yield number, RecordError(f"line longer than {max_line:,} characters (the most a record may be); "
                                          "stopped reading the file", line=number)
                return
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                yield number, RecordError(json_problem(err), line=number)
                continue
            except ValueError:  # json reads ints only up to Python's digit limit
                limit = sys.get_int_max_str_digits()
                yield number, RecordError(f"not readable JSON: a number has more than {limit} digits", line=number)
                continue
            except RecursionError:
                yield number, RecordError("not readable JSON: nested too deeply", line=number)
                continue
            if not isinstance(record, dict):
                yield number, RecordError(f"a record is a JSON object, got {type(record).__name__}", line=number)
            else:
                yield number, record


def json_problem(err: json.JSONDecodeError) -> str:
    """``"not valid JSON: Invalid control character at column 3410"``: the parser's message (some
    end in ``at``, which is not repeated) and the column of the line."""
    return f"not valid JSON: {err.msg.removesuffix(' at')} at column {err.colno}"


def read_records(path: str | os.PathLike) -> list[dict]:
    """All records of a JSON Lines file; raises :class:`RecordError` naming the first bad line."""
    records = []
    for number, item in iter_record_lines(path):
        if isinstance(item, RecordError):
            raise RecordError(f"{path}:{number}: {item.message}", line=number)
        records.append(item)
    return records


# --------------------------------------------------------------------------- validating records
def validate_record(record: dict) -> None:
    """Check ``record``'s form against the ``manni-record/1`` schema, then replay it with the engine;
    raise :class:`RecordError` at the first problem."""
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:  # the format names the schema: another one's fields are not ours to judge
        raise RecordError(f"format must be {FORMAT!r}, got {_show(record.get('format'))}")
    _check_text(record)
    broken = problem(RECORD, record)
    if broken is not None:
        path = broken.path
        round = path[1] if path[:1] == ("rounds",) and len(path) > 1 else None
        trick = path[3] if round is not None and path[2:3] == ("tricks",) and len(path) > 3 else None
        inner = path[4:] if trick is not None else path[2:] if round is not None else path
        raise RecordError(f"{where(inner) or 'the record'}: {broken.message}", round, trick)
    rules = _rules_of(record, record["rounds"])
    _Replay(rules, record["rounds"]).run(record.get("final"))


def _check_text(record: dict) -> None:
    """:class:`RecordError` naming where ``record`` holds a string that is not text: a lone
    surrogate (JSON ``"\\ud800"``), which no UTF-8 file or answer can hold."""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
        return
    except (UnicodeEncodeError, RecursionError):  # RecursionError: deeper than the encoder goes; walk it
        pass
    stack: list[tuple[tuple[str | int, ...], object]] = [((), record)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and not _is_text(value):
            break
        if isinstance(value, dict):
            if not all(_is_text(key) for key in value):
                path = (*path, "<a field name>")
                break
            stack.extend(((*path, key), item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), item) for i, item in enumerate(value))
    else:
        return
    raise RecordError(f"{where(path) or 'the record'}: a string holds a lone surrogate (\\ud800-\\udfff), "
                      "which is not text")


def _is_text(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def record_rules(record: dict) -> Rules:
    """The rules ``record`` was played under; :class:`RecordError` if they cannot be read."""
    rounds = record.get("rounds")
    return _rules_of(record, rounds if isinstance(rounds, list) else [])


def record_deals(record: dict) -> list[Deal]:
    """The explicit deal of each round of ``record`` (hands, Manni, cut card), for a replay with
    ``GameState(rules, deals=...)``; :class:`RecordError` if one cannot be read."""
    return [_deal_of(r, i) for i, r in enumerate(_field(record, "rounds", list))]


def round_actions(state: GameState, r: dict) -> Iterator[tuple[int, list[str] | None]]:
    """The decisions of ``r``, one validated entry of a record's ``rounds``, in the engine's order
    (``state`` at the start of that deal), each with the cards the decider drew if this decision
    ends a Hornafjarðarmanni exchange. Lazy: reads the state between decisions, so apply each
    action to ``state`` before taking the next."""
    scheme = state.rules.spec.exchange
    for e in r["exchanges"]:
        if scheme == ExchangeScheme.EXCHANGE:
            limit = state.exchange_limit()
            discards = [card_from_str(c) for c in e["discards"]]
            for k, card in enumerate(discards):
                yield card, (e["drawn"] if k == limit - 1 else None)
            if len(discards) < limit:
                yield A.EXCHANGE_DONE, e["drawn"]
        elif scheme == ExchangeScheme.SWAP:
            yield (A.SWAP_HAND if e["swap"] else A.KEEP_HAND), None
        elif e["take"]:
            yield A.TAKE_MANNI, None
            for card in e["discards"]:
                yield card_from_str(card), None
        else:
            yield A.PASS_MANNI, None
    if state.rules.is_announcement:
        contract = r["contract"]
        yield announce_actions(state.rules)[(contract["kind"], contract["trump"])], None
    for trick in r["tricks"]:
        for card in trick["cards"]:
            yield card_from_str(card), None


def _rules_of(record: dict, rounds: list) -> Rules:
    """The rules a record was played under (variant, scoring, target, deal cap, first dealer)."""
    variant = record.get("variant")
    if variant not in VARIANTS:
        raise RecordError(f"unknown variant {_show(variant)}; valid variants: {', '.join(VARIANTS)}")
    scoring = record.get("scoring")
    plain = make_rules(variant)
    valid = (plain.scoring, "negative") if "negative" in plain.spec.options else (plain.scoring,)
    if scoring not in valid:
        raise RecordError(f"scoring {_show(scoring)} does not fit variant {_show(variant)}; expected {' or '.join(valid)}")
    allowed = make_rules(variant).options()
    options = {"negative": scoring == "negative"} if "negative" in allowed else {}
    first = record.get("first_dealer")
    if first is None and rounds and isinstance(rounds[0], dict):
        first = rounds[0].get("dealer")
    options["first_dealer"] = first
    if "max_deals" in allowed:
        final = record.get("final")
        cap = record.get("max_deals")
        if cap is None and isinstance(final, dict) and final.get("truncated"):
            cap = len(rounds)  # a truncated game without its cap: the cap is where it stopped
        options["max_deals"] = cap
    if "target" in allowed:
        options["target"] = record.get("target")
    try:
        rules = make_rules(variant, **options)
    except ValueError as err:
        raise RecordError(f"bad rules: {err}") from None
    for name in ("target", "max_deals"):
        if name in record and not _same(record[name], getattr(rules, name)):
            raise RecordError(f"{name} {_show(record[name])} does not fit variant {_show(variant)} (expected {getattr(rules, name)!r})")
    return rules


def _field(obj, key: str, kind: type | tuple[type, ...], round: int | None = None, trick: int | None = None):
    if not isinstance(obj, dict):
        raise RecordError(f"expected a JSON object holding {key!r}, got {type(obj).__name__}", round, trick)
    if key not in obj:
        raise RecordError(f"missing field {key!r}", round, trick)
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise RecordError(f"field {key!r} has the wrong type: {_show(value)}", round, trick)
    return value


def _cards(texts, what: str, round: int | None, trick: int | None = None) -> list[int]:
    if not isinstance(texts, list):
        raise RecordError(f"{what} must be a list of cards, got {_show(texts)}", round, trick)
    cards = []
    for text in texts:
        try:
            if not isinstance(text, str):
                raise ValueError(f"not a card: {_show(text)}")
            cards.append(card_from_str(text))
        except ValueError as err:
            raise RecordError(f"{what}: {err}", round, trick) from None
    return cards


def _deal_of(r: dict, i: int) -> Deal:
    """The explicit deal of round ``i`` (format only; the engine checks it is a legal deal)."""
    hands = _field(r, "hands", list, i)
    if len(hands) != 3:
        raise RecordError(f"'hands' must hold 3 hands, got {len(hands)}", i)
    cut = r.get("cut_card")
    return Deal(
        tuple(tuple(_cards(h, f"hand of seat {s}", i)) for s, h in enumerate(hands)),
        tuple(_cards(_field(r, "manni", list, i), "manni", i)),
        None if cut is None else _cards([cut], "cut_card", i)[0],
    )


def _describe(kind: str, trump: str | None) -> str:
    """``"Trump S"``, ``"Grand"``: a contract as the record names it (the schema's names)."""
    return f"Trump {trump}" if kind == "trump" else kind.capitalize()


class _Replay:
    """Replays a record's rounds through one :class:`GameState`."""

    def __init__(self, rules: Rules, rounds: list):
        self.rules = rules
        self.rounds = rounds
        self.deals: list[Deal] = []
        self.bad_deal: tuple[int, RecordError] | None = None  # a round whose deal could not be read
        for i, r in enumerate(rounds):
            try:
                self.deals.append(_deal_of(r, i))
            except RecordError as err:
                self.bad_deal = (i, err)
                break
        self.next_deal_error: str | None = None  # the engine rejected the next round's deal

    def run(self, final) -> None:
        rules, rounds = self.rules, self.rounds
        if rounds and rules.first_dealer != _field(rounds[0], "dealer", int, 0):
            raise RecordError(
                f"round 0 is dealt by seat {rules.first_dealer} (first_dealer), record says {rounds[0]['dealer']}", 0
            )
        try:
            self.state = GameState(rules, seed=0, deals=self.deals)
        except ValueError as err:
            raise RecordError(f"not a valid deal: {err}", 0) from None
        for i, r in enumerate(rounds):
            self._start_round(i, r)
            self._play_round(i, r)
        self._check_final(final)

    # ------------------------------------------------------------------ one round
    def _start_round(self, i: int, r) -> None:
        state = self.state
        if state.finished:
            raise RecordError(f"the game ended after round {i - 1}, but the record continues", i)
        if self.bad_deal is not None and self.bad_deal[0] == i:
            raise self.bad_deal[1]
        if _field(r, "index", int, i) != i:
            raise RecordError(f"index must be {i}, got {r['index']}", i)
        dealer = _field(r, "dealer", int, i)
        if dealer != state.dealer:
            raise RecordError(f"round {i} is dealt by seat {state.dealer} (the deal passes to the left), record says {dealer}", i)
        if self.next_deal_error is not None:
            raise RecordError(f"not a valid deal: {self.next_deal_error}", i)

    def _play_round(self, i: int, r: dict) -> None:
        state = self.state
        if not self.rules.is_announcement:
            self._check_contract(i, r)
        self._exchanges(i, r)
        if self.rules.is_announcement:
            self._announce(i, r)
            self._check_contract(i, r)
        tricks = _field(r, "tricks", list, i)
        for t, trick in enumerate(tricks):
            if len(state.rounds) > i:
                raise RecordError(f"a deal has {self.rules.tricks_per_deal} tricks; the record has {len(tricks)}", i, t)
            self._trick(i, t, trick)
        if len(state.rounds) <= i:
            raise RecordError(
                f"the record has {len(tricks)} tricks; a deal has {self.rules.tricks_per_deal}", i, len(tricks)
            )
        result = state.rounds[i]
        for name in _RESULT_FIELDS:
            if name in ("plus", "minus") and name not in r and self.rules.scoring != "plus_minus":
                continue
            expected = list(getattr(result, name))
            if not _same(r.get(name), expected):
                raise RecordError(f"{name} should be {expected}, record says {_show(r.get(name))}", i)

    def _check_contract(self, i: int, r: dict) -> None:
        c = self.state.contract
        rec = _field(r, "contract", dict, i)
        mine = _contract_dict(c)
        if "name" not in rec:  # optional: kind and trump already name the contract
            mine.pop("name", None)
        theirs = {key: rec.get(key) for key in mine}
        if all(_same(theirs[key], mine[key]) for key in mine):
            return
        diff = ", ".join(f"{key} {_show(theirs[key])}" for key in mine if not _same(theirs[key], mine[key]))
        source = self.rules.spec.contract_source
        if source == ContractSource.CUT:
            why = f"the cut card {r.get('cut_card')} makes it {c.describe()}"
        elif source == ContractSource.ROTATION:
            rotation = " ".join(SUITS[t] for t in self.rules.spec.trump_rotation)
            why = f"deal {i} is played in {c.describe()} (trump rotates {rotation})"
        else:
            why = f"seat {c.declarer} announced {c.describe()} (contract {c.name!r})"
        raise RecordError(f"wrong contract: {why}; record says {diff}", i)

    def _apply(self, action: int, message: Callable[[], str], i: int, t: int | None = None) -> None:
        """Apply one action; an illegal one is reported as ``message()``."""
        try:
            self.state.apply(action)
        except IllegalActionError:
            raise RecordError(message(), i, t) from None
        except ValueError as err:  # the engine rejected the next round's explicit deal
            self.next_deal_error = str(err)

    def _exchanges(self, i: int, r: dict) -> None:
        state = self.state
        entries = _field(r, "exchanges", list, i)
        for j, e in enumerate(entries):
            seat = _field(e, "seat", int, i)
            if state.phase not in _EXCHANGE_PHASES:
                raise RecordError(f"exchange {j}: the exchange is over, but the record has a decision of seat {seat}", i)
            if seat != state.to_move:
                raise RecordError(f"exchange {j}: seat {state.to_move} decides now, record says seat {seat}", i)
            scheme = self.rules.spec.exchange
            if scheme == ExchangeScheme.EXCHANGE:
                self._exchange(i, j, seat, e)
            elif scheme == ExchangeScheme.SWAP:
                swap = _field(e, "swap", bool, i)
                state.apply(A.SWAP_HAND if swap else A.KEEP_HAND)
            else:
                self._pickup(i, j, seat, e)
        if state.phase in _EXCHANGE_PHASES:
            raise RecordError(f"the record lacks the exchange decision of seat {state.to_move}", i)

    def _exchange(self, i: int, j: int, seat: int, e: dict) -> None:
        state = self.state
        discards = _cards(_field(e, "discards", list, i), f"exchange {j} discards", i)
        drawn = _cards(_field(e, "drawn", list, i), f"exchange {j} drawn", i)
        limit = state.exchange_limit()
        if len(discards) > limit:
            raise RecordError(f"exchange {j}: seat {seat} exchanges {len(discards)} cards, over its limit of {limit}", i)
        for c in discards:
            self._apply(c, lambda: f"exchange {j}: seat {seat} discards {card_to_str(c)}, which it does not hold", i)
        if len(discards) < limit:  # at the limit the engine finishes the exchange by itself
            state.apply(A.EXCHANGE_DONE)
        got = list(state.deal_exchanges[-1].drawn)
        if drawn != got:
            raise RecordError(
                f"exchange {j}: seat {seat} drew {' '.join(_strs(drawn)) or 'nothing'}, but the next "
                f"{len(got)} Manni cards are {' '.join(_strs(got)) or 'none'}",
                i,
            )

    def _pickup(self, i: int, j: int, seat: int, e: dict) -> None:
        state = self.state
        if not _field(e, "take", bool, i):
            if e.get("discards"):
                raise RecordError(f"exchange {j}: seat {seat} passes the Manni but the record lists discards", i)
            state.apply(A.PASS_MANNI)
            return
        discards = _cards(_field(e, "discards", list, i), f"exchange {j} discards", i)
        owed = self.rules.spec.pickup_discards
        if len(discards) != owed:
            raise RecordError(f"exchange {j}: seat {seat} takes the Manni and must discard {owed} cards, record has {len(discards)}", i)
        state.apply(A.TAKE_MANNI)
        for c in discards:
            self._apply(c, lambda: f"exchange {j}: seat {seat} discards {card_to_str(c)}, which it does not hold", i)

    def _announce(self, i: int, r: dict) -> None:
        state = self.state
        rec = _field(r, "contract", dict, i)
        seat = state.to_move
        if not _same(rec.get("declarer"), seat):
            raise RecordError(f"forehand (seat {seat}) announces, record's declarer is {_show(rec.get('declarer'))}", i)
        kind, trump = rec["kind"], rec["trump"]  # names the schema allows
        action = announce_actions(self.rules).get((kind, trump))
        if action is None or not state.is_legal(action):
            may = ", ".join(A.action_to_str(a) for a in state.legal_actions())
            used = ", ".join(state.used_contracts[seat]) or "none"
            raise RecordError(
                f"seat {seat} cannot announce {_describe(kind, trump)}: it may announce {may} (already played: {used})", i
            )
        state.apply(action)

    def _trick(self, i: int, t: int, trick) -> None:
        state = self.state
        leader = _field(trick, "leader", int, i, t)
        if leader != state.to_move:
            raise RecordError(f"seat {state.to_move} leads this trick, record says seat {leader}", i, t)
        cards = _cards(_field(trick, "cards", list, i, t), "cards", i, t)  # three: the schema says so
        for card in cards:
            self._apply(card, lambda: self._illegal_play(card), i, t)
        done = state.rounds[i].tricks if len(state.rounds) > i else state.deal_tricks
        winner = done[t][2]
        if _field(trick, "winner", int, i, t) != winner:
            best = card_to_str(cards[(winner - leader) % 3])
            raise RecordError(f"seat {winner} wins the trick with {best}, record says seat {trick['winner']}", i, t)

    def _illegal_play(self, card: int) -> str:
        """Why the player on turn may not play ``card`` (used only if the engine rejects it)."""
        state = self.state
        seat, text = state.to_move, card_to_str(card)
        hand = state.hand(seat)
        if card not in hand:
            return f"seat {seat} played {text}, which it does not hold (hand: {' '.join(_strs(hand))})"
        led = state.view(seat).led_suit
        follow = [c for c in hand if suit_of(c) == led]
        return (
            f"seat {seat} played {text} but holds {' '.join(_strs(sorted(follow, key=rank_of)))} "
            f"and must follow suit {SUITS[led]}"
        )

    # ------------------------------------------------------------------ the end
    def _check_final(self, final) -> None:
        """The record's ``final`` against the replay: a problem of the whole game, so no round is named
        but in the message."""
        state, last = self.state, len(self.rounds) - 1
        if final is None:
            if state.finished:
                raise RecordError(f"the game ended after round {last}, but the record has no final")
            return
        if not state.finished:
            raise RecordError(f"the game does not end after round {last}: the record ends early")
        expected = {"net": list(state.totals), "winners": list(state.winners), "truncated": state.truncated}
        if "truncated" not in final:  # optional: the replay knows whether the deal cap ended the game
            del expected["truncated"]
        for key, value in expected.items():
            if not _same(final.get(key), value):
                raise RecordError(f"the game's final {key} should be {_show(value)}, record says {_show(final.get(key))}")
