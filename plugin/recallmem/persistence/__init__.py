"""Persistence: :class:`~recallmem.persistence.repository.FactRepository` keeps the store
and the hot per-user indexes consistent; ``remember_steps`` and ``import_writer`` are its
two bulk write paths."""
