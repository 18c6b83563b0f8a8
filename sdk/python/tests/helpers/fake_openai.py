"""A fake OpenAI-style client (sync and async; plain, streaming and raising calls).

Responses are plain objects with attributes, like the official SDK's
models; streams yield chunk objects and, when asked with
``stream_options={"include_usage": True}``, a final usage chunk.
"""

import asyncio
import time
from types import SimpleNamespace as NS
from typing import Any, Iterator, List, Optional


class ProviderError(Exception):
    """What the fake raises when told to fail (stands for an SDK's APIError)."""


def _usage(prompt: int = 11, completion: int = 7) -> NS:
    return NS(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


class _Behaviour:
    """Shared knobs: which text to answer, whether to raise, how slow to be."""

    def __init__(self, reply: str = "Hello there", fail: Optional[Exception] = None,
                 delay: float = 0.0, chunk_delay: float = 0.0, fail_mid_stream: Optional[Exception] = None) -> None:
        self.reply = reply
        self.fail = fail
        self.fail_mid_stream = fail_mid_stream
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.calls: List[dict] = []

    def chat_response(self, model: str) -> NS:
        message = NS(role="assistant", content=self.reply)
        return NS(id="chatcmpl-1", model=model + "-2024", choices=[NS(index=0, message=message)], usage=_usage())

    def chat_chunks(self, model: str, include_usage: bool) -> List[NS]:
        words = self.reply.split(" ")
        chunks = [NS(model=model + "-2024", choices=[NS(index=0, delta=NS(role="assistant", content=""))], usage=None)]
        chunks += [
            NS(model=model + "-2024", choices=[NS(index=0, delta=NS(content=(w if i == 0 else " " + w)))], usage=None)
            for i, w in enumerate(words)
        ]
        if include_usage:
            chunks.append(NS(model=model + "-2024", choices=[], usage=_usage()))
        return chunks


class FakeStream:
    """A sync stream like the SDK's ``Stream``: iterable, closable, a context manager."""

    def __init__(self, chunks: List[Any], chunk_delay: float, fail_after: Optional[Exception] = None) -> None:
        self._chunks = chunks
        self._delay = chunk_delay
        self._fail_after = fail_after
        self.closed = False
        self.response = NS(status_code=200)  # an SDK attribute the proxy must pass through

    def __iter__(self) -> Iterator[Any]:
        for chunk in self._chunks:
            time.sleep(self._delay)
            yield chunk
        if self._fail_after is not None:
            raise self._fail_after

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> "FakeStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FakeAsyncStream:
    """An async stream like the SDK's ``AsyncStream``."""

    def __init__(self, chunks: List[Any], chunk_delay: float, fail_after: Optional[Exception] = None) -> None:
        self._chunks = chunks
        self._delay = chunk_delay
        self._fail_after = fail_after
        self.closed = False

    async def _generate(self):
        for chunk in self._chunks:
            await asyncio.sleep(self._delay)
            yield chunk
        if self._fail_after is not None:
            raise self._fail_after

    def __aiter__(self):
        return self._generate()

    async def close(self) -> None:
        self.closed = True


class _SyncCreate:
    def __init__(self, behaviour: _Behaviour, kind: str) -> None:
        self._b = behaviour
        self._kind = kind

    def create(self, **kwargs: Any) -> Any:
        self._b.calls.append(kwargs)
        time.sleep(self._b.delay)
        if self._b.fail is not None:
            raise self._b.fail
        return _answer(self._b, self._kind, kwargs, FakeStream)


class _AsyncCreate:
    def __init__(self, behaviour: _Behaviour, kind: str) -> None:
        self._b = behaviour
        self._kind = kind

    async def create(self, **kwargs: Any) -> Any:
        self._b.calls.append(kwargs)
        await asyncio.sleep(self._b.delay)
        if self._b.fail is not None:
            raise self._b.fail
        return _answer(self._b, self._kind, kwargs, FakeAsyncStream)


def _answer(b: _Behaviour, kind: str, kwargs: dict, stream_type: type) -> Any:
    model = kwargs.get("model", "fake-model")
    if kind == "chat":
        if kwargs.get("stream"):
            include_usage = bool((kwargs.get("stream_options") or {}).get("include_usage"))
            return stream_type(b.chat_chunks(model, include_usage), b.chunk_delay, b.fail_mid_stream)
        return b.chat_response(model)
    if kind == "responses":
        if kwargs.get("stream"):
            events = [NS(type="response.output_text.delta", delta=w + " ") for w in b.reply.split(" ")]
            events.append(NS(type="response.completed", response=NS(
                model=model, usage=NS(input_tokens=5, output_tokens=3, total_tokens=8))))
            return stream_type(events, b.chunk_delay, b.fail_mid_stream)
        return NS(model=model, output_text=b.reply, usage=NS(input_tokens=5, output_tokens=3, total_tokens=8))
    if kind == "completions":
        return NS(model=model, choices=[NS(text=b.reply)], usage=_usage(4, 2))
    return NS(model=model, data=[NS(embedding=[0.1, 0.2])], usage=NS(prompt_tokens=3, total_tokens=3))


class FakeOpenAI:
    """Sync client: ``chat.completions``, ``responses``, ``completions``, ``embeddings``, ``models``."""

    def __init__(self, **behaviour: Any) -> None:
        self.behaviour = _Behaviour(**behaviour)
        self.chat = NS(completions=_SyncCreate(self.behaviour, "chat"))
        self.responses = _SyncCreate(self.behaviour, "responses")
        self.completions = _SyncCreate(self.behaviour, "completions")
        self.embeddings = _SyncCreate(self.behaviour, "embeddings")
        self.models = NS(list=lambda: ["fake-model"])
        self.api_key = "sk-provider"


class FakeAsyncOpenAI:
    """Async client with the same resources; ``create`` is a coroutine function."""

    def __init__(self, **behaviour: Any) -> None:
        self.behaviour = _Behaviour(**behaviour)
        self.chat = NS(completions=_AsyncCreate(self.behaviour, "chat"))
        self.responses = _AsyncCreate(self.behaviour, "responses")
        self.completions = _AsyncCreate(self.behaviour, "completions")
        self.embeddings = _AsyncCreate(self.behaviour, "embeddings")
