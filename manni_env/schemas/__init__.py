"""The JSON Schemas of the project's formats, shipped beside this module and published in the docs.

- ``manni-record-1.schema.json``: a game record, ``manni-record/1`` (docs/RECORD.md).
  :func:`manni_env.records.validate_record` (``manni validate``) checks a record against it before
  the replay checks the rules.
- ``manni-bot-1.schema.json``: every line of the bot protocol, ``manni-bot/1``
  (docs/bot-protocol.md), one definition per message type. The bot agent checks a bot's answers
  against it; ``manni bot check`` also checks every message it sends.

:func:`problem` reports the most relevant way an instance breaks a schema as a path and one short
line, so a bad input gets one clear error.
"""

from __future__ import annotations

import functools
import json
import reprlib
from dataclasses import dataclass
from importlib.resources import files

import jsonschema

RECORD = "manni-record-1"
BOT = "manni-bot-1"
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


@dataclass(frozen=True)
class Problem:
    """Where an instance breaks a schema (keys and indices from its root) and how, in words."""

    path: tuple[str | int, ...]
    message: str


@functools.cache
def schema(name: str) -> dict:
    """The schema ``name`` (:data:`RECORD` or :data:`BOT`) as parsed JSON."""
    return json.loads(files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))


@functools.cache
def validator(name: str, definition: str | None = None) -> jsonschema.protocols.Validator:
    """A validator of schema ``name``, or of its definition ``definition`` (``$defs``). It checks the
    schema with its references written out (:func:`inlined`): the same checks, 2-3 times faster."""
    whole = schema(name)
    target = whole if definition is None else {"$ref": f"#/$defs/{definition}"}
    return jsonschema.validators.validator_for(whole)(inlined(target, whole["$defs"]))


def inlined(node, defs: dict):
    """``node`` with every ``{"$ref": "#/$defs/NAME", ...}`` replaced by that definition (and its
    own keywords beside it), ``$defs`` dropped; the schemas' references are local and not recursive."""
    if isinstance(node, list):
        return [inlined(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: inlined(value, defs) for key, value in node.items() if key != "$defs"}
    if "$ref" not in node:
        return node
    target = inlined(defs[node.pop("$ref").removeprefix("#/$defs/")], defs)
    return {**target, **node} if not set(target) & set(node) else {"allOf": [target], **node}


def problem(name: str, instance, definition: str | None = None) -> Problem | None:
    """The most relevant way ``instance`` breaks schema ``name`` (or its ``definition``), or ``None``."""
    error = jsonschema.exceptions.best_match(validator(name, definition).iter_errors(instance))
    return None if error is None else Problem(tuple(error.absolute_path), describe(error))


def describe(error: jsonschema.ValidationError) -> str:
    """One short line for a validation error (the instance's repr cut to a readable length)."""
    kind, value, got = error.validator, error.validator_value, show(error.instance)
    if kind == "required":
        return f"missing field {next(key for key in value if key not in error.instance)!r}"
    if kind == "type":
        return f"must be {' or '.join([value] if isinstance(value, str) else value)}, got {got}"
    if kind == "const":
        return f"must be {json.dumps(value)}, got {got}"
    if kind == "enum":
        return f"must be one of {', '.join(json.dumps(v) for v in value)}, got {got}"
    if kind in ("minimum", "maximum", "exclusiveMinimum"):
        bound = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than"}[kind]
        return f"must be {bound} {value}, got {got}"
    if kind in ("minItems", "maxItems"):
        return f"must hold {'at least' if kind == 'minItems' else 'at most'} {value} items, got {len(error.instance)}"
    if kind == "pattern" and "description" in error.schema:
        return f"must be {error.schema['description']}, got {got}"
    return f"does not fit the schema ({kind}: {show(value)}), got {got}"


def show(value) -> str:
    """``repr(value)`` cut to a readable length: a hostile input must not flood the report."""
    return _REPR.repr(value)


def where(path: tuple[str | int, ...]) -> str:
    """``("rounds", 0, "hands", 2)`` → ``"rounds[0].hands[2]"``."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text
