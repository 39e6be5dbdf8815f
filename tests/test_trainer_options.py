"""The trainers' options: ``--precision``, ``--opponents``, the compact warm-start data, the quick
warm start, Ctrl-C keeping the run (``--resume``), and the vocabulary every trainer shares (the PPO
options under CleanRL's names, ``--opponent-mix``, the evaluation on the same deals)."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.interrupts import interrupt_when_written, manni  # noqa: E402

from manni_agents.evaluation.vector_arena import checkpoint_policy  # noqa: E402
from manni_agents.ppo_agent import CheckpointError, policy_metadata, save_checkpoint, shipped_model  # noqa: E402
from manni_agents.registry import make_agent  # noqa: E402
from manni_agents.rule_based_vector import VectorRuleBased  # noqa: E402
from manni_agents.vector_policy import make_vector_policy  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.observation import HISTORIES, ObservationEncoder  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402
from manni_train import ppo_sb3, ppo_vector, resume  # noqa: E402
from manni_train.args import parse_args, parse_opponent_mix  # noqa: E402
from manni_train import demonstrations  # noqa: E402
from manni_train.demonstrations import ObservationCodec, collect_demonstrations, imitate  # noqa: E402
from manni_train.warm_start import warm_start  # noqa: E402
from manni_train.init_from import load_actor  # noqa: E402
from manni_train.networks import Actor, Critic, greedy_policy, ppo_network  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402
from manni_train.precision import PAD_ROWS, autocast, compute_dtype, auto_bf16, padded_rows, run_padded  # noqa: E402
from manni_train.reporting import evaluate  # noqa: E402
from manni_train.resume import resumed  # noqa: E402
from manni_train.threads import ThreadFitter, free_cores, usable_cores  # noqa: E402
from manni_train.vector_rollout import FIXED, LEARNER, RANDOM, RULE_BASED, VectorRollout  # noqa: E402

TINY = dict(num_envs=16, num_steps=24, hidden=[32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, torch_threads=1, progress_bar=False)


def played_observations(variant: str, history: str, steps: int = 300, layout: str = "v0") -> np.ndarray:
    """Observations of random play on the vector env: every phase of several deals."""
    venv = VectorManni(make_rules(variant), 8, history=history, layout=layout)
    obs, mask, _ = venv.reset(seed=4)
    rng = np.random.default_rng(0)
    seen = [obs]
    for _ in range(steps):
        obs, mask, *_ = venv.step((rng.random(mask.shape) * mask).argmax(1))
        seen.append(obs)
    return np.concatenate(seen)


# ---- compact warm-start storage ----

@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
@pytest.mark.parametrize("history", HISTORIES)
@pytest.mark.parametrize("layout", ["v0", "v1"])
def test_compact_observations_round_trip_exactly(variant, history, layout):
    obs = played_observations(variant, history, layout=layout)
    codec = ObservationCodec(make_rules(variant), history, layout)
    bits, numbers = codec.encode(obs)
    assert bits.dtype == np.uint8 and bits.nbytes + numbers.nbytes < obs.nbytes / (10 if layout == "v0" else 8)
    assert np.array_equal(codec.decode(bits, numbers), obs)
    assert (obs[:, codec.numbers] % 1 != 0).any()  # the scaled numbers are kept, fractions and all
    if layout == "v1":  # unseen_above is one of them
        unseen = ObservationEncoder(make_rules(variant), history, layout).offset["unseen_above"]
        assert unseen in codec.numbers and (obs[:, unseen : unseen + 52] % 1 != 0).any()


def test_compact_storage_refuses_a_flag_that_is_not_0_or_1():
    codec = ObservationCodec(make_rules("hornafjardar"))
    obs = played_observations("hornafjardar", "summary", steps=2)
    obs[3, 0] = 0.5
    with pytest.raises(ValueError, match="flags must be 0 or 1"):
        codec.encode(obs)


def test_the_warm_start_is_measured_on_evenly_spaced_decisions(monkeypatch):
    data = collect_demonstrations(make_rules("hornafjardar"), 600, seed=2)
    monkeypatch.setattr(demonstrations, "MEASURED_ROWS", 100)  # every 6th decision

    def evaluate(batch):
        return torch.zeros(len(batch["actions"]), requires_grad=True), torch.zeros(len(batch["actions"]))

    seen = []

    def greedy(batch):  # plays action 0 everywhere; records which decisions it was shown
        seen.extend(batch["actions"].tolist())
        return torch.zeros_like(batch["actions"])

    result = imitate(evaluate, greedy, [torch.nn.Parameter(torch.zeros(1))], data, epochs=0, lr=1e-3, batch_size=64, generator=torch.Generator())
    assert seen == data.actions[::6].tolist()
    assert result["bc/accuracy"] == np.mean(data.actions[::6] == 0) and result["bc/samples"] == 600
    assert result["bc/value_mse"] == pytest.approx(np.mean(data.returns[::6].astype(np.float64) ** 2))


def test_demonstrations_decode_to_the_teachers_observations_and_masks():
    rules = make_rules("hornafjardar")
    data = collect_demonstrations(rules, 600, seed=2)
    assert data.nbytes / len(data) < 200  # the float32 observations alone took 2,464 bytes
    # the first decision of each game is that game's first observation after reset(seed)
    games = max(1, 600 // 200)
    obs, mask, _ = VectorManni(rules, games).reset(seed=2)
    rows = data.rows(np.arange(games))
    assert np.array_equal(rows["obs"], obs) and np.array_equal(rows["masks"], mask)
    assert rows["actions"].dtype == np.int64 and rows["masks"][np.arange(games), rows["actions"]].all()


# ---- --precision ----

def test_precision_choices_and_autocast():
    assert compute_dtype("fp32") == torch.float32 and compute_dtype("bf16") == torch.bfloat16
    assert compute_dtype("auto") == (torch.bfloat16 if auto_bf16(torch.device("cpu")) else torch.float32)
    with pytest.raises(ValueError, match="--precision must be one of auto, fp32, bf16"):
        Args(precision="fp16").check()
    assert parse_args(Args, ["--precision", "bf16"]).precision == "bf16"
    torch.manual_seed(0)
    actor, critic = Actor(616, [64, 64], "relu"), Critic(616, [64, 64], "relu")
    obs, mask = torch.rand(32, 616), torch.rand(32, 63) > 0.5
    with torch.no_grad():
        full = actor(obs, mask)
        with autocast(torch.bfloat16):
            half, value = actor(obs, mask), critic(obs)
    # the heads answer in float32 whatever the hidden layers ran in; bf16 rounds the hidden layers
    assert half.dtype == value.dtype == torch.float32
    assert not torch.equal(half, full) and torch.allclose(half, full, atol=0.05)
    assert next(actor.parameters()).dtype == torch.float32


def test_bf16_batches_are_padded_to_few_shapes_and_only_the_real_rows_come_back():
    torch.manual_seed(1)
    actor = Actor(616, [64], "relu")
    obs, mask = torch.rand(37, 616), torch.rand(37, 63) > 0.5
    shapes = []
    hook = actor.pi.register_forward_hook(lambda module, args, out: shapes.append(args[0].shape[0]))
    with autocast(torch.bfloat16):
        padded = run_padded(actor, torch.bfloat16, obs, mask)
        plain = actor(obs, mask)
    assert shapes == [2 * PAD_ROWS, 37] and padded.shape == (37, 63)
    assert torch.allclose(padded, plain, atol=1e-3)
    padded.sum().backward()  # the padding rows carry no gradient of their own
    assert actor.action.weight.grad is not None
    hook.remove()
    shapes.clear()
    assert torch.equal(run_padded(actor, torch.float32, obs, mask), actor(obs, mask))  # fp32: as it is
    assert run_padded(actor, torch.bfloat16, obs[:0], mask[:0]).shape == (0, 63)


def test_padded_row_indices_repeat_the_first_row_under_bf16_only():
    rows = torch.tensor([5, 2, 9])
    padded = padded_rows(rows, torch.bfloat16)
    assert padded.numel() == PAD_ROWS and torch.equal(padded[:3], rows) and (padded[3:] == 5).all()
    assert torch.equal(padded_rows(rows, torch.float32), rows)
    assert padded_rows(torch.arange(2 * PAD_ROWS), torch.bfloat16).numel() == 2 * PAD_ROWS  # already a multiple
    assert padded_rows(rows[:0], torch.bfloat16).numel() == 0


# ---- --opponents ----

def test_opponent_specs_are_checked():
    with pytest.raises(ValueError, match="--opponents: 'pimc' does not act in batches on the vector env"):
        Args(opponents=["pimc"]).check()
    with pytest.raises(ValueError, match="one or two agent specs"):
        Args(opponents=["random"] * 3).check()
    with pytest.raises(CheckpointError, match="--opponents ppo: .* reads history='summary' observations, the games "
                                              "are seen with history='full'"):
        Args(opponents=["ppo"], history="full").check()
    with pytest.raises(ValueError, match="trainer does not play fixed opponents"):
        ppo_sb3.Args(opponents=["random"]).check()
    assert parse_args(Args, ["--opponents", "ppo", "rule_based"]).opponents == ["ppo", "rule_based"]


def test_network_and_rule_based_opponents_play_as_their_agents():
    rules = make_rules("hornafjardar")
    venv = VectorManni(rules, 12)
    obs, mask, _ = venv.reset(seed=8)
    rng = np.random.default_rng(0)
    games = np.arange(12)
    network, rule_based = make_vector_policy("ppo", rules), make_vector_policy("rule_based", rules)
    shipped = checkpoint_policy(shipped_model("hornafjardar"), rules)  # plays as ppo:PATH does
    for _ in range(60):
        actions = network.act(venv, games, obs, mask, rng)
        assert np.array_equal(actions, shipped.act(venv, games, obs, mask, rng))
        assert np.array_equal(rule_based.act(venv, games, obs, mask, rng), VectorRuleBased().act(venv, games))
        obs, mask, *_ = venv.step(actions)
    sampled = make_vector_policy("ppo:hornafjardar,sample", rules).act(venv, games, obs, mask, rng)
    assert mask[games, sampled].all()


@pytest.mark.parametrize("specs", [["random"], ["ppo", "rule_based"]])
def test_opponents_take_the_two_seats_the_learner_leaves(specs):
    args = Args(opponents=specs, **TINY)
    rollout = VectorRollout(args, torch.Generator().manual_seed(1), np.random.default_rng(1), 1)
    who = rollout.controller
    assert ((who == LEARNER).sum(1) == 1).all()
    assert np.isin(who[who != LEARNER], [FIXED - i for i in range(len(specs))]).all()
    if len(specs) == 2:  # one of each, on either side of the learner
        others = np.sort(who[who != LEARNER].reshape(-1, 2), axis=1)
        assert (others == [FIXED - 1, FIXED]).all()
        left = who[np.arange(len(who)), (np.argmax(who == LEARNER, 1) + 1) % 3]
        assert set(left.tolist()) == {FIXED, FIXED - 1}
    batch = rollout.collect(Actor(rollout.obs_size, [32], "relu"), Critic(rollout.obs_size, [32], "relu"))
    assert batch.steps > 0 and len(rollout.pool) == 0


def test_training_against_fixed_opponents_in_bf16_exports_a_float32_agent(tmp_path):
    args = Args(runs_dir=str(tmp_path), run_name="br", total_steps=600, snapshot_every=100,
                opponents=["ppo", "random"], precision="bf16", **TINY)
    result = train(args)
    agent = make_agent(f"ppo:{result.agent}")
    assert all(w.dtype == b.dtype == np.float32 for w, b in agent.layers)
    assert agent.meta["training"]["args"]["opponents"] == ["ppo", "random"]
    assert agent.meta["training"]["args"]["precision"] == "bf16"
    state = GameState(make_rules("hornafjardar"), seed=3)
    view = state.view(state.to_move)
    assert agent.act(view, np.random.default_rng(0)) in view.legal_actions


def test_init_from_starts_the_actor_as_the_checkpoint_and_the_warm_start_trains_only_the_critic(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    start = make_agent(f"ppo:{first.agent}").layers
    args = Args(runs_dir=str(tmp_path), run_name="second", init_from=f"ppo:{first.agent}", **TINY)
    actor, critic = Actor(616, [32], "relu"), Critic(616, [32], "relu")
    load_actor(actor, args.init_from, args)
    assert all(np.array_equal(w, v) and np.array_equal(b, c) for (w, b), (v, c) in zip(actor.layers(), start))
    values = [p.detach().clone() for p in critic.parameters()]
    data = collect_demonstrations(args.rules(), 400, seed=5)
    warm_start(actor, critic, data, args, torch.Generator().manual_seed(0))
    assert all(np.array_equal(w, v) for (w, _), (v, _) in zip(actor.layers(), start))  # the actor kept its weights
    assert any(not torch.equal(p, q) for p, q in zip(critic.parameters(), values))  # the critic learned


def test_init_from_is_recorded_in_the_exported_metadata_down_the_chain(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    second = train(Args(runs_dir=str(tmp_path), run_name="second", init_from=f"ppo:{first.agent}", total_steps=200,
                        **TINY))
    third = train(Args(runs_dir=str(tmp_path), run_name="third", init_from=f"ppo:{second.agent}", total_steps=200,
                       **TINY))
    meta = [make_agent(f"ppo:{run.agent}").meta for run in (first, second, third)]
    assert "init_from" not in meta[0]["training"]
    recorded = meta[2]["training"]["init_from"]
    assert recorded["spec"] == f"ppo:{second.agent}"
    assert recorded["weights_sha256"] == meta[1]["weights_sha256"]
    assert recorded["timesteps"] == meta[1]["training"]["timesteps"] == second.steps
    assert recorded["init_from"] == meta[1]["training"]["init_from"]
    assert recorded["init_from"]["weights_sha256"] == meta[0]["weights_sha256"]


def test_the_init_from_record_is_taken_when_the_actor_loads_and_kept_for_resume(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    args = Args(runs_dir=str(tmp_path), run_name="second", init_from=f"ppo:{first.agent}", **TINY)
    actor, critic = Actor(616, [32], "relu"), Critic(616, [32], "relu")
    record = load_actor(actor, args.init_from, args)
    sha256 = make_agent(f"ppo:{first.agent}").meta["weights_sha256"]
    assert record == {"spec": f"ppo:{first.agent}", "weights_sha256": sha256, "timesteps": first.steps,
                      "wall_time_s": round(first.wall_time_s, 1)}
    resume.save(tmp_path, resume.Progress(phase="ppo", init_from=record), actor, critic, None, torch.Generator(),
                np.random.default_rng(0))
    progress, _ = resume.load(tmp_path, actor, critic, torch.Generator(), np.random.default_rng(1))
    assert progress.init_from == record


def test_init_from_a_summary_network_into_a_full_history_run_starts_with_the_same_moves(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    summary = make_agent(f"ppo:{first.agent}")
    args = Args(runs_dir=str(tmp_path), run_name="full", init_from=f"ppo:{first.agent}", history="full", **TINY)
    actor = Actor(ObservationEncoder(args.rules(), "full").size, [32], "relu")
    load_actor(actor, args.init_from, args)
    venv = VectorManni(args.rules(), 8, history="full")
    obs, mask, _ = venv.reset(seed=3)
    read_history = False
    for _ in range(60):  # into the card play, where the ordered history is not empty
        with torch.no_grad():
            logits = actor(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
        expected = summary.logits(obs[:, :summary.meta["obs_size"]])
        np.testing.assert_allclose(logits[mask], expected[mask], rtol=1e-5, atol=1e-5)
        read_history |= bool(obs[:, summary.meta["obs_size"]:].any())
        obs, mask = venv.step(logits.argmax(1))[:2]
    assert read_history  # the widened inputs were filled, and weighed nothing


def test_init_from_into_wider_hidden_layers_starts_with_the_same_moves_and_learns_with_the_added_units(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    start = make_agent(f"ppo:{first.agent}")
    args = Args(runs_dir=str(tmp_path), run_name="wide", init_from=f"ppo:{first.agent}", **{**TINY, "hidden": [48]})
    actor = Actor(616, [48], "relu")
    load_actor(actor, args.init_from, args)
    obs, mask, _ = VectorManni(args.rules(), 8).reset(seed=3)
    with torch.no_grad():
        logits = actor(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(logits[mask], start.logits(obs)[mask], rtol=1e-5, atol=1e-5)
    (hidden, _), (head, _) = actor.layers()
    assert hidden[32:].any() and not head[:, 32:].any()  # added units: fresh inputs, no say yet
    wide = train(Args(runs_dir=str(tmp_path), run_name="wide", init_from=f"ppo:{first.agent}", total_steps=200,
                      **{**TINY, "hidden": [48]}))
    trained = make_agent(f"ppo:{wide.agent}")
    assert trained.meta["net_arch"] == [48] and trained.layers[-1][0][:, 32:].any()  # the added units learned


@pytest.mark.parametrize("hidden", [[16], [32, 32]])
def test_init_from_does_not_narrow_or_deepen_a_network(tmp_path, hidden):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", total_steps=200, **TINY))
    with pytest.raises(CheckpointError, match=re.escape(f"net_arch=[32], the run has {hidden}")):
        train(Args(runs_dir=str(tmp_path), run_name="bad", init_from=f"ppo:{first.agent}", total_steps=200,
                   **{**TINY, "hidden": hidden}))


def test_init_from_does_not_narrow_a_full_history_network(tmp_path):
    first = train(Args(runs_dir=str(tmp_path), run_name="first", history="full", total_steps=200, **TINY))
    with pytest.raises(CheckpointError, match="history='full', the run has 'summary'"):
        train(Args(runs_dir=str(tmp_path), run_name="bad", init_from=f"ppo:{first.agent}", total_steps=200, **TINY))


@pytest.mark.parametrize("spec, problem", [("rule_based", "takes a ppo checkpoint"), ("ppo", "net_arch=[256, 256]")])
def test_init_from_names_what_does_not_fit_the_run(tmp_path, spec, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        train(Args(runs_dir=str(tmp_path), run_name="bad", init_from=spec, total_steps=200, **TINY))


@pytest.mark.parametrize("spec", ["ppo", "ppo:basic", "ppo:basic,symmetric", "ppo:symmetric,sample", "ppo:plain"])
def test_the_init_from_network_is_the_network_played_plain_and_greedy(spec):
    # the shipped Basic file says "play": "symmetric"; a trainer's student is its network all the same
    network = ppo_network(spec, make_rules("basic"))
    assert network.path.with_suffix("") == shipped_model("basic") and not network.symmetric and not network.sample


@pytest.mark.parametrize("spec, problem", [("ppo:basic,plain,symmetric", "plain and symmetric exclude each other"),
                                           ("ppo:nowhere/agent", "nowhere")])
def test_a_bad_init_from_spec_is_named(spec, problem):
    with pytest.raises((ValueError, CheckpointError), match=problem):
        ppo_network(spec, make_rules("basic"))


# ---- quick warm start ----

def test_the_warm_start_and_the_final_arena_scale_with_the_total_steps():
    assert Args(total_steps=20_000).warm_start_samples() == 6_000
    assert Args().warm_start_samples() == 600_000
    assert Args(total_steps=20_000, bc_samples=50).warm_start_samples() == 50
    assert parse_args(Args, ["--total-steps", "20000"]).final_arena_deals() == 100
    assert Args().final_arena_deals() == 500 and Args(final_eval_deals=0).final_arena_deals() == 0


def test_the_defaults_by_variant_and_a_given_value_wins():
    def run(*argv: str) -> tuple:
        args = parse_args(Args, list(argv))
        return args.total_steps, args.learning_rate, args.update_epochs, args.minibatch_size

    assert run() == (12_000_000, 1e-3, 1, 1024)  # Hornafjarðarmanni
    assert run("--variant", "laugarvatn") == (27_000_000, 1e-3, 1, 1024)
    assert run("--variant", "trjamann") == (20_000_000, 1e-3, 1, 1024)
    assert run("--variant", "basic") == (32_000_000, 1e-3, 1, 1024)
    assert run("--variant", "basic", "--total-steps", "7", "--update-epochs", "3") == (7, 1e-3, 3, 1024)
    trjamann = parse_args(Args, ["--variant", "trjamann"])
    assert (trjamann.opponent_mix, trjamann.anneal_lr_to) == ("snapshot=0.95,random=0.05", 0.5)
    assert "rule_based" in parse_args(Args, []).mix() and parse_args(Args, []).anneal_lr_to == 0.0
    given = parse_args(Args, ["--variant", "trjamann", "--opponent-mix", "none", "--anneal-lr-to", "0.2"])
    assert (given.opponent_mix, given.anneal_lr_to) == ("none", 0.2)
    constant = parse_args(Args, ["--variant", "trjamann", "--no-anneal-lr"])  # no decay: nothing to end at
    constant.check()
    assert constant.anneal_lr_to == 0.0
    saved = dataclasses.asdict(Args(variant="basic", total_steps=3, learning_rate=2e-4))
    assert (Args.from_dict(saved).total_steps, Args.from_dict(saved).learning_rate) == (3, 2e-4)  # --resume


def test_rollouts_overlap_the_update_unless_told_not_to():
    assert Args().overlap and parse_args(Args, []).overlap
    assert not parse_args(Args, ["--no-overlap"]).overlap


@pytest.mark.parametrize(("variant", "play", "exported"), [
    ("basic", "auto", "symmetric"), ("hornafjardar", "auto", "plain"), ("basic", "plain", "plain"),
    ("trjamann", "symmetric", "symmetric")])
def test_play_auto_is_symmetric_in_basic_manni_only(variant, play, exported):
    assert Args(variant=variant, play=play).exported_play() == exported


def test_the_exported_agent_plays_as_play_says_unless_its_spec_overrides_it(tmp_path):
    args = Args(variant="basic", runs_dir=str(tmp_path), run_name="p", total_steps=300, **{**TINY, "bc_samples": 0})
    agent = make_agent(f"ppo:{train(args).agent}")
    assert agent.meta["play"] == "symmetric" and agent.symmetric
    assert not make_agent(f"ppo:{tmp_path / 'p' / 'agent'},plain").symmetric


def test_a_bad_play_is_one_error_line(capsys):
    with pytest.raises(SystemExit):
        parse_args(Args, ["--play", "mirror"])
    assert "--play must be one of auto, plain, symmetric, got 'mirror'" in capsys.readouterr().err


# ---- --torch-threads 0: fitted to the free cores ----

@pytest.mark.parametrize("busy, own, free", [
    (0.5, 1.0, 2.0),  # 2 cores, only this process busy (one core): both free for it
    (1.0, 1.0, 1.0),  # both cores busy, half of it this process: one is another's
    (1.0, 2.0, 2.0),  # both busy with this process's two threads
    (1.0, 0.0, 0.0),  # another process (or two) takes both
])
def test_free_cores_are_the_usable_ones_others_leave(busy, own, free):
    # 2-core machine, 10 s: busy share of its jiffies, own CPU seconds per second
    assert free_cores(2, 2, busy * 1000, 1000, own * 10, 10) == pytest.approx(free)


def test_the_fitter_gives_torch_between_one_and_the_usable_cores():
    before = torch.get_num_threads()
    try:
        fitter = ThreadFitter(every_s=0.0, first_sample_s=0.05)
        assert 1 <= fitter.threads <= usable_cores() and torch.get_num_threads() == fitter.threads
        assert 1 <= fitter.maybe_refit() <= usable_cores()
    finally:
        torch.set_num_threads(before)


def test_the_warm_start_fits_torch_threads_after_every_step(tmp_path, monkeypatch):
    """With ``--torch-threads 0`` the warm start refits torch's threads as PPO does: started beside a
    busy run with both cores to itself, its products would each wait for a descheduled thread."""
    refits = []
    monkeypatch.setattr(ThreadFitter, "maybe_refit", lambda self: refits.append(self.threads) or self.threads)
    real, after_warm_start = ppo_vector.warm_start, []

    def warm_start_then_count(*args, **kwargs):
        result = real(*args, **kwargs)
        after_warm_start.append(len(refits))
        return result

    monkeypatch.setattr(ppo_vector, "warm_start", warm_start_then_count)
    before = torch.get_num_threads()
    try:
        train(Args(runs_dir=str(tmp_path), run_name="t", total_steps=200,
                   **{**TINY, "torch_threads": 0, "bc_epochs": 2, "bc_batch_size": 100}))
    finally:
        torch.set_num_threads(before)
    assert after_warm_start == [2 * 4]  # 400 samples in minibatches of 100, twice


# ---- Ctrl-C keeps the run; --resume continues it ----

@pytest.mark.slow
def test_ctrl_c_keeps_a_loadable_policy_and_resume_continues(tmp_path):
    run = tmp_path / "run"
    argv = manni("train", "--runs-dir", str(tmp_path), "--run-name", "run", "--total-steps", "100000000",
                 "--num-envs", "16", "--num-steps", "24", "--hidden", "32", "--bc-samples", "400", "--bc-epochs", "1",
                 "--eval-every", "300", "--eval-deals", "4", "--final-pimc-deals", "0", "--torch-threads", "1",
                 "--no-progress-bar")
    interrupted = interrupt_when_written(argv, run / "history.json")
    assert interrupted.code == 130, interrupted
    assert "interrupted after" in interrupted.err and f"manni train --resume {run}" in interrupted.err
    agent = make_agent(f"ppo:{run / 'agent'}")
    state = GameState(make_rules("hornafjardar"), seed=3)
    view = state.view(state.to_move)
    assert agent.act(view, np.random.default_rng(0)) in view.legal_actions
    saved = json.loads((run / resume.META).read_text())
    history = json.loads((run / "history.json").read_text())
    assert saved["phase"] == "ppo" and saved["steps"] >= history[-1]["timesteps"] >= 300
    assert agent.meta["training"]["timesteps"] == saved["steps"]

    args = resumed(Args(resume=str(run)))
    assert args.total_steps == 100_000_000 and args.num_envs == 16 and args.resume == str(run)
    args.total_steps = saved["steps"] + 200
    result = train(args)
    assert result.steps >= saved["steps"] + 200
    assert result.history[:len(history)] == history  # the history goes on from where it stopped
    assert json.loads((run / resume.META).read_text())["phase"] == "done" and not (run / resume.STATE).exists()


def test_resume_without_a_run_is_an_error(tmp_path, capsys):
    from manni_train.ppo_vector import main

    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "no run there" in capsys.readouterr().err


# ---- one vocabulary: CleanRL's names, one opponent mix, one evaluation ----

def test_the_ppo_options_reach_maskableppo_under_its_own_names():
    args = parse_args(ppo_sb3.Args, ["--learning-rate", "2e-4", "--num-steps", "64", "--minibatch-size", "32",
                                     "--update-epochs", "3", "--gamma", "0.9", "--gae-lambda", "0.8", "--clip-coef",
                                     "0.1", "--clip-vloss", "--ent-coef", "0.02", "--vf-coef", "0.4",
                                     "--max-grad-norm", "0.3", "--anneal-lr"])
    options = ppo_sb3.sb3_options(args)
    schedule = options.pop("learning_rate")
    assert options == {"n_steps": 64, "batch_size": 32, "n_epochs": 3, "gamma": 0.9, "gae_lambda": 0.8,
                       "clip_range": 0.1, "clip_range_vf": 0.1, "ent_coef": 0.02, "vf_coef": 0.4, "max_grad_norm": 0.3}
    assert schedule(1.0) == pytest.approx(2e-4) and schedule(0.25) == pytest.approx(5e-5)  # annealed to 0
    plain = ppo_sb3.sb3_options(ppo_sb3.Args())
    assert plain["learning_rate"] == 1e-4 and plain["clip_range_vf"] is None


@pytest.mark.parametrize("mix, counts", [
    ("none", {LEARNER: 3}),  # pure self-play
    ("random=1", {LEARNER: 1, RANDOM: 2}),  # every seat drawn random, then one given back to the learner
    ("rule_based=1/2,random=1/2", None),
    ("snapshot=1", {LEARNER: 3}),  # no snapshot in the pool yet: the learner takes the share
])
def test_the_vector_rollout_draws_seats_from_the_opponent_mix(mix, counts):
    args = Args(opponent_mix=mix, **{**TINY, "num_envs": 600})
    who = VectorRollout(args, torch.Generator().manual_seed(1), np.random.default_rng(1), 1).controller
    assert ((who == LEARNER).sum(1) >= 1).all()
    if counts:
        assert all(((who == kind).sum(1) == n).all() for kind, n in counts.items())
    else:  # the two kinds in about equal numbers, never the learner but for its one kept seat
        assert ((who == LEARNER).sum(1) == 1).all()
        assert abs((who == RULE_BASED).mean() - (who == RANDOM).mean()) < 0.05


def test_the_sb3_pool_draws_opponents_from_the_same_mix(tmp_path):
    pool = ppo_sb3.OpponentPool(tmp_path, {"snapshot": 0.5, "rule_based": 0.25, "random": 0.25}, pool_size=2)
    rng = np.random.default_rng(3)
    names = [type(p).__name__ for _ in range(400) for p in pool(rng)]
    assert abs(names.count("RuleBasedAgent") - names.count("RandomAgent")) < 80  # no snapshot yet: shares in proportion
    assert set(names) == {"RuleBasedAgent", "RandomAgent"}
    rules = make_rules("hornafjardar")
    actor = Actor(VectorManni(rules, 1).obs_size, [8], "relu")
    save_checkpoint(tmp_path / "snapshot_0000000001", actor.layers(), policy_metadata(rules, "summary", "relu"))
    names = [type(p).__name__ for _ in range(400) for p in pool(rng)]
    assert 0.4 < names.count("PPOAgent") / len(names) < 0.6
    with pytest.raises(ValueError, match="the shares must fill the other two"):
        ppo_sb3.Args(opponent_mix="rule_based=0.5").check()


def test_the_opponent_mix_and_agent_specs_are_read_by_one_parser():
    """``--opponent-mix`` is read as an agent spec's options are: the same spacing, the same
    refusals in the same words (an item without a value, an unknown name, a name given twice)."""
    assert parse_opponent_mix(" random = 1/4 ,rule_based=0.5 ") == {"random": 0.25, "rule_based": 0.5}
    assert parse_opponent_mix("none") == parse_opponent_mix(" ") == {}
    for text, words in [("random=", "opponents are 'kind=share' separated by commas, got 'random='"),
                        ("nobody=0.5", "unknown opponent 'nobody'; valid opponents: snapshot, rule_based, random"),
                        ("random=0.1,random=0.2", "opponent 'random' given twice"),
                        ("random=-0.1", "opponent random='-0.1': must be between 0 and 1")]:
        with pytest.raises(ValueError, match=re.escape(f"--opponent-mix: {words}")):
            parse_opponent_mix(text)
    with pytest.raises(ValueError, match=re.escape("options are 'name=value' separated by commas, got 'worlds='")):
        make_agent("pimc:worlds=")


def test_the_trainers_evaluate_a_policy_on_the_same_deals(tmp_path):
    """The fast trainer evaluates its torch actor, SB3 and RLlib their export; the one routine gives
    the same numbers for the same policy."""
    rules = make_rules("hornafjardar")
    torch.manual_seed(2)
    actor = Actor(VectorManni(rules, 1).obs_size, [16], "relu")
    path = save_checkpoint(tmp_path / "agent", actor.layers(), policy_metadata(rules, "summary", "relu"))
    fast = evaluate(greedy_policy(actor), Args(eval_deals=12, eval_seed=9), 100, 1.0)
    sb3 = evaluate(checkpoint_policy(path, rules), ppo_sb3.Args(eval_deals=12, eval_seed=9), 100, 1.0)
    assert fast == sb3 and fast["timesteps"] == 100 and fast["vs_rule_based"]["low"] is not None
    assert evaluate(greedy_policy(actor), Args(eval_deals=12, eval_seed=10), 100, 1.0) != fast  # the seed matters
    # Hornafjarðarmanni is zero-sum: the margin over the opponents is 1.5 x the score
    assert fast["vs_rule_based"]["margin"]["mean"] == pytest.approx(1.5 * fast["vs_rule_based"]["mean"])


def test_renamed_options_name_their_new_flag(capsys):
    with pytest.raises(SystemExit):
        parse_args(Args, ["--p-snapshot", "0.1"])
    assert "--p-snapshot was renamed: use --opponent-mix" in capsys.readouterr().err
    saved = {**dataclasses.asdict(Args()), "lr": 1e-3, "p_snapshot": 0.1, "p_rule_based": 0.5, "p_random": 0.2}
    del saved["learning_rate"], saved["opponent_mix"]
    args = Args.from_dict(saved)  # an args.json of release 0.2.0 (--resume)
    assert args.learning_rate == 1e-3 and args.mix() == {"snapshot": 0.1, "rule_based": 0.5, "random": 0.2}


def test_out_names_the_run_directory_and_total_steps_are_the_steps_trained(tmp_path, capsys):
    """``--out RUN`` as in arena and league (the older --runs-dir/--run-name stay); a --total-steps
    that ends inside a rollout trains exactly that many decisions (the last update takes only the
    rollout's first ones)."""
    args = parse_args(Args, ["--out", str(tmp_path / "run"), "--total-steps", "500", "--num-envs", "16",
                             "--num-steps", "24", "--hidden", "32", "--eval-every", "0", "--eval-deals", "4",
                             "--bc-samples", "0", "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar"])
    result = train(args)
    assert result.run_dir == tmp_path / "run" and (tmp_path / "run" / "args.json").exists()
    assert result.steps == 500 == json.loads((tmp_path / "run" / "agent.json").read_text())["training"]["timesteps"]
    assert "rounded up" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(Args, ["--out", str(tmp_path / "x"), "--run-name", "y"])
    assert "not both" in capsys.readouterr().err
