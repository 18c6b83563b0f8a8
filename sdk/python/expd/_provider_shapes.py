"""Reading OpenAI-style requests, responses and stream chunks.

Provider SDKs return objects (attributes) while plain HTTP clients and fakes
return dicts; every reader here accepts both and returns None for anything
it cannot find, so an unfamiliar shape costs a field, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping as _AbcMapping
from typing import Any, Dict, List, Mapping, Optional, Tuple

Usage = Tuple[Optional[int], Optional[int], Optional[int]]


# Whether a type is a Mapping, remembered per type: the ABC's isinstance
# runs Python-level __instancecheck__ code on every call, and a response
# is read field by field (a dozen reads per model call).
_is_mapping: Dict[type, bool] = {dict: True}


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` for mappings, ``obj.name`` otherwise; None when absent."""
    if obj is None:
        return None
    kind = type(obj)
    mapping = _is_mapping.get(kind)
    if mapping is None:
        mapping = _is_mapping[kind] = isinstance(obj, _AbcMapping)
    if mapping:
        return obj.get(name)
    return getattr(obj, name, None)


def usage_of(obj: Any) -> Optional[Usage]:
    """(input, output, total) tokens of a response or final chunk, or None without usage."""
    usage = field(obj, "usage")
    if usage is None:
        return None
    prompt = _first_int(usage, "prompt_tokens", "input_tokens")
    completion = _first_int(usage, "completion_tokens", "output_tokens")
    total = _first_int(usage, "total_tokens")
    if total is None and prompt is not None:
        total = prompt + (completion or 0)
    return prompt, completion, total


def model_of(obj: Any) -> Optional[str]:
    """The model a response reports having used."""
    model = field(obj, "model")
    return model if isinstance(model, str) else None


def response_text(obj: Any) -> Optional[str]:
    """The generated text of a chat, completions or responses answer."""
    output_text = field(obj, "output_text")
    if isinstance(output_text, str):
        return output_text
    choices = field(obj, "choices")
    if choices:
        first = choices[0]
        text = field(field(first, "message"), "content")
        if text is None:
            text = field(first, "text")
        return text if isinstance(text, str) else None
    return _responses_output_text(field(obj, "output"))


# One encoder for every prompt: json.dumps with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


def prompt_request(kwargs: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The request's prompt argument alone, a list copied, for ``prompt_text`` to read
    later (on the sender thread): a caller appending to its conversation after the
    call does not change what was sent."""
    for name in ("messages", "input", "prompt"):
        value = kwargs.get(name)
        if value is not None:
            return {name: value[:] if type(value) is list else value}
    return None


def prompt_text(kwargs: Mapping[str, Any]) -> Optional[str]:
    """The request's prompt as text: chat messages, responses input, completion prompt or embedding input."""
    for name in ("messages", "input", "prompt"):
        value = kwargs.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value
        return _encode(value)
    return None


class StreamReader:
    """Accumulates what a stream's chunks tell: text, model and (final) usage."""

    def __init__(self) -> None:
        self.model: Optional[str] = None
        self.usage: Optional[Usage] = None
        self._parts: List[str] = []

    def observe(self, chunk: Any) -> None:
        """Take what is useful from one chunk or streaming event."""
        self.model = model_of(chunk) or self.model
        self.usage = usage_of(chunk) or self.usage
        kind = field(chunk, "type")
        if isinstance(kind, str):
            self._observe_responses_event(kind, chunk)
            return
        for choice in field(chunk, "choices") or ():
            text = field(field(choice, "delta"), "content")
            if text is None:
                text = field(choice, "text")
            if isinstance(text, str):
                self._parts.append(text)

    def text(self) -> Optional[str]:
        """The streamed text so far, or None if no chunk carried any."""
        return "".join(self._parts) if self._parts else None

    def _observe_responses_event(self, kind: str, event: Any) -> None:
        if kind == "response.output_text.delta":
            delta = field(event, "delta")
            if isinstance(delta, str):
                self._parts.append(delta)
        elif kind == "response.completed":
            response = field(event, "response")
            self.model = model_of(response) or self.model
            self.usage = usage_of(response) or self.usage


def _first_int(obj: Any, *names: str) -> Optional[int]:
    for name in names:
        value = field(obj, name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _responses_output_text(output: Any) -> Optional[str]:
    texts = [
        part_text
        for item in output or ()
        for part in field(item, "content") or ()
        for part_text in (field(part, "text"),)
        if isinstance(part_text, str)
    ]
    return "".join(texts) if texts else None
