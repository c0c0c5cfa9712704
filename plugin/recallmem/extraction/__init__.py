"""Extraction: conversations in, vetted typed facts out.

``filter`` (what is worth reading) → ``queue`` (durable, debounced, leased windows) →
``chain`` (prompt | chat model | tolerant ``parser``) → ``hygiene`` (a pure ``plan``) →
``writer`` (applies the plan through Memory). ``pipeline.ExtractionPipeline`` wires them;
``evaluate`` scores a prompt against a labelled set.
"""
