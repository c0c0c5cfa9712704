"""The one secret detector (``detector``, rules in ``prompts/secrets.yaml``), the value
shapes and checksums it confirms with (``checks``), the text as a reader sees it
(``view``) and the screens every write path passes through (``gates``)."""
