"""Expert iteration in ``manni train`` (train/expert_iteration.py): the search targets, made from the
seat's view only, their loss in the update, the rollout's searched rows, and each option's errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from manni_env.actions import NUM_ACTIONS  # noqa: E402
from manni_env.cards import SUIT_MASKS  # noqa: E402
from manni_env.rules import Phase  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402
from manni_train.expert_iteration import ExpertIteration, search_loss, search_targets  # noqa: E402
from manni_train.learner import PPOLearner  # noqa: E402
from manni_train.networks import Actor, Critic  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402
from manni_train.precision import compute_dtype  # noqa: E402
from manni_train.vector_rollout import VectorRollout  # noqa: E402

TINY = dict(num_envs=16, num_steps=24, hidden=[32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, torch_threads=1, progress_bar=False)


# ---- the targets ----

def values_of(*rows: dict[int, float]) -> np.ndarray:
    values = np.full((len(rows), NUM_ACTIONS), np.nan)
    for values_row, row in zip(values, rows):
        values_row[list(row)] = list(row.values())
    return values


def test_each_target_kind_is_a_distribution_over_the_legal_cards() -> None:
    values = values_of({3: 1.0, 7: 2.5, 9: 2.5}, {20: -1.0, 21: -1.0})
    logits = np.log(np.full((2, NUM_ACTIONS), 1e-3))
    logits[0, 3], logits[1, 20] = 2.0, 1.0
    greedy = search_targets(values, logits, "greedy", worlds=4)
    assert greedy[0, 7] == 1 and greedy[1, 20] == 1  # ties: the lowest card
    soft = search_targets(values, logits, "soft", worlds=4, temperature=0.5)
    assert soft[0, 7] == soft[0, 9] and np.isclose(soft[0, 7] / soft[0, 3], np.exp(3.0))
    gumbel = search_targets(values, logits, "gumbel", worlds=4)
    sigma = (50 + 4) * 0.1  # the best card's σ(q̂), the worst card's 0
    assert np.isclose(gumbel[0, 7] / gumbel[0, 3], np.exp(logits[0, 7] + sigma - logits[0, 3]), rtol=1e-5)
    prior = np.exp(logits[1, [20, 21]] - logits[1, [20, 21]].max())
    assert np.allclose(gumbel[1, [20, 21]], prior / prior.sum())  # cards worth the same: the policy's own
    for target in (greedy, soft, gumbel):
        assert target.dtype == np.float32 and np.allclose(target.sum(1), 1)
        assert not target[np.isnan(values)].any()
    with pytest.raises(ValueError, match="search target must be one of greedy, soft, gumbel"):
        search_targets(values, logits, "best", worlds=4)


def test_the_loss_is_the_cross_entropy_over_the_searched_rows_only() -> None:
    logp = torch.log_softmax(torch.randn(4, NUM_ACTIONS, generator=torch.Generator().manual_seed(0)), 1)
    target = torch.zeros(4, NUM_ACTIONS)
    assert search_loss(logp, target) == 0
    target[1, 5], target[3, 6], target[3, 7] = 1.0, 0.25, 0.75
    expected = -(logp[1, 5] + 0.25 * logp[3, 6] + 0.75 * logp[3, 7]) / 2
    assert torch.isclose(search_loss(logp, target), expected)


# ---- from the seat's view only ----

def card_play_venv(variant: str) -> VectorManni:
    """Eight games of ``variant`` played at random into their trick play."""
    venv = VectorManni(Args(variant=variant).rules(), 8)
    _, mask, _ = venv.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(400):
        if ((venv.state.phase == Phase.PLAY) & (venv.state.n_plays >= 4) & (mask.sum(1) > 1)).sum() >= 4:
            return venv
        _, mask, *_ = venv.step((rng.random(mask.shape) * mask).argmax(1))
    raise AssertionError("no card play reached")


def hide_other_cards(venv: VectorManni, games: np.ndarray) -> int:
    """In each of ``games``, trade a card between the hands of the two opponents of the seat on turn
    (of a suit both hold), and one of the first opponent's cards for a card of the pack nobody has
    seen (of the same suit) where there is one; never the shown cut card. The seats' views stay as
    they were. How many cards of the pack were traded."""
    s, traded = venv.state, 0
    for g in games:
        seat = s.to_move[g]
        a, b = (seat + 1) % 3, (seat + 2) % 3
        seen = s.hands[g].any(0) | s.played[g].any(0) | s.discards[g].any(0) | s.drawn[g].any(0)
        unseen = [c for c in s.manni[g] if not seen[c]]
        for suit in range(4):
            of_suit = np.array([SUIT_MASKS[suit] >> c & 1 for c in range(52)], bool)
            if s.cut_card[g] >= 0:
                of_suit[s.cut_card[g]] = False
            in_a, in_b = np.flatnonzero(s.hands[g, a] & of_suit), np.flatnonzero(s.hands[g, b] & of_suit)
            if in_a.size and in_b.size:
                swap(s.hands[g, a], s.hands[g, b], in_a[0], in_b[0])
                in_a = np.flatnonzero(s.hands[g, a] & of_suit)
            free = [c for c in unseen if of_suit[c]]
            if in_a.size and free:
                x, u = in_a[0], free[0]
                s.hands[g, a, [x, u]] = [False, True]
                s.manni[g, list(s.manni[g]).index(u)] = x
                traded += 1
    return traded


def swap(hand_a: np.ndarray, hand_b: np.ndarray, x: int, y: int) -> None:
    """Card ``x`` of ``hand_a`` for card ``y`` of ``hand_b``."""
    hand_a[[x, y]] = [False, True]
    hand_b[[x, y]] = [True, False]


def targets(venv: VectorManni, kind: str, weighting: str) -> np.ndarray:
    """The search's targets of every card-play decision on turn in ``venv``, with a fixed seed."""
    args = Args(variant=venv.rules.variant, hidden=[32], search_share=1.0, search_worlds=3, search_target=kind,
                search_weighting=weighting, precision="fp32")
    torch.manual_seed(0)
    actor = Actor(venv.obs_size, args.hidden, args.activation)
    expert = ExpertIteration(args, seed=9, dtype=compute_dtype("fp32"))
    games = np.arange(venv.num_envs)
    obs, mask = venv.observe(games), torch.from_numpy(venv.action_mask())
    with torch.no_grad():
        logits = actor(torch.from_numpy(obs), mask)
    expert.pick(venv, games, mask, logits, first_row=0)
    target = torch.zeros(venv.num_envs, NUM_ACTIONS)
    assert expert.fill(target, actor, venv.num_envs) >= 4
    return target.numpy()


@pytest.mark.parametrize(("variant", "kind", "weighting"), [("trjamann", "gumbel", "uniform"),
                                                            ("hornafjardar", "soft", "policy"),
                                                            ("laugarvatn", "greedy", "policy")])
def test_the_targets_read_only_the_seats_view(variant: str, kind: str, weighting: str) -> None:
    venv = card_play_venv(variant)
    games = np.arange(venv.num_envs)
    views = [venv.view(g, venv.state.to_move[g]) for g in games]
    hands = venv.state.hands.copy()
    one = targets(venv, kind, weighting)
    traded = hide_other_cards(venv, games)
    assert not np.array_equal(venv.state.hands, hands)  # other cards lie elsewhere ...
    assert [venv.view(g, venv.state.to_move[g]) for g in games] == views  # ... where the seats cannot see
    np.testing.assert_array_equal(targets(venv, kind, weighting), one)
    assert traded or variant != "hornafjardar"  # (its Manni is never all drawn)


# ---- in the rollout and the update ----

def test_a_rollout_gives_a_share_of_its_card_play_targets_and_the_update_learns_them() -> None:
    args = Args(variant="trjamann", search_share=0.5, search_worlds=2, precision="fp32", **TINY)
    rollout = VectorRollout(args, torch.Generator().manual_seed(1), np.random.default_rng(1), 1)
    actor, critic = Actor(rollout.obs_size, [32], "relu"), Critic(rollout.obs_size, [32], "relu")
    batch = rollout.collect(actor, critic)
    searched = batch.target.sum(1) > 0
    card_play = (batch.mask.sum(1) > 1) & (batch.mask[:, :52].any(1)) & ~batch.mask[:, 52:].any(1)
    assert 0.3 < searched.sum() / card_play.sum() < 0.7 and not (searched & ~card_play).any()
    assert torch.allclose(batch.target[searched].sum(1), torch.ones(int(searched.sum())))
    assert not (batch.target[searched] * ~batch.mask[searched]).any()
    learner = PPOLearner(actor, critic, args, torch.Generator().manual_seed(1))
    losses = learner.update(batch, 1e-3)
    assert losses["charts/searched_decisions"] == searched.sum() and losses["losses/search"] > 0
    off = VectorRollout(Args(variant="trjamann", precision="fp32", **TINY), torch.Generator().manual_seed(1),
                        np.random.default_rng(1), 1)
    assert off.collect(actor, critic).target is None and off.expert is None  # share 0: nothing searched


@pytest.mark.parametrize("overlap", [True, False])
def test_a_run_with_search_targets_trains_with_and_without_overlap(tmp_path, overlap: bool) -> None:
    args = Args(runs_dir=str(tmp_path), run_name="ei", variant="trjamann", total_steps=800, bc_samples=0,
                search_share=0.2, search_worlds=2, overlap=overlap,
                **{k: v for k, v in TINY.items() if k != "bc_samples"})
    train(args)
    assert (tmp_path / "ei" / "agent.safetensors").exists()


# ---- the options ----

@pytest.mark.parametrize("change, message", [
    ({"search_share": 1.5}, "--search-share must be between 0 and 1, got 1.5"),
    ({"search_share": -0.1}, "--search-share must be between 0 and 1, got -0.1"),
    ({"search_worlds": 0}, "--search-worlds must be at least 1, got 0"),
    ({"search_weighting": "likely"}, "--search-weighting must be one of uniform, policy, got 'likely'"),
    ({"search_target": "best"}, "--search-target must be one of greedy, soft, gumbel, got 'best'"),
    ({"search_temperature": 2.0}, "--search-temperature applies to --search-target soft only, got it with "
                                  "--search-target gumbel"),
    ({"search_target": "soft", "search_temperature": 0.0}, "--search-temperature must be a positive finite number"),
    ({"search_target": "soft", "search_temperature": float("inf")}, "--search-temperature must be a positive"),
    ({"search_coef": -1.0}, "--search-coef must be a non-negative finite number, got -1.0"),
    ({"search_coef": float("nan")}, "--search-coef must be a non-negative finite number, got nan"),
])
def test_each_bad_option_is_one_clear_error(change, message):
    with pytest.raises(ValueError, match=message):
        Args(**change).check()


def test_a_bad_option_on_the_command_line_is_one_line_and_exit_code_2(capsys):
    from manni_train.args import parse_args

    with pytest.raises(SystemExit) as stop:
        parse_args(Args, ["--search-share", "2"])
    assert stop.value.code == 2
    assert "--search-share must be between 0 and 1, got 2.0" in capsys.readouterr().err.splitlines()[-1]
