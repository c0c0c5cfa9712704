#!/usr/bin/env bash
# Create .venv (if needed) and install recallmem with its test tools. Idempotent, and
# quick when nothing changed: the install is skipped while a stamp in .venv matches a
# hash of what it depends on (pyproject.toml, this script, the checkout's path).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.recallmem-setup
wanted="$(cat pyproject.toml scripts/setup.sh <(pwd) | sha256sum | cut -d' ' -f1)"
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
  && .venv/bin/python -c 'import recallmem' 2>/dev/null; then
  exit 0
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
echo "$wanted" >"$stamp"
