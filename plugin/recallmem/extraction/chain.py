"""The extractor: prompt | chat model | parser, as one LangChain Runnable.

:func:`prepare` turns a window of kept messages, the stored facts most related to it
and the user's profile into the prompt's variables, giving messages and facts short
ids (``m1``, ``F1``) the model can cite. Every message, fact, profile summary and cue
is quoted by :func:`recallmem.text.quoting.quote_text` (one line each, no markup), so no
text can close ``<conversation>`` or pose as another message; stored text is also
passed through the secret detector. :func:`create_extractor` builds the chain;
where the model supports tools it asks for structured output, and whatever comes back
(tool call, JSON in prose, nothing usable) goes through the same tolerant parser.

>>> from recallmem.testing import FakeChatModel
>>> from recallmem.extraction.threads import Utterance
>>> model = FakeChatModel(responses=['{"facts": [{"content": "Writes TypeScript", '
...     '"category": "knowledge", "confidence": 0.9, "evidence": "I write TypeScript"}]}'])
>>> window = prepare([Utterance(id="a1", role="user", content="I write TypeScript")], [])
>>> result = create_extractor(model).invoke(window.inputs)
>>> result.facts[0].content, result.usage.calls
('Writes TypeScript', 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.json_schema import dereference_refs

from recallmem.config import MemoryConfig
from recallmem.errors import ExtractionError, ModelNotConfiguredError
from recallmem.extraction.parser import (
    ExtractionOutput,
    ExtractionResult,
    TokenUsage,
    coerce_result,
    parse_extraction,
)
from recallmem.extraction.threads import Utterance
from recallmem.prompts import ChatPromptSpec, load_prompt
from recallmem.secrets.detector import redact
from recallmem.signals.detector import SignalKind, Signals, load_signals
from recallmem.text.quoting import quote_text
from recallmem.types import Fact, Profile, utcnow

EXTRACTION_TOOL = "record_extraction"
MAX_MESSAGE_CHARS = 2000  # per message in the prompt: a pasted log must not blow the budget


@dataclass(frozen=True)
class PreparedWindow:
    """The prompt variables for one window, and the stored facts its ids stand for."""

    inputs: dict[str, str]
    fact_refs: dict[str, Fact]  # "F1" -> the stored fact shown to the model


def _render_conversation(utterances: Sequence[Utterance]) -> str:
    lines = []
    for n, u in enumerate(utterances, 1):
        text = (
            u.content
            if len(u.content) <= MAX_MESSAGE_CHARS
            else u.content[:MAX_MESSAGE_CHARS] + " […]"
        )
        lines.append(f"[m{n}] {u.role}: {_shown(text)}")
    return "\n".join(lines)


def _shown(text: str) -> str:
    # Stored text predates today's secret rules, or was stored in redact mode.
    return quote_text(redact(text))


def _render_fact(ref: str, fact: Fact, said: datetime) -> str:
    line = f"[{ref}] ({fact.category.value}, {fact.confidence:.2f}{_end(fact, said)}) "
    line += _shown(fact.content)
    if fact.source_error:
        line += f" — wrong approach: {_shown(fact.source_error)}"
    return line


def _end(fact: Fact, said: datetime) -> str:
    # A todo whose day has passed is shown as ended, so a window saying what became of
    # it ("the lesson went well") can close it; its valid_until is the next midnight.
    if fact.valid_until is None:
        return ""
    last = (fact.valid_until.astimezone(said.tzinfo) - timedelta(seconds=1)).date()
    return f", {'ended' if fact.valid_until <= said else 'until'} {last.isoformat()}"


def _render_profile(profile: Profile | None) -> str:
    sections = profile.sections() if profile else {}
    if not sections:
        return "(empty)"
    return "\n".join(f"- {name}: {_shown(s.summary)}" for name, s in sections.items())


def detect_signals(
    utterances: Sequence[Utterance], signals: Signals | None = None
) -> list[tuple[str, str, str]]:
    """(kind, span, message ref) for each correction or remember cue in the user's words."""
    signals = signals or load_signals()
    found = []
    for n, u in enumerate(utterances, 1):
        if u.role != "user":
            continue
        for kind in (SignalKind.CORRECTION, SignalKind.REMEMBER_REQUEST):
            if span := signals.detect(kind, u.content):
                found.append((kind.value.replace("_", " "), span, f"m{n}"))
    return found


NO_AGENT = "none (one general assistant: every fact has scope user)"


def prepare(
    utterances: Sequence[Utterance],
    related: Sequence[Fact],
    *,
    profile: Profile | None = None,
    today: datetime | None = None,
    signals: Signals | None = None,
    agent_id: str | None = None,
) -> PreparedWindow:
    """The prompt variables for a window; ``related`` is already bounded by the caller.

    ``today`` is when the window was said, in the user's timezone: its local date and
    weekday are the prompt's "Today" (default: now, in UTC), which "tomorrow" and
    "下周五" are counted from. ``agent_id`` names the assistant the user was talking to, so the
    model can tell the user's facts from that agent's own work.
    """
    said = today or utcnow()
    day = said.date()
    fact_refs = {f"F{n}": fact for n, fact in enumerate(related, 1)}
    cues = detect_signals(utterances, signals)
    cue_text = "; ".join(f'{kind} cue "{quote_text(span)}" in {ref}' for kind, span, ref in cues)
    inputs = {
        "today": f"{day.isoformat()} ({day.strftime('%A')})",
        "profile": _render_profile(profile),
        "existing_facts": "\n".join(_render_fact(r, f, said) for r, f in fact_refs.items())
        or "(none)",
        "signals": cue_text or "none",
        "conversation": _render_conversation(utterances),
        "agent": f'"{quote_text(agent_id, in_quotes=True)}"' if agent_id else NO_AGENT,
    }
    return PreparedWindow(inputs=inputs, fact_refs=fact_refs)


def extraction_schema() -> dict[str, Any]:
    """The JSON schema asked for as structured output, derived from :class:`ExtractionOutput`.

    Lenient by design: whatever comes back goes through the tolerant parser anyway.
    """
    schema = dereference_refs(ExtractionOutput.model_json_schema(by_alias=True))
    schema.pop("$defs", None)
    summary = (ExtractionOutput.__doc__ or "").strip().splitlines()[-1].strip()
    return {**schema, "title": EXTRACTION_TOOL, "description": summary}


def message_usage(message: BaseMessage) -> tuple[TokenUsage, str | None]:
    """One model call's tokens and the model's name, from a reply's metadata."""
    meta = getattr(message, "usage_metadata", None) or {}
    usage = TokenUsage(
        calls=1,
        input_tokens=int(meta.get("input_tokens", 0)),
        output_tokens=int(meta.get("output_tokens", 0)),
    )
    name = message.response_metadata.get("model_name") or message.response_metadata.get("model")
    return usage, (str(name) if name else None)


# How providers say a reply stopped at the output limit: OpenAI and Ollama "length",
# Anthropic and Bedrock "max_tokens", Gemini "MAX_TOKENS".
_CUT_REASONS = frozenset({"length", "max_tokens"})


def cut_off(message: BaseMessage) -> str | None:
    """How ``message`` says it was cut at the model's output limit (as ``key 'value'``),
    or None for a reply the model finished.

    >>> cut_off(AIMessage("{", response_metadata={"finish_reason": "length"}))
    "finish_reason 'length'"
    >>> cut_off(AIMessage("{}", response_metadata={"stop_reason": "end_turn"})) is None
    True
    """
    meta = message.response_metadata or {}
    for key in ("finish_reason", "stop_reason", "done_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip().lower() in _CUT_REASONS:
            return f"{key} {value!r}"
    return None


def refuse_cut_off(message: BaseMessage, *, source: str, remedy: str, then: str) -> None:
    """Raise ExtractionError if the reply was cut at the output limit.

    A cut reply is never read: its text may hold only a restated example of the format
    (``{"facts": []}``), which would read as "nothing to remember" and lose the window.
    """
    if how := cut_off(message):
        raise ExtractionError(
            f"{source} was cut off at the model's output limit ({how}), so it is "
            f"incomplete and none of it is used. {remedy} {then}"
        )


def _read_message(message: BaseMessage) -> ExtractionResult:
    refuse_cut_off(
        message,
        source="the model's reply",
        remedy="Raise the model's max output tokens, or shorten the windows "
        "(a lower flush_message_count).",
        then="The conversation stays queued and will be retried.",
    )
    if isinstance(message, AIMessage) and message.tool_calls:
        result = coerce_result(message.tool_calls[0]["args"])
    else:
        result = parse_extraction(message.text)
    usage, name = message_usage(message)
    return result.model_copy(update={"usage": usage, "model_name": name})


def _read_structured(output: Any) -> ExtractionResult:
    if not isinstance(output, Mapping):
        raise ExtractionError(f"structured output was {type(output).__name__}, not a mapping")
    raw = output.get("raw")
    if not isinstance(raw, BaseMessage):
        raise ExtractionError("structured output carried no raw model message")
    parsed = output.get("parsed")
    if isinstance(parsed, Mapping) and cut_off(raw) is None:
        usage, name = message_usage(raw)
        return coerce_result(parsed).model_copy(update={"usage": usage, "model_name": name})
    return _read_message(raw)


def create_extractor(
    model: BaseChatModel,
    /,
    *,
    prompt: ChatPromptSpec | None = None,
    structured: bool | None = None,
) -> Runnable[dict[str, str], ExtractionResult]:
    """The extraction chain: ``prompt | model | parser``, one model call per invocation.

    Args:
        model: any LangChain chat model.
        prompt: the extraction prompt; by default ``prompts/extract.yaml``.
        structured: ask for a tool call (structured output); by default whenever the
            model supports tools. Unreadable structured output falls back to the text.
    """
    spec = prompt or load_prompt("extract")
    template = spec.to_chat_prompt()
    if structured is not False:
        try:
            bound = model.with_structured_output(
                extraction_schema(), include_raw=True, method="function_calling"
            )
        except NotImplementedError:
            if structured:
                raise
        else:
            reader: Runnable[Any, ExtractionResult] = RunnableLambda(_read_structured)
            return (template | bound | reader).with_config(run_name="recallmem_extract")
    return (template | model | RunnableLambda(_read_message)).with_config(
        run_name="recallmem_extract"
    )


def model_from_config(config: MemoryConfig) -> BaseChatModel | None:
    """The configured OpenAI-compatible chat model, or None when none is configured.

    >>> model_from_config(MemoryConfig(home="/tmp/x")) is None
    True
    """
    if not config.llm_model:
        return None
    if config.openai_api_key is None and not config.openai_base_url:
        raise ModelNotConfiguredError(
            f"llm_model is {config.llm_model!r} but no API key or base URL is set: set "
            "RECALLMEM_OPENAI_API_KEY (and RECALLMEM_OPENAI_BASE_URL for a compatible endpoint)"
        )
    from langchain_openai import ChatOpenAI

    # Local OpenAI-compatible servers take any key; the client insists on one.
    key = config.openai_api_key.get_secret_value() if config.openai_api_key else "unused"
    return ChatOpenAI(
        model=config.llm_model,
        api_key=key,
        base_url=config.openai_base_url,
        temperature=0,
        max_retries=1,  # the queue retries with backoff; the client must not hide failures
    )
