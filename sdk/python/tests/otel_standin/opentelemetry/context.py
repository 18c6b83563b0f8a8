"""opentelemetry.context: an immutable mapping per context, current one in a contextvar."""

import contextvars
from types import MappingProxyType

_EMPTY = MappingProxyType({})
_current = contextvars.ContextVar("otel_standin_context", default=_EMPTY)


def get_current():
    return _current.get()


def attach(context):
    return _current.set(context)


def detach(token):
    _current.reset(token)
