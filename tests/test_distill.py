"""``manni distill``: labelling (who labels what, determinism, workers), the decisions file, the
fine-tuning and the command line. A cheap teacher (``rule_based``) stands in for ``search``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from manni_agents.ppo_agent import PPOAgent, shipped_model
from manni_agents.rule_based import RuleBasedAgent
from manni_agents.search import network_decisions
from manni_env import GameState, Phase, make_rules
from manni_train import distill
from manni_train.demonstrations import ObservationCodec

RULES = make_rules("basic")


def test_network_decisions_cover_every_multi_choice_decision_of_the_deals() -> None:
    seen = list(network_decisions(RULES, range(3, 5), seed=7, progress=False))
    assert {deal for deal, *_ in seen} == {3, 4}
    assert all(len(view.legal_actions) > 1 and action in view.legal_actions for _, view, action, _ in seen)
    assert Phase.PLAY in {view.phase for _, view, _, _ in seen}
    # deal 3 is the deal dealt from seed 7 + 3
    first = next(s for s in seen if s[0] == 3)[1]
    assert first.hand == GameState(RULES, seed=10).view(first.seat).hand


def test_teach_play_labels_card_play_by_the_teacher_and_the_rest_by_the_student() -> None:
    data = distill.label_deals(RULES, "ppo", "rule_based", "play", 5, range(0, 3))
    student = PPOAgent(shipped_model("basic"), symmetric=False)  # the student plays its network plain
    codec = ObservationCodec(RULES, student.meta["history"])
    obs, masks = data.rows(codec, np.arange(len(data)))
    labels = data.labels.astype(np.int64)
    assert len(data) > 50 and data.taught.any() and (~data.taught).any()
    assert np.isnan(data.gain).all()  # rule_based gives no estimates: its labels are learned as they are
    assert np.array_equal(data.targets(0.5), labels)
    assert masks[np.arange(len(data)), labels].all() and (masks.sum(1) > 1).all()
    assert np.array_equal(labels[~data.taught], data.student[~data.taught])
    # the student's action is its greedy choice on the stored observation
    logits = np.where(masks, student.logits(obs), -np.inf)
    assert np.array_equal(logits.argmax(1), data.student)
    # the taught labels are the teacher's moves at those positions
    teacher, teacher_moves = RuleBasedAgent(), []
    for _, view, _, rng in network_decisions(RULES, range(0, 3), 5, progress=False, network=student):
        if view.phase == Phase.PLAY:
            teacher_moves.append(teacher.act(view, rng))
    assert teacher_moves == labels[data.taught].tolist()
    assert (data.labels[data.taught] != data.student[data.taught]).any()  # the teacher disagrees somewhere


def test_teach_all_and_determinism_across_workers() -> None:
    everything = distill.label_deals(RULES, "ppo", "rule_based", "all", 5, range(0, 2))
    assert everything.taught.all()
    one, cut = distill.collect(RULES, "ppo", "rule_based", "play", 12, seed=3, workers=1, progress=False)
    two, _ = distill.collect(RULES, "ppo", "rule_based", "play", 12, seed=3, workers=2, progress=False)
    assert not cut
    for field in distill.FIELDS:
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field), err_msg=field)  # NaN == NaN
    assert sorted(set(one.deal.tolist())) == list(range(12))


def test_decisions_file_round_trip_and_bad_files(tmp_path) -> None:
    data = distill.label_deals(RULES, "ppo", "rule_based", "play", 1, range(0, 2))
    data.save(tmp_path / "d.npz")
    back = distill.LabelledDecisions.load(tmp_path / "d.npz")
    for field in distill.FIELDS:
        np.testing.assert_array_equal(getattr(back, field), getattr(data, field), err_msg=field)
    np.savez(tmp_path / "partial.npz", labels=data.labels)
    with pytest.raises(ValueError, match="lacks obs_bits"):
        distill.LabelledDecisions.load(tmp_path / "partial.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="junk.npz"):
        distill.LabelledDecisions.load(tmp_path / "junk.npz")


def test_search_teacher_estimates_its_gain_and_the_margin_keeps_near_ties_as_played() -> None:
    data = distill.label_deals(RULES, "ppo", "search:worlds=4", "play", 9, range(0, 2))
    taught = data.taught
    assert np.isfinite(data.gain[taught]).all() and np.isnan(data.gain[~taught]).all()
    assert (data.gain[taught] >= 0).all()  # the search's choice is its best estimate
    same = data.labels == data.student
    assert (data.gain[taught & same] == 0).all()
    for margin in (0.0, 0.3, 10.0):
        targets = data.targets(margin)
        changed = targets != data.student
        assert np.array_equal(changed, taught & (data.gain > margin))
        assert np.array_equal(targets[changed], data.labels[changed])
    assert not (data.targets(10.0) != data.student).any()


def test_fine_tuning_moves_the_student_towards_the_teacher() -> None:
    data, _ = distill.collect(RULES, "ppo", "rule_based", "play", 40, seed=2, workers=1, progress=False)
    student = PPOAgent(shipped_model("basic"))
    layers, history = distill.fine_tune(student, RULES, data, margin=0.1, epochs=3, lr=1e-3, batch_size=256,
                                        holdout=0.25, seed=0, progress=False)
    assert [h["epoch"] for h in history] == [0, 1, 2, 3]
    assert history[0]["train"] == {"changes": 0.0, "kept": 1.0}  # before: every move is the student's own
    assert history[-1]["train"]["changes"] > 0.2
    assert history[-1]["held_out"]["changes"] > history[0]["held_out"]["changes"]
    assert all(w.dtype == np.float32 for w, _ in layers)


def test_command_writes_a_loadable_agent_and_refuses_bad_input(tmp_path, capsys) -> None:
    common = ["--variant", "basic", "--teacher", "rule_based", "--deals", "6", "--epochs", "1",
              "--runs-dir", str(tmp_path), "--no-progress"]
    assert distill.main([*common, "--run-name", "r"]) == 0
    run = tmp_path / "r"
    agent = PPOAgent(run / "agent")
    meta = json.loads((run / "agent.json").read_text())
    assert meta["training"]["init_from"]["spec"] == "ppo" and meta["variant"] == "basic"
    report = json.loads((run / "distill.json").read_text())
    assert report["deals"] == 6 and report["taught"] <= report["decisions"]
    state = GameState(RULES, seed=1)
    action = agent.act(state.view(state.to_move), np.random.default_rng(0))
    assert action in state.legal_actions()
    assert "of the teacher's changes" in capsys.readouterr().out
    # the labelled decisions are reused without the teacher
    reuse = ["--run-name", "again", "--data", str(run / "decisions.npz"), "--teacher", "nobody"]
    assert distill.main([*common, *reuse]) == 0
    out = [*common[:-3], "--no-progress", "--out", str(tmp_path / "o"), "--data", str(run / "decisions.npz")]
    assert distill.main(out) == 0 and (tmp_path / "o" / "agent.json").exists()  # --out: the run directory in one
    other_variant = [*common, "--run-name", "v", "--data", str(run / "decisions.npz")]
    other_variant[1] = "trjamann"
    with pytest.raises(SystemExit):
        distill.main(other_variant)
    assert "another variant or observation layout" in capsys.readouterr().err
    data = distill.LabelledDecisions.load(run / "decisions.npz")
    data.labels[0] = 62 if data.labels[0] != 62 else 61  # not legal there (exchange counts or no card)
    data.save(tmp_path / "bad.npz")
    with pytest.raises(SystemExit):
        distill.main([*common, "--run-name", "b", "--data", str(tmp_path / "bad.npz")])
    assert "not a legal action" in capsys.readouterr().err
    for bad, message in ((["--run-name", "r"], "already holds a run"),
                         (["--out", str(tmp_path / "p")], "not both"),
                         (["--run-name", "x", "--teacher", "nobody"], "unknown agent 'nobody'"),
                         (["--run-name", "y", "--init-from", "rule_based"], "takes a ppo checkpoint"),
                         (["--run-name", "z", "--init-from", "ppo:trjamann"], "cannot play 'basic'"),
                         (["--run-name", "w", "--holdout", "1.5"], "below 1"),
                         (["--run-name", "m", "--margin", "-1"], "at least 0"),
                         (["--run-name", "l", "--learning-rate", "0"], "above 0"),
                         (["--run-name", "n", "--margin", "nan"], "at least 0")):
        with pytest.raises(SystemExit) as exit_info:
            distill.main([*common, *bad])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("cut_at", [0, distill.CHUNK])
def test_ctrl_c_while_labelling_keeps_the_finished_deals(tmp_path, monkeypatch, capsys, cut_at) -> None:
    label = distill.label_deals

    def interrupted(rules, student, teacher, teach, seed, deals):
        if deals.start >= cut_at and len(deals):
            raise KeyboardInterrupt
        return label(rules, student, teacher, teach, seed, deals)

    monkeypatch.setattr(distill, "label_deals", interrupted)
    code = distill.main(["--variant", "basic", "--teacher", "rule_based", "--deals", "25", "--runs-dir", str(tmp_path),
                         "--run-name", "cut", "--no-progress"])
    assert code == 130
    kept = distill.LabelledDecisions.load(tmp_path / "cut" / "decisions.npz")
    assert sorted(set(kept.deal.tolist())) == list(range(cut_at))
    assert "interrupted" in capsys.readouterr().err and not (tmp_path / "cut" / "agent.json").exists()
