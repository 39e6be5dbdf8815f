"""The ``ppo`` agent: a trained policy network loaded safely from ``NAME.safetensors`` + ``NAME.json``.

A checkpoint is two files side by side:

- ``NAME.safetensors``: the actor's weights only (float32), layers ``pi.0``, ``pi.1``, … and the
  output layer ``action`` (each ``.weight`` shaped ``(out, in)`` and ``.bias``). ``safetensors``
  holds raw tensors, so loading a file cannot execute code (unlike pickle or SB3's zip).
- ``NAME.json``: metadata (:data:`FORMAT`, variant and rule options, observation ``history``,
  observation ``layout`` (``v0`` or ``v1``; absent in older files, which read ``v0``),
  ``obs_size``, ``layout_sha256`` of the observation layout, ``net_arch``, ``activation``, the
  weights' ``weights_sha256``, how the model was trained, and optionally ``play``: how the agent plays
  the network unless its spec says otherwise, one of :data:`PLAY_MODES`, ``plain`` when absent).

The network is the SB3 ``MlpPolicy`` actor rebuilt in numpy: observation → hidden layers →
action logits; illegal actions are masked, then the argmax is played (or, with ``sample=True``,
an action is drawn with the caller's generator); played ``symmetric``, the policy is first averaged
over the suit relabellings of the position. Every problem with a file — missing, truncated,
edited, wrong shapes, another variant or observation layout — raises :class:`CheckpointError`
naming the file and the problem. A network reads observations of its own layout; given those of a
layout that extends it (v1 observations to a v0 network, same history), it reads their first
``obs_size`` floats, which are its own layout's (:meth:`PPOAgent.input_width`). Inference needs numpy and safetensors only, not torch (a move of
``ppo:symmetric`` runs as one numba-compiled call where numba is installed:
:mod:`manni_agents.symmetric_kernel`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import reprlib
from pathlib import Path

import numpy as np
import safetensors.numpy

from manni_agents.symmetric_kernel import compiled_symmetric_scores
from manni_env.actions import NUM_ACTIONS
from manni_env.files import replace_atomically
from manni_env.observation import HISTORIES, LAYOUTS, ObservationEncoder
from manni_env.rules import VARIANTS, Rules, make_rules
from manni_env.symmetry import SuitRelabelling
from manni_env.view import SeatView

FORMAT = "manni-ppo/1"
#: How a network is played: its own masked logits, or averaged over suit relabellings (``play`` in the metadata).
PLAY_MODES = ("plain", "symmetric")
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}
#: Where the shipped agents live: ``<variant>_ppo.safetensors`` + ``.json`` per variant.
MODELS_DIR = Path(__file__).parent / "models"


def shipped_model(variant: str) -> Path:
    """The checkpoint base path of the shipped agent of ``variant`` (``ppo:VARIANT``)."""
    return MODELS_DIR / f"{variant}_ppo"


def shipped_variants() -> tuple[str, ...]:
    """The variants with a shipped agent, in the order of :data:`~manni_env.rules.VARIANTS`."""
    return tuple(v for v in VARIANTS if all(p.is_file() for p in checkpoint_paths(shipped_model(v))))


#: The shipped Hornafjarðarmanni agent.
DEFAULT_MODEL = shipped_model("hornafjardar")


class CheckpointError(ValueError):
    """A policy checkpoint that cannot be used; the message names the file and the problem."""


#: The checkpoint name inside a run directory (``manni train`` writes ``runs/<run>/agent.*``).
RUN_AGENT = "agent"
#: The largest checkpoint metadata read (a shipped one is about 3 kB).
MAX_META_BYTES = 1_000_000
#: Room for the safetensors header beyond the tensors the metadata's shapes imply.
MAX_HEADER_BYTES = 1_000_000
#: The widest observation or hidden layer a checkpoint may declare (the shipped ones: 616 and 256).
MAX_WIDTH = 1 << 16
#: The most weight bytes a checkpoint may declare (a shipped one holds about 1 MB).
MAX_WEIGHTS_BYTES = 1 << 31


def checkpoint_paths(path: str | Path) -> tuple[Path, Path]:
    """``NAME``, ``NAME.safetensors``, ``NAME.json`` or a run directory (``DIR`` holding
    ``agent.safetensors`` + ``agent.json``, as ``manni train`` writes) → (weights path, metadata path)."""
    path = Path(path)
    if path.is_dir():
        path = path / RUN_AGENT
    base = path.with_suffix("") if path.suffix in (".safetensors", ".json") else path
    return base.with_name(base.name + ".safetensors"), base.with_name(base.name + ".json")


def layout_fingerprint(encoder: ObservationEncoder) -> str:
    """A hash of the observation layout (segment names, offsets, sizes): a checkpoint only fits
    the layout it was trained on."""
    text = json.dumps([[s.name, s.offset, s.size] for s in encoder.segments])
    return hashlib.sha256(text.encode()).hexdigest()


def policy_metadata(rules: Rules, history: str, activation: str, layout: str = "v0") -> dict:
    """The metadata every exporter writes about what the policy plays and reads: variant, rule
    options, observation history, layout and size, layout hash, activation."""
    encoder = ObservationEncoder(rules, history=history, layout=layout)
    return {
        "variant": rules.variant,
        "rule_options": rules.options(),
        "history": history,
        "layout": layout,
        "obs_size": encoder.size,
        "layout_sha256": layout_fingerprint(encoder),
        "activation": activation,
    }


def save_checkpoint(path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]], metadata: dict) -> Path:
    """Write ``layers`` (``(weight (out, in), bias (out,))`` pairs, the last one producing the
    action logits) and ``metadata`` as a checkpoint; returns the weights path. ``metadata`` must
    hold ``variant``, ``history``, ``obs_size``, ``activation`` (``net_arch`` and the hashes are filled in)."""
    weights_path, meta_path = checkpoint_paths(path)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for i, (w, b) in enumerate(layers):
        name = "action" if i == len(layers) - 1 else f"pi.{i}"
        tensors[f"{name}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
        tensors[f"{name}.bias"] = np.ascontiguousarray(b, dtype=np.float32)
    data = safetensors.numpy.save(tensors, metadata={"format": FORMAT})
    meta = dict(metadata)
    meta.update(
        format=FORMAT,
        net_arch=[int(w.shape[0]) for w, _ in layers[:-1]],
        num_actions=NUM_ACTIONS,
        weights_file=weights_path.name,
        weights_sha256=hashlib.sha256(data).hexdigest(),
    )
    text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
    replace_atomically((weights_path, lambda p: p.write_bytes(data)), (meta_path, lambda p: p.write_text(text)))
    return weights_path


def load_checkpoint(path: str | Path) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict]:
    """Read and verify a checkpoint → (layers, metadata); :class:`CheckpointError` on any problem.
    Reads are bounded: the metadata at most :data:`MAX_META_BYTES`, the weights no larger than the
    tensors its shapes imply (checked before they are read)."""
    try:
        weights_path, meta_path = checkpoint_paths(path)
        for p in (meta_path, weights_path):
            if not p.is_file():
                raise CheckpointError(f"{p}: no such checkpoint file")
        meta = json.loads(_read_at_most(meta_path, MAX_META_BYTES, "metadata").decode("utf-8"))
        _check_metadata(meta, meta_path)
        data = _read_at_most(weights_path, _weights_bytes(meta) + MAX_HEADER_BYTES, "weights")
    except OSError as exc:
        raise CheckpointError(f"{exc.filename or str(path)[:200]}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # bad JSON or UTF-8, or a number over Python's digit limit
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{meta_path}: metadata is not valid JSON ({exc})") from None
    except RecursionError:
        raise CheckpointError(f"{meta_path}: metadata is not valid JSON (nested too deeply)") from None
    if hashlib.sha256(data).hexdigest() != meta["weights_sha256"]:
        raise CheckpointError(
            f"{weights_path}: checksum mismatch with {meta_path.name}: the weights were modified, "
            "truncated or belong to another checkpoint"
        )
    try:
        tensors = safetensors.numpy.load(data)
    except Exception as exc:  # safetensors reports broken headers with its own exception types
        raise CheckpointError(f"{weights_path}: not a readable safetensors file ({exc})") from None
    return _layers(tensors, meta, weights_path), meta


def _read_at_most(path: Path, limit: int, what: str) -> bytes:
    """``path``'s bytes; :class:`CheckpointError` if its size passes ``limit`` (checked first, and
    again while reading: a file may grow)."""
    with path.open("rb") as f:
        if os.fstat(f.fileno()).st_size > limit:
            raise CheckpointError(f"{path}: the {what} is larger than {limit:,} bytes, more than a checkpoint of "
                                  "its shapes holds")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise CheckpointError(f"{path}: the {what} is larger than {limit:,} bytes")
    return data


def _weights_bytes(meta: dict) -> int:
    """The bytes of float32 tensors the (checked) metadata's shapes imply."""
    sizes = [meta["obs_size"], *meta["net_arch"], meta.get("num_actions", NUM_ACTIONS)]
    return 4 * sum((n_in + 1) * n_out for n_in, n_out in zip(sizes, sizes[1:]))


def _check_metadata(meta, where: Path) -> None:
    """Every field the loader and the agent read, checked for type and value."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise CheckpointError(f"{where}: format is {_short(found)}, expected {FORMAT!r}")
    for key in ("variant", "history", "obs_size", "net_arch", "activation", "weights_sha256"):
        if key not in meta:
            raise CheckpointError(f"{where}: metadata lacks {key!r}")

    def bad(key: str, expected: str) -> CheckpointError:
        return CheckpointError(f"{where}: {key} must be {expected}, got {_short(meta[key])}")

    def choice(key: str, choices) -> None:
        if not isinstance(meta[key], str) or meta[key] not in choices:
            raise bad(key, f"one of {', '.join(choices)}")

    choice("variant", VARIANTS)
    choice("history", HISTORIES)
    choice("activation", tuple(ACTIVATIONS))
    if "play" in meta:
        choice("play", PLAY_MODES)
    if "layout" in meta:
        choice("layout", LAYOUTS)
    if not _positive_int(meta["obs_size"]):
        raise bad("obs_size", "a positive integer")
    if meta["obs_size"] > MAX_WIDTH:
        raise bad("obs_size", f"at most {MAX_WIDTH:,}")
    if not isinstance(meta["net_arch"], list) or not all(map(_positive_int, meta["net_arch"])):
        raise bad("net_arch", "a list of positive integers (hidden layer sizes)")
    if len(meta["net_arch"]) > 64 or max(meta["net_arch"], default=0) > MAX_WIDTH:
        raise bad("net_arch", f"at most 64 hidden layers of at most {MAX_WIDTH:,} units")
    if not isinstance(meta["weights_sha256"], str):
        raise bad("weights_sha256", "a SHA-256 hex digest")
    for key, expected in (("layout_sha256", "a SHA-256 hex digest"), ("weights_file", "a file name")):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise bad(key, expected)
    if "num_actions" in meta and (type(meta["num_actions"]) is not int or meta["num_actions"] != NUM_ACTIONS):
        raise bad("num_actions", f"the integer {NUM_ACTIONS}")
    if _weights_bytes(meta) > MAX_WEIGHTS_BYTES:
        raise CheckpointError(f"{where}: its shapes imply {_weights_bytes(meta):,} bytes of weights, more than "
                              f"{MAX_WEIGHTS_BYTES:,}")
    options = meta.get("rule_options", {})
    try:
        if not isinstance(options, dict):
            raise ValueError("not a JSON object")
        make_rules(meta["variant"], **options)
    except (ValueError, TypeError) as exc:  # TypeError: an option named "variant"
        raise CheckpointError(f"{where}: rule_options {_short(options)} do not fit {meta['variant']!r}: {exc}") from None


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def _short(value) -> str:
    """``repr(value)`` cut to a readable length (and depth)."""
    return _REPR.repr(value)


def _layers(tensors: dict, meta: dict, where: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """Check names, shapes, dtypes and values against the metadata; return the layers in order."""
    sizes = [meta["obs_size"], *meta["net_arch"], NUM_ACTIONS]
    names = [f"pi.{i}" for i in range(len(sizes) - 2)] + ["action"]
    expected = {f"{n}.{part}" for n in names for part in ("weight", "bias")}
    if set(tensors) != expected:
        raise CheckpointError(
            f"{where}: tensors {sorted(tensors)} do not match the metadata's network {sorted(expected)}"
        )
    layers = []
    for i, name in enumerate(names):
        w, b = tensors[f"{name}.weight"], tensors[f"{name}.bias"]
        if w.shape != (sizes[i + 1], sizes[i]) or b.shape != (sizes[i + 1],):
            raise CheckpointError(
                f"{where}: layer {name} has shapes {w.shape}/{b.shape}, expected "
                f"{(sizes[i + 1], sizes[i])}/{(sizes[i + 1],)}"
            )
        if w.dtype != np.float32 or b.dtype != np.float32:
            raise CheckpointError(f"{where}: layer {name} is {w.dtype}, expected float32")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise CheckpointError(f"{where}: layer {name} holds non-finite values")
        layers.append((w, b))
    return layers


def log_partition(logits: np.ndarray) -> np.ndarray:
    """``log(sum(exp(logits)))`` over the last axis, computed stably (``-inf`` entries count as 0)."""
    top = logits.max(-1, keepdims=True)
    return np.log(np.exp(logits - top).sum(-1)) + top[..., 0]


class PPOAgent:
    """A trained policy from a checkpoint (see the module docstring)."""

    def __init__(self, path: str | Path = DEFAULT_MODEL, sample: bool = False, symmetric: bool | None = None):
        """``symmetric``: average the policy over suit relabellings (``None``: as the checkpoint's
        ``play`` says)."""
        self.path = checkpoint_paths(path)[0]
        self.layers, self.meta = load_checkpoint(path)
        self.activation = ACTIVATIONS[self.meta["activation"]]
        self.sample = sample
        self.symmetric = self.meta.get("play") == "symmetric" if symmetric is None else symmetric
        self.name = f"ppo:{self.path.with_suffix('')}"
        self._encoder: ObservationEncoder | None = None
        self._relabelling: SuitRelabelling | None = None
        # the compiled symmetric move (None: plain, or no numba) and the network as it takes it: the
        # first layer's weights one row per input (it sums the rows of the nonzero inputs) and
        # bias, the later layers' weights and biases as tuples, relu (else tanh)
        self._kernel = compiled_symmetric_scores() if self.symmetric else None
        self._kernel_network = None if self._kernel is None else (
            np.ascontiguousarray(self.layers[0][0].T), self.layers[0][1], tuple(w for w, _ in self.layers[1:]),
            tuple(b for _, b in self.layers[1:]), self.meta["activation"] == "relu")

    def reset(self) -> None:
        """Stateless between moves: nothing to reset."""

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation (or a batch)."""
        w, b = self.layers[0]
        return self._from_first_layer(np.asarray(obs, dtype=np.float32) @ w.T + b)

    def policy_logits(self, obs: np.ndarray, mask: np.ndarray, rules: Rules) -> np.ndarray:
        """What the agent plays by, for a batch of observations of ``rules`` and their legal masks:
        the masked logits; with ``symmetric``, the mean over the suit relabellings of positions with a
        known contract (:mod:`manni_env.symmetry`) of the masked log-probabilities. Illegal actions: -inf."""
        if not self.symmetric:
            return np.where(mask, self.logits(obs), -np.inf)
        copies, actions = self._relabelled(rules).copies(np.asarray(obs, dtype=np.float32))
        n, count, size = copies.shape
        w, b = self.layers[0]
        logits = self._from_first_layer(copies.reshape(n * count, size) @ w.T + b).reshape(n, count, -1)
        renamed = np.where(mask[:, None], np.take_along_axis(logits, actions, axis=2), -np.inf)
        return (renamed.sum(1) - log_partition(renamed).sum(1)[:, None]) / count

    def _from_first_layer(self, x: np.ndarray) -> np.ndarray:
        """The logits from the first layer's pre-activations ``x``."""
        for w, b in self.layers[1:]:
            x = self.activation(x) @ w.T + b
        return x

    def _symmetric_scores(self, obs: np.ndarray, legal: np.ndarray, rules: Rules) -> np.ndarray:
        """``policy_logits`` of one observation at its ``legal`` actions: one compiled call
        (:mod:`manni_agents.symmetric_kernel`) where numba is installed, else the batched path."""
        if self._kernel is None:
            mask = np.zeros((1, NUM_ACTIONS), dtype=bool)
            mask[0, legal] = True
            return self.policy_logits(obs[None], mask, rules)[0, legal]
        relabelling = self._relabelled(rules)
        return self._kernel(obs, relabelling.contract.start, relabelling.contract.stop, relabelling.trump.start,
                            relabelling.targets, relabelling.actions, legal, *self._kernel_network)

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = self._legal(view)
        if legal.size == 1:  # a forced move: no network pass
            return int(legal[0])
        scores = self._legal_scores(view, legal)
        if not self.sample:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        return int(rng.choice(legal, p=p / p.sum()))

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """The masked policy's probability of each legal action (softmax of the legal logits):
        what ``sample=True`` draws from; the greedy agent plays the most likely one."""
        legal = self._legal(view)
        scores = self._legal_scores(view, legal)
        p = np.exp(scores - scores.max())
        p /= p.sum()
        return {int(a): float(q) for a, q in zip(legal, p)}

    def _legal(self, view: SeatView) -> np.ndarray:
        """The legal actions of ``view``, once its rules are checked (:meth:`encoder_for`)."""
        self.encoder_for(view.rules)
        legal = np.fromiter(view.legal_actions, dtype=np.int64)
        if legal.size == 0:
            raise ValueError(f"{self.name}: seat {view.seat} has no legal action (not its turn)")
        return legal

    def _legal_scores(self, view: SeatView, legal: np.ndarray) -> np.ndarray:
        """The logits (with ``symmetric``, the mean log-probabilities) of the ``legal`` actions of ``view``."""
        obs = self.encoder_for(view.rules).encode(view)
        if not self.symmetric:
            return self.logits(obs)[legal]
        return self._symmetric_scores(obs, legal, view.rules)

    def _relabelled(self, rules: Rules) -> SuitRelabelling:
        """The suit relabelling of this network's observations of ``rules`` (made once)."""
        encoder = self.encoder_for(rules)
        if self._relabelling is None or self._relabelling.encoder is not encoder:
            self._relabelling = SuitRelabelling(encoder)
        return self._relabelling

    def check_rules(self, rules: Rules) -> None:
        """:class:`CheckpointError` unless this network can play ``rules`` (see :meth:`encoder_for`)."""
        self.encoder_for(rules)

    def encoder_for(self, rules: Rules) -> ObservationEncoder:
        """The encoder of the checkpoint's layout for ``rules``; :class:`CheckpointError` if the
        checkpoint cannot play them (another variant, observation size or layout)."""
        if self._encoder is None or self._encoder.rules != rules:
            variant = rules.variant
            if variant != self.meta["variant"]:
                raise CheckpointError(
                    f"{self.path}: trained for variant {self.meta['variant']!r}, cannot play {variant!r}"
                )
            encoder = ObservationEncoder(rules, history=self.meta["history"], layout=self.layout)
            if encoder.size != self.meta["obs_size"]:
                raise CheckpointError(
                    f"{self.path}: expects observations of size {self.meta['obs_size']}, "
                    f"the encoder now produces {encoder.size}"
                )
            if self.meta.get("layout_sha256") not in (None, layout_fingerprint(encoder)):
                raise CheckpointError(f"{self.path}: the observation layout changed since this model was trained")
            self._encoder = encoder
        return self._encoder

    @property
    def layout(self) -> str:
        """The observation layout the network reads (``v0`` for files older than the field)."""
        return self.meta.get("layout", "v0")

    def input_width(self, rules: Rules, layout: str) -> int:
        """How many leading floats of the observations of ``rules`` in ``layout`` (the network's own
        history) the network reads: all of them in its own layout, the ``v0`` prefix of ``v1``
        observations for a ``v0`` network; :class:`CheckpointError` where its layout is not a
        prefix of ``layout`` (a ``v1`` network given ``v0`` observations)."""
        own = self.encoder_for(rules)
        given = ObservationEncoder(rules, own.history, layout)
        if [(s.name, s.offset, s.size) for s in given.segments[: len(own.segments)]] != [
                (s.name, s.offset, s.size) for s in own.segments]:
            raise CheckpointError(f"{self.path} reads observation layout {self.layout}, the games are seen "
                                  f"in layout {layout}")
        return own.size


class ShippedPPOAgent:
    """``ppo``: the shipped agent of whichever variant is being played, each network loaded on its
    first use. A variant without a shipped agent is refused by :meth:`check_rules` (and at the first
    decision) with a :class:`CheckpointError` naming the variants that have one."""

    def __init__(self, sample: bool = False, symmetric: bool | None = None):
        """``symmetric``: as :class:`PPOAgent` (``None``: as each shipped checkpoint's ``play`` says)."""
        self.sample = sample
        self.symmetric = symmetric
        self.name = "ppo"
        self._agents: dict[str, PPOAgent] = {}

    def reset(self) -> None:
        """Stateless between moves: nothing to reset."""

    def agent_for(self, rules: Rules) -> PPOAgent:
        """The shipped network of ``rules.variant`` (:class:`CheckpointError` if there is none; the
        network checks the rest of ``rules`` itself when it acts)."""
        variant = rules.variant
        if variant not in self._agents:
            if variant not in shipped_variants():
                raise CheckpointError(f"no shipped ppo agent for variant {variant!r}; "
                                      f"shipped: {', '.join(shipped_variants()) or 'none'}")
            self._agents[variant] = _loaded(shipped_model(variant), self.sample, self.symmetric)
        return self._agents[variant]

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        return self.agent_for(view.rules).act(view, rng)

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """The probabilities of the variant's network (:meth:`PPOAgent.action_probabilities`)."""
        return self.agent_for(view.rules).action_probabilities(view)

    def check_rules(self, rules: Rules) -> None:
        """:class:`CheckpointError` unless a shipped network plays ``rules``."""
        self.agent_for(rules).check_rules(rules)

@functools.lru_cache(maxsize=16)
def _loaded(path: Path, sample: bool, symmetric: bool | None) -> PPOAgent:
    """One loaded network per shipped file (the agent is stateless between moves), so that fresh
    ``ppo`` agents, one per game or per arena worker task, do not read and check the file again."""
    return PPOAgent(path, sample=sample, symmetric=symmetric)

def make_ppo_agent(arg: str | None, symmetric: bool | None = None) -> PPOAgent | ShippedPPOAgent:
    """Registry factory: ``ppo`` (the shipped agent of the variant being played), ``ppo:VARIANT``
    (that variant's shipped agent), ``ppo:PATH`` (a checkpoint, or a run directory of ``manni train``:
    ``ppo:runs/<run>`` plays ``runs/<run>/agent``). Options after any of them, each after a comma:
    ``sample`` draws from the masked policy (``greedy``, the default, plays its argmax);
    ``symmetric`` averages the policy over the suit relabellings of each position with a known contract
    (:meth:`PPOAgent.policy_logits`; ``ppo:symmetric``, ``ppo:basic,sample,symmetric``), ``plain`` plays
    the network's own logits; with neither, the ``symmetric`` argument, else the checkpoint's ``play``,
    decides."""
    path, options = split_options(arg or "")
    sample = "sample" in options
    if options & set(PLAY_MODES):
        symmetric = "symmetric" in options
    if not path:
        return ShippedPPOAgent(sample=sample, symmetric=symmetric)
    if path in VARIANTS and not checkpoint_paths(path)[0].exists():
        if path not in shipped_variants():
            raise CheckpointError(f"no shipped ppo agent for variant {path!r}; shipped: {', '.join(shipped_variants())}")
        path = shipped_model(path)
    return PPOAgent(path, sample=sample, symmetric=symmetric)


#: the options of a ``ppo`` spec, after its path and a comma each
PPO_OPTIONS = ("sample", "greedy", *PLAY_MODES)


def split_options(arg: str) -> tuple[str, set[str]]:
    """``"runs/x,sample,symmetric"`` → ``("runs/x", {"sample", "symmetric"})``: the trailing
    comma-separated words of :data:`PPO_OPTIONS` come off the path (``"symmetric"`` alone: the
    shipped agent with that option); ``ValueError`` for ``sample`` with ``greedy``, ``plain`` with ``symmetric``."""
    path, options = arg, set()
    while path:
        head, _, word = path.rpartition(",")
        if word not in PPO_OPTIONS:
            break
        path, options = head, options | {word}
    for pair in (("sample", "greedy"), PLAY_MODES):
        if set(pair) <= options:
            raise ValueError(f"ppo:{arg}: {' and '.join(pair)} exclude each other")
    return path, options
