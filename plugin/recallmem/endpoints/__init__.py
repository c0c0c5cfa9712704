"""The configured model endpoints (OpenAI-compatible chat and embeddings): what a failed
call means (``failures``) and the last state each was seen in (``status``).

Layer 0: the embedders, extraction and the service all describe failures this one way.
"""
