"""Text handling: words and CJK units (``words``), token counts (``tokens``), text shown
to a model (``quoting``) and JSON from outside (``jsontext``)."""
