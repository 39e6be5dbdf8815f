"""Terminal play, driven by scripted input: the person is a Policy in the shared game loop."""

from __future__ import annotations

import numpy as np
import pytest

from manni_agents.play.human import HumanPolicy, QuitGame, parse_move
from manni_agents.play.terminal import DEFAULT_OPPONENTS, default_opponents, play_terminal
from manni_agents.registry import make_agent
from manni_env import Deal, GameState, make_rules
from manni_env import actions as A
from manni_env.cards import card_from_str
from manni_env.cli import build_parser
from manni_env.records import read_records, validate_record

from helpers.people import ScriptedPerson

@pytest.mark.parametrize(("variant", "options"), [("hornafjardar", {"target": 4}), ("basic", {"target": 3}), ("trjamann", {})])
def test_a_scripted_person_plays_a_whole_game_and_saves_it(variant, options, tmp_path):
    person = ScriptedPerson(seed=1)
    path = tmp_path / "game.jsonl"
    state = play_terminal(make_rules(variant, **options), ["random", "random"], seat=1, seed=8, save=str(path),
                          input_fn=person.input, output_fn=person.output)
    assert state.finished
    text = "\n".join(person.screen)
    errors = [line for line in person.screen if line.startswith("  ! ")]
    assert person.garbage >= 2 and len(errors) == person.garbage  # each garbage line got a message, then play went on
    assert "is not a card, a move number or a move name" in text
    assert "there is no move number 99" in text
    assert "Game over after" in text and "Winner:" in text
    assert "Your hand:" in text and "Deal 1 over" in text and "totals:" in text
    (record,) = read_records(path)
    validate_record(record)
    assert record["players"] == ["random", "human", "random"]
    assert record["final"]["net"] == list(state.totals)


def test_quitting_offers_to_save_the_unfinished_game(tmp_path):
    answers = iter(["1", "1", "q", str(tmp_path / "partial.jsonl")])
    screen: list[str] = []
    state = play_terminal(make_rules("basic"), ["random", "random"], seat=0, seed=3,
                          input_fn=lambda prompt: next(answers), output_fn=screen.append)
    assert not state.finished and "\nGame stopped." in screen
    (record,) = read_records(tmp_path / "partial.jsonl")
    validate_record(record)
    assert record["final"] is None


def test_quit_without_saving(tmp_path):
    answers = iter(["q", "n"])
    path = tmp_path / "never.jsonl"
    play_terminal(make_rules(), ["random", "random"], seed=3, save=str(path),
                  input_fn=lambda prompt: next(answers), output_fn=lambda text: None)
    assert not path.exists()


def _exchange_state() -> GameState:
    """A Hornafjarðarmanni deal (trump hearts, dealer seat 2) at its first exchange decision."""
    hands = [
        "AS 3S 4C 5C 6C 7C 8C 9C TC JC QC KC",
        "KS 2S 2C 3C 2D 3D 4D 5D 6D 7D 8D 9D",
        "QS JS AH 2H 3H 4H 5H 6H 7H 8H 9H TH",
    ]
    manni = "TS 9S 8S 7S 6S 5S 4S AC TD JD QD KD AD JH QH KH".split()
    deal = Deal.from_strs([h.split() for h in hands], manni, "7H")
    return GameState(make_rules("hornafjardar", first_dealer=2), deals=[deal])


def _play_state() -> GameState:
    """The same deal in trick play, nobody exchanged: seat 0 led the ace of spades."""
    state = _exchange_state()
    for _ in range(3):
        state.apply(A.EXCHANGE_DONE)
    state.apply(card_from_str("AS"))
    return state


def test_parse_move_spellings_and_messages():
    state = _play_state()
    view = state.view(1)
    assert view.legal_actions == (card_from_str("2S"), card_from_str("KS"))
    assert parse_move("KS", view) == parse_move("ks", view) == parse_move(" 1 ", view) == card_from_str("KS")
    with pytest.raises(ValueError, match=r"you must follow suit \(spades\)"):
        parse_move("2c", view)
    with pytest.raises(ValueError, match="you do not hold QS"):
        parse_move("QS", view)
    with pytest.raises(ValueError, match="there is no move number 3: choose 1 to 2"):
        parse_move("3", view)
    assert parse_move("2", view) == card_from_str("2S")
    with pytest.raises(ValueError, match="keep is not a legal move now; legal moves: KS, 2S"):
        parse_move("keep", view)
    with pytest.raises(QuitGame):
        parse_move("Q", view)


def test_named_moves_in_every_decision_phase():
    horna = _exchange_state()
    assert parse_move("done", horna.view(0)) == A.EXCHANGE_DONE
    horna.apply(A.EXCHANGE_DONE)
    horna.apply(A.EXCHANGE_DONE)
    assert parse_move("10h", horna.view(2)) == parse_move("Th", horna.view(2)) == card_from_str("TH")
    basic = GameState(make_rules("basic"), seed=1)
    assert parse_move("swap", basic.view(basic.to_move)) == A.SWAP_HAND
    trja = GameState(make_rules("trjamann"), seed=1)
    assert parse_move("PASS", trja.view(trja.to_move)) == A.PASS_MANNI
    for _ in range(3):
        trja.apply(A.PASS_MANNI)
    view = trja.view(trja.to_move)
    assert parse_move("nullo", view) == A.ANNOUNCE_NULLO
    with pytest.raises(ValueError, match="clubs is not available"):
        parse_move("clubs", view)


def test_screen_shows_hand_contract_trick_and_numbered_moves():
    state = _play_state()
    state.apply(card_from_str("KS"))
    screen: list[str] = []
    policy = HumanPolicy(lambda prompt: "zz" if len(screen) < 2 else "1", screen.append, ["A", "B", "C"])
    action = policy.act(state.view(2), np.random.default_rng(0))
    assert action == card_from_str("QS")
    shown = screen[0]
    assert "Contract: Trump hearts — cut card 7H, dealt to the dealer (C)" in shown
    assert "Your hand:  S: Q J   H: A T 9 8 7 6 5 4 3 2   D: -   C: -" in shown
    assert "Trick so far: A AS, B KS" in shown and "Legal moves: 1) QS  2) JS" in shown
    assert screen[1].startswith("  ! 'zz' is not a card")


def test_play_command_defaults():
    args = build_parser().parse_args(["play"])
    assert args.opponents is None and args.seat == 0 and args.save is None
    assert default_opponents("hornafjardar") == DEFAULT_OPPONENTS == ("ppo", "ppo")
    for spec in default_opponents("trjamann"):
        make_agent(spec, make_rules("trjamann"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--opponents", "foo", "random"], "unknown agent 'foo' in spec 'foo'"),
        (["--seed", "-1"], "argument --seed: must be 0 or more, got -1"),
        (["--variant", "trjamann", "--opponents", "ppo:hornafjardar", "random"], "trained for variant 'hornafjardar', cannot play 'trjamann'"),
        (["--save", ""], "argument --save: expected a file name, got ''"),
    ],
)
def test_play_command_rejects_bad_arguments_before_the_game(capsys, monkeypatch, args, message):
    from manni_env.cli import main

    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("the game must not start"))
    with pytest.raises(SystemExit) as info:
        main(["play", *args])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert message in err.strip().splitlines()[-1]


def test_play_save_into_a_directory_is_refused_before_the_game(tmp_path, capsys, monkeypatch):
    from manni_env.cli import main

    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("the game must not start"))
    with pytest.raises(SystemExit):
        main(["play", "--save", str(tmp_path)])
    assert f"argument --save: {tmp_path} is a directory, not a file" in capsys.readouterr().err


def test_play_save_declined_leaves_no_empty_file(tmp_path, monkeypatch):
    from manni_env.cli import main

    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("q\nn\n"))
    path = tmp_path / "declined.jsonl"
    assert main(["play", "--variant", "basic", "--opponents", "random", "random", "--save", str(path)]) == 0
    assert not path.exists()
    path.write_text("")  # a file that was there before is the player's: kept as it was
    monkeypatch.setattr("sys.stdin", io.StringIO("q\nn\n"))
    assert main(["play", "--variant", "basic", "--opponents", "random", "random", "--save", str(path)]) == 0
    assert path.exists()
