#!/usr/bin/env bash
# Set up, then run every test: unit, integration (real Chroma, embedded and server),
# doctests of the public surface, the browser test and the notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# glibc hands freed small heap blocks out again unfilled (its per-thread cache), so a
# purged fact's text could reach Chroma's vector index files: off (store/chroma/workarounds/heap_perturb.py).
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.tcache_count=0"

# The inspector's browser test drives Debian's chromium (playwright downloads nothing),
# with a CJK font so that its screenshots show Chinese text rather than boxes.
browser_packages=()
command -v chromium >/dev/null 2>&1 || browser_packages+=(chromium)
[ -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ] || browser_packages+=(fonts-wqy-zenhei)
if [ "${#browser_packages[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test.sh: installing ${browser_packages[*]} for the browser test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${browser_packages[@]}" >/dev/null
fi

# The store contract tests also run against a Chroma server, started here on loopback
# for the duration of the run (unless RECALLMEM_TEST_CHROMA_URL names one already).
chroma_pid=""
chroma_dir=""
stop_chroma() {
  if [ -n "$chroma_pid" ]; then
    kill "$chroma_pid" 2>/dev/null || true
    wait "$chroma_pid" 2>/dev/null || true
  fi
  if [ -n "$chroma_dir" ]; then rm -rf "$chroma_dir"; fi
}
trap stop_chroma EXIT

if [ -z "${RECALLMEM_TEST_CHROMA_URL:-}" ]; then
  chroma_dir="$(mktemp -d)"
  port="$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  ANONYMIZED_TELEMETRY=False .venv/bin/chroma run --host 127.0.0.1 --port "$port" \
    --path "$chroma_dir/db" >"$chroma_dir/chroma.log" 2>&1 &
  chroma_pid=$!
  export RECALLMEM_TEST_CHROMA_URL="http://127.0.0.1:$port"
  if ! .venv/bin/python - "$RECALLMEM_TEST_CHROMA_URL" <<'EOF'
import sys
import time
import urllib.request

url = sys.argv[1] + "/api/v2/heartbeat"
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=2):
            sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
EOF
  then
    echo "test.sh: the Chroma server did not start; its log:" >&2
    cat "$chroma_dir/chroma.log" >&2
    exit 1
  fi
fi

.venv/bin/pytest "$@"
