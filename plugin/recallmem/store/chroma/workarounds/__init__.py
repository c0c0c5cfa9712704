"""Workarounds of Chroma 1.5.9 internals, one per module: each names the upstream
behaviour it works around, and tests/integration/chroma_upstream/ fails the day that
behaviour changes, so an upgrade says which of them to delete."""
