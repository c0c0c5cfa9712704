#!/usr/bin/env bash
# Set up, then run every test: unit, integration (real Chroma, embedded and server),
# doctests of the public surface, the browser test and the notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pytest "$@"
