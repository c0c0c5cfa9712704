#!/usr/bin/env bash
# Set up, then run the memory service (HTTP API and inspector) on the embedded store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/recallmem serve "$@"
