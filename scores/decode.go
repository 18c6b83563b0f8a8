package scores

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/expd/expd/validate"
)

// MaxBatch is the most scores one request may carry (as many as events).
const MaxBatch = 1000

// Decode reads the body of POST /v1/scores, {"scores": [...]}. A body
// that is not JSON is a plain error (malformed JSON); a missing or empty
// list, a list over MaxBatch, or a field of the wrong JSON type is a
// validation error naming the field ("scores[2].call_id"). Bare NaN and
// Infinity (which Python's json module writes for float('nan')) are not
// JSON either, but are reported on the field that holds them.
func Decode(body []byte) ([]Score, error) {
	batch, err := decode(body)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		if clean, changed := markNonFinite(body); changed {
			batch, err = decode(clean)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(batch) == 0 || len(batch) > MaxBatch {
		return nil, validate.New("scores", "must hold 1 to %d scores", MaxBatch)
	}
	return batch, nil
}

func decode(body []byte) ([]Score, error) {
	// One pass when every score is well typed (nearly always).
	var whole struct {
		Scores *[]Score `json:"scores"`
	}
	err := json.Unmarshal(body, &whole)
	if err == nil {
		if whole.Scores == nil {
			return nil, validate.New("scores", `is required: the body is {"scores": [...]}`)
		}
		return *whole.Scores, nil
	}
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return nil, validate.DecodeError(err)
	}
	// Else score by score, to name the one with the wrong type.
	var env struct {
		Scores *[]json.RawMessage `json:"scores"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, validate.DecodeError(err)
	}
	if env.Scores == nil {
		return nil, validate.New("scores", `is required: the body is {"scores": [...]}`)
	}
	var errs validate.Errors
	batch := make([]Score, len(*env.Scores))
	for i, raw := range *env.Scores {
		path := fmt.Sprintf("scores[%d]", i)
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			errs.Add(path, "must be a JSON object")
			continue
		}
		err := json.Unmarshal(raw, &batch[i])
		for _, f := range validate.Fields(validate.DecodeError(err)) {
			errs.Add(path+"."+f.Field, "%s", f.Reason)
		}
	}
	return batch, errs.Err()
}

// nonFiniteSentinel replaces a bare NaN or Infinity token: a JSON string
// no valid text field can hold (it has a NUL), recognized by checkValue.
var nonFiniteSentinel = []byte(`"\u0000non-finite"`)

// markNonFinite replaces the bare tokens NaN, Infinity and -Infinity
// outside strings by nonFiniteSentinel, so the field holding one can be
// named; changed says whether there was any.
func markNonFinite(body []byte) ([]byte, bool) {
	var out []byte
	inString, escaped, last := false, false, 0
	for i := 0; i < len(body); i++ {
		b := body[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		if b == '"' {
			inString = true
			continue
		}
		for _, tok := range [...]string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(body[i:], []byte(tok)) {
				out = append(append(out, body[last:i]...), nonFiniteSentinel...)
				i += len(tok) - 1
				last = i + 1
				break
			}
		}
	}
	if out == nil {
		return body, false
	}
	return append(out, body[last:]...), true
}
