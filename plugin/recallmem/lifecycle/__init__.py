"""A memory's metabolism: facts that age, expire, merge and are copied between scopes.

``decay`` and ``expiry`` are pure rules over a fact and a time, below retrieval (the
hot index ranks and filters with them); ``plan``, ``journal`` and ``maintenance`` sit
beside extraction and reach the facts through the repository, as do ``consolidation``
and ``copying``. This package imports nothing itself, so the index can use the rules
without loading the maintenance run.
"""
