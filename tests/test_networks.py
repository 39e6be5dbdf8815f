"""The trainers' networks: ``--torso shared`` (one set of hidden layers for the actor and the critic)
computes what the two networks compute on their own, trains each weight once, exports the same
checkpoint format, and resumes; ``--critic-hidden`` narrows the critic alone; the CPU kind and ``ONEDNN_MAX_CPU_ISA`` are read as oneDNN reads them."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from manni_agents.ppo_agent import PPOAgent  # noqa: E402
from manni_train import cpu, precision, resume  # noqa: E402
from manni_train.args import parse_args  # noqa: E402
from manni_train.networks import (Critic, make_networks, parameters, policy_and_value,  # noqa: E402
                                  shares_torso)
from manni_train.ppo_vector import Args, train  # noqa: E402

OBS, ACTIONS = 616, 63
TINY = dict(num_envs=16, num_steps=24, hidden=[32, 32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, final_pimc_deals=0, torch_threads=1, progress_bar=False)


def inputs(rows: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    obs = (torch.rand(rows, OBS, generator=gen) < 0.08).float()
    mask = torch.rand(rows, ACTIONS, generator=gen) < 0.3
    mask[:, 0] = True
    return obs, mask


@pytest.mark.parametrize("torso", ["separate", "shared"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_one_pass_gives_what_each_network_gives_on_its_own(torso, dtype):
    torch.manual_seed(0)
    actor, critic = make_networks(OBS, [64, 48], "relu", torso=torso)
    obs, mask = inputs()
    with torch.no_grad(), precision.autocast(dtype):
        logits, values = policy_and_value(actor, critic, obs.to(dtype), mask)
        alone = actor(obs.to(dtype), mask), critic(obs.to(dtype))
    assert logits.dtype == values.dtype == torch.float32
    torch.testing.assert_close(logits, alone[0], rtol=0, atol=0)
    torch.testing.assert_close(values, alone[1], rtol=0, atol=0)


def test_a_shared_torso_is_one_set_of_weights_trained_once():
    actor, critic = make_networks(OBS, [64, 48], "relu", torso="shared")
    separate = make_networks(OBS, [64, 48], "relu")
    assert shares_torso(actor, critic) and not shares_torso(*separate)
    params = parameters(actor, critic)
    assert len({id(p) for p in params}) == len(params)  # Adam refuses a parameter given twice
    assert sum(p.numel() for p in params) == sum(p.numel() for p in actor.parameters()) + 48 + 1
    with torch.no_grad():
        actor.pi[0].weight.add_(1.0)
    obs, mask = inputs()
    with torch.no_grad():  # the critic reads the actor's (changed) layers
        torch.testing.assert_close(critic(obs), critic.head(actor.pi(obs)))


def test_a_shared_torso_reads_the_seat_observation_only():
    actor, _ = make_networks(OBS, [32], "relu")
    with pytest.raises(ValueError, match="--critic seat"):
        Critic(OBS, [32], "relu", unseen=10, torso=actor.pi)
    with pytest.raises(ValueError, match="--torso must be one of"):
        make_networks(OBS, [32], "relu", torso="both")


@pytest.mark.parametrize("argv, message", [
    (["--torso", "shared", "--critic", "deal"], "--torso shared needs --critic seat"),
    (["--torso", "twin"], "--torso must be one of separate, shared"),
])
def test_bad_torso_options_are_one_error_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(Args, argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--critic-hidden", "0"], "--critic-hidden needs positive layer sizes, got [0]"),
    (["--critic-hidden", "64", "--torso", "shared"], "--critic-hidden needs --torso separate"),
])
def test_bad_critic_hidden_options_are_one_error_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(Args, argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err


def test_a_narrower_critic_leaves_the_actor_and_its_checkpoint_as_they_were(tmp_path):
    torch.manual_seed(0)
    actor, critic = make_networks(OBS, [64, 48], "relu", critic_hidden=[16])
    assert [m.out_features for m in critic.vf if isinstance(m, torch.nn.Linear)] == [16]
    assert [m.out_features for m in actor.linears()] == [64, 48, ACTIONS]
    with pytest.raises(ValueError, match="no hidden layers of its own"):
        make_networks(OBS, [32], "relu", torso="shared", critic_hidden=[16])
    result = train(Args(runs_dir=str(tmp_path), run_name="narrow", total_steps=400, critic_hidden=[8], **TINY))
    run = result.run_dir
    assert json.loads((run / "agent.json").read_text())["net_arch"] == [32, 32]  # the actor's, as before
    # interrupted in PPO: the resume builds the run's critic again, 8 wide, and loads its weights
    actor, critic = make_networks(OBS, [32, 32], "relu", critic_hidden=[8])
    resume.save(run, resume.Progress(phase="ppo", steps=100), actor, critic, None, torch.Generator(),
                np.random.default_rng(0))
    args = resume.resumed(Args(resume=str(run)))
    assert args.critic_hidden == [8]
    again = make_networks(OBS, args.hidden, "relu", critic_hidden=args.critic_hidden)
    resume.load(run, *again, torch.Generator(), np.random.default_rng(0))
    assert torch.equal(again[1].vf[0].weight, critic.vf[0].weight)
    saved = json.loads((run / "args.json").read_text())
    del saved["critic_hidden"]  # a run saved before --critic-hidden existed: the critic as wide as the actor
    (run / "args.json").write_text(json.dumps(saved))
    assert resume.resumed(Args(resume=str(run))).critic_hidden == [32, 32]


@pytest.mark.parametrize("options, critic_hidden", [
    (dict(variant="trjamann"), [128, 128]),  # half the actor's width where that was measured
    (dict(variant="trjamann", hidden=[64, 48]), [32, 24]),
    (dict(variant="hornafjardar"), [256, 256]),  # as wide as the actor elsewhere
    (dict(variant="laugarvatn"), [256, 256]),
    (dict(variant="trjamann", critic_hidden=[256, 64]), [256, 64]),  # the command line wins
    (dict(variant="trjamann", torso="shared"), None),  # the actor's layers
])
def test_the_critic_is_sized_by_variant_and_recorded_as_sized(options, critic_hidden):
    assert Args(**options).critic_hidden == critic_hidden


def test_a_shared_torso_run_exports_a_ppo_checkpoint_and_resumes(tmp_path):
    result = train(Args(runs_dir=str(tmp_path), run_name="shared", total_steps=400, torso="shared", **TINY))
    run = result.run_dir
    meta = json.loads((run / "agent.json").read_text())
    assert meta["net_arch"] == [32, 32] and meta["format"] == "manni-ppo/1"  # the actor's format is unchanged
    agent = PPOAgent(result.agent)
    obs, mask = inputs(8)
    actor, critic = make_networks(OBS, [32, 32], "relu", torso="shared")
    actor.load_layers(agent.layers)  # the checkpoint is the actor: hidden layers and action head
    with torch.no_grad():
        expected = actor(obs, mask).numpy()
    assert np.allclose(np.where(mask.numpy(), agent.logits(obs.numpy()), -1e8), expected, atol=1e-4)
    # interrupted in PPO: the resume state holds the shared layers once for each network, and loads back shared
    resume.save(run, resume.Progress(phase="ppo", steps=100), actor, critic, None, torch.Generator(),
                np.random.default_rng(0))
    args = resume.resumed(Args(resume=str(run)))
    assert args.torso == "shared"
    again = make_networks(OBS, [32, 32], "relu", torso="shared")
    resume.load(run, *again, torch.Generator(), np.random.default_rng(0))
    assert shares_torso(*again) and torch.equal(again[1].vf[0].weight, actor.pi[0].weight)
    saved = json.loads((run / "args.json").read_text())
    del saved["torso"]  # a run saved before --torso existed had a critic of its own
    (run / "args.json").write_text(json.dumps(saved))
    assert resume.resumed(Args(resume=str(run))).torso == "separate"


AMX = frozenset({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
AVX512_BF16 = frozenset({"avx512f", "avx512_bf16"})
AVX2 = frozenset({"avx2", "fma"})


@pytest.mark.parametrize("flags, isa, kind", [
    (AMX, None, "amx"),
    (AMX, "AVX512_CORE_BF16", "avx512_bf16"),  # the emulation of a CPU without AMX
    (AMX, "avx512_core_amx", "amx"),
    (AMX, "ALL", "amx"),
    (AMX, "AVX2", "fp32"),
    (AVX512_BF16, None, "avx512_bf16"),
    (AVX512_BF16, "AVX512_CORE", "fp32"),
    (AVX2, None, "fp32"),
])
def test_the_cpu_kind_reads_the_flags_capped_by_onednn_max_cpu_isa(flags, isa, kind):
    environ = {} if isa is None else {cpu.ISA_VARIABLE: isa}
    assert cpu.cpu_kind(flags, environ) == kind


@pytest.mark.parametrize("flags, isa, vendor, faster", [
    (AMX, None, "GenuineIntel", True),
    (AMX, "AVX512_CORE_BF16", "GenuineIntel", False),  # the emulation: Intel's AVX-512 BF16 is slower than fp32
    (AVX512_BF16, None, "GenuineIntel", False),
    (AVX512_BF16, None, "AuthenticAMD", True),
    (AVX512_BF16, "AVX2", "AuthenticAMD", False),
    (AVX2, None, "AuthenticAMD", False),
])
def test_auto_takes_bf16_where_it_outruns_fp32(flags, isa, vendor, faster):
    environ = {} if isa is None else {cpu.ISA_VARIABLE: isa}
    assert cpu.bf16_outruns_fp32(flags, environ, vendor) is faster


def test_an_unknown_isa_cap_is_one_error_line(monkeypatch, capsys):
    with pytest.raises(ValueError, match="not a oneDNN ISA level"):
        cpu.isa_cap({cpu.ISA_VARIABLE: "AVX9000"})
    monkeypatch.setenv(cpu.ISA_VARIABLE, "AVX9000")
    with pytest.raises(SystemExit):
        parse_args(Args, [])
    assert "ONEDNN_MAX_CPU_ISA=AVX9000 is not a oneDNN ISA level" in capsys.readouterr().err


def test_auto_precision_is_float32_where_the_isa_cap_leaves_no_bf16(monkeypatch):
    monkeypatch.setenv(cpu.ISA_VARIABLE, "AVX2")
    assert precision.compute_dtype("auto") == torch.float32
    assert precision.compute_dtype("bf16") == torch.bfloat16  # asked for: emulated, but given


def test_the_cpu_description_names_model_kind_and_cap(monkeypatch):
    monkeypatch.setenv(cpu.ISA_VARIABLE, "AVX2")
    described = cpu.describe()
    assert described["cpu_kind"] == "fp32" and described["onednn_max_cpu_isa"] == "AVX2" and described["cpu_model"]
