package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// Format 2 of a spool entry's payload: the fields one after another,
// strings and counts as uvarint lengths, integers as varints, floats as
// their 8 IEEE bytes, times as varint Unix seconds and uvarint
// nanoseconds, an optional field as a byte (0 unset, 1 set) before its
// value. It replaced gob (format 1, still read), whose encoder sends the
// types with every entry and whose decoder reflects on every field: they
// were a tenth of the API process's CPU per spooled event (docs/scale.md).
//
// The model-call fields are written as a count and then in
// vocab.ModelCallFields' order, which is part of the format
// (spoolModelCallFields): a field appended to the list is read as unset
// from older entries; any other change to it needs a new format.

// spoolModelCallFields is vocab.ModelCallFields' order when format 2 was
// made (TestSpoolModelCallFieldsKeepTheirOrder).
var spoolModelCallFields = []string{"model", "latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost_usd",
	"time_to_first_token_ms", "error", "prompt", "response", "provider", "finish_reasons"}

// appendEntry appends e's format 2 payload to b.
func appendEntry(b []byte, e *spoolEntry) []byte {
	b = appendTime(b, e.At)
	b = binary.AppendUvarint(b, uint64(len(e.Events)))
	for i := range e.Events {
		b = appendEvent(b, &e.Events[i])
	}
	b = binary.AppendUvarint(b, uint64(len(e.Scores)))
	for i := range e.Scores {
		b = appendScore(b, &e.Scores[i])
	}
	return b
}

func appendEvent(b []byte, r *EventRow) []byte {
	for _, s := range [...]string{r.OrgID, r.EventID, string(r.Type), r.ExperimentID, r.UserID, r.Variant} {
		b = appendString(b, s)
	}
	b = appendTime(b, r.Ts)
	b = appendTime(b, r.ReceivedAt)
	b = appendOptInt(b, r.ConfigVersion)
	b = binary.AppendUvarint(b, uint64(len(vocab.ModelCallFields)))
	for _, f := range vocab.ModelCallFields {
		switch d := f.Dest(&r.ModelCall).(type) {
		case **string:
			b = appendOptString(b, *d)
		case **float64:
			b = appendOptFloat(b, *d)
		case **int64:
			b = appendOptInt(b, *d)
		}
	}
	b = appendOptString(b, r.BusinessMetric)
	b = appendOptFloat(b, r.Value)
	return appendString(b, r.Source)
}

func appendScore(b []byte, r *scores.Row) []byte {
	for _, s := range [...]string{r.OrgID, r.CallID, r.Name, r.Source} {
		b = appendString(b, s)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Value))
	b = appendTime(b, r.Ts)
	b = appendTime(b, r.ReceivedAt)
	for _, s := range [...]*string{r.Comment, r.Evaluator, r.EvaluatorVersion, r.JudgeModel} {
		b = appendOptString(b, s)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime keeps the instant; it is read back in UTC (entries hold
// UTC times: the write path's are).
func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendString(append(b, 1), *s)
}

func appendOptFloat(b []byte, v *float64) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.LittleEndian.AppendUint64(append(b, 1), math.Float64bits(*v))
}

func appendOptInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), *v)
}

// errShortEntry is a format 2 payload that ends early or runs past a
// length.
var errShortEntry = errors.New("spool entry ends early")

// entryReader reads a format 2 payload; the first failure sticks.
type entryReader struct {
	b   []byte
	err error
}

// readEntry decodes a format 2 payload.
func readEntry(b []byte) (*spoolEntry, error) {
	r := entryReader{b: b}
	e := &spoolEntry{At: r.time()}
	if n := r.count(); r.err == nil {
		e.Events = make([]EventRow, n)
		for i := range e.Events {
			r.event(&e.Events[i])
		}
	}
	if n := r.count(); r.err == nil && n > 0 {
		e.Scores = make([]scores.Row, n)
		for i := range e.Scores {
			r.score(&e.Scores[i])
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d bytes after the spool entry", len(r.b))
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode spool entry: %w", r.err)
	}
	if len(e.Events) == 0 {
		e.Events = nil // as gob decoded it
	}
	return e, nil
}

func (r *entryReader) event(row *EventRow) {
	row.OrgID, row.EventID, row.Type = r.string(), r.string(), vocab.RecordType(r.string())
	row.ExperimentID, row.UserID, row.Variant = r.string(), r.string(), r.string()
	row.Ts, row.ReceivedAt = r.time(), r.time()
	row.ConfigVersion = r.optInt()
	n := r.count()
	if r.err == nil && n > uint64(len(vocab.ModelCallFields)) {
		r.err = fmt.Errorf("an event with %d model-call fields, this expd knows %d", n, len(vocab.ModelCallFields))
	}
	for _, f := range vocab.ModelCallFields[:min(n, uint64(len(vocab.ModelCallFields)))] {
		switch d := f.Dest(&row.ModelCall).(type) {
		case **string:
			*d = r.optString()
		case **float64:
			*d = r.optFloat()
		case **int64:
			*d = r.optInt()
		}
	}
	row.BusinessMetric, row.Value, row.Source = r.optString(), r.optFloat(), r.string()
}

func (r *entryReader) score(s *scores.Row) {
	s.OrgID, s.CallID, s.Name, s.Source = r.string(), r.string(), r.string(), r.string()
	s.Value = r.float()
	s.Ts, s.ReceivedAt = r.time(), r.time()
	s.Comment, s.Evaluator, s.EvaluatorVersion, s.JudgeModel = r.optString(), r.optString(), r.optString(), r.optString()
}

func (r *entryReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortEntry
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads binary.AppendVarint's zig-zag form, as binary.Varint does.
func (r *entryReader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// count is a length that the rest of the payload can hold (each item
// takes a byte at least), so a damaged count allocates nothing large.
func (r *entryReader) count() uint64 {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errShortEntry
		return 0
	}
	return n
}

func (r *entryReader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errShortEntry
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *entryReader) string() string { return string(r.bytes(r.uvarint())) }

func (r *entryReader) float() float64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func (r *entryReader) time() time.Time {
	sec, nsec := r.varint(), r.uvarint()
	if r.err == nil && nsec >= 1e9 {
		r.err = fmt.Errorf("a time of %d nanoseconds past its second", nsec)
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// set reads an optional field's presence byte.
func (r *entryReader) set() bool {
	b := r.bytes(1)
	switch {
	case b == nil:
		return false
	case b[0] > 1:
		r.err = fmt.Errorf("a presence byte of %d", b[0])
		return false
	}
	return b[0] == 1
}

func (r *entryReader) optString() *string {
	if !r.set() {
		return nil
	}
	s := r.string()
	return &s
}

func (r *entryReader) optFloat() *float64 {
	if !r.set() {
		return nil
	}
	v := r.float()
	return &v
}

func (r *entryReader) optInt() *int64 {
	if !r.set() {
		return nil
	}
	v := r.varint()
	return &v
}
