package scores

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/expd/expd/validate"
)

// Sources of a score: who gave it.
const (
	SourceHuman = "human" // an end user (a thumbs-up in the app or browser)
	SourceJudge = "judge" // an LLM judge
	SourceCode  = "code"  // a programmatic check
)

// Sources lists every source, in the order messages name them.
var Sources = []string{SourceHuman, SourceJudge, SourceCode}

// Bounds of a score's optional texts (docs/quality.md).
const (
	MaxCommentLen   = 4 << 10
	MaxEvaluatorLen = 256
	MaxVersionLen   = 128
	MaxModelLen     = 256
)

// Score is one score as clients send it. Value stays raw: a boolean is
// 0 or 1, and a string, NaN or Infinity is refused naming the field.
type Score struct {
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Value            json.RawMessage `json:"value"`
	Timestamp        *string         `json:"timestamp"`
	Source           *string         `json:"source"`
	Comment          *string         `json:"comment"`
	Evaluator        *string         `json:"evaluator"`
	EvaluatorVersion *string         `json:"evaluator_version"`
	JudgeModel       *string         `json:"judge_model"`
}

// Row is a score as stored. The experiment, user and variant are not
// here: they come from the linked call at analysis time.
type Row struct {
	OrgID            string
	CallID           string
	Name             string
	Source           string
	Value            float64
	Ts               time.Time
	ReceivedAt       time.Time
	Comment          *string
	Evaluator        *string
	EvaluatorVersion *string
	JudgeModel       *string
}

// Key is the primary key of the scores table: a later score of the same
// key replaces the stored one.
type Key struct{ OrgID, CallID, Name, Source string }

// Wins tells whether r replaces old, a stored score of its key: a later
// timestamp, or the same one with a different content (ties go to the
// later arrival); an identical re-send changes nothing. It is the rule of
// replaceOnConflict for stores that compare in Go.
func Wins(r, old Row) bool {
	return r.Ts.After(old.Ts) || r.Ts.Equal(old.Ts) && !sameContent(r, old)
}

// Winners is the rows (of distinct keys) that win over the stored score
// of their key, or have none (Wins), and what writing them does to each
// key.
func Winners(rows []Row, stored map[Key]Row) ([]Row, []Written) {
	var win []Row
	var out []Written
	for _, r := range rows {
		old, ok := stored[KeyOf(&r)]
		if !ok || Wins(r, old) {
			win = append(win, r)
			out = append(out, Written{Key: KeyOf(&r), New: !ok})
		}
	}
	return win, out
}

// sameContent tells whether two scores of a key say the same.
func sameContent(a, b Row) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Value == b.Value && eq(a.Comment, b.Comment) && eq(a.Evaluator, b.Evaluator) &&
		eq(a.EvaluatorVersion, b.EvaluatorVersion) && eq(a.JudgeModel, b.JudgeModel)
}

// KeyOf is r's key.
func KeyOf(r *Row) Key { return Key{r.OrgID, r.CallID, r.Name, r.Source} }

// Window bounds a score's timestamp: at most MaxAge old, at most Ahead in
// the future (the same window as a live event's).
type Window struct {
	Now    time.Time
	MaxAge time.Duration
	Ahead  time.Duration
}

// Check validates s and returns its row for orgID. An absent timestamp is
// w.Now (a browser's thumbs-up need not send one).
func (s *Score) Check(orgID string, w Window) (Row, error) {
	var errs validate.Errors
	errs.ID("call_id", s.CallID)
	if s.Name == "" {
		errs.Add("name", "is required")
	}
	errs.Name("name", s.Name)
	value := checkValue(&errs, s.Value)
	ts := w.Now.UTC()
	if s.Timestamp != nil {
		ts = errs.Timestamp("timestamp", *s.Timestamp, w.Now, w.MaxAge, w.Ahead)
	}
	source := SourceHuman
	if s.Source != nil {
		source = *s.Source
	}
	if !slices.Contains(Sources, source) {
		errs.Add("source", "must be %q, %q or %q", SourceHuman, SourceJudge, SourceCode)
	}
	if s.JudgeModel != nil && source != SourceJudge {
		errs.Add("judge_model", "is a field of source %q scores only", SourceJudge)
	}
	errs.OptionalText("comment", s.Comment, MaxCommentLen)
	errs.OptionalText("evaluator", s.Evaluator, MaxEvaluatorLen)
	errs.OptionalText("evaluator_version", s.EvaluatorVersion, MaxVersionLen)
	errs.OptionalText("judge_model", s.JudgeModel, MaxModelLen)
	if err := errs.Err(); err != nil {
		return Row{}, err
	}
	return Row{OrgID: orgID, CallID: s.CallID, Name: s.Name, Source: source, Value: value, Ts: ts,
		Comment: s.Comment, Evaluator: s.Evaluator, EvaluatorVersion: s.EvaluatorVersion, JudgeModel: s.JudgeModel}, nil
}

// checkValue reads a finite number, or a boolean as 1 or 0.
func checkValue(errs *validate.Errors, raw json.RawMessage) float64 {
	v := bytes.TrimSpace(raw)
	switch {
	case len(v) == 0 || string(v) == "null":
		errs.Add("value", "is required: a finite number, or a boolean (1 or 0)")
	case string(v) == "true":
		return 1
	case string(v) == "false":
		return 0
	case bytes.Equal(v, nonFiniteSentinel):
		errs.Add("value", "must be a finite number (NaN and Infinity are not)")
	case v[0] == '"':
		errs.Add("value", "must be a number or a boolean, got a string")
	case v[0] == '{' || v[0] == '[':
		errs.Add("value", "must be a number or a boolean")
	default:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			errs.Add("value", "must be a finite number (%s is out of range)", v)
			return 0
		}
		return f
	}
	return 0
}

// CheckAll validates a batch: every bad field is named by its path
// ("scores[3].value"), and one bad score refuses the batch (nothing of it
// is stored).
func CheckAll(batch []Score, orgID string, w Window) ([]Row, error) {
	var errs validate.Errors
	rows := make([]Row, len(batch))
	for i := range batch {
		r, err := batch[i].Check(orgID, w)
		for _, f := range validate.Fields(err) {
			errs.Add(fmt.Sprintf("scores[%d].%s", i, f.Field), "%s", f.Reason)
		}
		rows[i] = r
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// HumanOnly refuses the scores of rows whose source is not human, naming
// each ("scores[2].source"): what a publishable key, which a browser
// holds, may not send (a browser must not forge judge scores).
func HumanOnly(rows []Row) error {
	var errs validate.Errors
	for i := range rows {
		if rows[i].Source != SourceHuman {
			errs.Add(fmt.Sprintf("scores[%d].source", i), "%q needs the secret key: a publishable key may send %q scores only", rows[i].Source, SourceHuman)
		}
	}
	return errs.Err()
}
