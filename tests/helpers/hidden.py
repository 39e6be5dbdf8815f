"""Two game states a seat cannot tell apart, for the no-hidden-information tests."""

from __future__ import annotations

from manni_env import GameState
from manni_env.cards import SUIT_MASKS


def twin_with_other_hidden_cards(state: GameState, seat: int) -> GameState:
    """A copy of ``state`` in which the two opponents of ``seat`` hold other cards (one card of a
    suit neither is void in swapped between their hands): the same public history and view."""
    twin = state.clone()
    a, b = (seat + 1) % 3, (seat + 2) % 3
    d = twin._d
    for suit in range(4):
        ca, cb = d.hands[a] & SUIT_MASKS[suit], d.hands[b] & SUIT_MASKS[suit]
        if ca and cb:
            x, y = ca & -ca, cb & -cb
            d.hands[a] ^= x | y
            d.hands[b] ^= x | y
            break
    assert twin.view(seat) == state.view(seat) and twin._d.hands != state._d.hands
    return twin
