"""A new variant is a new row of the table: every adapter serves a throwaway row without another edit.

A fresh interpreter loads ``manni_env/rules.py`` with rows added to :data:`VARIANT_TABLE` (copies of
existing rows under new names, nothing else changed) and plays each copy through every adapter: the
PettingZoo AEC env, the Gymnasium env, the vector env, the OpenSpiel game, the text renderer, the
web app's variant list and the bot checker. A copy plays the same cards as its original on the same
seeds (only the observation's variant one-hot tells them apart), so each adapter is checked against
the original's results, not only for running.

The rows change nothing already trained: each observation layout names its variants, so with the
copies in the table the four variants' observations are bit for bit as before, and the shipped
agents, the frozen reference agents and a run saved before the rows existed load, play the same
deals, and (the run) resume. The copies, named by no layout, have an all-zero variant one-hot.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from manni_env.observation import LAYOUTS, ObservationEncoder
from manni_env.rules import make_rules

ROOT = Path(__file__).resolve().parent.parent
#: throwaway row name -> the row it copies
COPIES = {"copy_of_hornafjardar": "hornafjardar", "copy_of_basic": "basic", "copy_of_trjamann": "trjamann"}

#: The start of each script run with the copied rows: ``manni_env.rules`` loaded with them added
#: (``sys.argv[1]``: the copies as JSON, ``sys.argv[2]``: rules.py).
PRELUDE = textwrap.dedent('''
    import dataclasses, importlib.abc, importlib.util, json, sys
    from pathlib import Path

    COPIES = json.loads(sys.argv[1])
    RULES = Path(sys.argv[2])

    class Loader(importlib.abc.Loader):
        """manni_env.rules from its source with the copied rows added to the table."""

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            source = RULES.read_text()
            anchor = "\\nVARIANTS = tuple(VARIANT_TABLE)"
            assert source.count(anchor) == 1
            rows = "".join(f"\\nVARIANT_TABLE[{new!r}] = __import__('dataclasses').replace("
                           f"VARIANT_TABLE[{old!r}], name={new!r}, title={new.title()!r})" for new, old in COPIES.items())
            module.__file__ = str(RULES)
            exec(compile(source.replace(anchor, rows + anchor), str(RULES), "exec"), module.__dict__)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname == "manni_env.rules":
                return importlib.util.spec_from_loader(fullname, Loader(), origin=str(RULES))
            return None

    sys.meta_path.insert(0, Finder())

''')

SCRIPT = PRELUDE + textwrap.dedent('''
    BOT = sys.argv[3]

    import gymnasium as gym
    import numpy as np
    import pyspiel
    from fastapi.testclient import TestClient

    import manni_env
    from manni_agents.bots.check import run_checks
    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore
    from manni_env import manni_v0
    from manni_env.engine import GameState
    from manni_env.openspiel_game import load_game
    from manni_env.render import view_text
    from manni_env.rules import VARIANTS, make_rules
    from manni_env.vector import VectorManni, random_legal_actions

    assert VARIANTS[-len(COPIES):] == tuple(COPIES), VARIANTS
    report = {}

    def aec(variant):
        """A random deal of the AEC env: the actions and the rewards."""
        env = manni_v0.env(variant=variant)
        env.reset(seed=3)
        rng, actions, rewards = np.random.default_rng(3), [], {}
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            rewards[agent] = rewards.get(agent, 0.0) + reward
            if terminated or truncated:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
                actions.append(action)
            env.step(action)
        return actions, rewards

    def gymnasium(variant):
        env = gym.make(manni_env.GYM_ID, variant=variant, opponents=["rule_based", "rule_based"])
        obs, info = env.reset(seed=5)
        rng, total, done = np.random.default_rng(5), 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
            total, done = total + reward, terminated or truncated
        return total

    def vector(variant):
        venv = VectorManni(make_rules(variant), num_envs=4)
        obs, mask, to_move = venv.reset(seed=7)
        rng, total = np.random.default_rng(7), np.zeros((4, 3))
        for _ in range(300):
            obs, mask, to_move, rewards, *_ = venv.step(random_legal_actions(mask, rng))
            total += rewards
        return total.tolist()

    def openspiel(variant):
        game = pyspiel.load_game(f"python_manni_{variant}")
        state, rng = game.new_initial_state(), np.random.default_rng(9)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        kind = game.get_type()
        return [state.returns(), kind.utility.name, game.min_utility(), game.max_utility(),
                sorted(game.get_parameters())]

    def render(variant):
        state = GameState(make_rules(variant), seed=11)
        return view_text(state.view(state.to_move)).replace(variant, "VARIANT")

    with TestClient(create_app(GameStore(Path(sys.argv[4]), 4, 600), Lineup())) as client:
        served = {v["id"]: v for v in client.get("/api/variants").json()["variants"]}

    for new, old in COPIES.items():
        report[new] = {"same": {}, "checks": []}
        for name, adapter in (("aec", aec), ("gymnasium", gymnasium), ("vector", vector),
                              ("openspiel", openspiel), ("render", render)):
            report[new]["same"][name] = adapter(new) == adapter(old)
        report[new]["same"]["points"] = make_rules(new).deal_points_range == make_rules(old).deal_points_range
        report[new]["web"] = served.get(new, {}).get("name") == new.title() and all(
            served[new][key] == served[old][key] for key in ("description", "options", "pack", "hand", "contract", "end"))
        report[new]["checks"] = [(c.name, c.ok) for c in run_checks(BOT, 10.0, (new,))]
    print(json.dumps(report))
''')


@pytest.mark.slow
def test_a_copied_row_is_served_by_every_adapter(tmp_path):
    pytest.importorskip("pyspiel")
    pytest.importorskip("fastapi.testclient")
    bot = f"{sys.executable} {ROOT / 'examples/bots/simple_bot.py'}"
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(COPIES), str(ROOT / "manni_env/rules.py"), bot,
                           str(tmp_path / "records")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(report) == set(COPIES)
    for new, result in report.items():
        assert all(result["same"].values()), (new, result["same"])
        assert result["web"], new
        assert result["checks"] and all(ok for _, ok in result["checks"]), (new, result["checks"])


#: Run here and with the copied rows, whose answers must be the same: digests of the observations
#: of seeded positions of the four variants in every layout and history (engine and vector env), and
#: the records of one seeded deal of each shipped agent, each frozen reference agent and a saved run's
#: agent against rule_based and random.
COMMON = textwrap.dedent('''
    import hashlib

    import numpy as np

    from manni_agents.evaluation.match import play_game
    from manni_agents.registry import make_agent
    from manni_env.engine import GameState
    from manni_env.observation import HISTORIES, LAYOUTS, ObservationEncoder
    from manni_env.records import game_record
    from manni_env.rules import make_rules
    from manni_env.vector import VectorManni, random_legal_actions

    ORIGINALS = ("hornafjardar", "basic", "trjamann", "laugarvatn")

    def observations():
        digests = {}
        for variant in ORIGINALS:
            rules = make_rules(variant)
            for layout in LAYOUTS:
                for history in HISTORIES:
                    encoder, digest = ObservationEncoder(rules, history, layout), hashlib.sha256()
                    state, rng = GameState(rules, seed=11), np.random.default_rng(11)
                    for _ in range(80):
                        digest.update(encoder.encode(state.view(state.to_move)).tobytes())
                        if state.finished:
                            break
                        state.apply(int(rng.choice(state.legal_actions())))
                    venv = VectorManni(rules, num_envs=4, history=history, layout=layout)
                    obs, mask, _ = venv.reset(seed=7)
                    for _ in range(40):
                        digest.update(obs.tobytes())
                        obs, mask, *_ = venv.step(random_legal_actions(mask, rng))
                    digests[f"{variant} {layout} {history}"] = digest.hexdigest()
        return digests

    def games(root, run):
        specs = {**{f"shipped {v}": ("ppo", v) for v in ORIGINALS},
                 **{f"reference {v}": (f"ppo:{root}/benchmarks/reference_agents/{v}_ppo", v) for v in ORIGINALS},
                 "saved run": (f"ppo:{run}/agent", "hornafjardar")}
        records = {}
        for name, (spec, variant) in specs.items():
            rules = make_rules(variant)
            state = GameState(rules, seed=5)
            agents = [make_agent(spec, rules), make_agent("rule_based"), make_agent("random")]
            play_game(state, agents, [np.random.default_rng([5, k]) for k in range(3)], max_deals=1)
            records[name] = game_record(state)
        return records
''')

AGENTS_SCRIPT = PRELUDE + COMMON + textwrap.dedent('''
    from manni_env.rules import VARIANTS
    from manni_train import ppo_vector, resume

    from manni_env.observation import describe

    assert VARIANTS[-len(COPIES):] == tuple(COPIES), VARIANTS
    root, run = Path(sys.argv[3]), Path(sys.argv[4])
    report = {"observations": observations(), "games": games(root, run), "unnamed": []}
    for new in COPIES:  # no layout names a copy: its variant one-hot is all zeros, in both encoders
        rules = make_rules(new)
        for layout in LAYOUTS:
            encoder = ObservationEncoder(rules, layout=layout)
            segment = next(s for s in encoder.segments if s.name == "variant")
            obs = VectorManni(rules, num_envs=2, layout=layout).reset(seed=3)[0]
            state = GameState(rules, seed=3)
            one = encoder.encode(state.view(state.to_move))
            report["unnamed"].append([encoder.size, bool(obs[:, segment.offset : segment.offset + segment.size].any()),
                                      bool(one[segment.offset : segment.offset + segment.size].any()),
                                      describe(one, rules, layout=layout).splitlines()[0]])
    args = resume.resumed(ppo_vector.Args(resume=str(run)))  # the saved run goes on, its tensors loaded
    steps = resume.read(run)[0].steps
    args.total_steps = steps + 1
    report["resumed"] = [steps, ppo_vector.train(args).steps]
    print(json.dumps(report))
''')


@pytest.mark.slow
def test_a_copied_row_changes_no_observation_and_refuses_no_agent(tmp_path):
    """The observation's variant one-hot is frozen with each layout: with the copied rows in the
    table, every layout's observations of the four variants are bit for bit as before, the shipped
    agents, the frozen reference agents and the agent of a run saved before the rows existed load and
    play the same deals, and the run resumes (its networks and optimizer loaded) and trains on."""
    pytest.importorskip("torch")
    from helpers.interrupts import interrupt_when_written, manni

    run = tmp_path / "saved"
    argv = manni("train", "--runs-dir", str(tmp_path), "--run-name", "saved", "--total-steps", "100000000",
                 "--num-envs", "16", "--num-steps", "24", "--hidden", "32", "--bc-samples", "400", "--bc-epochs", "1",
                 "--eval-every", "300", "--eval-deals", "4", "--final-eval-deals", "0", "--final-pimc-deals", "0",
                 "--torch-threads", "1", "--no-overlap", "--no-progress-bar")
    assert interrupt_when_written(argv, run / "history.json").code == 130  # Ctrl-C: a run saved mid-training
    here: dict = {}
    exec(COMMON, here)
    expected = {"observations": here["observations"](), "games": here["games"](ROOT, run)}
    done = subprocess.run([sys.executable, "-c", AGENTS_SCRIPT, json.dumps(COPIES), str(ROOT / "manni_env/rules.py"),
                           str(ROOT), str(run)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["observations"] == expected["observations"]
    assert report["games"] == expected["games"]
    steps, trained = report["resumed"]
    assert trained > steps > 0
    sizes = {layout: ObservationEncoder(make_rules(old), layout=layout).size for old in COPIES.values()
             for layout in LAYOUTS}
    assert report["unnamed"] == [[sizes[layout], False, False, f"variant: - (not named by layout {layout})"]
                                 for _ in COPIES for layout in LAYOUTS]
