"""A memory's metabolism: facts that age, expire, merge and are copied between scopes.

The pure rules over a fact and a time (decay, expiry) live below retrieval, in
:mod:`recallmem.facts` (the hot index ranks and filters with them); here sit the
maintenance plan, its journal and run, consolidation, the keying step and copies,
beside extraction, reaching the facts through the repository. This package imports
nothing itself.
"""
