"""benchmarks/strength.py: the league's cells with deal caps, the kept results, the table, its rebuild and its errors (2 deals a cell)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.scripts import load_benchmark

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "strength.py"


@pytest.fixture(scope="module")
def strength():
    return load_benchmark("strength")


def run(strength, out: Path, *extra: str) -> int:
    return strength.main(["--agents", "random", "rule_based", "--deals", "2", "--seed", "3", "--out", str(out),
                          "--no-progress", *extra])


def test_cells_table_kept_results_and_rebuild(strength, tmp_path, capsys):
    assert run(strength, tmp_path) == 0
    printed = capsys.readouterr().out
    assert "[1/2] random vs rule_based ×2: 2 deals, seed 3" in printed and "[2/2] rule_based vs random" in printed
    agents = {"random_vs_rule_based": ["random", "rule_based", "rule_based"],
              "rule_based_vs_random": ["rule_based", "random", "random"]}
    cells = {name: tmp_path / "hornafjardar" / name for name in agents}
    for name, where in cells.items():
        assert {p.name for p in where.iterdir()} == {"result.json", "result.md", "result.png", "games.json"}
        settings = json.loads((where / "result.json").read_text())["settings"]
        assert settings["agents"] == agents[name]
        assert (settings["units"], settings["seed"], settings["mode"]) == (2, 3, "deals")
    table = (tmp_path / "hornafjardar.md").read_text()
    first = json.loads((cells["rule_based_vs_random"] / "result.json").read_text())
    score = strength.Interval(**first["agents"][0]["deal_score"]).text()
    difference = strength.Interval(**first["head_to_head"][0]["difference"]).text()
    row = next(line for line in table.splitlines() if line.startswith("| `rule_based` | "))
    assert f"| {score}<br>X − Y {difference}<br>2 deals | – |" in row
    assert "`manni arena rule_based random random --variant hornafjardar --deals 2 --seed 3 --workers 1`" in table
    assert "[hornafjardar/random_vs_rule_based/result.md](hornafjardar/random_vs_rule_based/result.md)" in table
    assert "| `random` | " in table.split("| agent | ms/move")[1] and "| – | – |" in table

    stamps = {name: (where / "result.json").stat().st_mtime_ns for name, where in cells.items()}
    assert run(strength, tmp_path) == 0  # same settings: both cells kept, not played
    assert capsys.readouterr().out.count("kept ") == 2
    assert stamps == {name: (where / "result.json").stat().st_mtime_ns for name, where in cells.items()}

    (tmp_path / "hornafjardar.md").unlink()
    assert run(strength, tmp_path, "--table-only") == 0
    assert (tmp_path / "hornafjardar.md").read_text() == table

    assert run(strength, tmp_path, "--only", "rule_based", "random", "--force") == 0  # replayed: the same numbers
    replayed = json.loads((cells["rule_based_vs_random"] / "result.json").read_text())
    assert (replayed["agents"][0]["deal_score"], replayed["head_to_head"]) == (first["agents"][0]["deal_score"], first["head_to_head"])
    assert (cells["random_vs_rule_based"] / "result.json").stat().st_mtime_ns == stamps["random_vs_rule_based"]


def test_other_settings_need_force(strength, tmp_path, capsys):
    assert run(strength, tmp_path, "--only", "random", "rule_based") == 0
    with pytest.raises(SystemExit) as stop:
        run(strength, tmp_path, "--seed", "4")
    assert stop.value.code == 2
    assert "random_vs_rule_based holds a result of other settings" in capsys.readouterr().err
    assert run(strength, tmp_path, "--deals-for", "random=1", "--force") == 0
    table = (tmp_path / "hornafjardar.md").read_text()
    assert table.count("<br>1 deals |") == 2 and "--deals 1 --seed 3" in table
    assert run(strength, tmp_path, "--only", "random", "rule_based", "--force") == 0  # 2 deals
    assert run(strength, tmp_path, "--deals-for", "random=1") == 0  # a cell with more deals than asked is kept
    assert "kept random vs rule_based ×2 (1 deals" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--agents", "random", "nonsense"], "argument --agents: unknown agent 'nonsense'"),
    (["--agents", "random", "random"], "two or more distinct specs"),
    (["--deals-for", "pimc=5"], "argument --deals-for: 'pimc' is none of the agents"),
    (["--deals-for", "random=0"], "expected NAME=N with N a whole number ≥ 1"),
    (["--only", "random", "pimc"], "argument --only: expected two different specs of --agents"),
    (["--table-only", "--force"], "not allowed with --force or --only"),
])
def test_bad_arguments_exit_2_with_one_line(strength, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as stop:
        run(strength, tmp_path, *extra)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "hornafjardar").exists()


def test_deal_caps_paths_and_training_columns(strength, tmp_path, capsys):
    assert strength.cell_deals("pimc:worlds=8", "random", 2000, {"pimc": 300, "random": 500}) == 300
    assert strength.cell_deals("pimc:worlds=8", "random", 2000, {"pimc:worlds=8": 100, "pimc": 300}) == 100
    assert strength.cell_dir(tmp_path, "basic", "pimc:worlds=16", "ppo:runs/x").name == "pimc-worlds=16_vs_ppo-runs-x"
    assert strength.main(["--agents", "ppo", "random", "--out", str(tmp_path), "--table-only"]) == 0
    meta = json.loads((SCRIPT.parents[1] / "agents" / "models" / "hornafjardar_ppo.json").read_text())["training"]
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| `ppo` | – | 0 | "))
    assert f"| {meta['wall_time_s'] / 60:.1f} min | {meta['timesteps']:,} |" in row


def test_whole_training_adds_up_the_init_from_chain(strength):
    first = {"timesteps": 3_000_000, "wall_time_s": 1800.0}
    fine_tuned = {"timesteps": 8_000_000, "wall_time_s": 2400.0, "init_from": {**first, "spec": "ppo"}}
    assert strength.whole_training(fine_tuned, "timesteps") == 11_000_000
    assert strength.whole_training(fine_tuned, "wall_time_s") == 4200.0
    assert strength.whole_training(first, "timesteps") == 3_000_000
    assert strength.whole_training({}, "timesteps") is None  # not a trained agent
    unknown = {**fine_tuned, "init_from": {"spec": "ppo", "timesteps": None}}
    assert strength.whole_training(unknown, "timesteps") is None  # part of the budget unknown: no total
