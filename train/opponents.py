"""Fixed opponents on the vector env: what ``--opponents SPEC [SPEC]`` of the vector trainers plays.

    manni train --opponents ppo                       # best response to the shipped agent
    manni train --opponents ppo:runs/a/agent rule_based

Each game of the rollout gives one seat, drawn at random, to the learner and the other two to the
fixed opponents: with one spec both are that agent, with two the first and the second sit in a
random order. A spec is an agent spec of ``manni arena`` that acts in batches on the vector env
(a :class:`~manni_agents.vector_policy.VectorPolicy`, :func:`~manni_agents.vector_policy.make_vector_policy`):

- ``ppo`` (the shipped agent of the variant), ``ppo:VARIANT``, ``ppo:PATH`` (a checkpoint); the
  last two with ``,sample`` draw from the policy instead of playing its argmax; the checkpoint must
  read the run's observations (same variant and ``--history``; a v0 checkpoint reads the v0 prefix
  of a ``--observation v1`` run's);
- ``rule_based`` (:class:`manni_agents.rule_based_vector.VectorRuleBased`);
- ``random`` (uniform over the legal actions).

:func:`~manni_agents.vector_policy.make_vector_policy` builds one; :func:`check_opponent_specs` checks a
list of specs as the command line takes them.
"""

from __future__ import annotations

from manni_agents.ppo_agent import CheckpointError
from manni_agents.vector_policy import make_vector_policy
from manni_env.rules import Rules


def check_opponent_specs(specs: list[str], rules: Rules, history: str, layout: str = "v0") -> None:
    """``ValueError`` (:class:`~manni_agents.ppo_agent.CheckpointError` for a checkpoint) naming
    ``--opponents`` and the problem unless ``specs`` is empty or one or two specs of agents that act
    in batches on the vector env and read ``history`` observations of ``rules`` in ``layout`` (or
    its v0 prefix)."""
    if len(specs) > 2:
        raise ValueError(f"--opponents takes one or two agent specs (the two non-learner seats), got {len(specs)}")
    for spec in specs:
        try:
            make_vector_policy(spec, rules, history, backend="python", layout=layout)
        except CheckpointError as err:
            raise CheckpointError(f"--opponents {err}") from None
        except ValueError as err:
            raise ValueError(f"--opponents: {err}") from None
