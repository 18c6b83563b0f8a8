"""expd: A/B experiments for LLM applications. Start with ``from expd import Client``."""

from ._client import DEFAULT_BASE_URL, Client, MissingApiKeyError
from ._decision import Decision
from ._model_call import ModelCall
from ._redact import redact
from ._version import __version__

import logging as _logging

_logging.getLogger("expd").addHandler(_logging.NullHandler())

__all__ = ["Client", "DEFAULT_BASE_URL", "Decision", "MissingApiKeyError", "ModelCall", "__version__", "redact"]
