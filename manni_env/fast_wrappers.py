"""PettingZoo's classic checking wrappers, with cheap forwarding of the per-step attributes.

PettingZoo's wrappers reach the wrapped env's attributes (``agent_selection``, ``terminations``, …)
through ``__getattr__``, which Python calls only after a normal lookup has failed; through three
wrappers each access costs several failed lookups, and the canonical ``agent_iter`` loop makes
about a dozen such accesses per step, more than the game itself costs. The classes here are
subclasses of PettingZoo's :class:`~pettingzoo.utils.wrappers.TerminateIllegalWrapper`,
:class:`~pettingzoo.utils.wrappers.AssertOutOfBoundsWrapper` and
:class:`~pettingzoo.utils.wrappers.OrderEnforcingWrapper` that add read-only properties for those
attributes (the same values, and the same ``AttributeError`` before ``reset`` where
``OrderEnforcingWrapper`` raises one) and change nothing else. Stacked, they read these attributes
straight from the env below the layers that only forward them: one lookup instead of one per layer.
"""

from __future__ import annotations

from operator import attrgetter

from pettingzoo.utils import wrappers

#: Attributes of the wrapped env that the AEC loop and the wrappers read on every step.
FORWARDED = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")
#: Those that :class:`pettingzoo.utils.wrappers.OrderEnforcingWrapper` refuses before ``reset``.
_AFTER_RESET = frozenset({"agent_selection", "agents", "rewards", "terminations", "truncations", "infos"})


def _forward(name: str) -> property:
    return property(attrgetter(f"_source.{name}"), doc=f"``{name}`` of the wrapped env.")


def _forward_after_reset(name: str) -> property:
    def get(self):
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._source, name)

    return property(get, doc=f"``{name}`` of the wrapped env (an AttributeError before reset).")


class _PassThrough:
    """Marks the wrappers here that add no check of their own to the forwarded attributes: a wrapper
    around one of them reads from its ``_source`` directly."""

    _source: object


def _with_forwarding(base: type, order_enforcing: bool = False) -> type:
    """A subclass of the PettingZoo wrapper ``base`` with the :data:`FORWARDED` properties."""
    props = {
        name: _forward_after_reset(name) if order_enforcing and name in _AFTER_RESET else _forward(name)
        for name in FORWARDED
    }

    def __init__(self, env, *args, **kwargs):
        base.__init__(self, env, *args, **kwargs)
        # the env that owns the forwarded attributes: skip the layers that only forward them
        self._source = env._source if isinstance(env, _PassThrough) else env

    doc = f"PettingZoo's ``{base.__name__}`` with cheap attribute forwarding (see the module docstring)."
    namespace = {"__module__": __name__, "__doc__": doc, "__init__": __init__, **props}
    return type(base.__name__, (base,) if order_enforcing else (base, _PassThrough), namespace)


TerminateIllegalWrapper = _with_forwarding(wrappers.TerminateIllegalWrapper)
AssertOutOfBoundsWrapper = _with_forwarding(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper = _with_forwarding(wrappers.OrderEnforcingWrapper, order_enforcing=True)
