"""A stand-in for the OpenTelemetry Python API's context and baggage modules.

The real ``opentelemetry-api`` comes from PyPI, which this project's machines
cannot reach, so ``test_baggage`` puts this on ``sys.path`` instead. It keeps
to the API's documented surface and semantics: immutable contexts in a
contextvar, ``attach`` returning a token that ``detach`` restores, and
``baggage.set_baggage(name, value, context=None)`` returning a new context.
"""
