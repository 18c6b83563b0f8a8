package ingest

import (
	"bytes"
	"encoding/gob"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// spoolEntries are entries with every field set, with none, and with
// what strings can hold (NUL bytes, invalid UTF-8, long text).
func spoolEntries() []*spoolEntry {
	str := func(s string) *string { return &s }
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	at := time.Date(2026, 11, 28, 3, 4, 5, 123456789, time.UTC)
	full := EventRow{OrgID: "0193c0de-0000-7000-8000-000000000001", EventID: "ev-\x00-1", Type: vocab.TypeModelCall,
		ExperimentID: "0193c0de-0000-7000-8000-000000000002", UserID: "user \xff\xfe", Variant: "treatment",
		Ts: at.Add(-time.Hour), ReceivedAt: at, ConfigVersion: n(-3),
		ModelCall: vocab.ModelCall{Model: str("gpt"), LatencyMs: f(12.5), InputTokens: n(math.MaxInt64), OutputTokens: n(0),
			TotalTokens: n(math.MinInt64), CostUSD: f(math.SmallestNonzeroFloat64), TimeToFirstTokenMs: f(math.Inf(1)),
			Error: str(""), Prompt: str(string(bytes.Repeat([]byte("p\x00é"), 5000))), Response: str("r"),
			Provider: str("openai"), FinishReasons: str("stop,length")},
		BusinessMetric: str("revenue"), Value: f(-0.25), Source: SourceAPI}
	bare := EventRow{OrgID: "o", EventID: "e", Type: vocab.TypeExposure, ExperimentID: "x", UserID: "u", Variant: "control",
		Ts: time.Unix(0, 1).UTC(), ReceivedAt: at}
	old := bare
	old.EventID, old.Ts = "old", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	scored := scores.Row{OrgID: "o", CallID: "c", Name: "quality", Source: "judge", Value: 0.75, Ts: at, ReceivedAt: at,
		Comment: str("fine\x00"), Evaluator: str("ev"), EvaluatorVersion: str("3"), JudgeModel: str("m")}
	plain := scores.Row{OrgID: "o", CallID: "c", Name: "thumbs", Source: "api", Value: math.MaxFloat64, Ts: at}
	return []*spoolEntry{
		{At: at, Events: []EventRow{full, bare, old}},
		{At: at, Scores: []scores.Row{scored, plain}},
		{At: at, Events: []EventRow{bare}, Scores: []scores.Row{plain}},
		{At: at},
	}
}

// encodeGobEntry is a format 1 entry, as expd wrote them before format 2.
func encodeGobEntry(t *testing.T, e *spoolEntry) []byte {
	t.Helper()
	buf := bytes.NewBuffer([]byte{spoolFormatGob, 0, 0, 0, 0})
	if err := gob.NewEncoder(buf).Encode(e); err != nil {
		t.Fatal(err)
	}
	return sealEntry(buf.Bytes())
}

// Format 2 reads back every value it was given, and the same values as
// gob (format 1) reads back from the same entry, but for what gob lost:
// it leaves out a pointer to a zero value (output_tokens 0, error ""),
// which format 1 read back as unset.
func TestSpoolEntryFormats(t *testing.T) {
	for i, e := range spoolEntries() {
		b := encodeEntry(e)
		if b[0] != spoolFormat {
			t.Fatalf("entry %d written in format %d; want %d", i, b[0], spoolFormat)
		}
		got, err := decodeEntry(b)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("entry %d read back as\n%+v\nwant\n%+v", i, got, e)
		}
		old, err := decodeEntry(encodeGobEntry(t, e))
		if err != nil {
			t.Fatalf("entry %d in format 1: %v", i, err)
		}
		if i == 0 {
			lost := *got
			lost.Events = append([]EventRow(nil), got.Events...)
			lost.Events[0].OutputTokens, lost.Events[0].Error = nil, nil
			got = &lost
		}
		if !reflect.DeepEqual(got, old) {
			t.Errorf("entry %d: format 2 read\n%+v\nformat 1\n%+v", i, got, old)
		}
	}
}

// A format 2 payload cut anywhere, or with bytes after it, fails to
// decode (an error, no panic); the checksum normally catches it first.
func TestSpoolEntryDamaged(t *testing.T) {
	payload := appendEntry(nil, spoolEntries()[0])
	for n := range len(payload) {
		if _, err := readEntry(payload[:n]); err == nil {
			t.Fatalf("a payload cut to %d of %d bytes decoded", n, len(payload))
		}
	}
	if _, err := readEntry(append(payload, 0)); err == nil {
		t.Error("a payload with a byte after it decoded")
	}
	b := encodeEntry(spoolEntries()[0])
	b[0] = 9
	if _, err := decodeEntry(b); err == nil {
		t.Error("an entry of an unknown format decoded")
	}
}

// A log written by an older expd (format 1 entries) replays: its entries
// are indexed, beside format 2 entries written after them.
func TestSpoolReplaysFormat1Entries(t *testing.T) {
	dir := t.TempDir()
	l, err := openLog(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	entries := spoolEntries()
	for i, e := range entries {
		b := encodeEntry(e)
		if i < 2 {
			b = encodeGobEntry(t, e)
		}
		if err := l.Write(uint64(i+1), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sp, err := OpenSpool(dir, nil, SpoolOptions{NoShip: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close(t.Context())
	want := 0
	var events []EventRow
	for _, e := range entries {
		want += e.rows()
		events = append(events, e.Events...)
	}
	if sp.Backlog() != want {
		t.Errorf("backlog %d rows; want %d", sp.Backlog(), want)
	}
	// Every replayed event is in the index: none is fresh, and the
	// engine behind (none here) is not asked.
	if fresh, err := sp.Fresh(t.Context(), events); err != nil || len(fresh) != 0 {
		t.Errorf("Fresh of the replayed events: %d fresh, %v; want none", len(fresh), err)
	}
}

// vocab.ModelCallFields' order is part of format 2: a field may be
// appended, no other change is read back right from older entries.
func TestSpoolModelCallFieldsKeepTheirOrder(t *testing.T) {
	if len(vocab.ModelCallFields) < len(spoolModelCallFields) {
		t.Fatalf("%d model-call fields, format 2 has %d", len(vocab.ModelCallFields), len(spoolModelCallFields))
	}
	for i, name := range spoolModelCallFields {
		if vocab.ModelCallFields[i].Name != name {
			t.Errorf("model-call field %d is %q, format 2 has %q there: a new spool format is needed", i, vocab.ModelCallFields[i].Name, name)
		}
	}
}
