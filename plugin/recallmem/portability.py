"""The versioned export format, and validation of an import before anything is written.

An export round-trips every field of every fact and profile. An import is checked row
by row first; if any row is rejected, nothing is written and every rejected row is
reported with its reason.

>>> doc = build_export("u1", facts=[], profiles=[])
>>> doc["format"], doc["version"]
('recallmem.export', 1)
>>> validate_import(doc).facts
[]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from recallmem.config import SecretPolicy
from recallmem.errors import ImportRejectedError, SecretRefusedError
from recallmem.limits import MAX_IMPORT_ID_CHARS as MAX_ID_CHARS
from recallmem.limits import MAX_IMPORT_ROWS
from recallmem.quoting import visible_text
from recallmem.secrets import screen_fact, screen_profile
from recallmem.types import Fact, Profile, utcnow

FORMAT = "recallmem.export"
VERSION = 1


class ImportReport(BaseModel):
    """What an import wrote."""

    model_config = ConfigDict(frozen=True)

    imported: int
    profiles: int
    users: list[str]


class ValidatedImport(BaseModel):
    """An import payload that passed validation, ready to write."""

    model_config = ConfigDict(frozen=True)

    facts: list[Fact]
    profiles: list[Profile]
    rejected: list[tuple[int, str]]

    def report(self) -> ImportReport:
        """What writing this import amounts to."""
        users = {f.user_id for f in self.facts} | {p.user_id for p in self.profiles}
        return ImportReport(
            imported=len(self.facts), profiles=len(self.profiles), users=sorted(users)
        )


def build_export(
    user_id: str, *, facts: Sequence[Fact], profiles: Sequence[Profile]
) -> dict[str, Any]:
    """The export document of one user's memory (JSON-ready)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utcnow().isoformat(),
        "user_id": user_id,
        "facts": [f.model_dump(mode="json") for f in facts],
        "profiles": [p.model_dump(mode="json") for p in profiles],
    }


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
    return None


def _error_text(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'row'}: {err['msg']}" for err in exc.errors()
    )


def _unstorable(record: Fact | Profile) -> str | None:
    """Why the store would refuse a record that passed the model's validation."""
    fact_id = getattr(record, "id", None)
    if fact_id is not None and not fact_id.strip():
        return "'id' is empty; give the fact a non-blank id, or leave 'id' out to get a new one"
    if fact_id is not None and len(fact_id) > MAX_ID_CHARS:
        return f"'id' is longer than {MAX_ID_CHARS} characters"
    return None  # text Chroma cannot encode (a lone surrogate) already fails the model


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
        try:
            fact = screen_fact(Fact.model_validate(raw), secrets)
        except ValidationError as exc:
            rejected.append((row, _error_text(exc)))
            continue
        except SecretRefusedError as exc:
            rejected.append((row, str(exc)))
            continue
        if not visible_text(fact.content).strip():
            rejected.append((row, "content is blank: only invisible characters"))
            continue
        if problem := _unstorable(fact):
            rejected.append((row, problem))
            continue
        if fact.id in seen:
            rejected.append((row, f"duplicate fact id {fact.id!r} in this import"))
            continue
        seen.add(fact.id)
        facts.append(fact)
    for row, raw in enumerate(data.get("profiles", [])):
        try:
            profile = screen_profile(Profile.model_validate(raw), secrets)
        except ValidationError as exc:
            rejected.append((row, f"profiles[{row}]: {_error_text(exc)}"))
            continue
        except SecretRefusedError as exc:
            rejected.append((row, f"profiles[{row}]: {exc}"))
            continue
        if problem := _unstorable(profile):
            rejected.append((row, f"profiles[{row}]: {problem}"))
            continue
        profiles.append(profile)
    return ValidatedImport(facts=facts, profiles=profiles, rejected=rejected)


def accept_import(
    data: object,
    owners: Callable[[list[str]], Mapping[str, str]],
    secrets: SecretPolicy = "refuse",
) -> ValidatedImport:
    """Validate an import, or raise naming every bad row; nothing is written either way.

    ``owners`` maps the ids that already exist to their users, so an import can never
    overwrite another user's fact by reusing its id.
    """
    checked = validate_import(data, secrets)
    existing = owners([f.id for f in checked.facts]) if checked.facts else {}
    rejected = checked.rejected + [
        (row, f"fact id {f.id!r} already belongs to another user")
        for row, f in enumerate(checked.facts)
        if existing.get(f.id, f.user_id) != f.user_id
    ]
    if rejected:
        listing = "; ".join(f"row {r}: {why}" for r, why in rejected[:20])
        raise ImportRejectedError(
            f"import rejected, nothing was written ({len(rejected)} bad rows): {listing}", rejected
        )
    return checked
