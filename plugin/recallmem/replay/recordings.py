"""Recorded replies of real models, filed by request key, and requests waiting for one.

A recording is ``<root>/<kind>/<key>.json``: the reply (text and tool calls), who
answered (the model's name as the answering session reported it) and when. A request
with no recording is written out for someone to answer: ``<dir>/<kind>/<key>.json``
(the request body an API would receive, canonical) and ``<key>.md`` (the same, laid
out to read); the answer goes beside it as ``<key>.reply.json`` and is filed with
:meth:`Recordings.file_reply` (``python -m bench.record import``).

>>> import tempfile
>>> root = Recordings(tempfile.mkdtemp())
>>> body = {"messages": [{"role": "user", "content": "hi"}]}
>>> root.find(request_key(body)) is None
True
>>> saved = root.save(body, Reply(content="hello"), model="some-model", kind="chat")
>>> root.find(request_key(body)).reply.content
'hello'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from recallmem.errors import InvalidInputError
from recallmem.replay.readable import request_markdown
from recallmem.replay.wire_request import (
    canonical_request,
    forced_tool,
    is_key,
    request_key,
    tool_names,
)

REPLY_SUFFIX = ".reply.json"


class ToolCall(BaseModel):
    """One function call in a reply; ``arguments`` as an object (a JSON text is read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flattened(cls, value: Any) -> Any:
        # The API's own shape, {"type": "function", "function": {"name", "arguments"}}.
        if isinstance(value, dict) and isinstance(value.get("function"), dict):
            return {k: v for k, v in value["function"].items() if k in ("name", "arguments")}
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _parsed(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as exc:
                raise ValueError(f"arguments are not JSON: {exc}") from None
        return value


class Reply(BaseModel):
    """What the model answered: text, function calls, or both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class Recording(BaseModel):
    """One recorded reply to the request filed under ``request``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request: str
    kind: str
    model: str = Field(min_length=1, description="Who answered, as the session reported it.")
    answered_at: datetime
    reply: Reply
    note: str | None = Field(default=None, description="How it was made, if not by a model.")


def reply_problems(body: Mapping[str, Any], reply: Reply) -> list[str]:
    """What makes ``reply`` an impossible answer to ``body`` (an API would refuse it)."""
    problems = []
    offered = set(tool_names(body))
    for call in reply.tool_calls:
        if call.name not in offered:
            problems.append(f"calls {call.name!r}, which the request does not offer")
    if (forced := forced_tool(body)) and not any(c.name == forced for c in reply.tool_calls):
        problems.append(f"the request obliges a call of {forced!r} (tool_choice)")
    if reply.content is None and not reply.tool_calls:
        problems.append("says nothing: give content, tool_calls or both")
    return problems


class Recordings:
    """A folder of recordings, one subfolder per kind of request."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._index: dict[str, Path] | None = None

    def _paths(self) -> dict[str, Path]:
        if self._index is None:
            found = self.root.glob("*/*.json") if self.root.is_dir() else []
            self._index = {p.stem: p for p in found if is_key(p.stem)}
        return self._index

    def find(self, key: str) -> Recording | None:
        """The recording of the request ``key``, or None."""
        path = self._paths().get(key)
        if path is None:
            return None
        try:
            return Recording.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise InvalidInputError(f"recording {path} is malformed: {exc}") from exc

    def keys(self) -> set[str]:
        """Every recorded request key."""
        return set(self._paths())

    def __contains__(self, key: object) -> bool:
        return key in self._paths()

    def save(
        self,
        body: Mapping[str, Any],
        reply: Reply,
        *,
        model: str,
        kind: str,
        answered_at: datetime | None = None,
        note: str | None = None,
    ) -> Path:
        """File ``reply`` as the recording of ``body``; refused if no API could give it."""
        if problems := reply_problems(body, reply):
            raise InvalidInputError(f"the reply cannot answer this request: {'; '.join(problems)}")
        key = request_key(body)
        recording = Recording(request=key, kind=kind, model=model, reply=reply, note=note,
                              answered_at=answered_at or datetime.now(UTC))  # fmt: skip
        path = self.root / kind / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = recording.model_dump_json(indent=2, exclude_none=True)
        path.write_text(text + "\n", encoding="utf-8")
        self._paths()[key] = path
        return path

    def file_reply(self, request_file: Path) -> Path:
        """File the answer written beside a request file (``<key>.reply.json``).

        The answer holds ``model`` (who answered) and the reply's ``content`` and
        ``tool_calls``; ``answered_at`` defaults to when the file was written.
        """
        reply_file = request_file.with_name(request_file.stem + REPLY_SUFFIX)
        try:
            data = json.loads(reply_file.read_text(encoding="utf-8"))
            body = json.loads(request_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"cannot read {reply_file}: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("model"), str):
            raise InvalidInputError(
                f"{reply_file} must be a JSON object naming the answering model in 'model'"
            )
        written = datetime.fromtimestamp(reply_file.stat().st_mtime, UTC)
        try:
            reply = Reply(content=data.get("content"), tool_calls=data.get("tool_calls") or ())
            answered = (
                datetime.fromisoformat(data["answered_at"]) if "answered_at" in data else written
            )
        except (ValidationError, ValueError, TypeError) as exc:
            raise InvalidInputError(f"{reply_file} is malformed: {exc}") from exc
        return self.save(body, reply, model=data["model"], kind=request_file.parent.name,
                         answered_at=answered)  # fmt: skip


def write_request(folder: Path, body: Mapping[str, Any], kind: str) -> Path:
    """Write a request to answer: ``<folder>/<kind>/<key>.json`` and ``.md``; returns
    the JSON file. Writing the same request again changes nothing."""
    key = request_key(body)
    path = Path(folder) / kind / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    canonical = canonical_request(body)
    text = json.dumps(canonical, ensure_ascii=False, indent=2) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        path.with_suffix(".md").write_text(request_markdown(canonical, key), encoding="utf-8")
    return path
