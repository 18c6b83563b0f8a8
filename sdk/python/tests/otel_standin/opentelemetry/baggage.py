"""opentelemetry.baggage: entries kept under one key of the context."""

from types import MappingProxyType

from . import context as _context

_KEY = "baggage"


def get_all(context=None):
    ctx = context if context is not None else _context.get_current()
    return ctx.get(_KEY, MappingProxyType({}))


def get_baggage(name, context=None):
    return get_all(context).get(name)


def set_baggage(name, value, context=None):
    ctx = dict(context if context is not None else _context.get_current())
    entries = dict(get_all(context))
    entries[name] = value
    ctx[_KEY] = MappingProxyType(entries)
    return MappingProxyType(ctx)
