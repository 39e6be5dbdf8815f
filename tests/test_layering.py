"""The package layering: ``manni_env`` < ``agents`` < ``train``, the rooms of ``agents``, and no
import cycles.

A lower layer never imports a higher one, not even inside a function (the source is read with
:mod:`ast`, so lazy imports count), and every module of ``manni_env`` imports with ``agents`` and
``train`` made unimportable. Inside ``agents`` every module sits in a room (:data:`ROOMS`) and
imports only from its own room and the rooms listed for it: the players know nothing of how they
are evaluated, played by people or driven from the command line. Among all modules of the three
packages, no two import each other directly or through others (lazy imports included: they only
hide a cycle until the call).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: import name → the repository folder it is installed from (pyproject.toml), lowest layer first;
#: each layer may import only the ones before it
FOLDERS = {"manni_env": "manni_env", "manni_agents": "agents", "manni_train": "train"}
LAYERS = tuple(FOLDERS)


def module_name(path: Path) -> str:
    folder, *parts = path.relative_to(ROOT).with_suffix("").parts
    parts = [next(name for name, f in FOLDERS.items() if f == folder), *parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    return {module_name(p): p for folder in FOLDERS.values() for p in sorted((ROOT / folder).rglob("*.py"))}


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, lazy ones included (not those under
    ``if TYPE_CHECKING``); ``from package import submodule`` counts as importing the submodule,
    ``importlib.import_module("x")`` as importing ``x``."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub if sub in known else base, node.lineno))
        elif (isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


def test_lower_layers_never_import_higher_ones():
    known = set(modules())
    offences = []
    for name, path in modules().items():
        rank = LAYERS.index(name.split(".")[0])
        for target, line in imports(name, path, known):
            top = target.split(".")[0]
            if top in LAYERS and LAYERS.index(top) > rank:
                offences.append(f"{path.relative_to(ROOT)}:{line}: imports {target}")
    assert not offences, "a lower layer imports a higher one:\n" + "\n".join(offences)


#: room → the rooms its modules may import besides their own; the players are ``manni_agents``'s own
#: modules and the ``bot:`` player (``bots`` but its checker, which plays games to check a bot)
ROOMS: dict[str, set[str]] = {
    "env": set(),
    "players": {"env"},
    "evaluation": {"env", "players"},
    "play": {"env", "players", "evaluation"},
    "bot check": {"env", "players", "evaluation"},
    "commands": {"env", "players", "evaluation", "play", "bot check"},
    "train": {"env", "players", "evaluation"},
}
#: module name prefix → its room, the first that matches wins
ROOM_OF = (("manni_env", "env"), ("manni_train", "train"), ("manni_agents.evaluation", "evaluation"),
           ("manni_agents.play", "play"), ("manni_agents.commands", "commands"),
           ("manni_agents.bots.check", "bot check"), ("manni_agents.bots", "players"))


def room(name: str) -> str | None:
    """The room of module ``name``: by :data:`ROOM_OF`, else ``players`` for a module directly in
    ``manni_agents``; ``None`` for a module in no room (a new subpackage must be given one)."""
    for prefix, where in ROOM_OF:
        if name == prefix or name.startswith(prefix + "."):
            return where
    return "players" if name.count(".") <= 1 and name.split(".")[0] == "manni_agents" else None


def forbidden(edges: list[tuple[str, str, str]]) -> list[str]:
    """The ``(where, module, imported module)`` edges that cross rooms against :data:`ROOMS`."""
    offences = []
    for where, name, target in edges:
        mine, theirs = room(name), room(target)
        if theirs is not None and theirs != mine and theirs not in ROOMS[mine]:
            offences.append(f"{where}: {name} ({mine}) imports {target} ({theirs})")
    return offences


def test_every_module_has_a_room():
    assert not [name for name in modules() if room(name) is None]


def test_rooms_import_only_the_rooms_below_them():
    known = modules()
    edges = [(f"{path.relative_to(ROOT)}:{line}", name, target)
             for name, path in known.items() for target, line in imports(name, path, set(known))
             if target.split(".")[0] in LAYERS]
    assert {room(name) for name in known} == set(ROOMS)
    offences = forbidden(edges)
    assert not offences, "an import against the rooms' direction:\n" + "\n".join(offences)


def test_the_room_check_finds_forbidden_imports():
    edges = [("a", "manni_agents.pimc", "manni_agents.evaluation.arena"),
             ("b", "manni_agents.evaluation.league", "manni_agents.commands.arena"),
             ("c", "manni_agents.bots.agent", "manni_agents.bots.check"),
             ("d", "manni_agents.play.web.app", "manni_train.networks"),
             ("e", "manni_agents.bots.check", "manni_agents.evaluation.match"),
             ("f", "manni_train.distill", "manni_agents.registry")]
    assert [line.split(":")[0] for line in forbidden(edges)] == ["a", "b", "c", "d"]
    assert room("manni_agents.newroom.x") is None and room("manni_agents") == "players"


def test_every_env_module_imports_with_agents_and_train_blocked():
    """Import every module of manni_env in a fresh interpreter where the layers above it cannot load."""
    names = sorted(n for n in modules() if n.split(".")[0] == "manni_env")
    script = textwrap.dedent(f"""
        import importlib, importlib.abc, sys

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, fullname, path=None, target=None):
                if fullname.split(".")[0] in {LAYERS[1:]!r}:
                    raise ImportError(f"layering: {{fullname}} imported while importing manni_env")

        sys.meta_path.insert(0, Block())
        for name in {names!r}:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as err:  # an optional extra (ray) that is not installed
                if err.name.split(".")[0] in {LAYERS!r}:
                    raise
                print("skipped", name, "needs", err.name)
        print("imported", len({names!r}))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"imported {len(names)}" in done.stdout


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph = {name: set() for name in known}
    for name, path in known.items():
        for target, _ in imports(name, path, set(known)):
            if target in known and target != name:
                graph[name].add(target)
    return graph


def test_no_import_cycles():
    graph = import_graph()
    assert {"manni_env.engine", "manni_env.view", "manni_agents.pimc", "manni_agents.registry"} <= set(graph)
    assert not cycles(graph), f"import cycles: {cycles(graph)}"


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def private_uses(name: str, path: Path, known: set[str]) -> list[str]:
    """``line: what`` for each private name (``_x``, not a dunder) of another module of the three
    packages that module ``name`` imports (``from m import _x``) or reads (``module._x`` of an
    imported module), lazy imports included."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    private = lambda attr: attr.startswith("_") and not attr.startswith("__")  # noqa: E731
    found, module_names = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_names.update({alias.asname or alias.name: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    module_names[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif base in known and base != name and private(alias.name):
                    found.append(f"{node.lineno}: {alias.name} from {base}")
    for node in ast.walk(tree):  # a module under another name: ``k = module``, ``module.copy() if x else module``
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            for value in values:
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                    value = value.func.value
                if isinstance(value, ast.Name) and value.id in module_names:
                    module_names[node.targets[0].id] = module_names[value.id]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and private(node.attr)
                and module_names.get(node.value.id) in known and module_names[node.value.id] != name):
            found.append(f"{node.lineno}: {module_names[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    """What a module shares is public: no module imports or reads another's ``_name`` (a helper
    used elsewhere gets a public name and a docstring)."""
    known = modules()
    offences = [f"{path.relative_to(ROOT)}:{use}" for name, path in known.items()
                for use in private_uses(name, path, set(known))]
    assert not offences, "private names used across modules:\n" + "\n".join(offences)


def test_the_private_name_finder_finds_private_names(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from manni_env.observation import _REL, PLAY_SLOT\nfrom manni_env import vector_kernels\n"
                      "k = vector_kernels.plain_kernels() if x else vector_kernels\nf = k._rel\n"
                      "g = vector_kernels.__name__\n")
    assert private_uses("manni_agents.m", source, set(modules())) == [
        "1: _REL from manni_env.observation", "4: manni_env.vector_kernels._rel"]
