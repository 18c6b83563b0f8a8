// Package targeting compiles and evaluates an experiment's targeting
// condition: a MongoDB-style condition over user attributes in GrowthBook's
// condition syntax, with the semantics of docs/targeting.md. It is pure and
// standard library only: the Go client evaluates with it and the server
// (module github.com/expd/expd) validates and evaluates with it too, so the
// two cannot differ. The other clients' copies
// (sdk/python/expd/_targeting.py, sdk/js/src/targeting.js) must agree
// exactly; the shared vectors in testdata/targeting/vectors.json pin them
// down.
package targeting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of a condition, so evaluating one cannot
// exhaust a client's stack.
const MaxDepth = 16

// FieldError is one invalid part of a condition; Field is its path inside
// the condition ("$and[1].plan.$in"), "" for the condition itself.
type FieldError struct {
	Field  string
	Reason string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Reason }

// Condition is a compiled condition. A nil *Condition matches everyone.
type Condition struct {
	match func(any) bool
}

// Nobody is the condition no one satisfies.
var Nobody = &Condition{match: never}

// Match tells whether attrs (JSON-like values: nil, bool, numbers, string,
// []any, map[string]any) satisfy the condition.
func (c *Condition) Match(attrs map[string]any) bool {
	return c == nil || c.match(attrs)
}

// Parse compiles a condition from its JSON, or lists every invalid part.
// An empty object is the condition that matches everyone.
func Parse(raw []byte) (*Condition, []FieldError) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, []FieldError{{"", "is not valid JSON: " + err.Error()}}
	}
	return Compile(v)
}

// Compile compiles a condition already decoded from JSON.
func Compile(v any) (*Condition, []FieldError) {
	c := compiler{}
	m := c.cond(v, "", 0)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return &Condition{match: m}, nil
}

type compiler struct{ errs []FieldError }

func (c *compiler) fail(at, format string, args ...any) {
	c.errs = append(c.errs, FieldError{at, fmt.Sprintf(format, args...)})
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func never(any) bool { return false }

// cond compiles a condition over an object: attribute paths and the
// logical operators $and, $or, $nor, $not, all of which must hold.
func (c *compiler) cond(v any, at string, depth int) func(any) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(at, "must be an object of attribute paths and $and, $or, $nor, $not")
		return never
	}
	if depth > MaxDepth {
		c.fail(at, "nests deeper than %d levels", MaxDepth)
		return never
	}
	var fields []field
	var parts []func(any) bool // logical operators
	for _, k := range sortedKeys(obj) {
		val, here := obj[k], join(at, k)
		switch k {
		case "$and", "$or", "$nor":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				c.fail(here, "must be a non-empty array of conditions")
				continue
			}
			subs := make([]func(any) bool, len(list))
			for i, s := range list {
				subs[i] = c.cond(s, here+"["+strconv.Itoa(i)+"]", depth+1)
			}
			switch k {
			case "$and":
				parts = append(parts, allOf(subs))
			case "$or":
				parts = append(parts, anyOf(subs))
			default:
				or := anyOf(subs)
				parts = append(parts, func(o any) bool { return !or(o) })
			}
		case "$not":
			sub := c.cond(val, here, depth+1)
			parts = append(parts, func(o any) bool { return !sub(o) })
		default:
			if strings.HasPrefix(k, "$") {
				c.fail(here, "is not a logical operator ($and, $or, $nor, $not); an attribute path cannot start with $")
				continue
			}
			path := strings.Split(k, ".")
			if slices.Contains(path, "") {
				c.fail(here, "is not an attribute path: empty part between dots")
				continue
			}
			fields = append(fields, field{key: path[0], rest: path[1:], path: path, test: c.value(val, here, depth+1)})
		}
	}
	if len(fields) == 0 {
		return allOf(parts)
	}
	var logical func(any) bool
	if len(parts) > 0 {
		logical = allOf(parts)
	}
	// One closure for every attribute path of the object, each read
	// straight from the attributes map.
	return func(o any) bool {
		m, isMap := o.(map[string]any)
		for i := range fields {
			f := &fields[i]
			var a any
			switch {
			case !isMap:
				a = lookup(o, f.path)
			case len(f.rest) == 0:
				a = m[f.key]
			default:
				a = lookup(m[f.key], f.rest)
			}
			if !f.test(a) {
				return false
			}
		}
		return logical == nil || logical(o)
	}
}

// field is an attribute path of a condition and the test of its value.
type field struct {
	key  string   // the path's first part
	rest []string // the parts after it
	path []string
	test func(any) bool
}

// value compiles a condition on one value: an object of operators, all of
// which must hold, or a literal the value must equal.
func (c *compiler) value(v any, at string, depth int) func(any) bool {
	obj, ok := v.(map[string]any)
	if !ok || !hasOperator(obj) {
		return equalTo(v)
	}
	if depth > MaxDepth {
		c.fail(at, "nests deeper than %d levels", MaxDepth)
		return never
	}
	parts := make([]func(any) bool, 0, len(obj))
	for _, op := range sortedKeys(obj) {
		if !strings.HasPrefix(op, "$") {
			c.fail(join(at, op), "cannot be mixed with operators: an object is either operators or a literal value")
			continue
		}
		if f := c.operator(op, obj[op], join(at, op), depth); f != nil {
			parts = append(parts, f)
		}
	}
	return allOf(parts)
}

func hasOperator(obj map[string]any) bool {
	for k := range obj {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

// typeNames are the answers of $type.
var typeNames = []string{"string", "number", "boolean", "array", "object", "null"}

func (c *compiler) operator(op string, arg any, at string, depth int) func(any) bool {
	switch op {
	case "$eq":
		return equalTo(arg)
	case "$ne":
		eq := equalTo(arg)
		return func(a any) bool { return !eq(a) }
	case "$lt", "$lte", "$gt", "$gte":
		ok := orderTest(op)
		if g, isNum := number(arg); isNum {
			if g != g {
				return never // NaN (only from a Go caller's Compile) orders with nothing
			}
			return func(a any) bool {
				f, isNum := number(a)
				return isNum && f == f && ok(cmpFloat(f, g)) // NaN compares with nothing
			}
		}
		t, isStr := arg.(string)
		if !isStr {
			c.fail(at, "must be a number or a string")
			return nil
		}
		return func(a any) bool {
			s, isStr := a.(string)
			return isStr && ok(compareStrings(s, t))
		}
	case "$in", "$nin":
		list, isList := arg.([]any)
		if !isList {
			c.fail(at, "must be an array")
			return nil
		}
		set := newValueSet(list)
		if op == "$in" {
			return set.in
		}
		return func(a any) bool { return !set.in(a) }
	case "$all":
		list, isList := arg.([]any)
		if !isList {
			c.fail(at, "must be an array")
			return nil
		}
		subs := make([]func(any) bool, len(list))
		for i, s := range list {
			subs[i] = c.value(s, at+"["+strconv.Itoa(i)+"]", depth+1)
		}
		return func(a any) bool {
			elems, ok := a.([]any)
			if !ok {
				return false
			}
			for _, s := range subs {
				if !slices.ContainsFunc(elems, s) {
					return false
				}
			}
			return true
		}
	case "$size":
		sub := c.value(arg, at, depth+1)
		return func(a any) bool {
			elems, ok := a.([]any)
			return ok && sub(float64(len(elems)))
		}
	case "$elemMatch":
		var sub func(any) bool
		if obj, ok := arg.(map[string]any); ok && hasOperator(obj) && !hasLogical(obj) {
			sub = c.value(arg, at, depth+1)
		} else {
			sub = c.cond(arg, at, depth+1)
		}
		return func(a any) bool {
			elems, ok := a.([]any)
			return ok && slices.ContainsFunc(elems, sub)
		}
	case "$exists":
		want, ok := arg.(bool)
		if !ok {
			c.fail(at, "must be true or false")
			return nil
		}
		return func(a any) bool { return (a != nil) == want }
	case "$type":
		name, _ := arg.(string)
		if !slices.Contains(typeNames, name) {
			c.fail(at, "must be one of %s", strings.Join(typeNames, ", "))
			return nil
		}
		return func(a any) bool { return typeOf(a) == name }
	case "$regex":
		pattern, ok := arg.(string)
		if !ok {
			c.fail(at, "must be a string")
			return nil
		}
		re, err := CompileRegex(pattern)
		if err != nil {
			c.fail(at, "%v", err)
			return nil
		}
		return func(a any) bool {
			s, ok := a.(string)
			return ok && re.MatchString(s)
		}
	case "$not":
		sub := c.value(arg, at, depth+1)
		return func(a any) bool { return !sub(a) }
	case "$veq", "$vne", "$vlt", "$vlte", "$vgt", "$vgte":
		v, ok := arg.(string)
		if !ok {
			c.fail(at, "must be a version string")
			return nil
		}
		want := []byte(PaddedVersion(v))
		var test func(int) bool
		if op == "$veq" || op == "$vne" {
			eq := op == "$veq"
			test = func(r int) bool { return (r == 0) == eq }
		} else {
			test = orderTest("$" + op[2:])
		}
		return func(a any) bool {
			s, ok := a.(string)
			if !ok {
				return false
			}
			// Padded into a stack buffer: no allocation per evaluation.
			var buf [64]byte
			return test(bytes.Compare(appendPaddedVersion(buf[:0], s), want))
		}
	}
	c.fail(at, "is not a supported operator")
	return nil
}

// hasLogical: $elemMatch with $and/$or/$nor/$not is a condition on the
// elements' fields, not on the elements themselves.
func hasLogical(obj map[string]any) bool {
	for _, k := range []string{"$and", "$or", "$nor", "$not"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

func orderTest(op string) func(int) bool {
	switch op {
	case "$lt":
		return func(r int) bool { return r < 0 }
	case "$lte":
		return func(r int) bool { return r <= 0 }
	case "$gt":
		return func(r int) bool { return r > 0 }
	default:
		return func(r int) bool { return r >= 0 }
	}
}

func allOf(fs []func(any) bool) func(any) bool {
	if len(fs) == 1 {
		return fs[0]
	}
	return func(o any) bool {
		for _, f := range fs {
			if !f(o) {
				return false
			}
		}
		return true
	}
}

func anyOf(fs []func(any) bool) func(any) bool {
	return func(o any) bool {
		for _, f := range fs {
			if f(o) {
				return true
			}
		}
		return false
	}
}

// lookup walks a dotted path through objects (and arrays, by decimal
// index); a missing step gives nil, like a null attribute.
func lookup(o any, path []string) any {
	if m, ok := o.(map[string]any); ok { // attributes: the common first step
		o, path = m[path[0]], path[1:]
	}
	for _, part := range path {
		switch x := o.(type) {
		case map[string]any:
			o = x[part]
		case []any:
			i, ok := arrayIndex(part)
			if !ok || i >= len(x) {
				return nil
			}
			o = x[i]
		default:
			return nil
		}
	}
	return o
}

// arrayIndex reads a canonical decimal index ("0", "12"; not "01" or "+1").
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// valueSet is the list of $in and $nin, split by type once per parse:
// strings in a map (or a short slice), numbers as float64, and only arrays
// and objects left to deep equality.
type valueSet struct {
	strings    []string
	stringSet  map[string]struct{} // instead of strings past setMin
	numbers    []float64
	bools      [2]bool // false, true listed
	null       bool
	composites []any // arrays and objects
}

// setMin: below it a linear scan of strings beats hashing the attribute.
const setMin = 8

func newValueSet(list []any) *valueSet {
	s := &valueSet{}
	for _, v := range list {
		switch x := v.(type) {
		case nil:
			s.null = true
		case string:
			s.strings = append(s.strings, x)
		case bool:
			s.bools[b2i(x)] = true
		case []any, map[string]any:
			s.composites = append(s.composites, x)
		default:
			if f, ok := number(x); ok {
				s.numbers = append(s.numbers, f)
			}
		}
	}
	if len(s.strings) >= setMin {
		s.stringSet = make(map[string]struct{}, len(s.strings))
		for _, x := range s.strings {
			s.stringSet[x] = struct{}{}
		}
		s.strings = nil
	}
	return s
}

// in: the attribute is listed; an array attribute when any of its
// elements is.
func (s *valueSet) in(a any) bool {
	if elems, ok := a.([]any); ok {
		return slices.ContainsFunc(elems, s.has)
	}
	return s.has(a)
}

func (s *valueSet) has(a any) bool {
	switch x := a.(type) {
	case nil:
		return s.null
	case string:
		if s.stringSet != nil {
			_, ok := s.stringSet[x]
			return ok
		}
		return slices.Contains(s.strings, x)
	case bool:
		return s.bools[b2i(x)]
	case []any, map[string]any:
		return slices.ContainsFunc(s.composites, func(l any) bool { return Equal(x, l) })
	}
	f, ok := number(a)
	return ok && slices.Contains(s.numbers, f)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// equalTo is the test "equals v", specialised by v's type once per parse.
func equalTo(v any) func(any) bool {
	switch x := v.(type) {
	case nil:
		return func(a any) bool { return a == nil }
	case string:
		return func(a any) bool { s, ok := a.(string); return ok && s == x }
	case bool:
		return func(a any) bool { b, ok := a.(bool); return ok && b == x }
	case []any, map[string]any:
		return func(a any) bool { return Equal(a, v) }
	}
	if f, ok := number(v); ok {
		return func(a any) bool { g, ok := number(a); return ok && g == f }
	}
	return func(a any) bool { return Equal(a, v) }
}

func isNumber(v any) bool { _, ok := number(v); return ok }

// number reads any Go numeric type as a float64 (attributes passed by Go
// callers need not be float64).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if isNumber(v) {
		return "number"
	}
	return "unknown"
}

// Equal is deep equality of JSON values: numbers by value, strings by
// code points, arrays in order, objects by key regardless of order; no
// conversion between types.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, Equal)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	f, ok := number(a)
	g, ok2 := number(b)
	return ok && ok2 && f == g
}

// cmpFloat orders two numbers that are not NaN.
func cmpFloat(f, g float64) int {
	switch {
	case f < g:
		return -1
	case f > g:
		return 1
	}
	return 0
}

// compareStrings orders by code points: UTF-8 byte order is code point
// order (JavaScript's < compares UTF-16 units, so its copy differs).
func compareStrings(s, t string) int { return strings.Compare(s, t) }

// PaddedVersion makes version strings comparable as strings, as
// GrowthBook's paddedVersionString does: a leading "v" and build metadata
// ("+...") dropped, parts split at "." and "-", "~" appended to a bare
// three-part version (so 1.0.0 sorts after 1.0.0-rc.1), and each all-digit
// part left-padded with spaces to 5 characters.
func PaddedVersion(v string) string {
	var buf [64]byte
	return string(appendPaddedVersion(buf[:0], v))
}

// appendPaddedVersion appends PaddedVersion(v) to dst, splitting v in
// place and copying byte by byte (the pieces are a few bytes: a copy call
// each would cost more).
func appendPaddedVersion(dst []byte, v string) []byte {
	if len(v) > 0 && v[0] == 'v' {
		v = v[1:]
	}
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	parts := 0
	for start := 0; start <= len(v); parts++ {
		end, digits := start, true
		for ; end < len(v) && v[end] != '.' && v[end] != '-'; end++ {
			digits = digits && '0' <= v[end] && v[end] <= '9'
		}
		if parts > 0 {
			dst = append(dst, '-')
		}
		if digits && end > start {
			for k := end - start; k < 5; k++ {
				dst = append(dst, ' ')
			}
		}
		for k := start; k < end; k++ {
			dst = append(dst, v[k])
		}
		start = end + 1
	}
	if parts == 3 {
		dst = append(dst, '-', '~')
	}
	return dst
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
