"""Where facts are kept: the seam (:mod:`.fact_store`), its two backends (:mod:`.in_memory`
and :mod:`.chroma`) and the choice between them (:mod:`.backends`)."""
