package vocab

import (
	"fmt"
	"slices"
	"strings"
)

// RecordType is the type of an event: what a client records.
type RecordType string

// The record types.
const (
	TypeExposure      RecordType = "exposure"
	TypeModelCall     RecordType = "model_call"
	TypeBusinessEvent RecordType = "business_event"
)

// RecordTypes lists every record type, in the order messages name them.
var RecordTypes = []RecordType{TypeExposure, TypeModelCall, TypeBusinessEvent}

// Valid tells whether t is a record type.
func (t RecordType) Valid() bool { return slices.Contains(RecordTypes, t) }

// Strings returns the names of ts, for enumerations in forms and messages.
func Strings[T ~string](ts []T) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// JoinOr lists ts for a message, each written with format (%s or %q):
// "a, b or c".
func JoinOr[T ~string](ts []T, format string) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf(format, t)
	}
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}
