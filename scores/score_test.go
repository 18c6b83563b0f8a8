package scores

import (
	"testing"
	"time"

	"github.com/expd/expd/validate"
)

func TestMarkNonFiniteOnlyOutsideStrings(t *testing.T) {
	in := `{"a": "NaN \"Infinity\"", "b": NaN, "c": [-Infinity, Infinity]}`
	out, changed := markNonFinite([]byte(in))
	want := `{"a": "NaN \"Infinity\"", "b": "\u0000non-finite", "c": ["\u0000non-finite", "\u0000non-finite"]}`
	if !changed || string(out) != want {
		t.Fatalf("got %s (changed %v), want %s", out, changed, want)
	}
	if _, changed := markNonFinite([]byte(`{"a": "NaN"}`)); changed {
		t.Fatal("a NaN inside a string was marked")
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	for body, field := range map[string]string{
		`{"scores": [{"call_id": "c", "name": "n", "value": 1}, {"call_id": "c", "name": "n", "value": NaN}]}`: "scores[1].value",
		`{"scores": [{"call_id": ["c"], "name": "n", "value": 1}]}`:                                            "scores[0].call_id",
		`{"scores": [{"call_id": "c", "name": "n", "value": 1, "comment": 5}]}`:                                "scores[0].comment",
	} {
		batch, err := Decode([]byte(body))
		if err == nil {
			_, err = CheckAll(batch, "org", Window{Now: time.Now(), MaxAge: time.Hour, Ahead: time.Minute})
		}
		fields := validate.Fields(err)
		if len(fields) != 1 || fields[0].Field != field {
			t.Errorf("%s: %v, want one error on %s", body, err, field)
		}
	}
}

func TestCheckDefaultsAndBooleans(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	batch, err := Decode([]byte(`{"scores": [{"call_id": "c", "name": "thumbs_up", "value": true}, {"call_id": "c", "name": "r", "value": false, "source": "judge", "judge_model": "m", "timestamp": null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := CheckAll(batch, "org", Window{Now: now, MaxAge: time.Hour, Ahead: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.Value != 1 || r.Source != SourceHuman || !r.Ts.Equal(now) || r.OrgID != "org" {
		t.Fatalf("row 0 %+v", r)
	}
	if r := rows[1]; r.Value != 0 || r.Source != SourceJudge || *r.JudgeModel != "m" {
		t.Fatalf("row 1 %+v", r)
	}
}

func TestLatestKeepsTheLaterTimestampTiesByArrival(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	row := func(call string, v float64, ts time.Time) Row {
		return Row{OrgID: "o", CallID: call, Name: "n", Source: SourceHuman, Value: v, Ts: ts}
	}
	rows := []Row{row("b", 1, t0.Add(time.Second)), row("b", 2, t0), row("a", 3, t0), row("a", 4, t0)}
	kept, won := Latest(rows)
	if len(kept) != 2 || kept[0].CallID != "a" || kept[0].Value != 4 || kept[1].Value != 1 {
		t.Fatalf("kept %+v", kept)
	}
	if want := []bool{true, false, false, true}; len(won) != 4 || won[0] != want[0] || won[1] != want[1] || won[2] != want[2] || won[3] != want[3] {
		t.Fatalf("won %v, want %v", won, want)
	}
}
