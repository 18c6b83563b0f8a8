package expd

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Score sources: who gave a score.
const (
	SourceHuman = "human"
	SourceJudge = "judge" // needs a secret key
	SourceCode  = "code"  // needs a secret key
)

const (
	eventScore      = "score" // queue records posted to /v1/scores, without the type
	maxCommentBytes = 4 << 10
)

// Bounds of a score's text fields, in UTF-8 bytes (docs/quality.md).
var scoreTextBytes = map[string]int{"call_id": 128, "name": 128, "evaluator": 256, "evaluator_version": 128, "judge_model": 256}

// The server's window for a score's timestamp (that of live events).
const (
	scoreMaxAge   = 24 * time.Hour
	scoreMaxAhead = 5 * time.Minute
)

// isCallID: printable ASCII without spaces, the rule of a model_call's event_id.
func isCallID(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

// isName: [A-Za-z0-9][A-Za-z0-9._:-]*, the rule of business_metric names.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != ':' && c != '-') {
			return false
		}
	}
	return s != ""
}

// ScoreOptions are a score's optional fields.
type ScoreOptions struct {
	Source           string    // SourceHuman (default), SourceJudge or SourceCode (the last two need a secret key)
	Comment          string    // free text, cut to 4 KiB
	Evaluator        string    // what scored, e.g. "helpfulness-rubric"
	EvaluatorVersion string    // its version
	JudgeModel       string    // the model of an LLM judge (SourceJudge only)
	Timestamp        time.Time // when it was given: default now; 24 h back to 5 min ahead
}

// Score queues a score of one model call without blocking; false if it was
// dropped. callID is the call's id (LastCallID, the Expd-Call-Id response
// header, or ModelCall.ID); name follows the rules of business metric
// names; value must be finite (use 1 and 0 for a thumbs up and down); opts
// holds at most one ScoreOptions. A later score of the same call, name and
// source replaces the earlier one on the server. Invalid input is dropped
// with a log line. Scores share the event queue, its retries and its spill
// file, and go to POST /v1/scores.
func (c *Client) Score(ctx context.Context, callID, name string, value float64, opts ...ScoreOptions) bool {
	var o ScoreOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	record, err := newScore(callID, name, value, o, time.Now())
	if err == nil && c.publishable && record["source"] != SourceHuman {
		// The server refuses the whole batch for it (403): drop this score only.
		err = fmt.Errorf("source %q needs a secret key; a publishable key sends human only", record["source"])
	}
	if err != nil {
		c.log.Warn("expd: score dropped", "call_id", callID, "name", name, "error", err)
		return false
	}
	return c.sender.enqueue(record)
}

// newScore is the queue record of one score, or an error naming the field
// the server would refuse: one bad score gets its whole batch refused, so
// bad input must cost that score only.
func newScore(callID, name string, value float64, o ScoreOptions, now time.Time) (map[string]any, error) {
	if o.Source == "" {
		o.Source = SourceHuman
	}
	if o.Source != SourceHuman && o.Source != SourceJudge && o.Source != SourceCode {
		return nil, fmt.Errorf("source must be human, judge or code, got %q", o.Source)
	}
	if o.JudgeModel != "" && o.Source != SourceJudge {
		return nil, fmt.Errorf("judge_model is a field of source %q scores only", SourceJudge)
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return nil, fmt.Errorf("value must be finite, got %v", value)
	}
	ts := o.Timestamp
	if ts.IsZero() {
		ts = now
	}
	if ts.Before(now.Add(-scoreMaxAge)) || ts.After(now.Add(scoreMaxAhead)) {
		return nil, fmt.Errorf("timestamp %s is outside the accepted window (24 hours back, 5 minutes ahead)", ts.UTC().Format(time.RFC3339))
	}
	record := map[string]any{
		"type": eventScore, "call_id": callID, "name": name, "value": value, "source": o.Source,
		"timestamp": ts.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if o.Comment != "" {
		// Feedback text longer than the bound is cut, not refused: the rating still counts.
		record["comment"] = cutUTF8(o.Comment, maxCommentBytes)
	}
	for _, f := range [...]struct{ field, v string }{{"evaluator", o.Evaluator}, {"evaluator_version", o.EvaluatorVersion}, {"judge_model", o.JudgeModel}} {
		if f.v != "" {
			record[f.field] = f.v
		}
	}
	for field, v := range record {
		s, ok := v.(string)
		if !ok || field == "type" {
			continue
		}
		if err := checkScoreText(field, s); err != nil {
			return nil, err
		}
	}
	return record, nil
}

func checkScoreText(field, s string) error {
	switch {
	case s == "" && (field == "call_id" || field == "name"):
		return fmt.Errorf("%s is required", field)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s must not contain NUL characters", field)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s must be valid UTF-8", field)
	case scoreTextBytes[field] > 0 && len(s) > scoreTextBytes[field]:
		return fmt.Errorf("%s must be at most %d bytes", field, scoreTextBytes[field])
	case field == "call_id" && !isCallID(s):
		return fmt.Errorf("call_id must be printable ASCII without spaces, got %q", s)
	case field == "name" && !isName(s):
		return fmt.Errorf("name has characters it may not have: %q", s)
	}
	return nil
}
