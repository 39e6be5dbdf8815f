"""The text layer (manni_env/text.py): the words every surface shows, from the seat's view only."""

from __future__ import annotations

import numpy as np
import pytest

from manni_env.cards import card_from_str, mask_of
from manni_env.engine import GameState, Phase
from manni_env.rules import VARIANTS, make_rules
from manni_env.text import PHASE_NAMES, count, decision_prompt, hand_text

MOVE_WORDS = {Phase.SWAP: ("keep", "swap"), Phase.PICKUP: ("take", "pass")}


def test_hand_text_groups_by_suit_high_to_low():
    assert hand_text(mask_of(card_from_str(c) for c in ["2C", "AS", "TH", "KS", "3H"])) == "S: A K   H: T 3   D: -   C: 2"


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_decision_has_a_prompt_for_typing_and_for_clicking(variant):
    rng = np.random.default_rng(3)
    seen = set()
    for seed in range(3):
        state = GameState(make_rules(variant), seed=seed)
        while not state.finished:
            view = state.view(state.to_move)
            typed, clicked = decision_prompt(view, typing=True), decision_prompt(view, typing=False)
            assert typed and clicked and PHASE_NAMES[view.phase]
            for word in MOVE_WORDS.get(view.phase, ()):
                assert f"'{word}'" in typed and word in clicked and f"'{word}'" not in clicked
            if view.phase == Phase.PLAY:
                assert ("follow suit" in typed) == bool(view.trick)
            seen.add(view.phase)
            state.apply(int(rng.choice(state.legal_actions())))
    assert Phase.PLAY in seen and (seen & {Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP})


@pytest.mark.parametrize(("n", "text"), [(0, "0 games"), (1, "1 game"), (2, "2 games"), (1200, "1,200 games")])
def test_count_names_one_in_the_singular(n, text):
    assert count(n, "game") == text
