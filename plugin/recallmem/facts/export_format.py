"""The versioned export format, and validation of an import before anything is written.

An export round-trips every field of every fact and profile. An import is checked row
by row first; if any row is rejected, nothing is written and every rejected row is
reported with its reason.

An export may carry the facts' vectors (``embeddings``: the embedder's name, the
dimension, and per fact id its float32 vector, little-endian, base64). An import into a
store of the same embedder and dimension writes them as they are instead of embedding
the facts again; otherwise (another embedder, or an export without them) it embeds.

>>> doc = build_export("u1", facts=[], profiles=[])
>>> doc["format"], doc["version"]
('recallmem.export', 1)
>>> validate_import(doc).facts
[]
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from recallmem.config import SecretPolicy
from recallmem.errors import ImportRejectedError, InvalidInputError, SecretRefusedError
from recallmem.facts.validation import check_profile, foreign_rows, id_problem
from recallmem.limits import MAX_IMPORT_ROWS, check_scope_id
from recallmem.secrets.detector import screen_fact
from recallmem.text.quoting import visible_text
from recallmem.types import Fact, Profile, utcnow

FORMAT = "recallmem.export"
VERSION = 1
VECTOR_ENCODING = "float32-le-base64"  # how ``embeddings.vectors`` holds each vector


class ImportReport(BaseModel):
    """What an import wrote."""

    model_config = ConfigDict(frozen=True)

    imported: int
    profiles: int
    users: list[str]
    embedded: int = 0  # facts embedded by the import; the others kept the export's vectors


class ValidatedImport(BaseModel):
    """An import payload that passed validation, ready to write."""

    model_config = ConfigDict(frozen=True)

    facts: list[Fact]
    profiles: list[Profile]
    rejected: list[tuple[int, str]]
    carried: dict[str, bytes] = {}  # fact id -> its vector (float32, little-endian) to keep

    def report(self) -> ImportReport:
        """What writing this import amounts to."""
        users = {f.user_id for f in self.facts} | {p.user_id for p in self.profiles}
        embedded = sum(f.id not in self.carried for f in self.facts)
        return ImportReport(imported=len(self.facts), profiles=len(self.profiles),
                            users=sorted(users), embedded=embedded)  # fmt: skip


def build_export(
    user_id: str,
    *,
    facts: Sequence[Fact],
    profiles: Sequence[Profile],
    vectors: np.ndarray | None = None,
    embedder: str | None = None,
) -> dict[str, Any]:
    """The export document of one user's memory (JSON-ready); with ``vectors`` (one row
    per fact, made by ``embedder``) it carries them."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utcnow().isoformat(),
        "user_id": user_id,
        "facts": [f.model_dump(mode="json") for f in facts],
        "profiles": [p.model_dump(mode="json") for p in profiles],
    }
    if vectors is not None and embedder is not None:
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        document["embeddings"] = {
            "embedder": embedder, "dimension": int(rows.shape[1]) if rows.ndim == 2 else 0,
            "encoding": VECTOR_ENCODING,
            "vectors": {f.id: base64.b64encode(row.tobytes()).decode("ascii")
                        for f, row in zip(facts, rows, strict=True)},
        }  # fmt: skip
    return document


def _header_problem(data: object) -> str | None:
    if not isinstance(data, Mapping):
        return "the import must be a JSON object as written by `recallmem export`"
    if data.get("format") != FORMAT:
        return f"'format' must be {FORMAT!r}; this is not a recallmem export"
    if type(data.get("version")) is not int or data.get("version") != VERSION:  # True == 1
        return f"unsupported export version {data.get('version')!r}; this build reads {VERSION}"
    if not isinstance(data.get("facts"), list) or not isinstance(data.get("profiles", []), list):
        return "'facts' and 'profiles' must be lists"
    if len(data["facts"]) > MAX_IMPORT_ROWS:
        return f"too many facts ({len(data['facts'])}); split the import below {MAX_IMPORT_ROWS}"
    return _embeddings_problem(data.get("embeddings"))


def _embeddings_problem(block: object) -> str | None:
    if block is None:
        return None
    if not (isinstance(block, Mapping) and isinstance(block.get("embedder"), str)
            and type(block.get("dimension")) is int and block["dimension"] > 0
            and block.get("encoding") == VECTOR_ENCODING
            and isinstance(block.get("vectors"), Mapping)):  # fmt: skip
        return (f"'embeddings' must hold 'embedder' (a name), 'dimension' (a positive "
                f"integer), 'encoding' ({VECTOR_ENCODING!r}) and 'vectors' (fact id to vector), "
                "as `recallmem export --embeddings` writes it; remove it to embed every fact "
                "again")  # fmt: skip
    return None


def carried_vectors(
    data: Mapping[str, Any], facts: Sequence[Fact], embedder: str, dimension: int | None
) -> tuple[dict[str, bytes], list[tuple[int, str]]]:
    """The vectors an export carries for ``facts`` (validated, by fact id) if they were
    made by ``embedder`` at ``dimension`` (None: any), with the rows whose vector is
    unusable. Vectors of another embedder are left out: those facts are embedded again."""
    block = data.get("embeddings")
    if not isinstance(block, Mapping) or block.get("embedder") != embedder:
        return {}, []
    size = int(block["dimension"])
    if dimension is not None and size != dimension:
        return {}, []
    carried: dict[str, bytes] = {}
    rejected: list[tuple[int, str]] = []
    for row, fact in enumerate(facts):
        raw = block["vectors"].get(fact.id)
        if raw is None:
            continue  # embedded on import
        decoded = _decoded_vector(raw, size)
        if isinstance(decoded, str):
            rejected.append((row, f"{decoded}; remove 'embeddings' to embed every fact again"))
        else:
            carried[fact.id] = decoded
    return carried, rejected


def _decoded_vector(raw: object, size: int) -> bytes | str:
    """The vector's float32 bytes, decoded once; or why it is unusable."""
    try:
        decoded = base64.b64decode(str(raw), validate=True)
        vector = np.frombuffer(decoded, dtype="<f4")
    except (binascii.Error, ValueError):
        return "its vector in 'embeddings' is not base64 of float32 values"
    if vector.size != size:
        return f"its vector in 'embeddings' has {vector.size} values, not {size}"
    if not np.isfinite(vector).all() or not vector.any():
        return "its vector in 'embeddings' is zero or not finite"
    return decoded


def _error_text(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'row'}: {err['msg']}" for err in exc.errors()
    )


def _unstorable(fact: Fact) -> str | None:
    """Why the store would refuse a fact that passed the model's validation, or the
    library's writes would (text Chroma cannot encode, a lone surrogate, already fails
    the model)."""
    try:
        check_scope_id(fact.agent_id, "agent_id")
        check_scope_id(fact.thread_id, "thread_id")
    except InvalidInputError as exc:
        return str(exc)
    return id_problem(fact.id)


def validate_import(data: object, secrets: SecretPolicy = "refuse") -> ValidatedImport:
    """Check every row; rows are numbered from 0 in ``facts``, profiles as ``profiles[i]``.

    A row holding a secret is rejected (or redacted, under ``secrets="redact"``).
    """
    if problem := _header_problem(data):
        return ValidatedImport(facts=[], profiles=[], rejected=[(-1, problem)])
    assert isinstance(data, Mapping)
    facts: list[Fact] = []
    profiles: list[Profile] = []
    rejected: list[tuple[int, str]] = []
    seen: set[str] = set()
    for row, raw in enumerate(data["facts"]):
        fact = _checked_fact(raw, secrets, seen)
        if isinstance(fact, str):
            rejected.append((row, fact))
            continue
        seen.add(fact.id)
        facts.append(fact)
    for row, raw in enumerate(data.get("profiles", [])):
        profile = _checked_profile(raw, secrets)
        if isinstance(profile, str):
            rejected.append((row, f"profiles[{row}]: {profile}"))
            continue
        profiles.append(profile)
    return ValidatedImport(facts=facts, profiles=profiles, rejected=rejected)


def _checked_fact(raw: object, secrets: SecretPolicy, seen: set[str]) -> Fact | str:
    """The row as a fact to store, or why it cannot be (``seen``: ids of earlier rows)."""
    try:
        fact = screen_fact(Fact.model_validate(raw), secrets)
    except ValidationError as exc:
        return _error_text(exc)
    except SecretRefusedError as exc:
        return str(exc)
    if not visible_text(fact.content).strip():
        return "content is blank: only invisible characters"
    if problem := _unstorable(fact):
        return problem
    if fact.id in seen:
        return f"duplicate fact id {fact.id!r} in this import"
    return fact


def _checked_profile(raw: object, secrets: SecretPolicy) -> Profile | str:
    """The row as a profile to store, or why it cannot be (the library's rules for a
    profile, :func:`recallmem.facts.validation.check_profile`)."""
    try:
        return check_profile(Profile.model_validate(raw), secrets)
    except ValidationError as exc:
        return _error_text(exc)
    except InvalidInputError as exc:  # a secret, a section too long, a bad scope
        return str(exc)


def accept_import(
    data: object,
    owners: Callable[[list[str]], Mapping[str, str]],
    secrets: SecretPolicy = "refuse",
    *,
    embedder: str | None = None,
    dimension: int | None = None,
) -> ValidatedImport:
    """Validate an import, or raise naming every bad row; nothing is written either way.

    ``owners`` maps the ids that already exist to their users, so an import can never
    overwrite another user's fact by reusing its id. With ``embedder`` (the store's, and
    its ``dimension`` if known), vectors the export carries for it are kept.
    """
    checked = validate_import(data, secrets)
    existing = owners([f.id for f in checked.facts]) if checked.facts else {}
    carried, unusable = ({}, []) if embedder is None or not isinstance(data, Mapping) else (
        carried_vectors(data, checked.facts, embedder, dimension))  # fmt: skip
    rejected = (
        checked.rejected
        + unusable
        + [
            (row, f"fact id {checked.facts[row].id!r} already belongs to another user")
            for row in foreign_rows(checked.facts, existing)
        ]
    )
    if rejected:
        listing = "; ".join(f"row {r}: {why}" for r, why in rejected[:20])
        raise ImportRejectedError(
            f"import rejected, nothing was written ({len(rejected)} bad rows): {listing}", rejected
        )
    return checked.model_copy(update={"carried": carried}) if carried else checked
