"""Rebuilding a shared collection (the id directory, the scopes) a crash left unreadable.

The id directory and the scopes collection hold no text that needs embedding: their
records are looked up by id and carry a constant vector. When Chroma cannot read one
of them (its vector index files were saved, and the process killed before their id map
was: workarounds/segments.py), every lookup of every user fails. So an embedded store
checks both when it opens and rebuilds a broken one from Chroma's records: the records are
journaled to ``<home>/rebuilds/<collection>.json`` (durability/whole_files.py), the
collection is dropped and created again, the records written back, and the journal
removed. A journal found at the next open (a crash in between) is finished first.
A user's own collection is rebuilt by maintenance instead (its records are embedded).

Upstream behaviour worked around (chromadb==1.5.9): an index saved before its id map
failing every read after a kill;
tests/integration/chroma_upstream/test_upstream_rebuild.py fails the day that changes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from recallmem.config import MemoryConfig
from recallmem.durability.whole_files import write_durably
from recallmem.store.chroma.failures import is_broken_index, store_errors
from recallmem.store.chroma.layout import DIRECTORY_HNSW, DIRECTORY_SUFFIX, SCOPES_SUFFIX
from recallmem.store.chroma.workarounds.dropped_index import drop_collection
from recallmem.store.chroma.workarounds.segments import DOCUMENT_KEY, read_collection

log = logging.getLogger("recallmem.store")
JOURNAL_DIR = "rebuilds"
_PAGE = 1000
_VECTOR = [1.0]  # what the shared collections' records carry (looked up by id only)


def repair_shared_collections(
    client: Any, config: MemoryConfig, cut: Collection[str] = ()
) -> list[str]:
    """Check and, if a crash left one unreadable, rebuild the embedded store's id
    directory and scopes collection; returns the names rebuilt. Those named in ``cut``
    (their index cut short: cut_index.py) are rebuilt without letting Chroma load them."""
    configurations = {
        config.collection + DIRECTORY_SUFFIX: DIRECTORY_HNSW,
        config.collection + SCOPES_SUFFIX: None,
    }
    journals = config.home / JOURNAL_DIR
    with store_errors("rebuild a collection a crash left unreadable", str(journals)):
        return repair_shared(client, config.chroma_path, journals, configurations, cut)


def repair_shared(
    client: Any, chroma_path: Path, journals: Path, configurations: Mapping[str, Any],
    cut: Collection[str] = (),
) -> list[str]:  # fmt: skip
    """Finish the rebuilds a crash interrupted, then rebuild each collection named in
    ``configurations`` (name -> its Chroma configuration) that Chroma cannot read;
    returns the names rebuilt."""
    done = [_finish(client, path) for path in sorted(journals.glob("*.json"))]
    for name, configuration in configurations.items():
        if name not in done and (name in cut or _broken(client, name)):
            log.warning("recallmem: rebuilding collection %s from its records: a crash left "
                        "its vector index inconsistent with them", name)  # fmt: skip
            _journal(client, chroma_path, journals, name, configuration)
            drop_collection(client, chroma_path, name)
            done.append(_finish(client, journals / f"{name}.json"))
    return done


def _broken(client: Any, name: str) -> bool:
    from chromadb.errors import NotFoundError

    try:
        client.get_collection(name, embedding_function=None).get(limit=1, include=[])
    except NotFoundError:
        return False
    except Exception as exc:
        if is_broken_index(exc):
            return True
        raise
    return False


def _journal(client: Any, chroma_path: Path, journals: Path, name: str, configuration: Any) -> None:
    records = read_collection(chroma_path, name)
    body = {
        "name": name,
        "metadata": client.get_collection(name, embedding_function=None).metadata,
        "configuration": configuration,
        "records": records,
    }
    journals.mkdir(parents=True, exist_ok=True)
    write_durably(journals / f"{name}.json", json.dumps(body).encode("utf-8"))


def _finish(client: Any, journal: Path) -> str:
    body = json.loads(journal.read_text(encoding="utf-8"))
    options: dict[str, Any] = {"embedding_function": None, "metadata": body["metadata"]}
    if body["configuration"]:
        options["configuration"] = body["configuration"]
    collection = client.get_or_create_collection(body["name"], **options)
    records: dict[str, dict[str, Any]] = body["records"]
    # Chroma takes a batch with a document for every record or for none.
    for with_document in (True, False):
        ids = [i for i, f in records.items() if (DOCUMENT_KEY in f) is with_document]
        for start in range(0, len(ids), _PAGE):
            page = ids[start : start + _PAGE]
            fields = [{k: v for k, v in records[i].items() if k != DOCUMENT_KEY} for i in page]
            collection.upsert(
                ids=page,
                embeddings=[_VECTOR] * len(page),
                metadatas=[f or None for f in fields],
                documents=[records[i][DOCUMENT_KEY] for i in page] if with_document else None,
            )
    journal.unlink()
    return str(body["name"])
