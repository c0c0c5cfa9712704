"""What :class:`~recallmem.memory.Memory` does, one concept per module.

``Memory`` composes these parts explicitly and keeps only the public signatures:
:mod:`~recallmem.operations.reading` (recall, nearest, list), :mod:`~recallmem.operations.writing`
(remember, edit, forget, profiles), :mod:`~recallmem.operations.extracting` (the extraction
pipeline opened on first use and the reads of its queue) and
:mod:`~recallmem.operations.porting` (export and import).
"""
