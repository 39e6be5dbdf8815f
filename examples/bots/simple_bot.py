#!/usr/bin/env python3
"""A manni-bot/1 bot using only Python's standard library (see docs/bot-protocol.md).

Strategy: keep the hand and pass the Manni, discard and announce the first legal choice; in
play, take tricks cheaply in trump and grand contracts and stay low in nullo.
"""
import json
import sys

RANKS = "23456789TJQKA"


def rank(name):
    """Rank of a card name such as "QS" (2 = 0 ... A = 12)."""
    return RANKS.index(name[0])


def choose(request):
    """One legal action for an "act" request."""
    legal, names = request["legal"], request["legal_names"]
    phase = request["phase"]
    if phase in ("exchange", "swap", "pickup"):
        for wanted in ("exchange_done", "keep_hand", "pass_manni"):
            if wanted in names:
                return legal[names.index(wanted)]
    if phase != "play":
        return legal[0]  # discard the lowest card / announce the first contract left
    contract = request["contract"] or {}
    ranked = sorted(zip(legal, names), key=lambda pair: rank(pair[1]))
    if contract.get("kind") == "nullo":
        return ranked[-1][0] if not request["trick"] else ranked[0][0]
    if request["trick"]:  # follow: win with the highest if it beats the trick's top card, else go low
        top = max(rank(card) for card in request["trick"])
        return ranked[-1][0] if rank(ranked[-1][1]) > top else ranked[0][0]
    return ranked[-1][0]


def main():
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            answer = {"type": "hello", "protocol": "manni-bot/1", "name": "simple-python"}
        elif kind == "act":
            answer = {"action": choose(message)}
        elif kind == "bye":
            return
        else:
            continue  # game, deal_end, game_end: nothing to answer
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
