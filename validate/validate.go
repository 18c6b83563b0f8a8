// Package validate collects field-level validation failures so that one
// request can report every bad field at once (the "errors" list of a 400
// problem, docs/architecture.md §9).
package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldError names one bad field by its JSON path ("allocation[1].weight").
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Errors is a list of field errors; the zero value is empty and ready.
type Errors struct{ list []FieldError }

// Add records a bad field.
func (e *Errors) Add(field, format string, args ...any) {
	e.list = append(e.list, FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// Text checks a string field: required when asked, at most max bytes,
// valid UTF-8 and free of NUL (PostgreSQL text cannot hold one).
func (e *Errors) Text(field, v string, max int, required bool) {
	switch {
	case v == "" && required:
		e.Add(field, "is required")
	case len(v) > max:
		e.Add(field, "must be at most %d bytes", max)
	case strings.IndexByte(v, 0) >= 0:
		e.Add(field, "must not contain NUL characters")
	case !utf8.ValidString(v):
		e.Add(field, "must be valid UTF-8")
	}
}

// OptionalText checks v like Text when it was sent (non-nil): an absent
// optional field is fine, a sent one follows the same rules.
func (e *Errors) OptionalText(field string, v *string, max int) {
	if v != nil {
		e.Text(field, *v, max, false)
	}
}

// Limit reads a page size query parameter ("limit"): def when it was not
// given, else raw, which must be an integer from 1 to max.
func (e *Errors) Limit(raw string, given bool, def, max int) int {
	if !given {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		e.Add("limit", "must be an integer from 1 to %d", max)
	}
	return n
}

// Err returns nil when nothing was added, else an *Error.
func (e *Errors) Err() error {
	if len(e.list) == 0 {
		return nil
	}
	return &Error{Fields: e.list}
}

// Error is a validation failure of one or more fields.
type Error struct{ Fields []FieldError }

func (e *Error) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Reason
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Fields returns the field errors inside err, or nil when it is not a
// validation failure.
func Fields(err error) []FieldError {
	var v *Error
	if errors.As(err, &v) {
		return v.Fields
	}
	return nil
}

// New returns a validation failure of a single field.
func New(field, format string, args ...any) error {
	var e Errors
	e.Add(field, format, args...)
	return e.Err()
}

// DecodeError turns an encoding/json failure into a field error where the
// decoder says which field had the wrong type, so clients see
// "bucket_count: must be number, got string" rather than a Go message.
func DecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return New(typeErr.Field, "must be %s, got %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("malformed JSON at byte %d: %w", syntaxErr.Offset, err)
	}
	return fmt.Errorf("malformed JSON: %w", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "ptr", "interface":
		return "a value of another type"
	}
	return "a number"
}

// Kept checks a field an update may omit but not change (a bucketing
// input frozen at creation): the zero value takes current, another value
// is an error naming field; why says what the field decides.
func Kept[T comparable](e *Errors, field string, given *T, current T, why string) {
	var zero T
	switch {
	case *given == zero:
		*given = current
	case *given != current:
		e.Add(field, "cannot change: %s", why)
	}
}
