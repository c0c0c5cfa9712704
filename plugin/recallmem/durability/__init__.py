"""Durability any backend needs: files written whole, import intents, what a purge
erases besides records, and the scrub a crash left owed."""
