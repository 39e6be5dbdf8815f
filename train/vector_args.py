"""The fast trainer's options (``manni train --trainer vector``, and the Ray trainer's on top): the
:class:`Args` dataclass, its defaults (what reached the most strength in about ten minutes of two
cores) and its checks; :mod:`manni_train.ppo_vector` trains with them."""

from __future__ import annotations

from dataclasses import dataclass, field

from manni_agents.ppo_agent import PLAY_MODES
from manni_env.shaping import REWARD_BASES
from manni_env.vector import BACKENDS
from manni_train.args import MIN_ARENA_DEALS, SelfPlayArgs
from manni_train.cpu import isa_cap
from manni_train.critic_view import CRITIC_VIEWS
from manni_train.expert_iteration import check_args as check_expert_iteration
from manni_train.init_from import init_network
from manni_train.networks import TORSOS
from manni_train.precision import PRECISIONS
from manni_train.record_demonstrations import load_records

#: the opponents of the defaults: the learner's own snapshots (60%, ``--snapshot-every``,
#: ``--pool-size``), ``rule_based`` 30%, ``random`` 5%, the rest the learner
POPULATION_MIX = "snapshot=0.6,rule_based=0.3,random=0.05"
#: Trjámann's opponents: snapshots and ``random`` only, no ``rule_based`` (level with ``pimc`` sooner)
SNAPSHOT_MIX = "snapshot=0.95,random=0.05"
#: what every variant's defaults share unless its row says otherwise
_EVERY_VARIANT = {"learning_rate": 1e-3, "update_epochs": 1, "minibatch_size": 1024, "anneal_lr_to": 0.0,
                  "opponent_mix": POPULATION_MIX}
#: the defaults that differ by variant (``None``: the others): how many learner decisions to train
#: for, how to update on them and against whom, each row measured over three training seeds against
#: ``pimc`` (benchmarks/results/time_to_strength.md); an option given on the command line wins
VARIANT_DEFAULTS: dict[str | None, dict[str, float | str]] = {
    None: {**_EVERY_VARIANT, "total_steps": 27_000_000},
    "hornafjardar": {**_EVERY_VARIANT, "total_steps": 12_000_000},
    "trjamann": {**_EVERY_VARIANT, "total_steps": 20_000_000, "anneal_lr_to": 0.5, "opponent_mix": SNAPSHOT_MIX},
    "basic": {**_EVERY_VARIANT, "total_steps": 32_000_000},
}
#: ``--play``: how the exported agent plays (``auto``: :meth:`Args.exported_play`)
PLAY_CHOICES = ("auto", *PLAY_MODES)
#: the variants whose critic is by default half as wide as the actor (``--critic-hidden``): as strong
#: an agent over three training seeds against ``pimc``, at 1.2 times the learner decisions a second
#: (benchmarks/results/time_to_strength.md); in the others it is as wide
HALF_WIDTH_CRITIC = ("trjamann",)


@dataclass
class Args(SelfPlayArgs):
    """Self-play PPO on the vector env (plain torch): the fast trainer, manni train's default."""

    TRAINER = "vector"
    FIXED_OPPONENTS = True

    # the defaults: what reached the most strength in the fewest minutes of 2 cores
    # (benchmarks/results/time_to_strength.md); None: by variant (VARIANT_DEFAULTS)
    total_steps: int | None = None
    """learner decisions to train for, exactly: the last update takes only the rollout's first decisions
    still to train (default: 27,000,000; 12,000,000 in Hornafjarðarmanni, which learns fastest;
    20,000,000 in Trjámann; 32,000,000 in Basic Manni, which learns most slowly)"""
    learning_rate: float | None = None
    """Adam learning rate (default: 1e-3)"""
    anneal_lr: bool = True
    anneal_lr_to: float | None = None
    """with --anneal-lr, the fraction of --learning-rate the linear decay ends at after --total-steps
    (0: to zero; 0.5: to half, the rate a run twice as long has at this run's end; default: 0, 0.5 in
    Trjámann)"""
    # many games per vector step and large minibatches: the per-step and per-minibatch overheads
    # are spread over many decisions, and a fresh decision is cheaper than another pass over an old one
    num_envs: int = 1024
    num_steps: int = 32
    minibatch_size: int | None = None
    """samples per minibatch of the PPO update (default: 1,024)"""
    update_epochs: int | None = None
    """optimisation epochs over each rollout (default: 1)"""
    # a population from the start: most opponents are the learner's own snapshots, one every 250,000
    # decisions, the 16 latest kept (they span the last 4 M decisions)
    opponent_mix: str | None = None
    """who plays each seat at the start of a game: KIND=SHARE,... with KIND snapshot (a frozen copy of
    the learner from the pool), rule_based or random, and SHARE a probability (0.2 or 1/3), drawn per
    seat; the rest, and at least one seat, is the learner's; none: pure self-play (default:
    snapshot=0.6,rule_based=0.3,random=0.05; snapshot=0.95,random=0.05 in Trjámann)"""
    snapshot_every: int = 250_000
    pool_size: int = 16
    eval_every: int = 1_000_000
    save_every: int = 0
    """learner decisions between copies of the policy kept as agents of their own,
    RUN_DIR/agents/DECISIONS, each after the first update past a multiple of it (e.g. ``manni arena ppo:runs/RUN/agents/9000000 pimc pimc``: how strong the
    run was after 9 M decisions; 0: none)"""
    final_eval_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × random and 2 × rule_based, seed
    --eval-seed + 1 (default: --total-steps / 4,000 between 100 and 500, so a short run has a short
    arena; 0: none, else at least 2, for a confidence interval)"""
    final_pimc_deals: int | None = None
    """duplicate deals (x 6 seatings) of the final arena against 2 × pimc, the search baseline, seed
    --eval-seed + 1 (default: --total-steps / 30,000, at most 100: none below 60,000 steps; 0: none,
    else at least 2; about 0.4 s a deal on one core, shared by --eval-workers)"""
    eval_workers: int = 2
    """processes for the final arena"""
    bc_samples: int | None = None
    """imitation warm start: decisions of --bc-teacher playing every seat, cloned before PPO (default:
    30% of --total-steps, at most 600,000, so a short run has a short warm start; 0: start from
    scratch; about 160 bytes each in memory)"""
    warm_start_records: list[str] = field(default_factory=list)
    """imitate the decisions of these game records (manni-record/1 JSON Lines, e.g. from manni records
    export; every seat's unless --warm-start-players) instead of --bc-teacher's; validated first, and
    played under this run's variant and rule options; --bc-samples caps how many (default: all)"""
    warm_start_players: list[str] = field(default_factory=list)
    """with --warm-start-records, imitate only the seats whose player in the record is one of these:
    a whole name (human, remote-bot:NAME, ppo:runs/x/agent) or its kind (remote-bot, ppo)"""
    bc_epochs: int = 4
    bc_lr: float = 2e-3
    bc_batch_size: int = 1024
    """minibatch size of the imitation phase"""
    time_limit_s: float = 0.0
    """stop after this many seconds of wall time (0: no limit)"""
    backend: str = "auto"
    """vector env backend: numba, python (the same kernels, slow) or auto (numba when installed)"""
    torso: str = "separate"
    """the critic's hidden layers: separate (its own) or shared (the actor's, under a value head of its own:
    about half the arithmetic of a decision; needs --critic seat); the exported agent is the same either way"""
    critic_hidden: list[int] | None = None
    """the critic's hidden layer sizes (default: half of --hidden's in Trjámann, --hidden's in the other
    variants); the critic trains only, so its width leaves the actor, and so the exported agent, as it
    is; not with --torso shared"""
    critic: str = "seat"
    """what the critic reads in training: seat (the seat's observation, as the actor) or deal (that and
    the cards hidden from the seat: the others' hands and the rest of the pack; the actor, and so the
    exported agent, still reads the observation only; manni_train.critic_view)"""
    play: str = "auto"
    """how the exported agent plays its network unless a spec says otherwise (the checkpoint's
    ``play``): plain, symmetric (the policy averaged over the renamings of the plain suits; slower a
    move) or auto (symmetric where the variant's row says the trump is known from the first decision,
    as in Basic Manni; plain elsewhere)"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before training"""
    reward_of: str = "relative"
    """whose points the reward counts: own, or relative (own minus the mean of the two others': what
    pimc and search maximise and the arena's differences measure; 1.5 x own in the zero-sum
    variants, different in Basic Manni, whose deal scores are never negative)"""
    torch_threads: int = 0
    """torch CPU threads of this process (0: fitted to the cores other processes leave free, measured
    again every 30 s; the fast trainer's --overlap keeps one of them for its rollout process)"""
    overlap: bool = True
    """play the rollouts in a process of their own, each during the update of the previous one, with
    the actor one update old (the critic values them here, after it): an iteration takes the longer of
    rollout and update, not their sum (manni_train.rollout_process; a /dev/shm too small for it is
    said, and the rollouts play here);
    --no-overlap: rollouts and updates take turns in this process"""
    precision: str = "auto"
    """arithmetic of the networks' hidden layers in the warm start, the rollouts and the update: fp32,
    bf16 (autocast; weights and checkpoints stay float32) or auto (bf16 where the CPU or GPU runs it
    natively)"""
    init_from: str | None = None
    """start the actor from this ppo checkpoint instead of from scratch: ppo (the variant's shipped
    agent), ppo:VARIANT or ppo:PATH (same observations, --hidden and --activation; a summary network
    also starts a --history full run, at zero weight on the added inputs); the warm start,
    if any, then trains only the critic (e.g. a best response that starts as the agent it exploits)"""
    resume: str | None = None
    """continue the interrupted run in this directory (RUN_DIR: its args.json, networks, optimizer,
    step count, history and random states; the other options are ignored)"""
    # expert iteration (manni_train.expert_iteration; docs/training.md)
    search_share: float = 0.0
    """expert iteration: the share of the learner's card-play decisions (more than one legal card) in
    each rollout that the batched search gives a target, learned beside PPO's loss (0: off)"""
    search_worlds: int = 8
    """worlds the search samples from the seat's view for each searched decision"""
    search_weighting: str = "uniform"
    """how the search weighs its worlds: uniform, or policy (by the actor's likelihood of the
    opponents' card plays, as search:weighting=policy)"""
    search_target: str = "gumbel"
    """what a searched decision is taught: greedy (the best card), soft (the softmax of the cards'
    values / --search-temperature) or gumbel (Gumbel AlphaZero's improved policy: the softmax of the
    acting policy's logits plus the scaled, min-max normalised values)"""
    search_temperature: float | None = None
    """with --search-target soft: the temperature of the values' softmax, in points (default 1)"""
    search_coef: float = 1.0
    """weight of the search targets' cross-entropy in the update's loss"""

    def __post_init__(self) -> None:
        defaults = VARIANT_DEFAULTS.get(self.variant, VARIANT_DEFAULTS[None])
        if not self.anneal_lr:  # no decay (--no-anneal-lr): nothing for it to end at
            defaults = {**defaults, "anneal_lr_to": 0.0}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        if self.critic_hidden is None and self.torso == "separate":  # recorded as sized (args.json)
            halve = self.variant in HALF_WIDTH_CRITIC
            self.critic_hidden = [max(1, size // 2) if halve else size for size in self.hidden]

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad argument."""
        super().check()
        self.check_choices({"backend": BACKENDS, "precision": PRECISIONS, "reward_of": REWARD_BASES,
                            "critic": CRITIC_VIEWS, "play": PLAY_CHOICES, "torso": TORSOS})
        isa_cap()  # a ONEDNN_MAX_CPU_ISA oneDNN does not know, as one error line
        if self.critic_hidden is not None and (not self.critic_hidden or min(self.critic_hidden) < 1):
            raise ValueError(f"--critic-hidden needs positive layer sizes, got {self.critic_hidden}")
        if self.critic_hidden is not None and self.torso == "shared":
            raise ValueError("--critic-hidden needs --torso separate (a shared torso's critic has the actor's layers)")
        if self.torso == "shared" and self.critic != "seat":
            raise ValueError("--torso shared needs --critic seat (the actor's layers read its observation only)")
        self.check_at_least(1, "bc_batch_size")
        if not 0.0 <= self.anneal_lr_to <= 1.0:
            raise ValueError(f"--anneal-lr-to is a fraction of --learning-rate from 0 to 1, got {self.anneal_lr_to}")
        if self.anneal_lr_to and not self.anneal_lr:
            raise ValueError("--anneal-lr-to needs --anneal-lr (with --no-anneal-lr the rate stays constant)")
        if self.save_every < 0:
            raise ValueError(f"--save-every must not be negative (0: no copies), got {self.save_every}")
        check_expert_iteration(self)
        if self.torch_threads < 0:
            raise ValueError(f"--torch-threads must not be negative, got {self.torch_threads}")
        if self.warm_start_players and not self.warm_start_records:
            raise ValueError("--warm-start-players needs --warm-start-records")
        if self.warm_start_records and self.resume is None:  # read and checked now: nothing trains on a bad file
            if self.bc_samples == 0:
                raise ValueError("--warm-start-records needs --bc-samples above 0 (0: no warm start)")
            self.records()
        if self.init_from and self.resume is None:  # now, as one error line, not after the run has started
            try:
                init_network(self.init_from, self)
            except OSError as err:  # a path no file system takes
                raise ValueError(f"--init-from {self.init_from[:200]}: {err.strerror or err}") from None

    def records(self) -> list[dict]:
        """The ``--warm-start-records``, read and checked once
        (:func:`~manni_train.record_demonstrations.load_records`)."""
        if getattr(self, "_records", None) is None:
            self._records = load_records(self.warm_start_records, self.rules(), self.warm_start_players)
        return self._records

    def __getstate__(self) -> dict:  # a rollout process or actor gets the options, not the records
        return {k: v for k, v in self.__dict__.items() if k != "_records"}

    def exported_play(self) -> str:
        """``--play`` with ``auto`` resolved: ``symmetric`` where the trump is known from the first decision
        (:attr:`~manni_env.rules.VariantSpec.trump_known_first`: Basic Manni), ``plain`` elsewhere."""
        if self.play != "auto":
            return self.play
        return "symmetric" if self.rules().spec.trump_known_first else "plain"

    def final_arena_deals(self) -> int:
        """``--final-eval-deals``, by default ``--total-steps`` / 4,000 between 100 and 500."""
        return min(500, max(100, self.total_steps // 4000)) if self.final_eval_deals is None else self.final_eval_deals

    def final_pimc_arena_deals(self) -> int:
        """``--final-pimc-deals``, by default ``--total-steps`` / 30,000, at most 100, and 0 below
        :data:`~manni_train.args.MIN_ARENA_DEALS` (no arena too small for a confidence interval)."""
        if self.final_pimc_deals is not None:
            return self.final_pimc_deals
        deals = min(100, self.total_steps // 30_000)
        return deals if deals >= MIN_ARENA_DEALS else 0

    def warm_start_samples(self) -> int:
        """``--bc-samples``, by default 30% of ``--total-steps`` (at most 600,000)."""
        return min(600_000, round(0.3 * self.total_steps)) if self.bc_samples is None else self.bc_samples
