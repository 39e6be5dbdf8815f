# noqa: D212, D415
"""
# Manni

Manni, the Icelandic three-player trick-taking game, as a PettingZoo AEC environment in the style of
PettingZoo's classic environments. Rules: the project's RULES.md; variants
`hornafjardar` (default), `basic`, `trjamann` and `laugarvatn`.

| Import             | `from manni_env import manni_v1` (or `manni_v0`: observation layout v0) |
|--------------------|-----------------------------------------------------------------------|
| Creation           | `manni_v1.env(variant="basic", target=5)` or `pettingzoo.make("aec", "manni/manni-v1")` |
| Actions            | Discrete                                                              |
| Parallel API       | No                                                                    |
| Manual Control     | No                                                                    |
| Agents             | `agents= ['player_0', 'player_1', 'player_2']`                        |
| Agents             | 3                                                                     |
| Action Shape       | Discrete(63)                                                          |
| Action Values      | [0, 62]                                                               |
| Observation Shape  | (830,) with `history="summary"` (v0: 616); `history="full"` adds 3 × tricks per deal × 55 |
| Observation Values | 0/1 one-hots and card sets; counts scaled to [0, 1]; score tallies scaled by the target (see the layout) |

Seat `i` is agent `player_i`; seats sit clockwise and the deal passes to the dealer's left. An
episode is one deal by default (`episode="game"`: a whole game). Turns follow the rules, not a
fixed rotation: `agent_selection` is always the seat the rules put on turn.

### Options

`manni_v1.env(variant="hornafjardar", history="summary", episode="deal", reward="deal",
render_mode=None, render_seat=None, **rule_options)` (`manni_v0.env` takes the same options and
gives the observation layout v0; both are `raw_env(..., layout="v0" | "v1")`). `rule_options` are the variant's options (`target`,
`negative`, `max_deals`, `first_dealer`), validated by `manni_env.rules.make_rules`: an unknown
variant or option raises its `ValueError` naming the valid choices.

- `history`: `"summary"` or `"full"` (adds the ordered plays of the current deal to the observation).
- `episode`: `"deal"` (default, as in every adapter: `manni_env.episodes.DEFAULT_EPISODE`): the
  episode ends when a deal ends. Successive `reset()` calls without a seed then play the successive
  deals of one game (tallies, dealer rotation and Basic's trump rotation carry over); a new game
  starts when one ends or when `reset` gets a seed. `"game"`: the episode is a whole game.
- `reward`: `"deal"` (default) or `"outcome"` (requires `episode="game"`), see Rewards.

### Observation Space

The observation is a dictionary with an `'observation'` element, the usual RL observation described
below, and an `'action_mask'` element which holds the legal moves, described in the Legal Actions
Mask section.

The main observation is a flat `float32` vector built by `manni_env.observation.ObservationEncoder`
from what the observing seat may know (`manni_env.view.SeatView`), seats **relative** to the
observer (0 = me, 1 = my left, the next to play, 2 = my right): own hand, variant, contract, trump,
the Hornafjarðarmanni cut card and who was dealt it, dealer, seat on turn, phase, own discards and
own cards drawn, exchange / swap / Manni pickup decisions and counts, the announcement state
(declarer, contracts each seat has used), the current trick, suit led and leader, every card each
seat has played this deal, the suits each seat has shown void in, tricks won, the plus / minus /
total tallies and the deal number; with `history="full"`, every play of the deal in order with who
played it. Layout v1 (`manni_v1`) appends the trick-play segments after all of these: the number
of cards in the current trick, the card winning it so far and whose it is, the cards that led and
the cards that won this deal's tricks, and for each card in hand how many cards of its suit above it
(in the contract's trick order) this seat has not seen. The table of segments (name, offset, size,
meaning) is generated from the code: `manni layout --variant V [--history full] [--layout v1]`
prints it (`manni_env.observation.layout_table(rules, history, layout)`); `manni_env.observation.describe(obs, rules)` decodes a vector into words. Opponents' hands, their discards and the unseen Manni are never in it.

Observations are of the current state of the game: when a deal ends, the engine has already dealt
the next one, so the observation after the last card of a deal shows the next deal (with
`episode="deal"` it is also the first observation of the next episode).

`state()` (space `state_space`) is the **privileged** full state for centralized training: every
hand, the unseen Manni, every discard, then the public segments with absolute seats
(`manni_env.observation.StateEncoder`). The attribute `game` (the engine's `GameState`) is
privileged as well: it is for tools (renderers, recorders, tests), never for a policy's input.

#### Legal Actions Mask

The legal moves available to the current agent are found in the `action_mask` element of the
dictionary observation: an `int8` vector of 63 where 1 marks a legal action. The `action_mask`
is all zeros for any agent except the one whose turn it is, and for everyone once the episode is
over. Taking an illegal move through `env()` ends the game with a reward of -1 for the illegally
moving agent and 0 for the others (PettingZoo's `TerminateIllegalWrapper`); `raw_env.step` raises
`manni_env.engine.IllegalActionError` instead and leaves the state unchanged.

### Action Space

`Discrete(63)`, the layout of `manni_env.actions`: 0–51 a card (`suit*13 + rank`, suits C D H S,
ranks 2…A: discard it during an exchange or the announcement variants' Manni discard, play it in
the play phase); 52 finish exchanging (Hornafjarðarmanni); 53 / 54 keep / swap the hand (Basic);
55 / 56 take / pass the Manni and 57–62 announce spades, hearts, diamonds, clubs, grand, nullo
(announcement variants; Trjámann's "suit" contract is announced as hearts or diamonds).

### Rewards

`reward="deal"` (default): when a deal ends, each seat receives its score for that deal, given to
all three agents at that step (RULES.md: Hornafjarðarmanni `t − 4`, Nullo `4 − t`; Basic
`max(0, t − 4)` or `t − 4` with `negative=True`; announcement variants `t − 8` / `t − 4` for the
declarer / the others, Nullo `4 − t` / `6 − t`), 0 at every other step. The rewards of a deal sum
to zero except in Basic.

`reward="outcome"`: 0 until the game ends, then a zero-sum game outcome: with `W` the set of winners
(highest total; ties share), a winner receives `+1 / |W|` and every other seat `−1 / (3 − |W|)`
(a three-way tie gives everyone 0). Example: one winner +1, the others −½ each.

| Outcome           | Winner(s)    | Others |
| :---------------: | :----------: | :----: |
| one winner        | +1           | −½     |
| two share the win | +½ each      | −1     |
| three-way tie     | 0            | —      |

A game stopped at the deal cap (`max_deals`) ends a `"game"` episode with truncation instead of
termination (a `"deal"` episode ends with termination: its deal is complete); its rewards (and,
for `"outcome"`, the winners on the totals at the cap) are given the same way. These rules are
`manni_env.episodes`, shared by every adapter.

### Rendering

`render_mode="ansi"`: a text table with the hand of the agent on turn; `"rgb_array"`: a picture of
the table (`manni_env.render.render_rgb`: hands face down except the viewer's, the current trick,
contract and tallies); `"human"`: that picture in a matplotlib window at every step (the text
where no window can open). The viewer is the agent on turn unless `render_seat` names a seat
(0, 1, 2) or is `"all"` (privileged: every hand face up, for spectators and videos).

### Speed

`env()` runs every step through PettingZoo's three checking wrappers. Their attribute forwarding
(`__getattr__` after a failed lookup, through each wrapper) costs more per step than the game itself,
so `env()` uses subclasses of them with property forwarding of the per-step attributes
(`manni_env.fast_wrappers`, same behaviour). `raw_env()` has the same API without the wrappers (an
illegal action then raises `IllegalActionError`); for bulk self-play see `manni_env.vector.VectorManni`.

### Version History

The `_vN` suffix follows PettingZoo's rule, and the Gymnasium ids (`manni_env/Manni-vN`,
`manni_env/ManniSelfPlay-vN`) share it: it is bumped whenever a change makes observations,
rewards or the rules of play mean something else, so results and checkpoints of different
versions are never compared by mistake. Speed-ups, new options with the old default and new
variants do not bump it. An observation layout that is an option beside the old one, not its
successor, is a PettingZoo twin and, in Gymnasium, the `layout` option of the same id (Gymnasium
calls every lower version of a name out of date).

* v0: Initial version (manni-env 0.1.0); unchanged in manni-env 0.2.0 (same observation layout,
  rewards and rules).
  Unreleased: the default `episode` is `"deal"` (it was `"game"`), the default of every adapter;
  `episode="game"` gives the old episodes. Observations, step rewards and rules are unchanged.
* v1: Unreleased. Observation layout v1, the v0 vector followed by the trick-play segments
  (`trick_position`, `trick_winning_card`, `trick_winning_seat`, `led`, `won`, `unseen_above`;
  830 floats with `history="summary"`). The first 616 (v0's size; with `history="full"` v0's full
  size) are exactly the v0 observation, so v0 checkpoints still load and play on v1 envs. Rewards
  and rules are unchanged; `manni_v0` and `manni/manni-v0` keep layout v0. In Gymnasium,
  `layout="v1"` on the `-v0` ids (there are no Gymnasium `-v1` ids: v0 is not out of date).

"""

from __future__ import annotations

import difflib
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from manni_env import fast_wrappers as wrappers
from manni_env.actions import NUM_ACTIONS
from manni_env.cards import card_to_str, mask_of
from manni_env.engine import Deal, GameState, IllegalActionError, Phase
from manni_env.episodes import (DEFAULT_EPISODE, DEFAULT_REWARD, TABLE_REWARDS, check_episode, check_reward, engine_rewards,
                       episode_end, outcome_rewards)
from manni_env.observation import ObservationEncoder, StateEncoder, check_layout
from manni_env.rules import ExchangeScheme, make_rules
from manni_env.text import PHASE_NAMES, contract_text, hand_text
from manni_env.view import SeatView

AGENTS = ("player_0", "player_1", "player_2")
_SEAT = {agent: seat for seat, agent in enumerate(AGENTS)}

__all__ = ["AGENTS", "IllegalActionError", "env", "outcome_rewards", "raw_env"]


def env(**kwargs) -> AECEnv:
    """The environment wrapped like PettingZoo's classic games (illegal move → -1 and game over).

    The wrappers are PettingZoo's, subclassed in :mod:`manni_env.fast_wrappers` only to forward the
    per-step attributes cheaply."""
    wrapped = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    wrapped = wrappers.OrderEnforcingWrapper(wrapped)
    return wrapped



class raw_env(AECEnv, EzPickle):
    """Manni as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "manni_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(
        self,
        variant: str = "hornafjardar",
        history: str = "summary",
        episode: str = DEFAULT_EPISODE,
        reward: str = DEFAULT_REWARD,
        render_mode: str | None = None,
        render_seat: int | str | None = None,
        layout: str = "v0",
        **rule_options: Any,
    ):
        EzPickle.__init__(self, variant, history, episode, reward, render_mode, render_seat, layout=layout,
                          **rule_options)
        super().__init__()
        check_layout(layout)
        self.metadata = {**type(self).metadata, "name": f"manni_{layout}"}  # the layout is the env's version
        self.rules = make_rules(variant, **rule_options)
        check_episode(episode)
        check_reward(reward, TABLE_REWARDS, episode)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {', '.join(self.metadata['render_modes'])}; "
                             f"got {render_mode!r}")
        if render_seat not in (None, 0, 1, 2, "all"):
            raise ValueError(f"render_seat must be None (the agent on turn), 0, 1, 2 or 'all'; got {render_seat!r}")
        self.render_seat, self._window = render_seat, None
        self.history, self.episode, self.reward_mode, self.render_mode = history, episode, reward, render_mode
        self.layout = layout
        self.encoder = ObservationEncoder(self.rules, history, layout)
        self.state_encoder = StateEncoder(self.rules, history)

        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
            })
            for agent in AGENTS
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self.state_space = spaces.Box(self.state_encoder.low, self.state_encoder.high, dtype=np.float32)
        self._seeds = np.random.default_rng()  # seeds each new game; reseeded by reset(seed=...)
        self.game: GameState | None = None  # privileged: the full game state, for tools only
        self._deal_over = False  # the last step ended a deal
        self._over = False  # the episode is over

    # ------------------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode. ``seed`` reseeds the env's generator, so the same seed gives the same
        game; ``options={"deals": [Deal, ...]}`` plays these explicit deals first (tests, replays)."""
        deals = self._deals_option(options)
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        game = self.game
        if not (self.episode == "deal" and seed is None and deals is None and game is not None
                and self._deal_over and not game.finished):
            game = self.game = GameState(self.rules, seed=int(self._seeds.integers(2**63)), deals=deals)
        self._deal_over = self._over = False
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[game.to_move]

    @staticmethod
    def _deals_option(options: dict | None) -> list[Deal] | None:
        if not options:
            return None
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict such as {{'deals': [...]}}, got {type(options).__name__}")
        # other keys are ignored, as Gymnasium envs do (PettingZoo's api_test passes one); a key
        # that looks like a misspelt 'deals' is reported rather than silently dropped
        misspelt = sorted(k for k in options if k != "deals" and difflib.get_close_matches(str(k).lower(), ["deals"]))
        if misspelt:
            warnings.warn(f"manni_v0 reset ignores unknown options {misspelt}; it understands 'deals'", stacklevel=3)
        deals = options.get("deals")
        if deals is not None and not all(isinstance(d, Deal) for d in deals):
            raise ValueError("options['deals'] must be a list of manni_env.engine.Deal")
        return None if deals is None else list(deals)

    def step(self, action: int) -> None:
        if self.game is None:
            raise ValueError("call reset() before step()")
        if not self.agents:
            raise ValueError("the episode is over and every agent has left: call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        deals_before = len(game.rounds)
        game.apply(action)  # raises IllegalActionError, changing nothing, when illegal
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        terminated = truncated = False
        if len(game.rounds) > deals_before:  # rewards are paid and episodes end only when a deal ends
            self._deal_over = True
            self.rewards = dict(zip(AGENTS, engine_rewards(self.reward_mode, game, True)))
            self._accumulate_rewards()  # at the other steps the rewards are all 0: nothing to add
            terminated, truncated = episode_end(self.episode, True, game.finished, game.truncated)
        if terminated or truncated:
            self._over = True
            ends = self.truncations if truncated else self.terminations
            for a in AGENTS:
                ends[a] = True
        else:
            self.agent_selection = AGENTS[game.to_move]
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------------------ observations
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.game is None:
            raise ValueError("call reset() before observe()")
        view = SeatView.of(self.game, _SEAT[agent])
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            mask = self.encoder.action_mask(view)
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": self.encoder.encode(view), "action_mask": mask}

    def state(self) -> np.ndarray:
        """Privileged full state (every hidden card): for centralized critics and tools only."""
        return self.state_encoder.encode(self.game)

    # ------------------------------------------------------------------------------ rendering
    def render(self) -> str | np.ndarray | None:
        """``ansi``: a table as a string; ``rgb_array``: a picture of the table; ``human``: the picture
        in a window (the table printed where none can open). See Rendering in the module docstring."""
        if self.render_mode is None:
            warnings.warn("You are calling render method without specifying any render mode.", stacklevel=2)
            return None
        if self.render_mode == "ansi":
            return self._table()
        from manni_env.render import HumanWindow, render_rgb

        seat = _SEAT[self.agent_selection] if self.render_seat in (None, "all") else self.render_seat
        hands = [mask_of(self.game.hand(s)) for s in range(3)] if self.render_seat == "all" else None
        view = self.game.view(seat)
        if self.render_mode == "rgb_array":
            return render_rgb(view, hands)
        self._window = self._window or HumanWindow(self.metadata["render_fps"])
        self._window.show(lambda: render_rgb(view, hands), self._table())
        return None

    def _table(self) -> str:
        g = self.game
        v = g.view(0 if self._over else g.to_move)  # public facts, plus the hand of the agent on turn
        on_turn = "-" if self._over else AGENTS[g.to_move]
        lines = [f"Manni ({g.rules.variant}) | deal {g.deal_index + 1} | dealer {AGENTS[g.dealer]} | "
                 f"phase: {PHASE_NAMES[v.phase]} | on turn: {on_turn}"]
        contract = contract_text(v.contract, AGENTS.__getitem__)
        if v.cut_card is not None:
            contract += f" (cut {card_to_str(v.cut_card)}, dealt to the dealer)"
        lines.append(f"Contract: {contract}")
        if v.swapper is not None:
            lines.append(f"Manni: {AGENTS[v.swapper]} swapped hands with it")
        if v.taker is not None:
            lines.append(f"Manni: taken by {AGENTS[v.taker]}")
        if on_turn != "-":
            lines.append(f"Hand of {on_turn}: {hand_text(v.hand)}")
            if v.pending:
                lines.append(f"Discards chosen by {on_turn}: {' '.join(card_to_str(c) for c in v.pending)}")
        if v.phase == Phase.PLAY:
            trick = ", ".join(f"{AGENTS[(v.leader + i) % 3]} {card_to_str(c)}" for i, c in enumerate(v.trick))
            lines.append(f"Trick {sum(v.tricks_won) + 1} (led by {AGENTS[v.leader]}): {trick or '-'}")
        header = ["", *AGENTS]
        rows = [["tricks won", *v.tricks_won], ["plus", *g.plus], ["minus", *g.minus], ["total", *g.totals]]
        if g.rules.spec.exchange == ExchangeScheme.EXCHANGE:
            rows.insert(0, ["exchanged", *("-" if c < 0 else c for c in v.exchange_counts)])
        width = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
        for row in [header, *rows]:
            lines.append("  ".join(str(cell).rjust(w) if i else str(cell).ljust(w)
                                   for i, (cell, w) in enumerate(zip(row, width))))
        if g.rounds:
            last = g.rounds[-1]
            lines.append(f"Deal {last.index + 1} ({last.contract.describe()}): tricks {_seats(last.tricks_won)}, "
                         f"scores {_seats(last.points, signed=True)}")
        if g.finished:
            end = "truncated at the deal cap" if g.truncated else "game over"
            lines.append(f"{end}; winner(s): {', '.join(AGENTS[s] for s in g.winners)}")
        return "\n".join(lines)

    def close(self) -> None:
        if self._window is not None:
            self._window.close()


def _seats(values, signed: bool = False) -> str:
    return ", ".join(f"{AGENTS[s]} {v:+d}" if signed else f"{AGENTS[s]} {v}" for s, v in enumerate(values))

