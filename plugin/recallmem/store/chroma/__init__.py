"""The Chroma backend (chromadb==1.5.9): the adapter, its layout, migration and write
sequences; each workaround of a Chroma internal lives in :mod:`.workarounds`."""
