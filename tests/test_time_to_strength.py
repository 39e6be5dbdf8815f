"""benchmarks/time_to_strength.py: what it reads from a run and how it pools the seeds."""

from __future__ import annotations

import json
import math

import pytest
from helpers.scripts import load_benchmark

from manni_env.rules import make_rules

tts = load_benchmark("time_to_strength")


def entry(steps: int, minutes: float, mean: float, margin: float | None = None) -> dict:
    score = {"mean": mean, "low": mean - 0.1, "high": mean + 0.1}
    if margin is not None:
        score["margin"] = {"mean": margin, "low": margin - 0.1, "high": margin + 0.1}
    return {"timesteps": steps, "wall_time_s": 60 * minutes, "vs_ppo:x": score}


def test_minutes_to_level_is_the_first_evaluation_at_or_above_zero():
    rules = make_rules("trjamann")
    history = [entry(1, 1.0, -0.5), entry(2, 2.0, 0.0), entry(3, 3.0, -0.1), entry(4, 4.0, 0.2)]
    assert tts.minutes_to_level(history, "vs_ppo:x", rules) == pytest.approx(2.0)
    assert tts.minutes_to_level(history[:1], "vs_ppo:x", rules) is None


def test_decisions_to_level_count_the_learner_decisions_of_that_evaluation():
    rules = make_rules("trjamann")
    history = [entry(1_000_000, 1.0, -0.5), entry(2_000_000, 2.5, 0.1)]
    assert tts.decisions_to_level(history, "vs_ppo:x", rules) == 2_000_000
    assert tts.decisions_to_level(history[:1], "vs_ppo:x", rules) is None


def test_the_report_says_which_cpu_the_times_come_from(monkeypatch):
    from manni_train.cpu import describe

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    cpu = {**describe(), "threads": 2, "matmul_peak_gflops": {"fp32": 300, "bf16": 700}}
    history = [{**entry(1_000_000, 1.0, 0.1), "vs_rule_based": entry(1, 1.0, 0.5)["vs_ppo:x"]}]
    row = {"seed": 1, "history": history, "keys": {"reference": "vs_ppo:x", "rule_based": "vs_rule_based"},
           "wall_time_s": 60.0, "steps": 1_000_000, "minutes_to_level": 1.0, "decisions_to_level": 1_000_000,
           "pimc": {"mean": 0.1, "low": 0.0, "high": 0.2, "deals": 300, "seed": 90210}, "cpu": cpu}
    text = tts.report("trjamann", [row], [])
    assert "kind `fp32` (ONEDNN_MAX_CPU_ISA AVX2); matmul peak at 2 threads 700 GFLOP/s bf16" in text and "| 1 | 1.0 min | 1,000,000 | 1.0 | 1,000,000 |" in text


def test_seeds_run_before_with_the_same_options_stay_in_the_report_with_their_cpu(tmp_path, capsys):
    amx = {"cpu_model": "Xeon", "cpu_kind": "amx", "onednn_max_cpu_isa": "unset", "threads": 2,
           "matmul_peak_gflops": {"fp32": 400, "bf16": 2500}}
    earlier = {"train_args": ["--update-epochs", "1"], "cpu": amx,
               "rows": [{"seed": 1, "steps": 10}, {"seed": 2, "steps": 20}]}
    path = tmp_path / "trjamann.json"
    path.write_text(json.dumps(earlier))
    kept = tts.earlier_rows(path, ["--update-epochs", "1"], [2, 3])
    assert kept == [{"cpu": amx, "seed": 1, "steps": 10}]  # seed 2 is run again now
    assert tts.earlier_rows(path, [], [2]) == [] and "made with other --train-args" in capsys.readouterr().out
    assert tts.earlier_rows(tmp_path / "none.json", [], [1]) == []
    epyc = {**amx, "cpu_model": "AMD EPYC", "cpu_kind": "avx512_bf16", "matmul_peak_gflops": {"fp32": 63, "bf16": 222}}
    history = [{**entry(1_000_000, 1.0, 0.1), "vs_rule_based": entry(1, 1.0, 0.5)["vs_ppo:x"]}]
    rows = [{"seed": seed, "history": history, "keys": {"reference": "vs_ppo:x", "rule_based": "vs_rule_based"},
             "wall_time_s": 60.0, "steps": 1_000_000, "minutes_to_level": None, "decisions_to_level": None,
             "pimc": {"mean": 0.1, "low": 0.0, "high": 0.2, "deals": 300, "seed": 90209 + seed}, "cpu": cpu}
            for seed, cpu in ((1, amx), (2, epyc))]
    text = tts.report("trjamann", rows, [])
    assert "- seed 1: Xeon, kind `amx`" in text and "- seed 2: AMD EPYC, kind `avx512_bf16`" in text
    assert "pooled (2 seeds, 600 deals)" in text


def test_level_is_judged_on_the_margin_where_deals_are_not_zero_sum():
    rules = make_rules("basic")  # every deal score >= 0: the agent's own score says nothing about level
    history = [entry(1, 1.0, 0.6, margin=-0.2), entry(2, 2.0, 0.7, margin=0.05)]
    assert tts.minutes_to_level(history, "vs_ppo:x", rules) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no margins"):
        tts.minutes_to_level([entry(1, 1.0, 0.6)], "vs_ppo:x", rules)


def test_a_zero_sum_history_without_margins_reads_one_and_a_half_times_the_score():
    assert tts.margin(entry(1, 1.0, 0.2)["vs_ppo:x"], make_rules("hornafjardar")) == pytest.approx(
        {"mean": 0.3, "low": 0.15, "high": 0.45})


def test_pooled_seeds_average_the_means_and_narrow_the_interval():
    z = tts.Z95
    one = {"mean": 0.3, "low": 0.3 - 0.2 * z, "high": 0.3 + 0.2 * z}  # standard error 0.2
    two = {"mean": 0.1, "low": 0.1 - 0.2 * z, "high": 0.1 + 0.2 * z}
    pooled = tts.pooled([one, two])
    assert pooled["mean"] == pytest.approx(0.2)
    assert pooled["high"] - pooled["mean"] == pytest.approx(z * 0.2 / math.sqrt(2))


def test_the_reference_agents_are_loadable_specs_of_every_variant():
    from manni_agents.registry import make_agent
    from manni_env.rules import VARIANTS
    from manni_train.reporting import eval_label

    for variant in VARIANTS:
        spec = tts.reference_spec(variant)
        assert make_agent(spec, make_rules(variant)).meta["variant"] == variant
        assert eval_label(spec) == f"ppo:{variant}_ppo"


def saved_run(tmp_path, copies: list[int], steps: int):
    """A run directory with ``--save-every`` copies at ``copies`` decisions and its final agent."""
    import json

    run = tmp_path / "runs" / "trjamann_s1"
    (run / "agents").mkdir(parents=True)
    for decisions in copies:
        (run / "agents" / f"{decisions}.json").write_text("{}")
    (run / "agent.json").write_text(json.dumps({"training": {"timesteps": steps}}))
    return run


@pytest.mark.parametrize("curve, level", [
    ({2: -0.4, 4: -0.2, 6: -0.05, 8: 0.02, 10: 0.1}, 8),  # level at the fourth copy
    ({2: 0.1, 4: 0.2, 6: 0.3, 8: 0.3, 10: 0.4}, 2),  # level from the first copy
    ({2: -0.4, 4: -0.3, 6: -0.2, 8: -0.1, 10: -0.01}, 12),  # only the final agent is level
])
def test_decisions_to_level_with_pimc_bisect_the_saved_copies(tmp_path, monkeypatch, curve, level):
    run = saved_run(tmp_path, [d * 1_000_000 for d in curve], 12_000_000)
    played = []

    def arena(variant, run, out, deals, seed, workers, agent="agent"):
        played.append(int(agent.split("/")[1]) // 1_000_000)
        mean = curve[played[-1]]
        return {"mean": mean, "low": mean - 0.1, "high": mean + 0.1, "deals": deals, "seed": seed}

    monkeypatch.setattr(tts, "versus_pimc", arena)
    decisions, points = tts.level_with_pimc("trjamann", run, tmp_path, 100, 1, 1, {"mean": 0.2})
    assert decisions == level * 1_000_000
    assert len(played) <= 3 < len(curve) and len(set(played)) == len(played)  # bisection: no copy twice
    assert [p["decisions"] for p in points] == sorted(d * 1_000_000 for d in played)


def test_a_run_behind_pimc_at_the_end_plays_no_copy(tmp_path, monkeypatch):
    run = saved_run(tmp_path, [1_000_000, 2_000_000], 3_000_000)
    monkeypatch.setattr(tts, "versus_pimc", lambda *a, **k: pytest.fail("no arena should be played"))
    assert tts.level_with_pimc("trjamann", run, tmp_path, 100, 1, 1, {"mean": -0.01}) == (None, [])


def test_the_pimc_cell_gives_the_decisions_and_the_points_they_rest_on():
    row = {"pimc_curve": [{"decisions": 14_002_479, "mean": -0.32}, {"decisions": 18_003_703, "mean": 0.01}],
           "decisions_to_level_pimc": 18_003_703}
    assert tts.pimc_level(row) == "18,003,703 (14.0 M −0.32, 18.0 M +0.01)".replace("−", "-")
    assert tts.pimc_level({**row, "decisions_to_level_pimc": None}) == "–"
    assert tts.pimc_level({}) == "n/a"
