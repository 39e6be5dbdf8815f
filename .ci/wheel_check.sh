#!/usr/bin/env bash
# CI: the released artefacts work for a new user. Build the sdist and the wheel (the wheel from the
# sdist, so the sdist is complete), check what they hold, install the wheel (not editable) into a
# fresh venv and, from a folder that holds the user's own agents/__init__.py and train.py (first on
# the path), run the commands of the README: manni --version, an arena, gym.make, the trainer's
# --help, manni serve answering its page on loopback. Import names: docs/import-names.md.
#
#   bash .ci/wheel_check.sh        # PYTHON (default .venv/bin/python) needs `build`; TORCH as in the Makefile
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-.venv/bin/python}
TORCH=${TORCH:-torch==2.13.0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== build sdist and wheel"
"$PYTHON" -m build --sdist --wheel --outdir "$TMP/dist" . >"$TMP/build.log" 2>&1 || { tail -40 "$TMP/build.log"; exit 1; }
SDIST=$(ls "$TMP"/dist/*.tar.gz)
WHEEL=$(ls "$TMP"/dist/*.whl)
echo "$(basename "$SDIST") $(basename "$WHEEL")"

echo "== what they hold"
"$PYTHON" - "$SDIST" "$WHEEL" <<'EOF'
import subprocess, sys, tarfile, zipfile
from pathlib import PurePosixPath

sdist, wheel = sys.argv[1:]
FOLDERS = {"manni_env": "manni_env", "manni_agents": "agents", "manni_train": "train"}  # import name: folder
in_wheel = set(zipfile.ZipFile(wheel).namelist())
tops = {PurePosixPath(n).parts[0] for n in in_wheel if not PurePosixPath(n).parts[0].endswith(".dist-info")}
assert tops == set(FOLDERS), f"the wheel's top-level names must be {sorted(FOLDERS)}, not {sorted(tops)}"
tracked = subprocess.run(["git", "ls-files", *FOLDERS.values()], capture_output=True, text=True, check=True).stdout.split()
to_name = {folder: name for name, folder in FOLDERS.items()}
wanted = {to_name[f.split("/")[0]] + f[f.index("/"):] for f in tracked if not f.endswith("README.md")}
missing = sorted(wanted - in_wheel)
assert not missing, f"the wheel lacks {len(missing)} tracked files (a package missing in pyproject.toml?): {missing[:10]}"
root = PurePosixPath(tarfile.open(sdist).getnames()[0]).parts[0]
in_sdist = {n.removeprefix(root + "/") for n in tarfile.open(sdist).getnames()}
tracked_docs = subprocess.run(["git", "ls-files", "docs"], capture_output=True, text=True, check=True).stdout.split()
lacking = sorted({"mkdocs.yml", "CHANGELOG.md", "README.md", "LICENSE", *tracked_docs} - in_sdist)
assert not lacking, f"the sdist lacks {lacking}"
print(f"wheel: {sorted(tops)}, all {len(wanted)} tracked package files; sdist: docs/ ({len(tracked_docs)} files), mkdocs.yml")
EOF

echo "== fresh venv, the wheel installed (not editable)"
python3 -m venv "$TMP/venv"
VPY=$TMP/venv/bin/python
"$VPY" -m pip install -q --upgrade pip
"$VPY" -m pip install -q "$TORCH" || "$VPY" -m pip install -q "torch>=2.3"  # before the extras: no CUDA build
"$VPY" -m pip install -q "$WHEEL[train,web]"

echo "== from a folder with the user's own agents/ and train.py"
USER_DIR=$TMP/project
mkdir -p "$USER_DIR/agents"
cat >"$USER_DIR/agents/__init__.py" <<'EOF'
raise RuntimeError("the user's own agents package was imported")
EOF
cp "$USER_DIR/agents/__init__.py" "$USER_DIR/train.py"
sed -i 's/agents package/train.py/' "$USER_DIR/train.py"
cd "$USER_DIR"
export PYTHONPATH=$USER_DIR  # the user's folder first on the path, for the console script too
export PATH=$TMP/venv/bin:$PATH
VERSION=$(basename "$WHEEL" | cut -d- -f2)
test "$(manni --version)" = "manni $VERSION" || { echo "manni --version: $(manni --version), wheel $VERSION"; exit 1; }
echo "manni --version: manni $VERSION"
manni arena ppo rule_based random --deals 5 --seed 1 --no-progress
python - <<'EOF'
import gymnasium as gym
import manni_env  # noqa: F401  (gym.make imports it as well)

env = gym.make("manni_env/Manni-v0")
obs, info = env.reset(seed=0)
assert obs.shape == (616,) and info["action_mask"].any()
print("gym.make('manni_env/Manni-v0'): ok", obs.shape)
EOF
manni train --help >"$TMP/train_help.txt"  # the fast trainer's options (needs the train extra)
head -3 "$TMP/train_help.txt"
python -m manni_train.ppo_vector --help >/dev/null
echo "python -m manni_train.ppo_vector --help: ok"
python - <<'EOF'
import re, signal, subprocess, sys, urllib.request

serve = subprocess.Popen(["manni", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
try:
    line = serve.stdout.readline()
    url = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert url, f"manni serve printed no loopback address: {line!r}"
    with urllib.request.urlopen(url.group(0), timeout=30) as page:
        html = page.read().decode()
    assert page.status == 200 and "<html" in html.lower(), html[:200]
    print(f"manni serve answered {url.group(0)} ({len(html)} bytes of HTML)")
finally:
    serve.send_signal(signal.SIGINT)
    code = serve.wait(timeout=30)
assert code == 0, f"manni serve exited with {code}"
EOF
cd "$ROOT"
echo "wheel check: ok"
