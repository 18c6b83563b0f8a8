"""Redaction of prompt and response texts before an event leaves the process.

The built-in detectors and their order, boundaries and validators are
specified by ``testdata/redaction/README.md`` (the server's ``redact``
payload policy applies the same ones at ingest); every case of the shared
corpus ``testdata/redaction/cases.json`` is a test of this module.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, Iterable, List, Mapping, NamedTuple, Optional, Pattern, Tuple

logger = logging.getLogger("expd")

DEFAULT_PLACEHOLDER = "[REDACTED]"

# The model_call fields redaction applies to, as the server's payload policy
# (provider errors quote keys and input).
REDACTED_FIELDS = ("prompt", "response", "error")

_DIGITS = frozenset("0123456789")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_TOKEN = _ALNUM | frozenset("_-")
_NONE: frozenset = frozenset()
_ANY_DIGIT = re.compile(r"[0-9]")


def _iban(value: str) -> bool:
    s = value.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    r = 0
    for ch in s[4:] + s[:4]:
        if ch in _DIGITS:
            r = (r * 10 + ord(ch) - 48) % 97
        else:
            r = (r * 100 + ord(ch) - 55) % 97
    return r == 1


def _card(value: str) -> bool:
    digits = [ord(c) - 48 for c in value if c in _DIGITS]
    if not 13 <= len(digits) <= 19 or not 2 <= digits[0] <= 6:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _ipv4(value: str) -> bool:
    parts = value.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if not 1 <= len(p) <= 3 or any(c not in _DIGITS for c in p):
            return False
        if p != "0" and (p[0] == "0" or int(p) > 255):
            return False
    return True


def _groups_ok(groups: List[str]) -> bool:
    return all(1 <= len(g) <= 4 for g in groups)


def _ipv6(value: str) -> bool:
    if "." in value:
        i = value.rfind(":")
        if not _ipv4(value[i + 1:]):
            return False
        value = value[:i + 1] + "0:0"
    if "::" in value:
        head, tail = value.split("::", 1)
        groups: List[str] = []
        for side in (head, tail):
            if side:
                parts = side.split(":")
                if not _groups_ok(parts):
                    return False
                groups += parts
        return 2 <= len(groups) <= 7
    parts = value.split(":")
    return len(parts) == 8 and _groups_ok(parts)


def _e164(value: str) -> bool:
    return 8 <= sum(c in _DIGITS for c in value) <= 15


def _parentheses(value: str) -> bool:
    return ("(" in value) == (")" in value)


def _trunk(value: str) -> bool:
    return sum(c in _DIGITS for c in value) in (10, 11) and not (" " in value and "-" in value)


class _Detector(NamedTuple):
    regex: Pattern[str]
    left: frozenset
    right: frozenset
    no_dot_digit: bool
    validator: Optional[Callable[[str], bool]]
    placeholder: str
    # A speed-up only: every match contains one of these literals (a digit,
    # when digits; a match of gate, when set), so a text without any is
    # skipped unscanned.
    needs: Tuple[str, ...]
    digits: bool
    gate: Optional[Pattern[str]]


def _d(regex: str, needs: Tuple[str, ...], left: frozenset = _NONE, right: frozenset = _NONE,
       no_dot_digit: bool = False, validator: Optional[Callable[[str], bool]] = None,
       placeholder: str = "[SECRET]", digits: bool = False, gate: Optional[str] = None) -> _Detector:
    return _Detector(re.compile(regex), left, right, no_dot_digit, validator, placeholder, needs, digits,
                     None if gate is None else re.compile(gate))


# The table of testdata/redaction/README.md, in its order.
_BUILTINS = (
    _d(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----", ("-----BEGIN ",)),
    _d(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", ("eyJ",), _TOKEN, _TOKEN),
    _d(r"([Bb]earer[ ]+)[A-Za-z0-9._~+/=-]{12,}", ("earer",), _ALNUM, validator=lambda v: any(c in _DIGITS for c in v)),
    _d(r"(Authorization:[ ]*Basic[ ]+)[A-Za-z0-9+/=]{8,}", ("Authorization:",)),
    _d(r"sk-[A-Za-z0-9_-]{20,}", ("sk-",), _TOKEN),
    _d(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", ("_live_", "_test_"), _TOKEN),
    _d(r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})", ("gh", "github_pat_"), _TOKEN),
    _d(r"(?:AKIA|ASIA)[A-Z0-9]{16}", ("AKIA", "ASIA"), _ALNUM, _ALNUM),
    _d(r"xox[abposr]-[A-Za-z0-9-]{10,}", ("xox",), _TOKEN),
    _d(r"AIza[A-Za-z0-9_-]{35}", ("AIza",), _TOKEN, _TOKEN),
    _d(r"[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}", ("@",),
       _ALNUM | frozenset("._%+-"), _TOKEN, placeholder="[EMAIL]"),
    _d(r"[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)", (), _ALNUM, _ALNUM,
       validator=_iban, placeholder="[IBAN]", digits=True),
    _d(r"[0-9]{4}(?:[ -]?[0-9]{4}){3}[0-9]{0,3}|[0-9]{4}[ -]?[0-9]{6}[ -]?[0-9]{4,5}", (), _ALNUM, _ALNUM,
       validator=_card, placeholder="[CARD]", digits=True),
    _d(r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})?", (":",),
       _ALNUM | frozenset(":"), _ALNUM | frozenset(":"), validator=_ipv6, placeholder="[IP]",
       gate=r":[0-9A-Fa-f]{0,4}:"),  # two colons at most four hex digits apart
    _d(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", (".",), _ALNUM | frozenset("."), _ALNUM, True,
       validator=_ipv4, placeholder="[IP]", digits=True),
    _d(r"\+[0-9](?:[ .()-]{0,2}[0-9]){6,14}", ("+",), _ALNUM | frozenset("+"), _ALNUM, validator=_e164,
       placeholder="[PHONE]"),
    _d(r"(?:1[ .-]?)?\(?[2-9][0-9]{2}\)?[ .-]?[0-9]{3}[ .-][0-9]{4}", (), _ALNUM | frozenset(".-+"), _ALNUM, True,
       validator=_parentheses, placeholder="[PHONE]", digits=True),
    _d(r"0[1-9][0-9]{0,3}(?:[ -][0-9]{2,8}){1,4}", ("0",), _ALNUM | frozenset(".,:/+-"), _ALNUM, True,
       validator=_trunk, placeholder="[PHONE]"),
)


def _apply(text: str, d: _Detector) -> str:
    out: List[str] = []
    last = 0
    n = len(text)
    for m in d.regex.finditer(text):
        start, end = m.span()
        if start > 0 and text[start - 1] in d.left:
            continue
        if end < n:
            after = text[end]
            if after in d.right or (d.no_dot_digit and after == "." and end + 1 < n and text[end + 1] in _DIGITS):
                continue
        # A capturing group is a kept prefix (bearer, basic_auth).
        value_start = m.end(1) if d.regex.groups else start
        if d.validator is not None and not d.validator(text[value_start:end]):
            continue
        out.append(text[last:value_start])
        out.append(d.placeholder)
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


class CustomPattern(NamedTuple):
    """A compiled custom pattern: every non-empty match becomes ``placeholder`` verbatim."""

    regex: Pattern[str]
    placeholder: str


def compile_patterns(patterns: Optional[Iterable[Mapping[str, Any]]]) -> List[CustomPattern]:
    """Compile ``[{"name", "regex", "placeholder"}]`` (as ``GET /v1/privacy`` shows them); a bad regex raises ``ValueError``."""
    out: List[CustomPattern] = []
    for i, p in enumerate(patterns or ()):
        try:
            rx = re.compile(p["regex"])
        except (KeyError, TypeError, re.error) as e:
            raise ValueError(f"expd: redact_patterns[{i}].regex: {e}") from None
        out.append(CustomPattern(rx, p.get("placeholder") or DEFAULT_PLACEHOLDER))
    return out


def _custom(text: str, p: CustomPattern) -> str:
    # A function, not a replacement string: the placeholder is verbatim.
    return p.regex.sub(lambda m: p.placeholder if m.end() > m.start() else m.group(0), text)


def redact(text: str, patterns: Optional[Iterable[Any]] = None) -> str:
    """``text`` with the built-in detectors' matches (emails, phone numbers, card
    numbers, IBANs, IP addresses, keys and tokens) replaced by typed placeholders
    such as ``[EMAIL]``; ``patterns`` (custom ``{"name", "regex", "placeholder"}``
    or compiled ones) run first, in order."""
    for p in patterns or ():
        text = _custom(text, p if isinstance(p, CustomPattern) else compile_patterns([p])[0])
    # Placeholders hold no digit, so a text without digits after the custom
    # patterns never gains one.
    has_digit = _ANY_DIGIT.search(text) is not None
    for d in _BUILTINS:
        if d.digits and not has_digit:
            continue
        if d.needs:
            for literal in d.needs:
                if literal in text:
                    break
            else:
                continue
        if d.gate is not None and d.gate.search(text) is None:
            continue
        text = _apply(text, d)
    return text


class Redactor:
    """What a client with ``redact`` on applies to the prompt and response of every model call."""

    __slots__ = ("_patterns", "_hook")

    def __init__(self, hook: Optional[Callable[[str], str]], patterns: Optional[Iterable[Mapping[str, Any]]]) -> None:
        self._hook = hook
        self._patterns = compile_patterns(patterns)

    def __call__(self, text: str) -> str:
        text = redact(text, self._patterns)
        if self._hook is None:
            return text
        try:
            out = self._hook(text)
        except Exception:  # noqa: BLE001 - fail closed: an unredacted text never leaves
            logger.exception("expd: the redact hook raised; the text is sent as %s", DEFAULT_PLACEHOLDER)
            return DEFAULT_PLACEHOLDER
        if type(out) is not str:
            logger.error("expd: the redact hook returned %s, not str; the text is sent as %s",
                         type(out).__name__, DEFAULT_PLACEHOLDER)
            return DEFAULT_PLACEHOLDER
        return out


def redactor(redact_option: Any, patterns: Optional[Iterable[Mapping[str, Any]]]) -> Optional[Redactor]:
    """The client's redactor: None when off (``redact=False`` and no patterns), else
    the built-ins and ``patterns``, then the caller's function when ``redact`` is one."""
    if callable(redact_option):
        return Redactor(redact_option, patterns)
    if redact_option or patterns:
        return Redactor(None, patterns)
    return None
