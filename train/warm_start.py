"""The fast trainers' warm start: the actor clones the teacher's (or the game records') decisions
and the critic fits their returns to go (:func:`~manni_train.demonstrations.imitate`), before PPO."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from manni_train.demonstrations import Demonstrations, imitate
from manni_train.networks import Actor, Critic, parameters, policy_and_value
from manni_train.precision import autocast, compute_dtype

if TYPE_CHECKING:
    from manni_train.ppo_vector import Args


def warm_start(actor: Actor, critic: Critic, data: Demonstrations, args: Args, gen: torch.Generator,
               each_step: Callable[[], object] = lambda: None) -> dict:
    """Behaviour cloning of the teacher (:func:`~manni_train.demonstrations.imitate`) under
    ``--precision``, the critic's targets scaled by ``reward_scale`` and its loss weighed by ``vf_coef``
    (as in PPO); with ``--init-from`` only the critic learns (the actor keeps the checkpoint's
    weights; with ``--torso shared`` the value head). ``each_step()`` runs after every optimizer step."""

    def evaluate(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = policy_and_value(actor, critic, batch["obs"], batch["masks"], batch.get("unseen"))
        log_prob = torch.log_softmax(logits.float(), 1).gather(1, batch["actions"][:, None]).squeeze(1)
        return log_prob, values

    actor_params = set(actor.parameters()) if args.init_from else set()
    learning = [p for p in parameters(actor, critic) if p not in actor_params]
    what = "the critic, values of" if args.init_from else "imitating"
    teacher = "the game records" if getattr(args, "warm_start_records", None) else args.bc_teacher
    return imitate(evaluate, lambda batch: actor(batch["obs"], batch["masks"]).argmax(1),
                   learning, data, epochs=args.bc_epochs, lr=args.bc_lr,
                   batch_size=args.bc_batch_size, generator=gen, value_scale=args.reward_scale,
                   value_weight=args.vf_coef, precision=autocast(compute_dtype(args.precision)),
                   desc=f"warm start ({what} {teacher})", progress_bar=args.progress_bar, each_step=each_step)
