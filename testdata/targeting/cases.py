# Writes vectors.json: the targeting cases every implementation must pass
# (targeting/vectors_test.go, sdk/go, sdk/python, sdk/js). The expected
# answers are written here by hand from docs/targeting.md, not computed by
# any implementation. Run: python3 testdata/targeting/cases.py
import json, os

A = {  # the attributes most cases read
    "id": "u1", "country": "FR", "plan": "pro", "age": 34, "score": 0.5,
    "beta": True, "deleted": False, "nothing": None, "name": "naïve 😀",
    "tags": ["llm", "chat", "pro"], "scores": [3, 7, 12], "empty": [],
    "company": {"name": "Acme", "size": 120, "address": {"city": "Lyon"}},
    "orders": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 5}],
    "matrix": [[1, 2], [3]], "version": "2.10.1", "rc": "2.10.1-rc.2",
    "build": "v2.10.1+45", "lang": "fr-FR", "email": "Ann@Example.com",
    "multiline": "line1\nline2", "zero": 0, "numstr": "34",
}

cases = []
def case(name, cond, match, attrs=None):
    cases.append({"name": name, "condition": cond, "attributes": A if attrs is None else attrs, "match": match})

# literals and $eq / $ne
case("empty condition matches everyone", {}, True)
case("string equality", {"country": "FR"}, True)
case("string equality is case-sensitive", {"country": "fr"}, False)
case("no coercion: string vs number", {"age": "34"}, False)
case("no coercion: number vs numeric string", {"numstr": 34}, False)
case("number equality", {"age": 34}, True)
case("number equality across int and float", {"age": 34.0}, True)
case("boolean equality", {"beta": True}, True)
case("boolean is not a number", {"beta": 1}, False)
case("zero is not false", {"zero": False}, False)
case("null literal matches null", {"nothing": None}, True)
case("null literal matches a missing attribute", {"missing": None}, True)
case("null literal does not match false", {"deleted": None}, False)
case("array literal: equal in order", {"tags": ["llm", "chat", "pro"]}, True)
case("array literal: order matters", {"tags": ["chat", "llm", "pro"]}, False)
case("object literal: keys in any order", {"company.address": {"city": "Lyon"}}, True)
case("object literal: extra key differs", {"company.address": {"city": "Lyon", "zip": "69001"}}, False)
case("$eq string", {"plan": {"$eq": "pro"}}, True)
case("$eq mismatch", {"plan": {"$eq": "free"}}, False)
case("$eq on a missing attribute", {"missing": {"$eq": "x"}}, False)
case("$eq array", {"scores": {"$eq": [3, 7, 12]}}, True)
case("$ne", {"plan": {"$ne": "free"}}, True)
case("$ne equal", {"plan": {"$ne": "pro"}}, False)
case("$ne on a missing attribute", {"missing": {"$ne": "x"}}, True)
case("$ne type mismatch", {"age": {"$ne": "34"}}, True)
case("non-ASCII equality", {"name": "naïve 😀"}, True)
case("non-ASCII: decomposed form differs", {"name": "nai\u0308ve 😀"}, False)
# ordering
case("$gt number", {"age": {"$gt": 30}}, True)
case("$gt equal", {"age": {"$gt": 34}}, False)
case("$gte equal", {"age": {"$gte": 34}}, True)
case("$lt number", {"age": {"$lt": 34}}, False)
case("$lte equal", {"age": {"$lte": 34}}, True)
case("$lte greater", {"age": {"$lte": 33.5}}, False)
case("$lt float", {"score": {"$lt": 0.75}}, True)
case("$gt and $lt together (range)", {"age": {"$gt": 18, "$lt": 65}}, True)
case("range outside", {"age": {"$gt": 40, "$lt": 65}}, False)
case("$gt string", {"country": {"$gt": "DE"}}, True)
case("$lt string", {"country": {"$lt": "DE"}}, False)
case("$lt strings by code point: Z < a", {"x": {"$lt": "a"}}, True, {"x": "Z"})
case("$gt strings by code point: astral > private use", {"x": {"$gt": "\ue000"}}, True, {"x": "😀"})
case("$lt type mismatch: number vs string", {"age": {"$lt": "99"}}, False)
case("$gte type mismatch: string vs number", {"numstr": {"$gte": 1}}, False)
case("$gt on a missing attribute", {"missing": {"$gt": 0}}, False)
case("$lt on null", {"nothing": {"$lt": 1}}, False)
case("$gt boolean attribute", {"beta": {"$gt": 0}}, False)
# $in / $nin
case("$in scalar", {"country": {"$in": ["US", "FR", "DE"]}}, True)
case("$in scalar absent", {"country": {"$in": ["US", "DE"]}}, False)
case("$in empty list", {"country": {"$in": []}}, False)
case("$in no coercion", {"age": {"$in": ["34"]}}, False)
case("$in number", {"age": {"$in": [33, 34]}}, True)
case("$in array attribute: any element", {"tags": {"$in": ["pro", "team"]}}, True)
case("$in array attribute: none", {"tags": {"$in": ["team"]}}, False)
case("$in empty array attribute", {"empty": {"$in": ["x"]}}, False)
case("$in missing attribute", {"missing": {"$in": ["x"]}}, False)
case("$in null listed matches missing", {"missing": {"$in": [None, "x"]}}, True)
case("$nin scalar", {"country": {"$nin": ["US", "DE"]}}, True)
case("$nin scalar listed", {"country": {"$nin": ["FR"]}}, False)
case("$nin missing attribute", {"missing": {"$nin": ["x"]}}, True)
case("$nin array attribute", {"tags": {"$nin": ["chat"]}}, False)
# $all / $size / $elemMatch
case("$all subset", {"tags": {"$all": ["pro", "llm"]}}, True)
case("$all missing element", {"tags": {"$all": ["pro", "team"]}}, False)
case("$all empty list", {"tags": {"$all": []}}, True)
case("$all on a scalar", {"country": {"$all": ["FR"]}}, False)
case("$all with operator items", {"scores": {"$all": [{"$gt": 10}, {"$lt": 5}]}}, True)
case("$all with operator item unmatched", {"scores": {"$all": [{"$gt": 20}]}}, False)
case("$size", {"tags": {"$size": 3}}, True)
case("$size mismatch", {"tags": {"$size": 2}}, False)
case("$size empty", {"empty": {"$size": 0}}, True)
case("$size with operators", {"tags": {"$size": {"$gt": 2}}}, True)
case("$size on a string", {"country": {"$size": 2}}, False)
case("$size on missing", {"missing": {"$size": 0}}, False)
case("$elemMatch operators on scalars", {"scores": {"$elemMatch": {"$gt": 10, "$lt": 20}}}, True)
case("$elemMatch operators none", {"scores": {"$elemMatch": {"$gt": 12}}}, False)
case("$elemMatch condition on objects", {"orders": {"$elemMatch": {"sku": "b", "qty": {"$gte": 5}}}}, True)
case("$elemMatch condition on objects: one element must satisfy all", {"orders": {"$elemMatch": {"sku": "a", "qty": {"$gte": 5}}}}, False)
case("$elemMatch with $or", {"orders": {"$elemMatch": {"$or": [{"sku": "z"}, {"qty": 2}]}}}, True)
case("$elemMatch on a scalar", {"country": {"$elemMatch": {"$eq": "FR"}}}, False)
case("$elemMatch on empty", {"empty": {"$elemMatch": {"$exists": True}}}, False)
case("$elemMatch nested arrays", {"matrix": {"$elemMatch": {"$size": 1}}}, True)
case("$elemMatch condition on arrays, by index", {"matrix": {"$elemMatch": {"0": 3}}}, True)
case("$elemMatch condition on arrays, by index, none", {"matrix": {"$elemMatch": {"1": 3}}}, False)
case("$elemMatch zero element", {"x": {"$elemMatch": {"$eq": 0}}}, True, {"x": [0, False, ""]})
# $exists / $type
case("$exists true", {"plan": {"$exists": True}}, True)
case("$exists true on missing", {"missing": {"$exists": True}}, False)
case("$exists true on null", {"nothing": {"$exists": True}}, False)
case("$exists true on false", {"deleted": {"$exists": True}}, True)
case("$exists false on missing", {"missing": {"$exists": False}}, True)
case("$exists false on present", {"plan": {"$exists": False}}, False)
case("$exists nested missing parent", {"company.owner.name": {"$exists": False}}, True)
for t, path, ok in [("string", "plan", True), ("number", "age", True), ("number", "score", True), ("boolean", "beta", True),
                    ("array", "tags", True), ("object", "company", True), ("null", "nothing", True), ("null", "missing", True),
                    ("string", "age", False), ("number", "numstr", False), ("object", "tags", False), ("array", "company", False), ("boolean", "zero", False)]:
    case(f"$type {t} of {path}", {path: {"$type": t}}, ok)
# $regex
case("$regex", {"email": {"$regex": "@example\\.com$"}}, False)
case("$regex matches", {"email": {"$regex": "@Example\\.com$"}}, True)
case("$regex anchored", {"lang": {"$regex": "^fr(-[A-Z]{2})?$"}}, True)
case("$regex is a search, not a full match", {"lang": {"$regex": "R"}}, True)
case("$regex on a number", {"age": {"$regex": "3"}}, False)
case("$regex on missing", {"missing": {"$regex": ""}}, False)
case("$regex on an array", {"tags": {"$regex": "llm"}}, False)
case("$regex dot matches newline", {"multiline": {"$regex": "1.l"}}, True)
case("$regex $ is the end of the text, not before a final newline", {"x": {"$regex": "a$"}}, False, {"x": "a\n"})
case("$regex dot matches one emoji", {"name": {"$regex": "^naïve .$"}}, True)
case("$regex \\d is ASCII only", {"x": {"$regex": "^\\d+$"}}, False, {"x": "١٢٣"})
case("$regex \\w is ASCII only", {"x": {"$regex": "^\\w+$"}}, False, {"x": "naïve"})
case("$regex class of non-ASCII", {"name": {"$regex": "[ïë]"}}, True)
case("$regex negated class", {"country": {"$regex": "^[^A-E]"}}, True)
case("$regex alternation and groups", {"plan": {"$regex": "^(?:free|pro)$"}}, True)
case("$regex lazy quantifier", {"tags.0": {"$regex": "^l+?m$"}}, True)
case("$regex counted repetition", {"country": {"$regex": "^[A-Z]{3}$"}}, False)
# versions
for op, attr, want, ok in [
    ("$veq", "2.10.1", "2.10.1", True), ("$veq", "v2.10.1", "2.10.1", True), ("$veq", "2.10.1+45", "2.10.1", True),
    ("$vne", "2.10.1", "2.10.2", True), ("$vne", "2.10.1", "v2.10.1", False),
    ("$vgt", "2.10.1", "2.9.9", True), ("$vgt", "2.9.9", "2.10.1", False), ("$vlt", "2.9.9", "2.10.0", True),
    ("$vgt", "2.10.1", "2.10.1-rc.2", True), ("$vlt", "2.10.1-rc.2", "2.10.1", True),
    ("$vlt", "2.10.1-alpha", "2.10.1-beta", True), ("$vlt", "2.10.1-rc.2", "2.10.1-rc.10", True),
    ("$vgte", "2.10.1", "2.10.1", True), ("$vlte", "2.10.0", "2.10.1", True), ("$vgte", "1.0.0-rc.1", "1.0.0", False),
    ("$vgt", "10.0.0", "9.0.0", True), ("$veq", "2.10.1", "2.10.1-rc.2", False), ("$vlt", "2.10.1", "2.10.1-rc.2", False),
    ("$vlte", "2.10.1", "2.10.0", False), ("$veq", "1.2", "1.2", True), ("$vlt", "1.2", "1.2.0", True),
]:
    case(f"{op} {attr} vs {want}", {"v": {op: want}}, ok, {"v": attr})
case("$vgt on a number attribute", {"v": {"$vgt": "1.0.0"}}, False, {"v": 2})
case("$vgt on missing", {"v": {"$vgt": "1.0.0"}}, False, {})
# $not
case("$not operator", {"age": {"$not": {"$gt": 40}}}, True)
case("$not operator false", {"age": {"$not": {"$gt": 30}}}, False)
case("$not literal", {"country": {"$not": "FR"}}, False)
case("$not on missing", {"missing": {"$not": {"$exists": True}}}, True)
case("$not regex", {"plan": {"$not": {"$regex": "^f"}}}, True)
# logical
case("$and", {"$and": [{"country": "FR"}, {"age": {"$gte": 18}}]}, True)
case("$and one fails", {"$and": [{"country": "FR"}, {"age": {"$gte": 40}}]}, False)
case("$or", {"$or": [{"country": "US"}, {"plan": "pro"}]}, True)
case("$or none", {"$or": [{"country": "US"}, {"plan": "free"}]}, False)
case("$nor", {"$nor": [{"country": "US"}, {"plan": "free"}]}, True)
case("$nor one holds", {"$nor": [{"country": "FR"}, {"plan": "free"}]}, False)
case("$not condition", {"$not": {"country": "US"}}, True)
case("$not condition holds", {"$not": {"country": "FR"}}, False)
case("several keys are ANDed", {"country": "FR", "plan": "pro", "beta": True}, True)
case("several keys, one fails", {"country": "FR", "plan": "free"}, False)
case("logical operator and path keys are ANDed", {"$or": [{"country": "US"}, {"plan": "pro"}], "beta": False}, False)
case("nested logic", {"$or": [{"$and": [{"country": "FR"}, {"$nor": [{"plan": "free"}]}]}, {"age": {"$lt": 0}}]}, True)
# paths
case("nested path", {"company.address.city": "Lyon"}, True)
case("nested path missing parent", {"company.owner.name": "x"}, False)
case("nested path through a scalar", {"country.code": {"$exists": True}}, False)
case("array index path", {"tags.1": "chat"}, True)
case("array index out of range", {"tags.5": {"$exists": True}}, False)
case("array index then field", {"orders.1.qty": {"$gt": 4}}, True)
case("non-canonical index", {"tags.01": {"$exists": True}}, False)
case("key with an operator-like value inside an object literal is a literal", {"x": {"a": 1}}, True, {"x": {"a": 1}})
case("no attributes at all", {"country": "FR"}, False, {})
case("no attributes, $exists false", {"country": {"$exists": False}}, True, {})
# the five-condition rule of the benchmark
FIVE = {"country": {"$in": ["US", "FR", "DE"]}, "plan": "pro", "age": {"$gte": 18},
        "version": {"$vgte": "2.0.0"}, "email": {"$regex": "@(?:Example|example)\\.com$"}}
case("five conditions (benchmark rule)", FIVE, True)

invalid = []
def bad(name, cond, field):
    invalid.append({"name": name, "condition": cond, "field": field})

bad("not an object", ["x"], "targeting")
bad("unknown operator", {"age": {"$gtx": 1}}, "targeting.age.$gtx")
bad("unknown top-level operator", {"$xor": []}, "targeting.$xor")
bad("$in not an array", {"plan": {"$in": "pro"}}, "targeting.plan.$in")
bad("$nin not an array", {"plan": {"$nin": 1}}, "targeting.plan.$nin")
bad("$all not an array", {"tags": {"$all": "x"}}, "targeting.tags.$all")
bad("$and empty", {"$and": []}, "targeting.$and")
bad("$or not an array", {"$or": {"a": 1}}, "targeting.$or")
bad("$nor element not an object", {"$nor": [1]}, "targeting.$nor[0]")
bad("$not not an object", {"$not": "x"}, "targeting.$not")
bad("$exists not a boolean", {"plan": {"$exists": 1}}, "targeting.plan.$exists")
bad("$type unknown", {"plan": {"$type": "date"}}, "targeting.plan.$type")
bad("$gt of a boolean", {"age": {"$gt": True}}, "targeting.age.$gt")
bad("$lt of an array", {"age": {"$lt": [1]}}, "targeting.age.$lt")
bad("$regex not a string", {"plan": {"$regex": 1}}, "targeting.plan.$regex")
bad("$veq not a string", {"v": {"$veq": 1}}, "targeting.v.$veq")
bad("operators mixed with fields", {"company": {"$exists": True, "name": "Acme"}}, "targeting.company.name")
bad("empty path part", {"company..name": "x"}, "targeting.company..name")
bad("nested invalid inside $and", {"$and": [{"a": 1}, {"b": {"$size": {"$bogus": 1}}}]}, "targeting.$and[1].b.$size.$bogus")
bad("invalid regex inside $elemMatch", {"orders": {"$elemMatch": {"sku": {"$regex": "(?=a)"}}}}, "targeting.orders.$elemMatch.sku.$regex")
deep = {"a": 1}
for _ in range(20):
    deep = {"$not": deep}
bad("too deep", deep, "targeting" + ".$not" * 17)

regex = []
def rx(pattern, valid, matches=None):
    regex.append({"pattern": pattern, "valid": valid, "matches": matches or {}})

rx("", True, {"": True, "abc": True})
rx("abc", True, {"xabcx": True, "ab": False})
rx("^a.c$", True, {"abc": True, "a\nc": True, "a😀c": True, "ac": False})
rx("a$", True, {"a": True, "a\n": False})
rx("^\\d{2,3}$", True, {"12": True, "1234": False, "١٢": False})
rx("\\w+@\\w+\\.com", True, {"ann@acme.com": True, "ann@acme.org": False})
rx("[a-z0-9_\\-]+", True, {"-": True, " ": False})
rx("[^\\d]", True, {"1": False, "a": True})
rx("[\\]\\[]", True, {"]": True, "[": True, "a": False})
rx("[a-]", True, {"-": True, "b": False})
rx("(?:ab)+?c", True, {"ababc": True, "ac": False})
rx("a{0}b", True, {"b": True})
rx("x{2,}", True, {"xx": True, "x": False})
rx("\\.\\*\\+\\?\\(\\)\\{\\}\\|\\/\\^\\$\\\\", True, {".*+?(){}|/^$\\": True})
rx("\\t\\n\\r", True, {"\t\n\r": True})
rx("😀|ï", True, {"ï": True, "😀": True, "i": False})
rx("[😀-😂]", True, {"😁": True, "😃": False})
rx("(a|)", True, {"": True})
rx("(?=a)", False); rx("(?!a)", False); rx("(?<=a)b", False); rx("(?<!a)b", False)
rx("(?<name>a)", False); rx("(?P<name>a)", False); rx("(?i)a", False); rx("(?s:a)", False)
rx("(a)\\1", False); rx("\\b", False); rx("\\B", False); rx("\\s", False); rx("\\S", False)
rx("\\p{L}", False); rx("\\x41", False); rx("\\u0041", False); rx("\\0", False); rx("\\Z", False); rx("\\A", False)
rx("\\z", False); rx("\\-", False); rx("\\a", False); rx("\\f", False); rx("\\v", False)
rx("a**", False); rx("a*+", False); rx("a++", False); rx("*a", False); rx("a|*", False); rx("(*)", False); rx("^*", False); rx("$+", False)
rx("a{", False); rx("a{x}", False); rx("a{,3}", False); rx("a{3,2}", False); rx("a{1001}", False); rx("{1}", False); rx("a{2}{3}", False)
rx("a}", False); rx("a]", False); rx("[]a]", False); rx("[]", False); rx("[^]", False); rx("[a", False); rx("[[:alpha:]]", False)
rx("[z-a]", False); rx("[\\d-z]", False); rx("[-a]", False); rx("[a-c-e]", False); rx("[\\b]", False)
rx("(a", False); rx("a)", False); rx("\\", False); rx("a" * 513, False)

out = {
    "format": 1,
    "notes": [
        "Semantics: docs/targeting.md. Each case: the condition evaluated over the attributes gives match.",
        "invalid: conditions the server refuses at save (400, the error names field) and every client refuses to compile.",
        "regex: $regex patterns; valid ones match each text as given, invalid ones are refused by every implementation.",
        "Written by hand by testdata/targeting/cases.py, not computed by any implementation.",
    ],
    "cases": cases, "invalid": invalid, "regex": regex,
}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "vectors.json"), "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False, indent=1)
    f.write("\n")
print(len(cases), "cases,", len(invalid), "invalid,", len(regex), "regexes")
