package evaluators

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/expd/expd/validate"
)

// The types of a code evaluator's check (docs/quality.md "Code checks").
const (
	CheckJSONValid   = "json_valid"
	CheckJSONSchema  = "json_schema"
	CheckRegex       = "regex"
	CheckMaxLength   = "max_length"
	CheckContains    = "contains"
	CheckNotContains = "not_contains"
	CheckRefusal     = "refusal"
)

// CheckTypes lists every check type, in the order the docs list them.
var CheckTypes = []string{CheckJSONValid, CheckJSONSchema, CheckRegex, CheckMaxLength, CheckContains, CheckNotContains, CheckRefusal}

// Bounds of a check's parameters.
const (
	maxSchemaBytes  = 64 << 10
	maxPatternBytes = 1 << 10
	maxCheckText    = 1 << 10
	maxMaxLength    = 1 << 20
)

// Check is a code evaluator's check as the API takes it: the type and
// the parameters that type reads (the others must be absent).
type Check struct {
	Type string `json:"type"`
	// json_schema: the JSON Schema the answer (parsed as JSON) must satisfy.
	Schema json.RawMessage `json:"schema,omitempty"`
	// regex: an RE2 pattern; MustMatch false turns it into "must not match".
	Pattern   string `json:"pattern,omitempty"`
	MustMatch *bool  `json:"must_match,omitempty"`
	// max_length: at most this many characters (Unicode code points).
	MaxLength int `json:"max_length,omitempty"`
	// contains / not_contains: the text, compared ignoring case unless
	// CaseSensitive.
	Text          string `json:"text,omitempty"`
	CaseSensitive bool   `json:"case_sensitive,omitempty"`
}

// Checker scores an answer: 1 when it passes, 0 when not. For refusal, 1
// means the answer declines the task (the score counts refusals).
type Checker func(output string) float64

// Compile validates c and returns its checker; bad parameters are named
// under field (e.g. "check.pattern").
func Compile(field string, c Check) (Checker, error) {
	var errs validate.Errors
	uses := map[string]bool{
		"schema": len(c.Schema) > 0, "pattern": c.Pattern != "" || c.MustMatch != nil, "max_length": c.MaxLength != 0,
		"text": c.Text != "" || c.CaseSensitive,
	}
	wants := map[string][]string{
		CheckJSONSchema: {"schema"}, CheckRegex: {"pattern"}, CheckMaxLength: {"max_length"},
		CheckContains: {"text"}, CheckNotContains: {"text"},
	}
	if !slices.Contains(CheckTypes, c.Type) {
		errs.Add(field+".type", "must be one of %s", strings.Join(CheckTypes, ", "))
		return nil, errs.Err()
	}
	for param, used := range uses {
		if used && !slices.Contains(wants[c.Type], param) {
			errs.Add(field+"."+param, "is not a parameter of check type %q", c.Type)
		}
	}
	var check Checker
	switch c.Type {
	case CheckJSONValid:
		check = func(out string) float64 { return boolScore(json.Valid([]byte(strings.TrimSpace(out)))) }
	case CheckJSONSchema:
		check = compileSchema(&errs, field+".schema", c.Schema)
	case CheckRegex:
		errs.Text(field+".pattern", c.Pattern, maxPatternBytes, true)
		re, err := regexp.Compile(c.Pattern)
		if err != nil && c.Pattern != "" {
			errs.Add(field+".pattern", "is not a valid RE2 regular expression: %v", err)
		}
		want := c.MustMatch == nil || *c.MustMatch
		if re != nil {
			check = func(out string) float64 { return boolScore(re.MatchString(out) == want) }
		}
	case CheckMaxLength:
		if c.MaxLength < 1 || c.MaxLength > maxMaxLength {
			errs.Add(field+".max_length", "must be an integer from 1 to %d", maxMaxLength)
		}
		limit := c.MaxLength
		check = func(out string) float64 { return boolScore(utf8.RuneCountInString(out) <= limit) }
	case CheckContains, CheckNotContains:
		errs.Text(field+".text", c.Text, maxCheckText, true)
		want := c.Type == CheckContains
		text, fold := c.Text, !c.CaseSensitive
		if fold {
			text = strings.ToLower(text)
		}
		check = func(out string) float64 {
			if fold {
				out = strings.ToLower(out)
			}
			return boolScore(strings.Contains(out, text) == want)
		}
	case CheckRefusal:
		check = func(out string) float64 { return boolScore(Refusal(out)) }
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return check, nil
}

func boolScore(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// noLoader refuses every $ref outside the schema itself: a check must not
// make expd fetch URLs (or read files) a customer names.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %s: only references inside the schema are allowed", url)
}

func compileSchema(errs *validate.Errors, field string, raw json.RawMessage) Checker {
	if len(bytes.TrimSpace(raw)) == 0 {
		errs.Add(field, "is required: a JSON Schema")
		return nil
	}
	if len(raw) > maxSchemaBytes {
		errs.Add(field, "must be at most %d bytes", maxSchemaBytes)
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		errs.Add(field, "is not JSON: %v", err)
		return nil
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("check.json", doc); err != nil {
		errs.Add(field, "is not a JSON Schema: %v", err)
		return nil
	}
	schema, err := c.Compile("check.json")
	if err != nil {
		errs.Add(field, "is not a valid JSON Schema: %v", firstLine(err))
		return nil
	}
	return func(out string) float64 {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.TrimSpace(out)))
		if err != nil {
			return 0
		}
		return boolScore(schema.Validate(v) == nil)
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		return "it does not follow the meta-schema"
	}
	return s
}

// refusalPhrases open or carry an answer that declines the task: the
// common wordings of the major models' refusals, compared in lower case
// with typographic apostrophes made straight.
var refusalPhrases = []string{
	"i can't help with", "i cannot help with", "i can't assist with", "i cannot assist with",
	"i can't help you with", "i cannot help you with", "i can't provide", "i cannot provide",
	"i'm not able to help", "i am not able to help", "i'm unable to", "i am unable to",
	"i won't be able to help", "i can't comply", "i cannot comply", "i must decline", "i have to decline",
	"i'm sorry, but i can't", "i'm sorry, but i cannot", "i am sorry, but i cannot", "sorry, i can't", "sorry, but i can't",
	"i can't do that", "i cannot do that", "i'm not going to help", "i will not help",
	"as an ai language model, i cannot", "as an ai, i cannot", "i'm not comfortable",
}

// Refusal tells whether an answer declines the task: a refusal phrase in
// its first 300 characters (a refusal says so at once; a long helpful
// answer that quotes one further down is not a refusal).
func Refusal(output string) bool {
	head := output
	if len(head) > 300 {
		head = head[:300]
	}
	head = strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(head))
	for _, p := range refusalPhrases {
		if strings.Contains(head, p) {
			return true
		}
	}
	return false
}
