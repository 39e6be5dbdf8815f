"""Write (or check) the golden playthrough files of tests/golden/, one per variant.

A golden playthrough is one seeded game played by a seeded uniform-random legal policy, written
as JSON Lines (OpenSpiel's playthrough files in spirit):

1. a header: the rules (``make_rules`` options), the game seed, the policy and its seed;
2. per deal a ``deal`` line: dealer, hands by absolute seat, the Manni (top card first), the cut
   card and the contract known at the deal's start (``null`` before an announcement);
3. per decision: the seat on turn, the phase, its legal actions (the action mask, as the sorted
   list of the actions it allows), the action chosen and a digest of that seat's observation
   for each history (``summary``, ``full``): the first 16 hex digits of the SHA-256 of the
   observation vector as little-endian float32 bytes;
4. per deal a ``deal_end`` line: the contract, tricks, deal points (what ``reward="deal"`` pays),
   plus, minus and totals after the deal;
5. a ``result`` line: deals played, finished / truncated, winners, totals and the outcome rewards
   (what ``reward="outcome"`` pays at the game's end).

The engine (``GameState`` + ``ObservationEncoder``) and the vector env (``VectorManni``, replaying
the file's deals and actions) must reproduce these files exactly (tests/test_golden.py). An
intended change of the rules, the shuffle or the observation layout changes them: rewrite them
with ``python tests/golden/make_golden.py`` and review the diff; ``--check`` only compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from manni_env.actions import action_to_str
from manni_env.cards import card_to_str
from manni_env.engine import Deal, GameState
from manni_env.env import outcome_rewards
from manni_env.observation import HISTORIES, ObservationEncoder
from manni_env.rules import make_rules

HERE = Path(__file__).resolve().parent

#: file stem -> (make_rules options, game seed, policy seed); every game is played to its end under
#: the default options (target 10, deal cap 50), seeds picked for a varied game (every contract kind,
#: a shared win in Hornafjarðarmanni, deals with and without a swap or a Manni pickup)
GOLDEN: dict[str, tuple[dict, int, int]] = {
    "hornafjardar": ({"variant": "hornafjardar"}, 5, 105),
    "basic": ({"variant": "basic"}, 1, 101),
    "basic_negative": ({"variant": "basic", "negative": True}, 4, 104),
    "trjamann": ({"variant": "trjamann"}, 4, 104),
    "laugarvatn": ({"variant": "laugarvatn"}, 5, 105),
}


def digest(obs: np.ndarray) -> str:
    """First 16 hex digits of the SHA-256 of ``obs`` as little-endian float32 bytes."""
    return hashlib.sha256(np.ascontiguousarray(obs, dtype="<f4").tobytes()).hexdigest()[:16]


def cards_text(cards) -> str:
    return " ".join(card_to_str(c) for c in cards)


def deal_line(index: int, dealer: int, deal: Deal, contract) -> dict:
    return {
        "deal": index,
        "dealer": dealer,
        "hands": [cards_text(h) for h in deal.hands],
        "manni": cards_text(deal.manni),
        "cut": None if deal.cut_card is None else card_to_str(deal.cut_card),
        "contract": None if contract is None else contract.describe(),
    }


def deal_end_line(index: int, result) -> dict:
    return {
        "deal_end": index,
        "contract": result.contract.describe(),
        "declarer": result.contract.declarer,
        **{name: list(getattr(result, name)) for name in ("tricks_won", "points", "plus", "minus", "totals")},
    }


def result_line(deals: int, finished: bool, truncated: bool, winners, totals) -> dict:
    return {
        "result": "game over" if finished else "unfinished",
        "deals": deals,
        "truncated": truncated,
        "winners": list(winners),
        "totals": list(totals),
        "outcome_rewards": list(outcome_rewards(tuple(winners))),
    }


def header(name: str) -> dict:
    options, seed, policy_seed = GOLDEN[name]
    rules = make_rules(**options)
    return {
        "golden": name,
        "about": "A seeded game played by a seeded uniform-random legal policy; written by "
                 "tests/golden/make_golden.py (its docstring describes every line); the whole game.",
        "rules": {"variant": rules.variant, **rules.options()},
        "seed": seed,
        "policy": "legal[policy.integers(len(legal))] with policy = numpy.random.default_rng(policy_seed), "
                  "legal = state.legal_actions() (ascending)",
        "policy_seed": policy_seed,
        "digest": "sha256(observation as little-endian float32 bytes).hexdigest()[:16], per history",
    }


def playthrough(name: str) -> list[dict]:
    """Every line of the golden file ``name``, played now by the engine."""
    head = header(name)
    rules = make_rules(**head["rules"])
    state = GameState(rules, seed=head["seed"])
    policy = np.random.default_rng(head["policy_seed"])
    encoders = {h: ObservationEncoder(rules, h) for h in HISTORIES}
    lines = [head, deal_line(0, state.dealer, state.deal, state.contract)]
    while not state.finished:
        seat = state.to_move
        view = state.view(seat)
        legal = state.legal_actions()
        action = legal[int(policy.integers(len(legal)))]
        lines.append({
            "seat": seat,
            "phase": state.phase.name.lower(),
            "legal": " ".join(action_to_str(a) for a in legal),
            "action": action_to_str(action),
            **{h: digest(enc.encode(view)) for h, enc in encoders.items()},
        })
        deals = len(state.rounds)
        state.apply(action)
        if len(state.rounds) > deals:
            lines.append(deal_end_line(deals, state.rounds[-1]))
            if not state.finished:
                lines.append(deal_line(state.deal_index, state.dealer, state.deal, state.contract))
    lines.append(result_line(len(state.rounds), state.finished, state.truncated, state.winners, state.totals))
    return lines


def render(name: str) -> str:
    """The text of the golden file ``name``: one JSON object per line."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in playthrough(name))


def path_of(name: str) -> Path:
    return HERE / f"{name}.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"files to write (default: all): {', '.join(GOLDEN)}")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if any file differs")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in GOLDEN]
    if unknown:
        print(f"unknown golden file {unknown[0]!r}; valid names: {', '.join(GOLDEN)}", file=sys.stderr)
        return 2
    stale = []
    for name in args.names or list(GOLDEN):
        text, path = render(name), path_of(name)
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.name} ({len(text.encode()) // 1024} KiB)")
    if args.check and stale:
        print(f"golden files differ from the engine: {', '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
