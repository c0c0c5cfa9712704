"""Freed heap blocks come back filled, so no freed text reaches a vector index file.

``store/chroma/workarounds/heap_perturb.py`` has glibc fill blocks when they are handed out and taken back
(``M_PERTURB``); small blocks escape that through glibc's per-thread cache unless the
process started with ``GLIBC_TUNABLES`` holding ``THREAD_CACHE_OFF``, which the README's
commands set. These run the C allocator for real, in a child process of each kind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from recallmem.store.chroma.workarounds.heap_perturb import THREAD_CACHE_OFF, wipe_heap_blocks

ROOT = Path(__file__).resolve().parents[3]
FREED_TEXT_COMES_BACK = """
import ctypes
from recallmem.store.chroma.workarounds.heap_perturb import wipe_heap_blocks
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
assert wipe_heap_blocks()
block = libc.malloc(400)
ctypes.memmove(block, b"Quorvath-77 migration " * 9, 198)
libc.free(block)
print(b"Quorvath" in ctypes.string_at(libc.malloc(400), 198))
"""

pytestmark = pytest.mark.skipif(not wipe_heap_blocks(), reason="needs glibc's mallopt")


def freed_text_comes_back(tunables: str | None) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    run = subprocess.run([sys.executable, "-c", FREED_TEXT_COMES_BACK], env=env,
                         capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return run.stdout.strip() == "True"


def test_a_freed_small_block_keeps_its_text_unless_the_thread_cache_is_off() -> None:
    assert freed_text_comes_back(None)  # why the setting is needed
    assert not freed_text_comes_back(THREAD_CACHE_OFF)


@pytest.mark.parametrize("script", ["scripts/serve.sh", "scripts/test.sh"])
def test_the_readme_commands_start_with_the_thread_cache_off(script: str) -> None:
    text = (ROOT / script).read_text(encoding="utf-8")
    assert f'GLIBC_TUNABLES="${{GLIBC_TUNABLES:+$GLIBC_TUNABLES:}}{THREAD_CACHE_OFF}"' in text
