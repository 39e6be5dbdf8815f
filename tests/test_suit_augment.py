"""``--suit-augment`` (train/suit_augment.py): each minibatch row is one of the six relabelled copies
of :class:`~manni_env.symmetry.SuitRelabelling`, its mask, action and search target renamed with it
(so the action stays legal), rows before the contract is known unchanged; a run with it trains,
and its option errors are one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from manni_env.actions import NUM_ACTIONS  # noqa: E402
from manni_env.engine import GameState  # noqa: E402
from manni_env.observation import ObservationEncoder  # noqa: E402
from manni_env.rules import make_rules  # noqa: E402
from manni_env.symmetry import SuitRelabelling  # noqa: E402
from manni_train.args import parse_args  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402
from manni_train.suit_augment import SuitAugment  # noqa: E402

TINY = dict(num_envs=16, num_steps=24, hidden=[32, 32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, final_pimc_deals=0, torch_threads=1, progress_bar=False)


def decisions(variant: str, games: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observations, legal masks, random legal actions and whether the contract was known, over the
    first deal of ``games`` random games."""
    rules = make_rules(variant)
    encoder, rng = ObservationEncoder(rules), np.random.default_rng(7)
    obs, masks, actions, known = [], [], [], []
    for seed in range(games):
        game = GameState(rules, seed=seed)
        while not game.rounds:
            legal = game.legal_actions()
            obs.append(encoder.encode(game.view(game.to_move)))
            masks.append(np.isin(np.arange(NUM_ACTIONS), legal))
            actions.append(int(rng.choice(legal)))
            known.append(game.contract is not None)
            game.apply(actions[-1])
    return np.array(obs), np.array(masks), np.array(actions), np.array(known)


@pytest.mark.parametrize("variant", ["hornafjardar", "trjamann"])
def test_each_row_becomes_one_relabelled_copy_with_its_mask_action_and_target_renamed(variant):
    obs, mask, actions, known = decisions(variant)
    relabelling = SuitRelabelling(ObservationEncoder(make_rules(variant)))
    copies, renamings = relabelling.copies(obs)
    target = torch.rand(len(obs), NUM_ACTIONS, generator=torch.Generator().manual_seed(1)) * torch.from_numpy(mask)
    augment = SuitAugment(relabelling.encoder, torch.device("cpu"))
    new_obs, new_mask, new_actions, new_target = augment(torch.from_numpy(obs), torch.from_numpy(mask),
                                                         torch.from_numpy(actions), target, torch.Generator().manual_seed(5))
    drawn = torch.randint(6, (len(obs),), generator=torch.Generator().manual_seed(5)).numpy()
    renamed = 0
    for i, k in enumerate(drawn):
        np.testing.assert_array_equal(new_obs[i].numpy(), copies[i, k])
        assert new_actions[i] == renamings[i, k, actions[i]] and new_mask[i, new_actions[i]]
        np.testing.assert_array_equal(new_mask[i].numpy()[renamings[i, k]], mask[i])
        np.testing.assert_array_equal(new_target[i].numpy()[renamings[i, k]], target[i].numpy())
        if not known[i]:
            assert (new_obs[i].numpy() == obs[i]).all() and new_actions[i] == actions[i]
        renamed += bool((new_obs[i].numpy() != obs[i]).any())
    assert renamed > len(obs) / 2


def test_a_run_with_suit_augment_trains_and_says_so(tmp_path):
    result = train(Args(runs_dir=str(tmp_path), run_name="augmented", total_steps=600, suit_augment=True,
                        overlap=False, **TINY))
    assert result.steps == 600 and json.loads((result.run_dir / "args.json").read_text())["suit_augment"] is True


def test_suit_augment_with_the_deal_critic_is_one_error_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(Args, ["--suit-augment", "--critic", "deal"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--suit-augment needs --critic seat" in err and "Traceback" not in err
