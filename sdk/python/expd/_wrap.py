"""``Client.wrap``: a transparent proxy that measures OpenAI-style calls.

Only ``chat.completions.create``, ``responses.create``,
``completions.create`` and ``embeddings.create`` are instrumented; every
other attribute is the provider client's own. Each instrumented call made
inside ``client.as_user(...)`` records an exposure and a ``model_call``
event; outside one it passes through unrecorded.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable, FrozenSet, Optional, Tuple

from ._model_call import ModelCall
from ._provider_shapes import StreamReader, prompt_request
from ._recorder import Recorder
from ._user import current_user

logger = logging.getLogger("expd")

Path = Tuple[str, ...]
INSTRUMENTED: FrozenSet[Path] = frozenset({
    ("chat", "completions", "create"),
    ("responses", "create"),
    ("completions", "create"),
    ("embeddings", "create"),
})
_PREFIXES: FrozenSet[Path] = frozenset(p[:i] for p in INSTRUMENTED for i in range(1, len(p)))


class WrappedProvider:
    """Proxy of a provider client (or one of its resources) on the way to an instrumented method."""

    __slots__ = ("_target", "_client", "_experiment", "_path")

    def __init__(self, target: Any, client: Recorder, experiment: str, path: Path = ()) -> None:
        self._target = target
        self._client = client
        self._experiment = experiment
        self._path = path

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        path = self._path + (name,)
        if path in INSTRUMENTED and callable(value):
            return _instrument(value, self._client, self._experiment)
        if path in _PREFIXES:
            return WrappedProvider(value, self._client, self._experiment, path)
        return value

    def __repr__(self) -> str:
        return f"<expd wrapped {self._target!r} for {self._experiment!r}>"


def _instrument(method: Callable[..., Any], client: Recorder, experiment: str) -> Callable[..., Any]:
    def measured(*args: Any, **kwargs: Any) -> Any:
        user_id = current_user()
        if user_id is None:
            return method(*args, **kwargs)
        model = kwargs.get("model")
        call = ModelCall(client, experiment, user_id, model=model if type(model) is str else None)
        if client.capture_text:
            call._prompt_from(prompt_request(kwargs))
        streaming = bool(kwargs.get("stream"))
        call.start()
        try:
            result = method(*args, **kwargs)
        except BaseException as exc:
            call.finish(exc)
            raise
        if inspect.isawaitable(result):
            return _await_then_observe(result, call, streaming, client.capture_text)
        return _observe(result, call, streaming, client.capture_text)

    measured.__name__ = getattr(method, "__name__", "create")
    measured.__doc__ = getattr(method, "__doc__", None)
    return measured


async def _await_then_observe(awaitable: Any, call: ModelCall, streaming: bool, capture_text: bool) -> Any:
    try:
        result = await awaitable
    except BaseException as exc:
        call.finish(exc)
        raise
    return _observe(result, call, streaming, capture_text)


def _observe(result: Any, call: ModelCall, streaming: bool, capture_text: bool) -> Any:
    if streaming and hasattr(result, "__aiter__"):
        return AsyncMeasuredStream(result, call, capture_text)
    if streaming and hasattr(result, "__iter__"):
        return MeasuredStream(result, call, capture_text)
    call._read_response(result, capture_text)
    call.finish()
    return result


class _StreamMeasure:
    """What both stream proxies share: chunk accounting and the one-time finish."""

    def __init__(self, stream: Any, call: ModelCall, capture_text: bool) -> None:
        self._stream = stream
        self._call = call
        self._capture_text = capture_text
        self._reader = StreamReader()

    def _saw(self, chunk: Any) -> None:
        self._call.first_token()
        try:
            self._reader.observe(chunk)
        except Exception:  # noqa: BLE001 - measuring must never break the stream
            logger.debug("expd: could not read chunk %r", type(chunk), exc_info=True)

    def _end(self, error: Optional[BaseException] = None) -> None:
        call = self._call
        call.model = self._reader.model or call.model
        if self._reader.usage is not None:
            call.set_usage(*self._reader.usage)
        if self._capture_text:
            call.response = self._reader.text()
        call.finish(error)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class MeasuredStream(_StreamMeasure):
    """A sync stream passed through chunk by chunk, recorded when it ends or is closed."""

    def __init__(self, stream: Any, call: ModelCall, capture_text: bool) -> None:
        super().__init__(stream, call, capture_text)
        self._iterator = iter(stream)

    def __iter__(self) -> "MeasuredStream":
        return self

    def __next__(self) -> Any:
        try:
            chunk = next(self._iterator)
        except StopIteration:
            self._end()
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        self._saw(chunk)
        return chunk

    def close(self) -> None:
        self._end()
        closer = getattr(self._stream, "close", None)
        if closer is not None:
            closer()

    def __enter__(self) -> "MeasuredStream":
        enter = getattr(self._stream, "__enter__", None)
        if enter is not None:
            enter()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> Any:
        self._end(exc)
        exit_ = getattr(self._stream, "__exit__", None)
        return exit_(exc_type, exc, tb) if exit_ is not None else None


class AsyncMeasuredStream(_StreamMeasure):
    """An async stream passed through chunk by chunk, recorded when it ends or is closed."""

    def __init__(self, stream: Any, call: ModelCall, capture_text: bool) -> None:
        super().__init__(stream, call, capture_text)
        self._iterator = stream.__aiter__()

    def __aiter__(self) -> "AsyncMeasuredStream":
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._iterator.__anext__()
        except StopAsyncIteration:
            self._end()
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        self._saw(chunk)
        return chunk

    async def close(self) -> None:
        self._end()
        closer = getattr(self._stream, "close", None) or getattr(self._stream, "aclose", None)
        if closer is not None:
            result = closer()
            if inspect.isawaitable(result):
                await result

    async def __aenter__(self) -> "AsyncMeasuredStream":
        enter = getattr(self._stream, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> Any:
        self._end(exc)
        exit_ = getattr(self._stream, "__aexit__", None)
        return (await exit_(exc_type, exc, tb)) if exit_ is not None else None
