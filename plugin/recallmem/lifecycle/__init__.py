"""A memory's metabolism: decay, expiry and the maintenance run that applies them.

``decay`` and ``expiry`` are pure rules over a fact and a time, below retrieval (the
hot index ranks and filters with them); ``plan``, ``journal`` and ``maintenance`` sit
beside extraction and reach the facts through the repository. This package imports
nothing itself, so the index can use the rules without loading the maintenance run.
"""
