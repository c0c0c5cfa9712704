"""Bilingual detectors of cue, hedge, correction and "remember this" turns: the kinds
(``kinds``), the patterns (``detector``, data in ``prompts/signals.yaml``) and the optional
prototype-similarity stage (``prototypes``)."""
