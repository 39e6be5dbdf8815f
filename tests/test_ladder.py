"""benchmarks/ladder.py at tiny scale: the rungs, the pimc choice, the files, kept cells and timings, placing an agent."""

from __future__ import annotations

import json

import pytest
from helpers.scripts import load_benchmark

from manni_agents.registry import make_agent
from manni_env.rules import VARIANTS, make_rules
from manni_train.cpu import cpu_model

ladder = load_benchmark("ladder")
TINY = ["--variant", "hornafjardar", "--deals", "2", "--timing-deals", "1", "--pimc-worlds", "2", "--no-progress"]


def test_every_rung_is_a_loadable_spec_and_search_plays_the_frozen_network():
    for variant in VARIANTS:
        steps = ladder.rungs(variant, 64)
        assert [r.key for r in steps] == list(ladder.RUNG_KEYS)
        assert [r.spec for r in steps[:3]] == ["rule_based", "pimc:worlds=16", "pimc:worlds=64"]
        search = make_agent(steps[4].spec, make_rules(variant))
        assert search.worlds == 64 and search.network.path.parent.name == "2026-12-04"


def test_the_strong_pimc_rung_has_the_most_worlds_within_the_limit():
    assert ladder.choose_pimc_worlds({32: 19.0, 64: 38.0}, 50.0) == 64
    assert ladder.choose_pimc_worlds({32: 30.0, 64: 60.0}, 50.0) == 32
    assert ladder.choose_pimc_worlds({32: 70.0, 64: 140.0}, 50.0) == 32  # none within: the fewest


def test_two_rungs_write_the_files_a_kept_rung_is_not_played_or_timed_again_and_no_play_only_times(tmp_path, capsys):
    assert ladder.main([*TINY, "--rungs", "pimc", "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert "[1/1] pimc:worlds=16 vs rule_based ×2: 2 deals, seed 1" in first and "timed pimc:worlds=16" in first
    assert {"hornafjardar.json", "hornafjardar.md", "hornafjardar.png"} <= {p.name for p in tmp_path.iterdir()}
    assert (tmp_path / "hornafjardar" / "pimc-worlds=16_vs_rule_based" / "result.json").is_file()
    state = json.loads((tmp_path / "hornafjardar.json").read_text())
    assert state["pimc"] == {"worlds": 2, "why": "--pimc-worlds"}
    pimc = state["rungs"][1]
    assert pimc["pair"]["deals"] == 2 and pimc["cpu"]["ms_per_move"] > 0 and pimc["over_bottom"] == pimc["pair"]["margin"]["mean"]
    assert state["rungs"][2]["pair"] is None and state["rungs"][2]["over_bottom"] is None
    page = (tmp_path / "hornafjardar.md").read_text()
    assert "| pimc 2 | `pimc:worlds=2` | not played |" in page and "manni arena pimc:worlds=16 rule_based rule_based" in page
    assert pimc["cpu"]["cpu_model"] == cpu_model() and f"Timing passes on: {cpu_model()} " in page

    assert ladder.main([*TINY, "--rungs", "pimc", "--out", str(tmp_path)]) == 0
    again = capsys.readouterr().out
    assert "kept pimc:worlds=16 vs rule_based ×2 (2 deals, seed 1)" in again
    assert "[1/1]" not in again and "timed" not in again
    assert json.loads((tmp_path / "hornafjardar.json").read_text())["rungs"] == state["rungs"]

    assert ladder.main([*TINY, "--rungs", "pimc_strong", "--no-play", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "timed pimc:worlds=2" in printed and "timed pimc:worlds=16" not in printed and "deals, seed" not in printed
    assert not (tmp_path / "hornafjardar" / "pimc-worlds=2_vs_pimc-worlds=16").exists()
    assert json.loads((tmp_path / "hornafjardar.json").read_text())["timings"]["pimc:worlds=2"]["moves"] > 0


def test_timings_of_a_state_that_did_not_name_their_cpu_keep_the_states_cpu(tmp_path, capsys):
    """A state written before timings named their CPU said it once for all: timings taken on another
    machine since are not attributed to the one writing the page now."""
    assert ladder.main([*TINY, "--rungs", "pimc", "--no-play", "--out", str(tmp_path)]) == 0
    file = tmp_path / "hornafjardar.json"
    state = json.loads(file.read_text())
    for timing in state["timings"].values():
        del timing["cpu_model"]
    file.write_text(json.dumps({**state, "cpu_model": "Some Older CPU"}))
    assert ladder.main([*TINY, "--rungs", "pimc", "--no-play", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert {t["cpu_model"] for t in json.loads(file.read_text())["timings"].values()} == {"Some Older CPU"}
    assert "Timing passes on: Some Older CPU " in (tmp_path / "hornafjardar.md").read_text()


def test_an_agent_is_placed_on_the_highest_rung_it_is_level_with_beside_those_placed_before(tmp_path, capsys):
    weak = ladder.rung_reached("random", "hornafjardar", 2, out=tmp_path, pimc_worlds=2)
    assert weak["reached"] is None and list(weak["margins"]) == ["rule_based"] and weak["margins"]["rule_based"]["mean"] < 0
    earlier = {"spec": "rule_based", "reached": "rule_based", "margins": {}, "deals": 300, "seed": 7,
               "learner_decisions": 4_000_000, "training_s": 150.0}
    (tmp_path / "hornafjardar_placed.json").write_text(json.dumps({"rule_based": earlier}))
    assert ladder.main([*TINY, "--place", "random", "--out", str(tmp_path)]) == 0
    assert "kept random vs rule_based" in capsys.readouterr().out
    page = (tmp_path / "hornafjardar_placed.md").read_text()
    kept = json.loads((tmp_path / "hornafjardar_placed.json").read_text())
    cell = json.loads(next(tmp_path.glob("hornafjardar/random_vs_rule_based/result.json")).read_text())
    assert kept["random"]["ms_per_move"] == cell["agents"][0]["ms_per_move"] > 0  # the placed agent's time a move
    ms = f"{kept['random']['ms_per_move']:.3g}"
    assert "| `rule_based` | 4,000,000 | 2.5 | – | 300, 7 | rule_based | " in page
    assert f"| `random` | – | – | {ms} | 2, 1 | none | " in page
    assert kept["rule_based"] == {**earlier, "ms_per_move": None} and kept["random"]["reached"] is None
    assert (tmp_path / "hornafjardar_placed.png").stat().st_size > 0  # the time-to-rung picture


def test_the_agents_a_run_keeps_along_the_way_are_one_run_on_the_time_to_rung_picture(tmp_path):
    assert ladder.run_of("ppo:runs/laug_s1/agents/8004992") == ladder.run_of("ppo:runs/laug_s1/agent") == "runs/laug_s1"
    assert ladder.run_of("ppo:runs/other/agent") == "runs/other"
    assert ladder.run_of("ppo") == "ppo" and ladder.run_of("pimc:worlds=16") == "pimc:worlds=16"
    margin = {"mean": 0.1, "low": -0.1, "high": 0.3}
    places = [{"spec": f"ppo:runs/laug_s1/agents/{n}", "learner_decisions": n, "margins": {"rule_based": margin}}
              for n in (8_000_000, 4_000_000)] + [{"spec": "random", "learner_decisions": None, "margins": {"pimc": margin}}]
    ladder.plot_placed("laugarvatn", places, ladder.rungs("laugarvatn", 32), tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 0


def test_up_to_stops_an_agent_at_that_rung_even_when_level_with_it(tmp_path, capsys):
    # rule_based is level with its own rung without a cell; without --up-to it would go on to pimc 16
    assert ladder.main([*TINY, "--place", "rule_based", "--up-to", "rule_based", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    kept = json.loads((tmp_path / "hornafjardar_placed.json").read_text())["rule_based"]
    assert kept["reached"] == kept["up_to"] == "rule_based" and kept["margins"] == {}
    assert not list(tmp_path.glob("hornafjardar/*"))
    assert "| rule_based or higher (not played further) | – | – |" in (tmp_path / "hornafjardar_placed.md").read_text()


@pytest.mark.parametrize("bad, message", [(["--deals", "0"], "--deals: must be at least 1"),
                                          (["--pimc-worlds", "0"], "--pimc-worlds: must be at least 1"),
                                          (["--rungs", "nope"], "invalid choice: 'nope'"),
                                          (["--place", "random", "--rungs", "pimc"], "--rungs: not with --place"),
                                          (["--place", "random", "--no-play"], "--no-play: not with --place"),
                                          (["--up-to", "pimc"], "--up-to: only with --place"),
                                          (["--place", "random", "--up-to", "top"], "invalid choice: 'top'")])
def test_bad_arguments_are_usage_errors(bad, message, capsys):
    with pytest.raises(SystemExit):
        ladder.main(["--variant", "trjamann", *bad])
    assert message in capsys.readouterr().err
