#!/usr/bin/env bash
# Set up, then run the memory service (HTTP API and inspector) on the embedded store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# glibc hands freed small heap blocks out again unfilled (its per-thread cache), so a
# purged fact's text could reach Chroma's vector index files: off (store/chroma/workarounds/heap_perturb.py).
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.tcache_count=0"
exec .venv/bin/recallmem serve "$@"
