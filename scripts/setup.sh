#!/usr/bin/env bash
# Create .venv (if needed) and install recallmem with its test tools. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
