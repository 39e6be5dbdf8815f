"""benchmarks/time_to_strength.py: what it reads from a run and how it pools the seeds."""

from __future__ import annotations

import math

import pytest
from helpers.scripts import load_benchmark

tts = load_benchmark("time_to_strength")


def entry(steps: int, minutes: float, mean: float) -> dict:
    return {"timesteps": steps, "wall_time_s": 60 * minutes, "vs_ppo:x": {"mean": mean, "low": mean - 0.1, "high": mean + 0.1}}


def test_minutes_to_level_is_the_first_evaluation_at_or_above_zero():
    history = [entry(1, 1.0, -0.5), entry(2, 2.0, 0.0), entry(3, 3.0, -0.1), entry(4, 4.0, 0.2)]
    assert tts.minutes_to_level(history, "vs_ppo:x") == pytest.approx(2.0)
    assert tts.minutes_to_level(history[:1], "vs_ppo:x") is None


def test_pooled_seeds_average_the_means_and_narrow_the_interval():
    z = tts.Z95
    one = {"mean": 0.3, "low": 0.3 - 0.2 * z, "high": 0.3 + 0.2 * z}  # standard error 0.2
    two = {"mean": 0.1, "low": 0.1 - 0.2 * z, "high": 0.1 + 0.2 * z}
    pooled = tts.pooled([one, two])
    assert pooled["mean"] == pytest.approx(0.2)
    assert pooled["high"] - pooled["mean"] == pytest.approx(z * 0.2 / math.sqrt(2))


def test_the_reference_agents_are_loadable_specs_of_every_variant():
    from manni_agents.registry import make_agent
    from manni_env.rules import VARIANTS, make_rules
    from manni_train.reporting import eval_label

    for variant in VARIANTS:
        spec = tts.reference_spec(variant)
        assert make_agent(spec, make_rules(variant)).meta["variant"] == variant
        assert eval_label(spec) == f"ppo:{variant}_ppo"
