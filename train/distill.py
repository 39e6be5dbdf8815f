"""``manni distill``: teach a ``ppo`` network the decisions of a stronger, slower agent (search distillation).

    manni distill --variant laugarvatn --teacher search --deals 2500 --workers 2 --run-name lvm_distill

One round of DAgger-style expert iteration: the student (``--init-from``, by default the variant's
shipped ``ppo``) plays every seat of ``--deals`` seeded deals greedily; at each of its decisions with
more than one legal action the **teacher** (any agent spec: ``search``, ``search:worlds=64``,
``pimc``, ...) says what it would play there, and a teacher that estimates every action's outcome
(``search``, ``pimc``) also how much its choice gains over the student's. With ``--teach play`` (the
default) the teacher labels the card play only and the student's own choices label the other
decisions (exchange, swap, pickup, announcement); ``--teach all`` lets the teacher label everything.

The student's actor is then fine-tuned (cross-entropy under the legal mask, Adam) towards the
teacher's move where the teacher's estimated gain exceeds ``--margin`` points, and towards its own
move elsewhere: with a few sampled worlds most of the search's preferences are noise, and its
tie-break (the lowest card) would be learned as a preference. ``--holdout`` of the deals are kept
aside to measure, after every epoch, how many of the teacher's changes the student makes and how
many of its other moves it keeps.

Everything goes to ``--out DIR`` (default ``runs/<run_name>/``): ``args.json``; ``decisions.npz`` (the labelled decisions,
observations stored compactly; ``--data`` fine-tunes them again, e.g. with another ``--margin``,
without asking the teacher); ``distill.json`` (the agreement per epoch, epoch 0 being the student
before fine-tuning; the labelling and training times); and ``agent.safetensors`` + ``agent.json``, a
``ppo`` checkpoint: ``manni arena ppo:runs/<run_name> pimc pimc --variant V``. Labelling is where the
time goes (the teacher's time per move, times about 30–40 card decisions a deal), spread over
``--workers`` processes; the same arguments give the same labels whatever the number of workers.
Ctrl-C while labelling keeps the deals labelled so far in ``decisions.npz`` (exit code 130).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from manni_agents.evaluation.arena import worker_pool
from manni_agents.ppo_agent import CheckpointError, PPOAgent, layout_fingerprint, policy_metadata, save_checkpoint
from manni_agents.registry import make_agent
from manni_agents.search import network_decisions
from manni_env.actions import NUM_ACTIONS
from manni_env.observation import ObservationEncoder
from manni_env.rules import Phase, Rules
from manni_train.demonstrations import ObservationCodec
from manni_train.init_from import checkpoint_provenance
from manni_train.networks import Actor, ppo_network
from manni_train.reporting import command_line

DESCRIPTION = ("Teach a ppo network the decisions of a stronger, slower agent: the student plays deals, the teacher "
               "labels its card play, the student's actor is fine-tuned on the labels and exported as a ppo "
               "checkpoint.")
#: which decisions the teacher labels
TEACH = ("play", "all")
#: deals labelled per worker task
CHUNK = 10
#: the arrays of ``decisions.npz``
FIELDS = ("obs_bits", "obs_numbers", "mask_bits", "labels", "student", "taught", "gain", "deal")


@dataclass
class LabelledDecisions:
    """The student's decisions with the teacher's labels: observations by :class:`ObservationCodec`,
    legal masks packed eight to a byte, the label and the student's own action (uint8), whether the
    teacher gave the label (``taught``), the teacher's estimate of what its label gains over the
    student's action (``gain``, in points; NaN where the teacher gives no estimates) and the deal
    number of each decision."""

    obs_bits: np.ndarray
    obs_numbers: np.ndarray
    mask_bits: np.ndarray
    labels: np.ndarray
    student: np.ndarray
    taught: np.ndarray
    gain: np.ndarray
    deal: np.ndarray
    layout: str
    """the variant, observation history and layout hash of the observations (:func:`observation_layout`)"""

    def __len__(self) -> int:
        return len(self.labels)

    @classmethod
    def concatenate(cls, parts: list[LabelledDecisions]) -> LabelledDecisions:
        """The decisions of ``parts`` (of one layout) in order."""
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in FIELDS), parts[0].layout)

    def save(self, path: Path) -> None:
        np.savez_compressed(path, layout=np.array(self.layout), **{f: getattr(self, f) for f in FIELDS})

    @classmethod
    def load(cls, path: str | Path) -> LabelledDecisions:
        """Read :meth:`save`'s file (no pickled objects); ``ValueError`` naming what is wrong."""
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:  # ValueError: not an .npz (numpy takes it for a pickle)
            raise ValueError(f"{path}: cannot read decisions ({err})") from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: not a decisions file of manni distill (a single array, not an .npz)")
        with data:
            missing = [f for f in (*FIELDS, "layout") if f not in data]
            if missing:
                raise ValueError(f"{path}: not a decisions file of manni distill (lacks {', '.join(missing)})")
            try:
                arrays = {f: data[f] for f in FIELDS}
                layout = str(data["layout"])
            except ValueError as err:  # e.g. an array of pickled objects
                raise ValueError(f"{path}: cannot read decisions ({err})") from None
        sizes = {len(a) for a in arrays.values()}
        if len(sizes) != 1:
            raise ValueError(f"{path}: its arrays have different lengths {sorted(sizes)}")
        return cls(**arrays, layout=layout)

    def check_fits(self, layout: str, where: str) -> None:
        """``ValueError`` unless the observations were made in ``layout`` (the student's variant,
        history and observation layout) and every label and student action is a legal action."""
        if self.layout != layout:
            raise ValueError(f"{where}: decisions of another variant or observation layout than the student's "
                             f"({self.layout!r}, the student reads {layout!r})")
        legal = np.unpackbits(self.mask_bits, axis=1, count=NUM_ACTIONS).view(bool)
        actions = np.stack([self.labels, self.student]).astype(np.int64)  # (2, decisions)
        if (actions >= NUM_ACTIONS).any() or not legal[np.arange(len(self)), actions].all():
            raise ValueError(f"{where}: a label or a student action is not a legal action of its decision")

    def targets(self, margin: float) -> np.ndarray:
        """The label to learn per decision: the teacher's where it gains more than ``margin`` points
        over the student's action by the teacher's own estimate (or gives no estimate), else the
        student's own action (a tie or a near-tie of the teacher's sampled worlds is noise, and its
        tie-break, e.g. the lowest card, would be learned as a preference)."""
        keep_own = self.gain <= margin  # NaN (no estimate) compares False: the teacher's label stays
        return np.where(keep_own, self.student, self.labels).astype(np.int64)

    def rows(self, codec: ObservationCodec, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observations (k, obs_size) float32 and legal masks (k, 63) bool."""
        masks = np.unpackbits(self.mask_bits[idx], axis=1, count=NUM_ACTIONS).view(bool)
        return codec.decode(self.obs_bits[idx], self.obs_numbers[idx]), masks


def label_deals(rules: Rules, student_spec: str, teacher_spec: str, teach: str, seed: int,
                deals: range) -> LabelledDecisions:
    """The student's decisions in ``deals`` (deal ``d`` dealt from ``seed + d``), labelled."""
    student = ppo_network(student_spec, rules)
    teacher = make_agent(teacher_spec, rules)
    encoder = student.encoder_for(rules)
    codec = ObservationCodec(rules, student.meta["history"], student.layout)
    estimates = getattr(teacher, "evaluate", None)  # search and pimc: (choice, mean outcome per action, ...)
    obs, masks, labels, actions, taught, gains, numbers = [], [], [], [], [], [], []
    for deal, view, action, rng in network_decisions(rules, deals, seed, progress=False, network=student):
        ask = teach == "all" or view.phase == Phase.PLAY
        gain = np.nan
        if not ask:
            label = action
        elif estimates is not None and view.phase == Phase.PLAY:
            label, means, *_ = estimates(view, rng)
            gain = means[label] - means[action]
        else:
            label = teacher.act(view, rng)
        labels.append(label)
        gains.append(gain)
        obs.append(encoder.encode(view))
        masks.append(ObservationEncoder.action_mask(view))
        actions.append(action)
        taught.append(ask)
        numbers.append(deal)
    obs_rows = np.array(obs, np.float32).reshape(len(obs), codec.size)
    mask_rows = np.array(masks, bool).reshape(len(masks), NUM_ACTIONS)
    return LabelledDecisions(*codec.encode(obs_rows), np.packbits(mask_rows, axis=1), np.array(labels, np.uint8),
                             np.array(actions, np.uint8), np.array(taught, bool), np.array(gains, np.float32),
                             np.array(numbers, np.int32), observation_layout(student, rules))


def observation_layout(network: PPOAgent, rules: Rules) -> str:
    """What a network's observations are: variant, observation history and layout hash."""
    encoder = network.encoder_for(rules)
    return f"{rules.variant} {network.meta['history']} {layout_fingerprint(encoder)}"


def collect(rules: Rules, student_spec: str, teacher_spec: str, teach: str, deals: int, seed: int,
            workers: int, progress: bool = True) -> tuple[LabelledDecisions, bool]:
    """:func:`label_deals` over deals ``0 .. deals - 1`` in chunks of :data:`CHUNK` deals, on
    ``workers`` spawned processes (one: in this process), with a progress bar over the deals; the
    decisions and whether Ctrl-C stopped the labelling (then only the chunks finished before it, in
    order, are returned)."""
    from tqdm import tqdm

    spans = [range(a, min(a + CHUNK, deals)) for a in range(0, deals, CHUNK)]
    task = functools.partial(label_deals, rules, student_spec, teacher_spec, teach, seed)
    parts: list[LabelledDecisions] = []
    with tqdm(total=deals, desc=f"labelling ({teacher_spec})", unit="deal", disable=not progress) as bar, \
            contextlib.ExitStack() as stack:
        results = map(task, spans) if workers == 1 else stack.enter_context(worker_pool(workers)).imap(task, spans)
        try:
            for span, part in zip(spans, results):
                parts.append(part)
                bar.update(len(span))
        except KeyboardInterrupt:
            return LabelledDecisions.concatenate(parts or [task(range(0))]), True
    return LabelledDecisions.concatenate(parts), False


def fine_tune(student: PPOAgent, rules: Rules, data: LabelledDecisions, *, margin: float, epochs: int, lr: float,
              batch_size: int, holdout: float, seed: int, progress: bool = True) -> tuple[list, list[dict]]:
    """Fine-tune ``student``'s actor on ``data``'s targets (:meth:`LabelledDecisions.targets`);
    its layers after the last epoch and, per epoch (0: before), its agreement on the training and on
    the held-out deals with the targets that change the student's play (``changes``) and with those
    that keep it (``kept``)."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    codec = ObservationCodec(rules, student.meta["history"], student.layout)
    actor = Actor(student.meta["obs_size"], student.meta["net_arch"], student.meta["activation"])
    actor.load_layers(student.layers)
    targets = data.targets(margin)
    deals = np.unique(data.deal)
    held = np.random.default_rng(seed).permutation(deals)[: round(holdout * len(deals))]
    is_held = np.isin(data.deal, held)
    train_idx, test_idx = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    changes = targets != data.student

    def agreement(idx: np.ndarray) -> dict:
        hits = np.zeros(len(idx), bool)
        with torch.no_grad():
            for start in range(0, len(idx), 8192):
                part = idx[start:start + 8192]
                obs, masks = data.rows(codec, part)
                choice = actor(torch.from_numpy(obs), torch.from_numpy(masks)).argmax(1).numpy()
                hits[start:start + len(part)] = choice == targets[part]
        changed = changes[idx]
        return {"changes": float(hits[changed].mean()) if changed.any() else None,
                "kept": float(hits[~changed].mean()) if (~changed).any() else None}

    optimizer = torch.optim.Adam(actor.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    history = [{"epoch": 0, "held_out": agreement(test_idx), "train": agreement(train_idx)}]
    for epoch in tqdm(range(1, epochs + 1), desc="fine-tuning", unit="epoch", disable=not progress):
        for part in torch.randperm(len(train_idx), generator=generator).split(batch_size):
            rows = train_idx[part.numpy()]
            obs, masks = data.rows(codec, rows)
            logits = actor(torch.from_numpy(obs), torch.from_numpy(masks))
            loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(targets[rows]))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(actor.parameters(), 1.0)
            optimizer.step()
        history.append({"epoch": epoch, "held_out": agreement(test_idx), "train": agreement(train_idx)})
    return actor.layers(), history


def build_parser(prog: str = "manni distill") -> argparse.ArgumentParser:
    """The command line (every option has a default)."""
    from manni_env.cli_options import add_variant_options, at_least, number_in

    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_variant_options(parser)
    parser.add_argument("--init-from", default="ppo", metavar="SPEC",
                        help="the student: ppo (the variant's shipped agent, default), ppo:VARIANT or ppo:PATH")
    parser.add_argument("--teacher", default="search", metavar="SPEC",
                        help="the agent whose decisions are learned, e.g. search, search:worlds=64, pimc "
                        "(default search)")
    parser.add_argument("--teach", choices=TEACH, default="play",
                        help="decisions the teacher labels: play (card play, default) or all")
    parser.add_argument("--deals", type=at_least(1), default=2000, help="deals the student plays (default 2000)")
    parser.add_argument("--data", metavar="NPZ", help="fine-tune on this decisions.npz instead of labelling deals")
    parser.add_argument("--margin", type=number_in(0), default=1.0,
                        help="learn the teacher's move only where, by its own estimate, it gains more than this "
                        "many points over the student's (search, pimc; default 1); elsewhere the student's move")
    parser.add_argument("--epochs", type=at_least(1), default=8, help="fine-tuning epochs (default 8)")
    parser.add_argument("--learning-rate", type=number_in(0, include_low=False), default=3e-4,
                        help="Adam step size (default 3e-4)")
    parser.add_argument("--batch-size", type=at_least(1), default=256, help="minibatch size (default 256)")
    parser.add_argument("--holdout", type=number_in(0, 1), default=0.1,
                        help="share of the deals kept aside to measure agreement with the teacher (default 0.1)")
    parser.add_argument("--seed", type=at_least(0), default=1,
                        help="seed of the deals, the teacher and the fine-tuning (default 1)")
    parser.add_argument("--workers", type=at_least(1), default=1, help="labelling processes (default 1)")
    parser.add_argument("--out", metavar="DIR", help="the run's directory (default runs/VARIANT_distill_sSEED)")
    parser.add_argument("--runs-dir", help="older spelling: --out is --runs-dir DIR --run-name NAME in one")
    parser.add_argument("--run-name", help="older spelling: see --runs-dir")
    parser.add_argument("--force", action="store_true", help="overwrite the files of an earlier run of that name")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None, prog: str = "manni distill") -> int:
    """Label (or load) the decisions, fine-tune, export; the exit code."""
    from manni_env.cli_options import rules_from_args

    parser = build_parser(prog)
    args = parser.parse_args(argv)
    rules = rules_from_args(args)
    try:
        student = ppo_network(args.init_from, rules)
        if args.data is None:
            make_agent(args.teacher, rules)  # a bad teacher spec fails before any work
    except (ValueError, CheckpointError) as err:
        parser.error(str(err))
    if args.out is not None and (args.runs_dir or args.run_name):
        parser.error("--out DIR names the whole run directory: give it or --runs-dir/--run-name, not both")
    run = Path(args.out) if args.out else Path(args.runs_dir or "runs") / (args.run_name or f"{rules.variant}_distill_s{args.seed}")
    if run.exists() and any(run.iterdir()) and not args.force:
        parser.error(f"{run} already holds a run; choose another --out or pass --force")
    run.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in vars(args).items() if not k.startswith("_")}
    (run / "args.json").write_text(json.dumps(options, indent=2) + "\n")
    started = time.perf_counter()
    try:
        if args.data is not None:
            data = LabelledDecisions.load(args.data)
            data.check_fits(observation_layout(student, rules), args.data)
        else:
            data, interrupted = collect(rules, args.init_from, args.teacher, args.teach, args.deals, args.seed,
                                        args.workers, progress=not args.no_progress)
            data.save(run / "decisions.npz")
            if interrupted:
                print(f"interrupted: the {len(np.unique(data.deal)):,} deals labelled so far ({len(data):,} decisions) "
                      f"are kept in {run / 'decisions.npz'}; fine-tune on them with --data", file=sys.stderr)
                return 130
    except ValueError as err:
        parser.error(str(err))
    if not data.taught.any():
        parser.error(f"{args.data or 'the deals played'}: no decision labelled by the teacher to learn from")
    labelled = time.perf_counter()
    layers, history = fine_tune(student, rules, data, margin=args.margin, epochs=args.epochs, lr=args.learning_rate,
                                batch_size=args.batch_size, holdout=args.holdout, seed=args.seed,
                                progress=not args.no_progress)
    tuned = time.perf_counter()
    changes = int((data.targets(args.margin) != data.student).sum())
    report = {"decisions": len(data), "taught": int(data.taught.sum()), "changes": changes,
              "deals": int(len(np.unique(data.deal))),
              "labelling_s": round(labelled - started, 1), "fine_tuning_s": round(tuned - labelled, 1),
              "epochs": history}
    (run / "distill.json").write_text(json.dumps(report, indent=2) + "\n")
    training = {"algorithm": "distillation of a teacher's decisions (manni distill, train/distill.py)",
                "command": command_line(), "args": options, "labelled_decisions": len(data),
                "timesteps": 0,  # no reinforcement-learning decisions; the chain's sum counts the student's
                "wall_time_s": round(tuned - started, 1),
                "init_from": checkpoint_provenance(args.init_from, student)}
    metadata = policy_metadata(rules, student.meta["history"], student.meta["activation"], student.layout)
    save_checkpoint(run / "agent", layers, {**metadata, "training": training})
    for entry in history:
        held = entry["held_out"]
        print(f"epoch {entry['epoch']}: on the held-out deals it makes {_percent(held['changes'])} of the teacher's "
              f"changes and keeps {_percent(held['kept'])} of its other moves")
    print(f"{len(data):,} decisions ({report['taught']:,} taught, {changes:,} changes of the student's move) in "
          f"{report['labelling_s']:.0f} s, "
          f"fine-tuned in {report['fine_tuning_s']:.0f} s; agent: {run / 'agent'} "
          f"(manni arena ppo:{run} pimc pimc --variant {rules.variant})")
    return 0


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.1f}%"


if __name__ == "__main__":
    sys.exit(main(prog="python -m manni_train.distill"))
