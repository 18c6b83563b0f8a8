"""Targeting conditions: who may enter an experiment (``docs/targeting.md`` of the repository).

GrowthBook's condition syntax with expd's semantics, identical to the
server's ``targeting`` package and the other clients; the shared vectors
(``testdata/targeting/vectors.json``) pin them down. Conditions are
compiled once per config into closures.
"""

from __future__ import annotations

import functools
import operator
import re
import warnings
from typing import Any, Callable, List, Mapping, Optional, Tuple

MAX_DEPTH = 16
MAX_REGEX_LEN = 512
_MAX_REPEAT = 1000
_ESCAPES = "dDwWnrt^$\\.*+?()[]{}|/"
_CLASS_ESCAPES = _ESCAPES + "-"
_TYPES = ("string", "number", "boolean", "array", "object", "null")
_LOGICAL = ("$and", "$or", "$nor", "$not")

Test = Callable[[Any], bool]


class ConditionError(ValueError):
    """The condition is not one the server accepts (it refuses it at save)."""


def compile_condition(condition: Any) -> Test:
    """Compile a condition over an attributes mapping; raise ``ConditionError`` if invalid."""
    return _cond(condition, "", 0)


def _never(_: Any) -> bool:
    return False


def _join(at: str, key: str) -> str:
    return key if not at else at + "." + key


def _all(tests: List[Test]) -> Test:
    if len(tests) == 1:
        return tests[0]
    return lambda o: all(t(o) for t in tests)


def _cond(v: Any, at: str, depth: int) -> Test:
    if not isinstance(v, dict):
        raise ConditionError(f"{at}: must be an object of attribute paths and $and, $or, $nor, $not")
    if depth > MAX_DEPTH:
        raise ConditionError(f"{at}: nests deeper than {MAX_DEPTH} levels")
    fields: List[Tuple[str, List[str], Test]] = []  # (first key, rest of the path, test)
    paths: List[Tuple[List[str], Test]] = []  # the same as (path, test)
    parts: List[Test] = []  # logical operators
    for k in sorted(v):
        val, here = v[k], _join(at, k)
        if k in ("$and", "$or", "$nor"):
            if not isinstance(val, list) or not val:
                raise ConditionError(f"{here}: must be a non-empty array of conditions")
            subs = [_cond(s, f"{here}[{i}]", depth + 1) for i, s in enumerate(val)]
            if k == "$and":
                parts.append(lambda o, subs=subs: all(s(o) for s in subs))
            elif k == "$or":
                parts.append(lambda o, subs=subs: any(s(o) for s in subs))
            else:
                parts.append(lambda o, subs=subs: not any(s(o) for s in subs))
        elif k == "$not":
            sub = _cond(val, here, depth + 1)
            parts.append(lambda o, sub=sub: not sub(o))
        elif k.startswith("$"):
            raise ConditionError(f"{here}: is not a logical operator")
        else:
            path = k.split(".")
            if "" in path:
                raise ConditionError(f"{here}: is not an attribute path")
            test = _value(val, here, depth + 1)
            fields.append((path[0], path[1:], test))
            paths.append((path, test))
    if not fields:
        return _all(parts) if parts else (lambda o: True)
    rest = _all(parts) if parts else None

    # One call for every attribute path of the object: a call costs more than the test itself.
    def match(o: Any) -> bool:
        if isinstance(o, dict):
            get = o.get
            for key, tail, test in fields:
                if not test(_lookup(get(key), tail) if tail else get(key)):
                    return False
        else:
            for path, test in paths:
                if not test(_lookup(o, path)):
                    return False
        return rest is None or rest(o)
    return match


def _has_operator(obj: Mapping[str, Any]) -> bool:
    return any(k.startswith("$") for k in obj)


def _value(v: Any, at: str, depth: int) -> Test:
    if not isinstance(v, dict) or not _has_operator(v):
        return _equal_to(v)
    if depth > MAX_DEPTH:
        raise ConditionError(f"{at}: nests deeper than {MAX_DEPTH} levels")
    parts: List[Test] = []
    for op in sorted(v):
        if not op.startswith("$"):
            raise ConditionError(f"{_join(at, op)}: cannot be mixed with operators")
        parts.append(_operator(op, v[op], _join(at, op), depth))
    return _all(parts)


_ORDER = ("$lt", "$lte", "$gt", "$gte")


def _operator(op: str, arg: Any, at: str, depth: int) -> Test:
    if op == "$eq":
        return _equal_to(arg)
    if op == "$ne":
        if isinstance(arg, bool) or arg is None:
            return lambda a: a is not arg  # True, False and None are singletons
        eq = _equal_to(arg)
        return lambda a: not eq(a)
    if op in _ORDER:
        if _is_number(arg):
            # Numbers compare as floats, as json_equal does; NaN orders with nothing (every comparison is false).
            # _is_number written out: a call costs more than the comparison.
            g = float(arg)
            if op == "$lt":
                return lambda a: isinstance(a, _NUMBER) and not isinstance(a, bool) and float(a) < g
            if op == "$lte":
                return lambda a: isinstance(a, _NUMBER) and not isinstance(a, bool) and float(a) <= g
            if op == "$gt":
                return lambda a: isinstance(a, _NUMBER) and not isinstance(a, bool) and float(a) > g
            return lambda a: isinstance(a, _NUMBER) and not isinstance(a, bool) and float(a) >= g
        if not isinstance(arg, str):
            raise ConditionError(f"{at}: must be a number or a string")
        # Python orders strings by code points.
        if op == "$lt":
            return lambda a: isinstance(a, str) and a < arg
        if op == "$lte":
            return lambda a: isinstance(a, str) and a <= arg
        if op == "$gt":
            return lambda a: isinstance(a, str) and a > arg
        return lambda a: isinstance(a, str) and a >= arg
    if op in ("$in", "$nin"):
        if not isinstance(arg, list):
            raise ConditionError(f"{at}: must be an array")
        strings, listed = _list_test(arg)

        def is_in(a: Any) -> bool:
            if isinstance(a, str):
                return a in strings
            return any(map(listed, a)) if isinstance(a, list) else listed(a)
        if op == "$in":
            return is_in
        return lambda a: not is_in(a)
    if op == "$all":
        if not isinstance(arg, list):
            raise ConditionError(f"{at}: must be an array")
        subs = [_value(s, f"{at}[{i}]", depth + 1) for i, s in enumerate(arg)]
        return lambda a: isinstance(a, list) and all(any(s(e) for e in a) for s in subs)
    if op == "$size":
        sub = _value(arg, at, depth + 1)
        return lambda a: isinstance(a, list) and sub(len(a))
    if op == "$elemMatch":
        if isinstance(arg, dict) and _has_operator(arg) and not any(k in arg for k in _LOGICAL):
            sub = _value(arg, at, depth + 1)
        else:
            sub = _cond(arg, at, depth + 1)
        return lambda a: isinstance(a, list) and any(sub(e) for e in a)
    if op == "$exists":
        if not isinstance(arg, bool):
            raise ConditionError(f"{at}: must be true or false")
        return lambda a: (a is not None) == arg
    if op == "$type":
        if arg not in _TYPES:
            raise ConditionError(f"{at}: must be one of {', '.join(_TYPES)}")
        return lambda a: _type_of(a) == arg
    if op == "$regex":
        if not isinstance(arg, str):
            raise ConditionError(f"{at}: must be a string")
        try:
            rx = compile_regex(arg)
        except ValueError as exc:
            raise ConditionError(f"{at}: {exc}") from exc
        return lambda a: isinstance(a, str) and rx.search(a) is not None
    if op == "$not":
        sub = _value(arg, at, depth + 1)
        return lambda a: not sub(a)
    if op in ("$veq", "$vne", "$vlt", "$vlte", "$vgt", "$vgte"):
        if not isinstance(arg, str):
            raise ConditionError(f"{at}: must be a version string")
        want = padded_version(arg)
        compare = _VERSION_ORDER[op]
        return lambda a: isinstance(a, str) and compare(_padded_memo(a), want)
    raise ConditionError(f"{at}: is not a supported operator")


def _lookup(o: Any, path: List[str]) -> Any:
    for part in path:
        if isinstance(o, dict):
            o = o.get(part)
        elif isinstance(o, list):
            i = _array_index(part)
            if i is None or i >= len(o):
                return None
            o = o[i]
        else:
            return None
    return o


def _array_index(s: str) -> Optional[int]:
    if not s or len(s) > 9 or (len(s) > 1 and s[0] == "0") or not all("0" <= c <= "9" for c in s):
        return None
    return int(s)


# Padded versions compare as strings (by code points).
_VERSION_ORDER = {
    "$veq": operator.eq, "$vne": operator.ne, "$vlt": operator.lt,
    "$vlte": operator.le, "$vgt": operator.gt, "$vgte": operator.ge,
}


def _equal_to(v: Any) -> Test:
    """The test "equals v" (json_equal), specialised by v's type once per compile."""
    if v is None or isinstance(v, bool):
        return lambda a: a is v  # True, False and None are singletons
    if isinstance(v, str):
        return lambda a: isinstance(a, str) and a == v
    if _is_number(v):
        f = float(v)
        return lambda a: isinstance(a, _NUMBER) and not isinstance(a, bool) and float(a) == f
    return lambda a: json_equal(a, v)


def _list_test(lst: List[Any]) -> Tuple[frozenset, Test]:
    """The test "equals one of lst" (json_equal) of $in and $nin, and lst's strings: strings and
    numbers in sets, no type crossing (a set alone would find True or 1.0 for 1), arrays and objects
    by deep equality."""
    strings = frozenset(x for x in lst if isinstance(x, str))
    numbers = frozenset(float(x) for x in lst if _is_number(x))
    singletons = [x for x in lst if x is None or isinstance(x, bool)]
    composites = [x for x in lst if isinstance(x, (list, dict))]

    def listed(a: Any) -> bool:
        if isinstance(a, str):
            return a in strings
        if _is_number(a):
            if not numbers:
                return False
            f = float(a)
            return f in numbers and f == f  # NaN equals nothing
        if a is None or isinstance(a, bool):
            return any(a is x for x in singletons)
        return any(json_equal(a, x) for x in composites)
    return strings, listed


_NUMBER = (int, float)


def _is_number(v: Any) -> bool:
    return isinstance(v, _NUMBER) and not isinstance(v, bool)


def _type_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if _is_number(v):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "unknown"


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values, with no conversion between types (True is not 1)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and float(a) == float(b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def padded_version(v: str) -> str:
    """GrowthBook's paddedVersionString: comparable version strings (docs/targeting.md)."""
    if v.startswith("v"):
        v = v[1:]
    v = v.split("+", 1)[0]
    parts = re.split(r"[.-]", v)
    if len(parts) == 3:
        parts.append("~")
    return "-".join(p.rjust(5) if p and all("0" <= c <= "9" for c in p) else p for p in parts)


# Attribute versions repeat (an app has few versions live): their padded forms are remembered.
_padded_memo = functools.lru_cache(maxsize=1024)(padded_version)


def compile_regex(pattern: str) -> "re.Pattern[str]":
    """Check a $regex pattern against the subset every implementation evaluates
    identically and compile it: dotall, ASCII classes, $ only at the end."""
    out = _check_regex(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return re.compile(out, re.DOTALL | re.ASCII)


def _check_regex(p: str) -> str:
    """Raise ValueError for a pattern outside the subset; return it with $ made the end of text."""
    if len(p) > MAX_REGEX_LEN:
        raise ValueError(f"regex is longer than {MAX_REGEX_LEN} characters")
    out: List[str] = []
    depth, repeatable, i, n = 0, False, 0, len(p)
    while i < n:
        c = p[i]
        start = i
        if c == "\\":
            if i + 1 == n:
                raise ValueError("regex ends with a lone backslash")
            i += 1
            if p[i] not in _ESCAPES:
                raise ValueError(f"regex escape \\{p[i]} is not supported")
            repeatable = True
        elif c == "(":
            if i + 1 < n and p[i + 1] == "?":
                if i + 2 >= n or p[i + 2] != ":":
                    raise ValueError("regex group (? is not supported: only ( ) and (?: )")
                i += 2
            depth += 1
            repeatable = False
        elif c == ")":
            if depth == 0:
                raise ValueError("regex has an unbalanced )")
            depth -= 1
            repeatable = True
        elif c == "$":
            out.append("\\Z")  # Python's $ also matches before a final newline
            repeatable = False
            i += 1
            continue
        elif c in "|^":
            repeatable = False
        elif c in "*+?{":
            if not repeatable:
                raise ValueError(f"regex quantifier {c} at character {i + 1} has nothing to repeat")
            if c == "{":
                i = _repeat_count(p, i)
            if i + 1 < n and p[i + 1] == "?":
                i += 1
            repeatable = False
        elif c in "}]":
            raise ValueError(f"regex character {c} must be escaped")
        elif c == "[":
            i = _class(p, i)
            repeatable = True
        else:
            repeatable = True
        i += 1
        out.append(p[start:i])
    if depth:
        raise ValueError("regex has an unbalanced (")
    return "".join(out)


def _repeat_count(p: str, i: int) -> int:
    bad = ValueError(f"regex {{ at character {i + 1} must start {{n}}, {{n,}} or {{n,m}} with n <= m <= {_MAX_REPEAT}")
    j = i + 1
    num, j = _digits(p, j)
    if num is None:
        raise bad
    m = num
    if j < len(p) and p[j] == ",":
        j += 1
        if j < len(p) and p[j] != "}":
            m, j = _digits(p, j)
            if m is None or m < num:
                raise bad
    if j >= len(p) or p[j] != "}" or m > _MAX_REPEAT:
        raise bad
    return j


def _digits(p: str, j: int):
    start = j
    while j < len(p) and "0" <= p[j] <= "9" and j - start < 5:
        j += 1
    return (int(p[start:j]) if j > start else None), j


def _class(p: str, i: int) -> int:
    n = len(p)
    j = i + 1
    if j < n and p[j] == "^":
        j += 1
    if j < n and p[j] == "]":
        raise ValueError(f"regex class at character {i + 1} is empty")

    def atom(j: int):
        c = p[j]
        if c == "\\":
            if j + 1 == n:
                raise ValueError("regex ends with a lone backslash")
            e = p[j + 1]
            if e not in _CLASS_ESCAPES:
                raise ValueError(f"regex escape \\{e} is not supported in a class")
            return {"d": None, "D": None, "w": None, "W": None, "n": "\n", "r": "\r", "t": "\t"}.get(e, e), j + 2
        if c == "[":
            raise ValueError("regex character [ inside a class must be escaped")
        if c == "-":
            if j + 1 < n and p[j + 1] == "]":
                return "-", j + 1
            raise ValueError("regex character - inside a class must be escaped unless it is last or makes a range")
        return c, j + 1

    while j < n and p[j] != "]":
        lo, j = atom(j)
        if j + 1 < n and p[j] == "-" and p[j + 1] != "]":
            hi, j = atom(j + 1)
            if lo is None or hi is None or hi < lo:
                raise ValueError(f"regex class range at character {j} must go from a character to a greater one")
    if j >= n:
        raise ValueError(f"regex class at character {i + 1} has no closing ]")
    return j
