"""The table renderer and the render modes of the AEC, single-agent and vector envs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from manni_agents.envs import single_agent_env
from manni_agents.sampler import sample_worlds
from manni_env import manni_v0
from manni_env.cards import mask_of
from manni_env.engine import GameState
from manni_env.render import render_rgb, view_text
from manni_env.rules import VARIANTS, make_rules
from manni_env.vector_gym import ManniVectorEnv


def _midgame(variant: str, moves: int, seed: int = 3) -> GameState:
    state = GameState(make_rules(variant), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("variant", VARIANTS)
def test_rgb_frames_show_only_what_the_viewer_knows(variant):
    state = _midgame(variant, 25)
    seat = state.to_move
    view = state.view(seat)
    frame = render_rgb(view)
    assert frame.dtype == np.uint8 and frame.shape == (600, 800, 3) and frame.std() > 10
    # another world with the same view (opponents' cards reshuffled) gives the same picture
    world = sample_worlds(view, np.random.default_rng(0), 1)[0]
    assert [world.hand(s) for s in range(3)] != [state.hand(s) for s in range(3)]
    assert np.array_equal(render_rgb(world.view(seat)), frame)
    privileged = render_rgb(view, [mask_of(state.hand(s)) for s in range(3)])
    assert not np.array_equal(privileged, frame)  # the opponents' cards face up


def test_view_text_holds_the_own_hand_and_no_hidden_card():
    state = _midgame("hornafjardar", 30)
    seat = state.to_move
    text = view_text(state.view(seat))
    hand_line = next(line for line in text.splitlines() if line.startswith("Hand:"))
    assert hand_line.split("|")[0].count(" ") > len(state.hand(seat))
    world = sample_worlds(state.view(seat), np.random.default_rng(1), 1)[0]
    assert view_text(world.view(seat)) == text
    assert view_text(state.view((seat + 1) % 3)) != text


@pytest.mark.parametrize("variant", ["hornafjardar", "trjamann"])
def test_env_render_modes(variant):
    env = manni_v0.env(variant=variant, render_mode="rgb_array")
    env.reset(seed=2)
    assert env.render().shape == (600, 800, 3)
    spectator = manni_v0.raw_env(variant=variant, render_mode="rgb_array", render_seat="all")
    player = manni_v0.raw_env(variant=variant, render_mode="rgb_array", render_seat=1)
    for e in (spectator, player):
        e.reset(seed=2)
    assert not np.array_equal(spectator.render(), player.render())
    assert np.array_equal(player.render(), render_rgb(player.game.view(1)))
    with pytest.raises(ValueError, match="render_seat"):
        manni_v0.env(render_seat=3)
    single = single_agent_env(variant, opponents=("random", "random"), seed=1, render_mode="rgb_array")
    single.reset(seed=1)
    assert np.array_equal(single.render(), render_rgb(single.state.view(single.seat)))
    text = single_agent_env(variant, opponents=("random", "random"), render_mode="ansi")
    text.reset(seed=1)
    assert text.render() == view_text(text.state.view(text.seat))


def test_human_mode_falls_back_to_text_without_a_display(capsys, monkeypatch):
    monkeypatch.setattr("manni_env.render._interactive_backend", lambda: False)  # headless, even on a desktop
    env = single_agent_env("basic", opponents=("random", "random"), seed=0, render_mode="human")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=0)  # human mode renders at every reset and step
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert sum("interactive matplotlib backend" in str(w.message) for w in caught) == 1  # warned once
    assert capsys.readouterr().out.count("Manni (basic)") == 2
    env.close()


def test_vector_env_renders_every_game():
    env = ManniVectorEnv("basic", num_envs=2, render_mode="rgb_array")
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and not np.array_equal(frames[0], frames[1])
    assert np.array_equal(frames[1], render_rgb(env.core.view(1)))
    assert ManniVectorEnv("basic", num_envs=2).render() is None


def test_picture_command(tmp_path, capsys):
    from PIL import Image

    from manni_env.render import main

    out = tmp_path / "deal.png"
    assert main([str(out), "--variant", "basic", "--moves", "20", "--seed", "1"]) == 0
    assert Image.open(out).size == (800, 600) and "seat" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        main([str(out), "--moves", "-1"])
    assert bad.value.code == 2 and "--moves must be at least 0" in capsys.readouterr().err
