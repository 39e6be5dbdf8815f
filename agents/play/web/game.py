"""One browser game: a person in one seat against two agents, played on the server.

The person's browser only ever gets :meth:`WebGame.snapshot`: the person's own
:class:`~manni_env.view.SeatView`, the public table (the trick, counts, scores, the narration of
:class:`~manni_agents.play.human.TableNarrator`) and the results of finished deals — never a hidden card.
The agents act on the server from their own seats' views. For an agent with
``action_probabilities(view)`` (the ``ppo`` agent) the probabilities of each decision are kept
beside the game, one list per deal in decision order (``None`` for the others' decisions); the
saved record carries them as the extra field ``probabilities`` and the replay shows them. Each
finished deal's par (:mod:`manni_agents.evaluation.par`) goes to the page with the snapshot.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

import numpy as np

from manni_agents.base import close_policies
from manni_agents.evaluation import par
from manni_agents.play.human import TableNarrator, contract_text
from manni_agents.registry import make_agent
from manni_env import actions as A
from manni_env.cards import card_to_str, cards_of, sort_for_display
from manni_env.engine import GameState, IllegalActionError, Phase, RoundResult
from manni_env.records import game_record
from manni_env.rules import Rules
from manni_env.text import contract_name, decision_prompt
from manni_env.view import SeatView

HUMAN = "human"
#: Narration lines kept per game (older ones are dropped) and sent with each snapshot.
LOG_KEPT, LOG_SENT = 200, 40
#: Most actions in one request: an exchange of 12 cards and "done".
MAX_ACTIONS = 16

BUTTON_LABELS = {
    A.KEEP_HAND: "Keep my hand",
    A.SWAP_HAND: "Swap for the Manni",
    A.TAKE_MANNI: "Take the Manni",
    A.PASS_MANNI: "Pass",
    A.ANNOUNCE_SPADES: "Spades",
    A.ANNOUNCE_HEARTS: "Hearts",
    A.ANNOUNCE_DIAMONDS: "Diamonds",
    A.ANNOUNCE_CLUBS: "Clubs",
    A.ANNOUNCE_GRAND: "Grand",
    A.ANNOUNCE_NULLO: "Nullo",
}


class GameError(ValueError):
    """A move the game does not accept now (not the person's turn, illegal); nothing changed."""


def check_decision(state: GameState, seat: int, actions: Sequence[int], error: type[Exception]) -> None:
    """Raise ``error`` naming the problem unless ``actions`` are legal in order and all belong to one
    decision of ``seat`` (tried on a copy: ``state`` is unchanged)."""
    trial = state.clone()
    phase, deal = trial.phase, len(trial.rounds)
    for i, action in enumerate(actions):
        if trial.to_move != seat or trial.phase != phase or len(trial.rounds) != deal:
            raise error(f"action {i + 1} of {len(actions)} ({A.action_to_str(action)}) comes after your "
                        "decision is complete; send one decision at a time")
        try:
            trial.apply(action)
        except IllegalActionError as err:
            raise error(str(err)) from None


def seat_names(specs: Sequence[str], seat: int) -> list[str]:
    """``["you", "seat 1 (ppo)", "seat 2 (ppo)"]``: the names the table and the narration use."""
    return ["you" if s == seat else f"seat {s} ({spec})" for s, spec in enumerate(specs)]


def probabilities_of(policy, view: SeatView) -> dict[str, float] | None:
    """``{"TH": 0.71, "exchange_done": 0.2, ...}`` (most likely first) for a policy that exposes
    ``action_probabilities(view)``, else ``None``."""
    method = getattr(policy, "action_probabilities", None)
    if method is None:
        return None
    probs = sorted(method(view).items(), key=lambda item: -item[1])
    return {A.action_to_str(a): round(float(p), 4) for a, p in probs}


def round_summary(r: RoundResult, names: Sequence[str]) -> dict:
    """The public result of a finished deal (no cards but the cut card)."""
    contract = contract_name(r.contract)
    if r.contract.declarer is not None:
        contract += f", declared by {names[r.contract.declarer]}"
    return {
        "deal": r.index + 1,
        "dealer": r.dealer,
        "contract": contract,
        "cut_card": None if r.cut_card is None else card_to_str(r.cut_card),
        **{key: list(getattr(r, key)) for key in ("tricks_won", "points", "plus", "minus", "totals")},
    }


class WebGame:
    """A game with a person in ``seat`` and the agents ``opponents`` (registry specs) in the other
    seats, clockwise; the agents play whenever it is not the person's turn (from the start unless
    ``start`` is false: a game read back from the database replays its moves first)."""

    def __init__(self, rules: Rules, opponents: Sequence[str], seat: int = 0, seed: int | None = None,
                 start: bool = True):
        if seat not in (0, 1, 2) or len(opponents) != 2:
            raise ValueError("a game needs the person's seat (0, 1 or 2) and exactly two opponents")
        self.seed = int(np.random.SeedSequence().generate_state(1)[0]) if seed is None else seed
        self.seat = seat
        self.specs = list(opponents)
        self.specs.insert(seat, HUMAN)
        self.names = seat_names(self.specs, seat)
        self.policies = {s: make_agent(spec) for s, spec in enumerate(self.specs) if s != seat}
        for policy in self.policies.values():
            policy.reset()
        self.rngs = [np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(s,))) for s in range(3)]
        self.state = GameState(rules, seed=self.seed)
        self.par = par.tracker_for(self.state)
        self.log: deque[str] = deque(maxlen=LOG_KEPT)
        self.narrator = TableNarrator(self.names, seat, lambda line: self.log.append(line.strip()))
        self.probabilities: list[list[dict | None]] = [[]]
        self.lock = threading.RLock()  # one request at a time changes or reads the game
        self.saved = False
        self.actions: list[int] = []  # every move, in order (what the database keeps)
        self.journal = None  # where each move is written (game_db.GameJournal), if anywhere
        if start:
            self._play_agents()

    # ------------------------------------------------------------------ moves
    def act(self, actions: Sequence[int]) -> None:
        """The person's move: one decision, or the discards of one exchange (then ``EXCHANGE_DONE``
        when fewer than the limit); then the agents play until it is the person's turn again or
        the game is over. All or nothing: a :class:`GameError` leaves the game unchanged."""
        if not 1 <= len(actions) <= MAX_ACTIONS:
            raise GameError(f"send 1 to {MAX_ACTIONS} actions, got {len(actions)}")
        state = self.state
        if state.finished:
            raise GameError("the game is over")
        check_decision(state, self.seat, actions, GameError)
        for action in actions:
            self._apply(action, None)
        self._play_agents()

    def _play_agents(self) -> None:
        state = self.state
        while not state.finished and state.to_move != self.seat:
            seat = state.to_move
            view = state.view(seat)
            policy = self.policies[seat]
            action = policy.act(view, self.rngs[seat])
            self._apply(action, probabilities_of(policy, view))
        if state.finished:
            close_policies(self.policies.values())  # a bot's process ends with its game

    def _apply(self, action: int, probabilities: dict | None) -> None:
        state = self.state
        seat, phase, deal = state.to_move, state.phase, len(state.rounds)
        state.apply(action)
        self.actions.append(action)
        self.probabilities[-1].append(probabilities)
        if len(state.rounds) > deal:
            self.probabilities.append([])
            if self.par is not None:
                self.par.update(state)
        self.narrator(state, seat, phase, action)
        if self.journal is not None:
            self.journal.moved(self, action, probabilities)

    # ------------------------------------------------------------------ what leaves the server
    def record(self) -> dict:
        """The ``manni-record/1`` record of the finished deals (with ``probabilities`` when an
        agent exposed any)."""
        state = self.state
        record = game_record(state, players=self.specs)
        probabilities = self.probabilities[: len(state.rounds)]
        if any(p is not None for deal in probabilities for p in deal):
            record["probabilities"] = probabilities
        return record

    def snapshot(self) -> dict:
        """Everything the person's browser shows: the person's view and the public table."""
        state, seat = self.state, self.seat
        view = state.view(seat)
        legal = set(view.legal_actions)
        hand = sort_for_display(cards_of(view.hand))
        return {
            "variant": state.rules.variant,
            "scoring": state.rules.scoring,
            "seed": self.seed if state.finished else None,  # the seed determines every deal
            "seat": seat,
            "players": self.names,
            "agents": self.specs,
            "deal": view.deal_index + 1,
            "dealer": view.dealer,
            "phase": view.phase.name.lower(),
            "to_move": view.to_move,
            "your_turn": bool(legal),
            "prompt": self._prompt(view),
            "contract": contract_text(view, self.names) if view.contract is not None else None,
            "cut_card": None if view.cut_card is None else card_to_str(view.cut_card),
            "hand": [{"card": card_to_str(c), "action": c, "legal": c in legal} for c in hand],
            "drawn": [card_to_str(c) for c in sort_for_display(cards_of(view.drawn))],
            "buttons": [{"action": a, "label": self._label(a, view)} for a in view.legal_actions if a in BUTTON_LABELS],
            "select": self._select(view),
            "trick": [{"seat": s, "card": card_to_str(c)} for s, c in view.plays[len(view.plays) - len(view.trick):]],
            "last_trick": self._last_trick(view),
            "tricks_won": list(view.tricks_won),
            "card_counts": [len(hand) if s == seat else state.rules.hand_size - view.played[s].bit_count()
                            for s in range(3)],
            "exchange_counts": list(view.exchange_counts),
            "used_contracts": [list(u) for u in view.used_contracts],
            "totals": list(view.totals),
            "plus": list(view.plus),
            "minus": list(view.minus),
            "rounds": [round_summary(r, self.names) for r in state.rounds],
            "par": par.summary(self.par),
            "finished": state.finished,
            "truncated": state.truncated,
            "winners": list(state.winners),
            "log": list(self.log)[-LOG_SENT:],
            "saved": self.saved,
        }

    @staticmethod
    def _label(action: int, view: SeatView) -> str:
        row = view.rules.spec.announcement(action)
        if row is not None and row.kind == "trump" and row.name not in BUTTON_LABELS[action].lower():
            return f"{row.name.capitalize()}: " + BUTTON_LABELS[action].lower()  # Trjámann's suit contract
        return BUTTON_LABELS[action]

    @staticmethod
    def _select(view: SeatView) -> dict | None:
        """Multi-card decisions: choose up to ``max`` cards (exactly ``max`` when ``exact``) and
        send them, followed by ``done`` when fewer than ``max`` were chosen."""
        if not view.legal_actions:
            return None
        if view.phase == Phase.EXCHANGE:
            return {"max": view.exchange_limit, "exact": False, "done": A.EXCHANGE_DONE}
        if view.phase == Phase.DISCARD:
            return {"max": 4 - len(view.pending), "exact": True, "done": None}
        return None

    def _last_trick(self, view: SeatView) -> dict | None:
        """The last completed trick: of this deal, or the previous deal's final one before the
        first card of a deal."""
        done = len(view.plays) - len(view.trick)
        if done >= 3:
            plays = view.plays[done - 3 : done]
            return {"cards": [{"seat": s, "card": card_to_str(c)} for s, c in plays], "winner": view.leader}
        if not view.plays and self.state.rounds and view.phase != Phase.GAME_OVER:
            leader, cards, winner = self.state.rounds[-1].tricks[-1]
            return {"cards": [{"seat": (leader + k) % 3, "card": card_to_str(c)} for k, c in enumerate(cards)],
                    "winner": winner}
        return None

    def _prompt(self, view: SeatView) -> str:
        state = self.state
        if state.finished:
            winners = " and ".join(self.names[s] for s in state.winners)
            return f"Game over. {'Winners' if len(state.winners) > 1 else 'Winner'}: {winners}."
        if not view.legal_actions:
            return f"Waiting for {self.names[view.to_move]}."
        return decision_prompt(view, typing=False)
