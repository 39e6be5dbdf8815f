"""Tables for people: up to three people and agents at one game, joined by an invite link.

A :class:`Table` holds one game whose seats are each an agent (a registry spec) or open for a
person. A person joins with a name and gets a secret *seat token*; every later request of that
person names the token, and the token opens only its own seat's view (:meth:`Table.message`),
never another seat's cards. Spectators get the public table only.

**Fair deals.** A table with more than one seat for people deals from a fresh 63-bit seed that no
client chooses and no message reveals before the game is over (:func:`fresh_seed`): a creator who
chose the seed could replay it and know every hand. Only a table of one person and agents takes
a chosen seed (to replay a deal), and its public data says so (``seed`` in :meth:`Table.info`).

The game starts when every open seat is taken (or when a seated person starts it: the empty open
seats go to the stand-in agent). A person whose last connection closes keeps the seat for
``grace_seconds``; after that the stand-in agent plays the seat until the person comes back with
the token. A table whose people have all been away for the grace period is over
(:meth:`Table.tick`), and so is a table nobody joined within :data:`JOIN_SECONDS`;
:class:`TableStore` then saves its record like a single game's. One client address creates at most
:data:`TABLES_PER_CLIENT` tables in progress, so a few anonymous requests cannot take every table.

Hints (opt-in per table) are the advisor's (the variant's shipped agent) probability of each legal
move for the person on turn and, for a card to play, what the card is worth: the ``search``
agent's expected deal points for it over its sampled worlds (:meth:`~manni_agents.search.SearchAgent.card_values`,
from the person's view only) and what it gives away against the best card. Every decision of a
person is kept beside the advisor's choice and probabilities, whether it was forced (the only legal
move: not valued), and a card played beside its worth and cost: the *review* of a deal (sent after the deal, with the cost summed over the deal and the
deal's par, :mod:`manni_agents.evaluation.par`) and, as the record's ``probabilities`` of the
person's decisions, in the replay. A card is valued after its move is pushed
(:meth:`Table.value_reviews`), unless the hints valued it already: the search takes tens of
milliseconds, and once made every move at a table wait for it.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from manni_agents.base import close_policies
from manni_agents.evaluation import par
from manni_agents.play.human import TableNarrator
from manni_agents.play.web.game import BUTTON_LABELS, HUMAN, LOG_KEPT, MAX_ACTIONS, WebGame, check_decision, probabilities_of
from manni_agents.play.web.guide import end_text, rules_anchor
from manni_agents.play.web.store import GameStore, StoreFull
from manni_agents.registry import make_agent
from manni_agents.search import CardValues
from manni_env import actions as A
from manni_env.cards import card_to_str
from manni_env.engine import GameState, Phase
from manni_env.records import game_record
from manni_env.rules import Rules
from manni_env.text import count
from manni_env.view import SeatView

#: A seat open for a person, and one open for a remote bot program (the other seats hold registry
#: agent specs); a remote bot's seat is a person's seat with ``bot`` set (:mod:`.remote_bots`).
PERSON, BOT = "person", "bot"
#: The longest name of a player (a person's, a bot's, a server agent's).
NAME_MAX = 24
#: Finished tables remembered, to tell an expired link from a wrong one.
ENDED_KEPT = 1000
#: Seconds a table nobody joined is kept, whatever its grace period (its creator joins at once).
JOIN_SECONDS = 120.0
#: Tables in progress that one client address may have created.
TABLES_PER_CLIENT = 4
#: The agents that decide in about a millisecond or less, with no I/O: at a table of only these
#: (:attr:`Table.quick`) a remote bot's move is made on the server's event loop (:mod:`.remote_bots`).
QUICK_AGENTS = frozenset({"random", "rule_based", "ppo"})


class TableError(ValueError):
    """A request the table does not accept (wrong seat, not your turn, full); nothing changed."""


class TableFull(TableError):
    """Every seat open for a person is taken."""


@dataclass
class Seat:
    """One seat: ``spec`` is :data:`PERSON` or an agent spec; a person's seat has a name and a
    token once joined, and counts its open connections."""

    spec: str
    name: str | None = None
    token: str | None = None
    sockets: int = 0
    left_at: float | None = None  # when the person's last connection closed
    stand_in: bool = False  # the stand-in agent plays this person's seat
    bot: bool = False  # open for a remote bot program, not a person
    strikes: int = 0  # a remote bot's faults (each move played by the stand-in)
    player: int | None = None  # the rated player (ratings.py) who took the seat, if one did

    @property
    def person(self) -> bool:
        return self.spec == PERSON


class _PublicNarrator(TableNarrator):
    """The table talk everybody sees: every seat in the third person (the narrator reads only
    public facts of its seat's view, so any seat serves)."""

    def _say(self, seat: int, verb: str, own_verb: str, rest: str) -> None:
        self.output_fn(f"  {self.names[seat]} {verb} {rest}".rstrip())


class _SeatWindow(WebGame):
    """:meth:`WebGame.snapshot` (the single-person page's data) for one seat of a table: built from
    the table's state and names, without WebGame's agents."""

    def __init__(self, table: Table, seat: int):  # noqa: D107 - no WebGame.__init__: no agents
        self.state, self.seat, self.seed = table.state, seat, table.seed
        self.names, self.specs, self.log, self.saved = table.names, table.players, table.log, table.saved
        self.par = table.par


def digest(token: str) -> str:
    """What the server keeps of a seat token: its SHA-256 in hex (a leaked database seats nobody)."""
    return hashlib.sha256(token.encode()).hexdigest()


def fresh_seed() -> int:
    """A deal seed nobody chose: 63 random bits (too many to find from one's own hand)."""
    return secrets.randbits(63)


def clean_name(name: str, seat: int) -> str:
    """A person's display name: printable, whitespace collapsed, at most :data:`NAME_MAX` chars."""
    text = " ".join("".join(ch for ch in name if ch.isprintable()).split())[:NAME_MAX]
    return text or f"Player {seat + 1}"


class Table:
    """See the module docstring. ``specs``: three seats, :data:`PERSON` or an agent spec, at
    least one :data:`PERSON`; ``stand_in``: the agent that plays absent people's seats;
    ``advisor``: the agent whose probabilities make hints and reviews (``None``: neither);
    ``seed``: only for a table of one person and agents (see the module docstring)."""

    def __init__(self, rules: Rules, specs: Sequence[str], *, stand_in: str, advisor: str | None = None,
                 hints: bool = False, grace_seconds: float = 120.0, seed: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if len(specs) != 3 or not {PERSON, BOT} & set(specs):
            raise ValueError("a table has three seats, at least one of them open for a person or a remote bot")
        if grace_seconds <= 0:
            raise ValueError("grace_seconds must be positive")
        if hints and advisor is None:
            raise ValueError(f"hints need a shipped agent with action probabilities for {rules.variant}; there is none")
        if seed is not None and sum(spec in (PERSON, BOT) for spec in specs) > 1:
            raise ValueError("a table with seats for other people deals from a fresh seed: a chosen one would let "
                             "its creator know every hand (a seed is for a table of one person and agents)")
        self.seats = [Seat(PERSON, bot=True) if spec == BOT else Seat(spec) for spec in specs]
        self.chosen_seed = seed
        self._deal(rules, fresh_seed() if seed is None else seed)
        self.stand_in, self.hints, self.grace_seconds, self.clock = stand_in, hints, grace_seconds, clock
        self.advisor_spec = advisor
        self.advisor = make_agent(advisor) if advisor is not None else None
        self.search = make_agent("search") if advisor is not None else None  # what a card is worth
        self._worth: tuple[tuple[int, int, int], CardValues] | None = None  # the last decision's
        # the people's card plays whose worth the review still needs (entry, view, decision, card,
        # the move's number in the journal)
        self._unvalued: list[tuple[dict, SeatView, tuple[int, int, int], int, int | None]] = []
        self._search_lock = threading.Lock()  # one search at a time: hints (table locked) and value_reviews
        self.policies = {s: make_agent(seat.spec) for s, seat in enumerate(self.seats) if not seat.person}
        self.probabilities: list[list[dict | None]] = [[]]  # per deal, per decision (see manni_agents.play.web.game)
        self.reviews: list[list[dict]] = [[]]  # per deal: the people's decisions beside the advisor's
        self.log: deque[str] = deque(maxlen=LOG_KEPT)
        self.names = self._names()
        self.narrator: _PublicNarrator | None = None
        self.created = clock()
        self.started = self.closed = self.saved = False
        self.version = 0  # counts the changes every connection is told about
        self.lock = threading.RLock()
        self.journal = None  # where the table's changes and moves are written (table_db.Journal), if anywhere

    def _deal(self, rules: Rules, seed: int) -> None:
        """The game dealt from ``seed``, its par tracker and the agents' random streams."""
        self.seed = seed
        self.state = GameState(rules, seed=seed)
        self.par = par.tracker_for(self.state)
        self.rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(s,))) for s in range(3)]

    # ------------------------------------------------------------------ seats and people
    @property
    def players(self) -> list[str]:
        """The record's players: ``human`` for a person's seat, ``remote-bot:NAME`` for a remote
        bot's, else the agent's spec."""
        return [f"remote-bot:{seat.name}" if seat.bot else HUMAN if seat.person else seat.spec for seat in self.seats]

    def _names(self) -> list[str]:
        return [seat.name or (("open seat for a bot" if seat.bot else "open seat") if seat.person else f"seat {s} ({seat.spec})")
                for s, seat in enumerate(self.seats)]

    @property
    def quick(self) -> bool:
        """Whether every agent that may play here (the seats' agents and the stand-in) is one of
        :data:`QUICK_AGENTS`."""
        specs = [seat.spec for seat in self.seats if not seat.person] + [self.stand_in]
        return all(spec.partition(":")[0] in QUICK_AGENTS for spec in specs)

    def _changed(self) -> None:
        self.names[:] = self._names()
        self.version += 1
        if self.journal is not None:
            self.journal.changed(self)

    def join(self, name: str, bot: bool = False, player: int | None = None) -> tuple[int, str]:
        """Seat a person (``bot``: a remote bot) in the first seat open for one: ``(seat, token)``;
        :class:`TableFull` if none. ``player``: the rated player's id. The game starts when the last
        open seat is taken."""
        with self.lock:
            if self.closed:
                raise TableError("this table is over")
            empty = [s for s, seat in enumerate(self.seats) if seat.person and seat.token is None]
            free = [s for s in empty if self.seats[s].bot == bot]
            if not free or self.started:
                kind = "remote bots" if bot else "people"
                seats = sum(seat.person and seat.bot == bot for seat in self.seats)
                raise TableFull(f"the table is full: its {count(seats, 'seat')} for {kind} "
                                f"{'are' if seats != 1 else 'is'} taken (open the table's link to watch)")
            seat = self.seats[free[0]]
            token = secrets.token_urlsafe(18)
            seat.name, seat.token, seat.left_at = clean_name(name, free[0]), digest(token), self.clock()
            seat.player = player
            self._changed()
            if len(empty) == 1:
                self._start()
            return free[0], token

    def seat_of(self, token: str) -> int:
        """The seat whose token is ``token``; :class:`TableError` if none of this table's."""
        for s, seat in enumerate(self.seats):
            if seat.token is not None and secrets.compare_digest(seat.token, digest(token)):
                return s
        raise TableError("this seat token is not one of this table's seats")

    def connect(self, seat: int) -> None:
        """A connection of the person in ``seat`` opened: the person plays the seat again."""
        with self.lock:
            person = self.seats[seat]
            person.sockets += 1
            person.left_at, person.stand_in = None, False
            self._changed()

    def disconnect(self, seat: int) -> None:
        """A connection of ``seat`` closed; the grace period starts when it was the last one."""
        with self.lock:
            person = self.seats[seat]
            person.sockets = max(0, person.sockets - 1)
            if person.sockets == 0:
                person.left_at = self.clock()
            self._changed()

    def name_bot(self, seat: int, name: str) -> None:
        """The remote bot in ``seat`` said hello as ``name``: the table shows that name (a rated
        bot keeps its player's name)."""
        with self.lock:
            if self.seats[seat].player is None:
                self.seats[seat].name = clean_name(name, seat)
                self._changed()

    def bot_fault(self, seat: int) -> None:
        """The remote bot in ``seat`` failed a request (its connection is being closed): a strike,
        and the stand-in agent plays the seat, this move included, until the bot connects again."""
        with self.lock:
            bot = self.seats[seat]
            bot.strikes += 1
            bot.stand_in = True
            self._changed()
            if self.started and not self.closed:
                self._advance()

    def start(self, seat: int) -> None:
        """A seated person starts the game now: the stand-in agent takes the empty open seats."""
        with self.lock:
            if self.started:
                raise TableError("the game has already started")
            if self.seats[seat].token is None or self.seats[seat].bot:
                raise TableError("only a seated person can start the game")
            self._start()

    def _start(self) -> None:
        for s, seat in enumerate(self.seats):
            if seat.person and seat.token is None:
                seat.spec, seat.bot = self.stand_in, False
                self.policies[s] = make_agent(seat.spec)
        self.started = True  # before _changed: the journal writes the table's header as started
        self._changed()
        self.narrate()
        self._advance()

    def narrate(self) -> None:
        """Start the table talk: when the game starts, or when a started table is read back."""
        self.narrator = _PublicNarrator(self.names, 0, lambda line: self.log.append(line.strip()))

    def tick(self) -> bool:
        """Apply the grace period now: the stand-in agent takes the seats of people away longer,
        and a table everybody left is closed. Returns whether anything changed."""
        with self.lock:
            if self.closed:
                return False
            now, changed = self.clock(), False
            people = [seat for seat in self.seats if seat.token is not None]
            for seat in people:
                if self._away(seat, now) and not seat.stand_in:
                    seat.stand_in = changed = True
            if all(self._away(seat, now) for seat in people) and (people or now - self.created >= self._unjoined_seconds):
                self.closed = changed = True
            if changed:
                self._changed()
                if self.started and not self.closed:
                    self._advance()
            return changed

    @property
    def _unjoined_seconds(self) -> float:
        return min(self.grace_seconds, JOIN_SECONDS)

    def _away(self, seat: Seat, now: float) -> bool:
        return seat.sockets == 0 and seat.left_at is not None and now - seat.left_at >= self.grace_seconds

    def next_deadline(self) -> float | None:
        """When :meth:`tick` may next change something (clock time), or ``None``."""
        with self.lock:
            if self.closed:
                return None
            times = [seat.left_at + self.grace_seconds for seat in self.seats
                     if seat.token is not None and seat.sockets == 0 and seat.left_at is not None and not seat.stand_in]
            if not any(seat.token for seat in self.seats):
                times.append(self.created + self._unjoined_seconds)
            elif not times and all(seat.sockets == 0 for seat in self.seats if seat.token):
                times.append(max(seat.left_at or 0.0 for seat in self.seats) + self.grace_seconds)
            return min(times) if times else None

    # ------------------------------------------------------------------ moves
    @property
    def moves(self) -> int:
        """How many moves every seat has made in the game so far."""
        return sum(map(len, self.probabilities))

    def act(self, seat: int, actions: Sequence[int], after: int | None = None) -> None:
        """The move of the person in ``seat``: one decision, or the discards of one exchange (as
        :meth:`WebGame.act`); then the agents play until a person is on turn. All or nothing.
        ``after``: the :attr:`moves` the move was chosen after; refused if the game has gone on since
        (a second click, say, that arrives after the first move was made)."""
        with self.lock:
            state = self.state
            if after is not None and after != self.moves:
                raise TableError(f"the game has gone on since this move was chosen ({self.moves} moves made, not "
                                 f"{after}): choose again")
            if not 1 <= len(actions) <= MAX_ACTIONS:
                raise TableError(f"send 1 to {MAX_ACTIONS} actions, got {len(actions)}")
            if self.closed or state.finished:
                raise TableError("the game is over")
            if not self.started:
                raise TableError("the game has not started: it starts when every open seat is taken")
            if state.to_move != seat:
                raise TableError(f"it is not your turn: waiting for {self.names[state.to_move]}")
            check_decision(state, seat, actions, TableError)
            for action in actions:
                self._apply(action, person=True)
            self._advance()
            self._changed()

    def _advance(self) -> None:
        """Let the agents (and stand-ins) play until a present person is on turn or the game ends."""
        state = self.state
        while not state.finished:
            seat = self.seats[state.to_move]
            if seat.person and not seat.stand_in:
                return
            self._apply(self._policy(state.to_move).act(state.view(state.to_move), self.rngs[state.to_move]),
                        person=False)
        close_policies(self.policies.values())  # the game is over: a bot's process ends with it

    def _policy(self, seat: int):
        if seat not in self.policies:  # a person's seat: the stand-in agent, built at its first move
            self.policies[seat] = make_agent(self.stand_in)
        return self.policies[seat]

    def _apply(self, action: int, person: bool) -> None:
        state = self.state
        seat, phase, deal = state.to_move, state.phase, len(state.rounds)
        view = state.view(seat)
        remote_bot = person and self.seats[seat].bot  # its own program decides: no advice, no review
        probabilities = None if remote_bot else probabilities_of(self.advisor if person else self._policy(seat), view)
        review = None
        if person and probabilities:
            chosen, best = A.action_to_str(action), next(iter(probabilities))
            review = {"deal": deal + 1, "seat": seat, "phase": phase.name.lower(), "action": chosen, "agent": best,
                      "p_action": probabilities.get(chosen, 0.0), "p_agent": probabilities[best],
                      "differs": chosen != best, "forced": len(view.legal_actions) == 1}
            key = self._decision(view)
            if key is not None and self._worth is not None and self._worth[0] == key:  # valued for the hints
                review.update(_worth_of(self._worth[1], action))
        n = None if self.journal is None else self.journal.moves
        self.record_move(action, probabilities, review, n)
        if self.journal is not None:
            self.journal.moved(self, seat, action, probabilities, review)

    def record_move(self, action: int, probabilities: dict | None, review: dict | None, n: int | None = None) -> None:
        """Play ``action`` of the seat on turn, keeping its probabilities and review (a person's
        decision beside the advisor's): a move being made, or one read back after a restart. A
        card play of the review not valued yet is valued after the move is pushed
        (:meth:`value_reviews`, which writes its worth to the journal's move ``n``)."""
        state = self.state
        seat, phase, deal = state.to_move, state.phase, len(state.rounds)
        if review is not None:
            if "points" not in review:
                view = state.view(seat)
                key = self._decision(view)
                if key is not None:  # valued after the move is pushed (value_reviews), not on its way
                    self._unvalued.append((review, view, key, action, n))
            self.reviews[-1].append(review)
        state.apply(action)
        self.probabilities[-1].append(probabilities)
        if len(state.rounds) > deal:
            self.probabilities.append([])
            self.reviews.append([])
            if self.par is not None:
                self.par.update(state)
        if self.narrator is not None:
            self.narrator(state, seat, phase, action)

    def _decision(self, view: SeatView) -> tuple[int, int, int] | None:
        """The card play whose cards the search values: ``(deal, cards played, seat)``; ``None``
        for other decisions, a single legal card or no advisor."""
        if self.search is None or view.to_move != view.seat or view.phase != Phase.PLAY or len(view.legal_actions) < 2:
            return None
        return view.deal_index, len(view.plays), view.seat

    def _values(self, view: SeatView, key: tuple[int, int, int]) -> CardValues:
        """What each legal card of the decision ``key`` is worth, from ``view`` only; seeded by the
        table's seed and the decision, so the hints and the review agree."""
        with self._search_lock:
            return self.search.card_values(view, np.random.default_rng([self.seed, *key]))

    def _card_values(self, seat: int) -> CardValues | None:
        """What each legal card of ``seat``'s card play now is worth (``None`` when
        :meth:`_decision` is), computed once per decision."""
        view = self.state.view(seat)
        key = self._decision(view)
        if key is None:
            return None
        if self._worth is None or self._worth[0] != key:
            self._worth = key, self._values(view, key)
        return self._worth[1]

    def value_reviews(self) -> bool:
        """Value the people's card plays made since the last call, for the review (the search runs
        outside the table's lock: a move is pushed without waiting for it). Returns whether a review
        already sent changed (a finished deal's), so the table is to be pushed again."""
        with self.lock:
            todo, self._unvalued = self._unvalued, []
        valued = [(entry, _worth_of(self._values(view, key), action), n) for entry, view, key, action, n in todo]
        with self.lock:
            for entry, worth, n in valued:
                entry.update(worth)
                if self.journal is not None and n is not None:
                    self.journal.reviewed(n, entry)
            shown = any(entry["deal"] <= len(self.state.rounds) for entry, _, _ in valued)
            if shown:
                self._changed()
            return shown

    # ------------------------------------------------------------------ what leaves the server
    def info(self) -> dict:
        """The public table: variant (with its name, one-line summary and rules link), how its game
        ends and its rule options, hints, seats (who, connected, stand-in), whether started, and
        the seed when the (one-person) table's creator chose it."""
        rules = self.state.rules
        with self.lock:
            return {
                "variant": rules.variant,
                "name": rules.spec.title,
                "summary": rules.spec.summary,
                "rules": rules_anchor(rules.variant),
                "end": end_text(rules),
                "options": rules.options(),
                "seed": self.chosen_seed,
                "hints": self.hints,
                "grace_seconds": self.grace_seconds,
                "started": self.started,
                "closed": self.closed,
                "finished": self.state.finished,
                "open_seats": 0 if self.started else sum(s.person and not s.bot and s.token is None for s in self.seats),
                "open_bot_seats": 0 if self.started else sum(s.bot and s.token is None for s in self.seats),
                "seats": [{"seat": s, "name": self.names[s], "person": seat.person and not seat.bot, "bot": seat.bot,
                           "agent": None if seat.person else seat.spec, "joined": seat.token is not None,
                           "connected": seat.sockets > 0, "stand_in": seat.stand_in, "strikes": seat.strikes}
                          for s, seat in enumerate(self.seats)],
            }

    def message(self, seat: int | None) -> dict:
        """What a connection of ``seat`` (``None``: a spectator) is sent after each change: the
        table, the game as that seat sees it, its hints and the review of its last finished deal."""
        with self.lock:
            game = None
            if self.started:
                game = _SeatWindow(self, 0 if seat is None else seat).snapshot()
                if seat is None:
                    game = self._public(game)
            return {"type": "state", "version": self.version, "moves": self.moves, "seat": seat, "table": self.info(),
                    "game": game, "hints": self._hints(seat), "review": self._review(seat)}

    def _public(self, game: dict) -> dict:
        """A seat's snapshot less everything private: what a spectator sees."""
        state = self.state
        played = state.view(0).played
        counts = [state.rules.hand_size - played[s].bit_count() for s in range(3)]
        prompt = game["prompt"] if state.finished else f"{self.names[state.to_move]} to move."
        return {**game, "seat": None, "hand": [], "drawn": [], "buttons": [], "select": None, "your_turn": False,
                "prompt": prompt, "card_counts": counts}

    def _hints(self, seat: int | None) -> list[dict] | None:
        state = self.state
        if not (self.hints and self.started and seat is not None and not state.finished and state.to_move == seat
                and not self.seats[seat].stand_in):
            return None
        view = state.view(seat)
        probabilities = self.advisor.action_probabilities(view)
        labels = {**BUTTON_LABELS, A.EXCHANGE_DONE: "End the exchange"}
        values = self._card_values(seat)
        hints = [{"action": a, "label": card_to_str(a) if a < 52 else labels.get(a, A.action_to_str(a)),
                  "p": round(float(p), 4), **_worth_of(values, a)} for a, p in probabilities.items()]
        return sorted(hints, key=lambda h: -h["p"])

    def _review(self, seat: int | None) -> dict | None:
        deals = len(self.state.rounds)
        if seat is None or deals == 0:
            return None
        decisions = [r for r in self.reviews[deals - 1] if r["seat"] == seat]
        deal_par = self.par.pars[deals - 1].to_dict() if self.par is not None else None
        return {"deal": deals, "decisions": decisions, "differs": sum(r["differs"] for r in decisions),
                "cost": round(sum(r.get("cost") or 0.0 for r in decisions), 3), "par": deal_par,
                "par_totals": par.totals(self.par.pars) if self.par is not None else None}

    def record(self) -> dict:
        """The ``manni-record/1`` record of the finished deals, with the agents' and the advisor's
        probabilities (the advisor's beside each person's decision)."""
        record = game_record(self.state, players=self.players)
        probabilities = self.probabilities[: len(self.state.rounds)]
        if any(p is not None for deal in probabilities for p in deal):
            record["probabilities"] = probabilities
        return record


def _worth_of(values: CardValues | None, action: int) -> dict:
    """``{"points", "best", "cost", "worlds"}`` of ``action`` by ``values`` (expected deal points,
    rounded), or ``{}`` when it was not valued (not a card play)."""
    if values is None or action not in values.points:
        return {}
    return {"points": round(values.points[action], 3), "best": round(values.best, 3),
            "cost": round(values.cost(action), 3), "worlds": values.worlds}


class TableStore:
    """The tables in progress (at most ``max_tables``, at most ``per_client`` of them created by
    one client), keyed by random ids; a finished table's record is saved by ``games`` (the single
    games' store, so into the same records file). With a ``keeper`` (:class:`.table_db.TableKeeper`,
    over a database) every table and move is written as it happens, the tables in progress are
    read back now, and stopping the server leaves them in progress."""

    def __init__(self, games: GameStore, max_tables: int = 32, per_client: int = TABLES_PER_CLIENT, keeper=None):
        self.games, self.max_tables, self.per_client, self.keeper = games, max_tables, per_client, keeper
        self._tables: dict[str, Table] = {}
        self._creators: dict[str, str | None] = {}  # table id -> the address of the client that created it
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        if keeper is not None:
            for table_id, table, client in keeper.restore():
                self._tables[table_id] = table
                self._creators[table_id] = client  # it counts against its creator's share again

    def __len__(self) -> int:
        return len(self._tables)

    def items(self) -> list[tuple[str, Table]]:
        """The tables in progress and their ids."""
        with self._lock:
            return list(self._tables.items())

    def add(self, table: Table, client: str | None = None) -> str:
        """Keep ``table`` under a new id; :class:`StoreFull` when ``max_tables`` are kept and none
        of them is finished (the oldest finished one makes room: its record is saved), or
        ``per_client`` unfinished ones were created by ``client`` (an address; ``None``: unknown)."""
        if len(self) >= self.max_tables:
            done = next((key for key, kept in self.items() if kept.state.finished), None)
            if done is not None:
                self.finish(done)
        with self._lock:
            if len(self._tables) >= self.max_tables:
                raise StoreFull(f"{self.max_tables} tables are in progress, the most this server keeps")
            if client is not None and sum(c == client and not self._tables[key].state.finished
                                          for key, c in self._creators.items()) >= self.per_client:
                raise StoreFull(f"you have {count(self.per_client, 'table')} in progress, the most one client may create: "
                                "finish or leave one first")
            table_id = secrets.token_urlsafe(9)
            self._tables[table_id] = table
            self._creators[table_id] = client
        if self.keeper is not None:
            self.keeper.attach(table_id, table, client)
        return table_id

    def get(self, table_id: str) -> Table:
        """The table ``table_id``; :class:`TableError` saying whether it is over or never existed."""
        with self._lock:
            table = self._tables.get(table_id)
            if table is not None:
                return table
            if table_id in self._ended:
                raise TableError("this table is over: everybody left it (its record was saved)")
        raise TableError("no such table: check the link")

    def seat_of(self, table_id: str, token: str) -> int:
        """The seat of ``token`` at ``table_id``; :class:`TableError` naming a token of another table."""
        table = self.get(table_id)
        try:
            return table.seat_of(token)
        except TableError:
            with self._lock:
                others = [t for key, t in self._tables.items() if key != table_id]
            for other in others:
                try:
                    other.seat_of(token)
                except TableError:
                    continue
                raise TableError("this seat token belongs to another table: open that table's link") from None
            raise TableError("unknown seat token: it was not issued for this table (join with the invite link)") from None

    def finish(self, table_id: str) -> bool:
        """Drop ``table_id`` and save its record (finished deals only); whether one was saved."""
        with self._lock:
            table = self._tables.pop(table_id, None)
            self._creators.pop(table_id, None)
            if table is None:
                return False
            self._ended[table_id] = None
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
        with table.lock:
            table.closed = True
            close_policies(table.policies.values())
            if table.journal is not None:
                table.journal.closed(table)
        return self.games.save(table)  # duck-typed: lock, saved, state, record()

    def close(self) -> None:
        """The server is stopping: save and drop every table, or, with a database, stop their
        agents and leave them in progress there for the next start."""
        with self._lock:
            keys = list(self._tables)
        for key in keys:
            if self.keeper is None:
                self.finish(key)
            else:
                with self._tables[key].lock:
                    close_policies(self._tables[key].policies.values())
