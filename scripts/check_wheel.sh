#!/usr/bin/env bash
# The wheel installs alone: build it, install it in a fresh venv far from the checkout,
# then run the CLI, the README's runnable snippets (the Quickstart first) and
# `recallmem serve` from a directory holding a folder named `recallmem` (a clone beside
# it must not shadow the installed package). Dependencies come from PyPI (pip's cache).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh  # .venv, with the build tools
checkout="$(pwd)"
work="$(mktemp -d)"
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

.venv/bin/python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
if grep -E "SetuptoolsDeprecationWarning|^WARNING|^!!" "$work/build.log" >&2; then
  echo "check_wheel: the build printed setuptools warnings (above)" >&2
  exit 1
fi
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/recallmem-*.whl

run="$work/run"
mkdir -p "$run/recallmem"  # an empty folder of the package's name, as a clone would be
cp README.md "$run/README.md"
cd "$run"
export RECALLMEM_HOME="$run/home"
bin="$work/venv/bin"

"$bin/python" - <<'EOF'
import recallmem, sys
from importlib.resources import files

where = recallmem.__file__ or ""
assert "/venv/" in where, f"recallmem imported from {where!r}, not the installed wheel"
assert files("recallmem._prompts").joinpath("tools.yaml").is_file()
assert files("recallmem.server.static").joinpath("index.html").is_file()
print("check_wheel: recallmem", where)
EOF

"$bin/recallmem" remember "Writes TypeScript at work" --user ada --category knowledge >/dev/null
"$bin/recallmem" recall "which language do they code in?" --user ada | grep -q TypeScript
echo "check_wheel: the CLI remembers and recalls"

# The README's runnable snippets, in order, in one namespace (what its test does).
"$bin/python" - <<'EOF'
import re
from pathlib import Path

text = Path("README.md").read_text(encoding="utf-8")
block = re.compile(r"(<!-- readme-test: needs [A-Z_]+ -->\n)?```python\n(.*?)```", re.S)
namespace = {"__name__": "readme"}
ran = 0
for match in block.finditer(text):
    if match[1] is None:
        exec(compile(match[2], "README.md", "exec"), namespace)
        ran += 1
assert ran >= 3, ran
print(f"check_wheel: {ran} README snippets ran")
EOF

port="$("$bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
RECALLMEM_HOME="$run/serve-home" "$bin/recallmem" serve --port "$port" >"$work/serve.log" 2>&1 &
serve_pid=$!
"$bin/python" - "$port" <<'EOF' || { cat "$work/serve.log" >&2; exit 1; }
import json, sys, time, urllib.request

base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 90
while True:
    try:
        with urllib.request.urlopen(base + "/v1/health", timeout=2) as answer:
            assert json.load(answer)["status"] == "ok"
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.3)
for page in ("/", "/static/app.js", "/docs"):
    with urllib.request.urlopen(base + page, timeout=5) as answer:
        assert answer.status == 200, page
print("check_wheel: recallmem serve answers, with the inspector and the API docs")
EOF
cd "$checkout"
echo "check_wheel: ok"
