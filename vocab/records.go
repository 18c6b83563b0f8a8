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
	// TypeScore is a score of a model call (POST /v1/scores, its own
	// table): never an event's type, but a metric's source may read it.
	TypeScore RecordType = "score"
)

// RecordTypes lists the event types (what POST /v1/events takes), in the
// order messages name them.
var RecordTypes = []RecordType{TypeExposure, TypeModelCall, TypeBusinessEvent}

// SourceTypes lists what a metric's source may read: every event type,
// and scores (docs/quality.md, "Score metrics").
var SourceTypes = append(slices.Clip(RecordTypes), TypeScore)

// Valid tells whether t is an event type.
func (t RecordType) Valid() bool { return slices.Contains(RecordTypes, t) }

// ValidSource tells whether a metric's source may read t.
func (t RecordType) ValidSource() bool { return slices.Contains(SourceTypes, t) }

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
